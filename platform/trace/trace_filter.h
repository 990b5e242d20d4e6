// Which transactions, kernels and CTAs a trace keeps, from `--trace-filter` terms:
//
//   module=GLOB        a link is traced when its initiator or target socket path matches
//                      (fnmatch; `*` crosses dots): module=*sm_3.mem*  (repeatable: any)
//   addr=LO-HI         transactions whose address lies in [LO, HI) (hex or decimal; repeatable)
//   kernel=ID|GLOB     transactions, kernels and CTAs of kernel ID or of kernels whose name
//                      matches GLOB (repeatable: any)
//   time=BEGIN-END     simulated-time window [BEGIN, END); units ps, ns (default), us, ms, s;
//                      END may be empty (to the end): time=10us-
//   every=N            keep every Nth transaction of each link that passed the other filters
//
// Terms may be given in several options or comma-separated in one: module=*l2_0*,every=4.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "platform/trace/trace_format.h"

namespace gpuvp::trace {

struct TraceFilter {
  std::vector<std::string> modules;                          // empty: every link
  std::vector<std::pair<uint64_t, uint64_t>> address_ranges;  // empty: every address
  std::vector<uint64_t> kernel_ids;
  std::vector<std::string> kernel_names;                     // globs
  uint64_t begin_ps = 0;
  uint64_t end_ps = std::numeric_limits<uint64_t>::max();
  uint64_t every = 1;

  // Throws TraceError naming the bad term.
  static TraceFilter parse(const std::vector<std::string>& terms);

  bool has_kernel_filter() const { return !kernel_ids.empty() || !kernel_names.empty(); }
  bool link_matches(const std::string& initiator, const std::string& target) const;
  bool kernel_matches(uint64_t id, const std::string& name) const;
  bool address_matches(uint64_t address) const;
  bool time_matches(uint64_t ps) const { return ps >= begin_ps && ps < end_ps; }
};

}  // namespace gpuvp::trace
