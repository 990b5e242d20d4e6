#include "platform/elastic_trace/trace_inspect.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace gpuvp::elastic {
namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

}  // namespace

std::string trace_summary(const Trace& trace, uint64_t file_bytes) {
  const CaptureHeader& h = trace.header;
  std::string out = "elastic trace, format version " + std::to_string(h.version) + ", captured by gpuvp " +
                    h.gpuvp_version + "\n";
  out += "program:";
  for (const std::string& a : h.program) out += " " + a;
  out += "\nconfiguration: " + h.config_source + format(" (%u SMs, core clock %.1f MHz)\n", h.sm_count,
                                                         static_cast<double>(h.core_clock_hz) / 1e6);
  const TraceTotals t = totals(trace);
  out += format("%zu kernel(s), %" PRIu64 " CTAs, %" PRIu64 " warps, %" PRIu64 " requests (%" PRIu64 " loads, %" PRIu64
                " stores, %" PRIu64 " atomics/reductions, %" PRIu64 " instruction/constant fills and other), %" PRIu64
                " dependencies, %" PRIu64 " on freed MSHRs, %" PRIu64 " on barriers (%" PRIu64 " barrier releases); %" PRIu64 " L1 hits and %" PRIu64
                " L1 merges without a request; %" PRIu64 " bytes on disk (%.2f B per request)\n",
                trace.kernels.size(), t.ctas, t.warps, t.requests, t.loads, t.stores, t.atomics, t.other, t.deps,
                t.mshr_deps, t.barrier_deps, t.barriers, t.l1_hits, t.l1_merges, file_bytes, t.requests != 0 ? static_cast<double>(file_bytes) / static_cast<double>(t.requests) : 0.0);
  if (h.far_faults != 0 || t.uvm_operations != 0) {
    out += format("unified memory: %" PRIu64 " host operations (allocations, prefetches, host accesses, advice) and %" PRIu64
                  " far faults during the capture; a replay performs the operations and redoes the faults\n",
                  t.uvm_operations, h.far_faults);
  }
  out += "  #   kernel                           CTAs   warps    requests  captured cycles\n";
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const KernelTrace& k = trace.kernels[i];
    uint64_t warps = 0, requests = 0;
    for (const CtaTrace& cta : k.ctas) {
      warps += cta.warps.size();
      for (const WarpTrace& w : cta.warps) requests += w.requests.size();
    }
    out += format("  %-3zu %-32.32s %6zu %7" PRIu64 " %11" PRIu64 " %16" PRIu64 "\n", i, k.name.c_str(),
                  k.ctas.size(), warps, requests, k.cycles);
  }
  return out;
}

std::string trace_records(const Trace& trace, uint32_t kernel, uint64_t limit) {
  std::string out;
  uint64_t shown = 0;
  for (size_t ki = 0; ki < trace.kernels.size(); ++ki) {
    if (kernel != kNone && ki != kernel) continue;
    const KernelTrace& k = trace.kernels[ki];
    out += format("kernel %zu id %" PRIu64 " %s: begin %" PRIu64 " ps, %" PRIu64 " cycles, end %u cycles after its "
                  "last CTA, %zu copy-engine writes\n",
                  ki, k.id, k.name.c_str(), k.begin_ps, k.cycles, k.end_gap, k.copies.size());
    static const char* const kUvmKinds[] = {"map", "unmap", "prefetch to device", "prefetch to host", "host read",
                                            "host write", "advise"};
    for (const UvmRecord& u : k.uvm) {
      out += format("  unified memory: %s 0x%" PRIx64 " + %" PRIu64 " B%s, %" PRIu64 " ps before the kernel\n",
                    kUvmKinds[static_cast<int>(u.operation.kind)], u.operation.base, u.operation.bytes,
                    u.operation.kind == UvmOperation::Kind::kAdvise
                        ? format(" (advice %u, location %u)", u.operation.advice, u.operation.location).c_str()
                        : "",
                    u.before_ps);
    }
    for (size_t ci = 0; ci < k.ctas.size(); ++ci) {
      const CtaTrace& cta = k.ctas[ci];
      out += format("  cta %" PRIu64 " on sm %u: cycles %" PRIu64 "-%" PRIu64 ", begins %u after %s, ends %u after "
                    "its last event\n",
                    cta.cta, cta.sm, cta.begin_cycle, cta.end_cycle, cta.begin_gap,
                    cta.begin_after == kNone ? "the kernel's begin"
                                             : ("cta " + std::to_string(k.ctas[cta.begin_after].cta) + " ended").c_str(),
                    cta.end_gap);
      for (size_t b = 0; b < cta.barriers.size(); ++b) {
        std::string arrivals;
        for (const BarrierArrival& a : cta.barriers[b].arrivals) {
          arrivals += a.warp == kNone ? format(" start+%u", a.gap)
                                      : format(" w%u.%s%u+%u", a.warp, a.on_response ? "resp" : "req", a.request, a.gap);
        }
        out += format("    barrier %zu: %zu arrivals:%s\n", b, cta.barriers[b].arrivals.size(), arrivals.c_str());
      }
      for (const WarpTrace& w : cta.warps) {
        out += format("    warp slot %u: %zu requests, %zu L1 hits/merges\n", w.slot, w.requests.size(), w.l1_hits.size());
        size_t next_hit = 0;
        auto show_hits = [&](size_t up_to) {  // the L1 hits placed before request `up_to`
          for (; next_hit < w.l1_hits.size() && w.l1_hits[next_hit].after <= up_to; ++next_hit) {
            const L1Hit& h = w.l1_hits[next_hit];
            out += format("           L1 %-6s 0x%" PRIx64 " sectors 0x%x, %u cycles after %s\n", h.merged ? "merge" : "hit",
                          h.address, h.mask, h.offset, h.after == 0 ? "the CTA's start" : ("request " + std::to_string(h.after - 1)).c_str());
          }
        };
        for (size_t i = 0; i < w.requests.size(); ++i) {
          show_hits(i);
          if (shown == limit) return out + format("  ... (first %" PRIu64 " requests shown; --limit N for more)\n", limit);
          ++shown;
          const Request& r = w.requests[i];
          std::string deps;
          for (uint32_t d = 0; d < r.dep_count; ++d) deps += (d ? "," : "") + std::to_string(w.deps[r.dep_first + d]);
          const std::string mshr =
              r.mshr_after == 0 ? std::string()
                                : format(", MSHR wait %u: %u after the SM's MSHR-freeing response %u", r.mshr_wait,
                                         r.mshr_gap, r.mshr_after);
          const std::string barrier =
              r.barrier ? format(", %u after barrier %u's release", r.barrier_gap, r.barrier_index) : std::string();
          out += format("      %4zu cycle %-8" PRIu64 " %-16s %-5s 0x%" PRIx64 " len %u sectors 0x%x gap %u %s%s%s%s%s\n",
                        i, r.issue_cycle, to_string(r.kind), r.write ? "write" : "read", r.address, r.length,
                        r.sector_mask, r.gap, r.dep_count ? "after responses of " : "after previous",
                        deps.c_str(), mshr.c_str(), barrier.c_str(), r.holds_cta_end ? " holds-cta-end" : "");
        }
        show_hits(w.requests.size());
      }
    }
  }
  return out;
}

}  // namespace gpuvp::elastic
