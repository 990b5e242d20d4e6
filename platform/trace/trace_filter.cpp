#include "platform/trace/trace_filter.h"

#include <fnmatch.h>

#include <cctype>
#include <sstream>

namespace gpuvp::trace {
namespace {

[[noreturn]] void fail(const std::string& term, const std::string& why) {
  throw TraceError("--trace-filter '" + term + "': " + why);
}

uint64_t parse_number(const std::string& term, const std::string& text) {
  if (text.empty()) fail(term, "a number is missing");
  size_t used = 0;
  uint64_t value = 0;
  try {
    value = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    fail(term, "'" + text + "' is not a number");
  }
  if (used != text.size() || text[0] == '-') fail(term, "'" + text + "' is not a number");
  return value;
}

uint64_t parse_time_ps(const std::string& term, const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) != 0)) ++digits;
  const std::string unit = text.substr(digits);
  uint64_t scale = 1000;  // ns
  if (unit == "ps") scale = 1;
  else if (unit == "ns" || unit.empty()) scale = 1000;
  else if (unit == "us") scale = 1000000;
  else if (unit == "ms") scale = 1000000000;
  else if (unit == "s") scale = 1000000000000;
  else fail(term, "unknown time unit '" + unit + "' (ps, ns, us, ms, s)");
  const uint64_t value = parse_number(term, text.substr(0, digits));
  if (value > std::numeric_limits<uint64_t>::max() / scale) fail(term, "time too large");
  return value * scale;
}

bool glob(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

}  // namespace

TraceFilter TraceFilter::parse(const std::vector<std::string>& options) {
  TraceFilter f;
  bool every_set = false;
  for (const std::string& option : options) {
    std::stringstream list(option);
    std::string term;
    while (std::getline(list, term, ',')) {
      const size_t eq = term.find('=');
      if (eq == std::string::npos) fail(term, "expected KEY=VALUE with KEY one of module, addr, kernel, time, every");
      const std::string key = term.substr(0, eq);
      const std::string value = term.substr(eq + 1);
      if (value.empty()) fail(term, "empty value");
      if (key == "module") {
        f.modules.push_back(value);
      } else if (key == "addr") {
        const size_t dash = value.find('-');
        if (dash == std::string::npos) fail(term, "expected addr=LO-HI");
        const uint64_t lo = parse_number(term, value.substr(0, dash));
        const uint64_t hi = parse_number(term, value.substr(dash + 1));
        if (hi <= lo) fail(term, "the range is empty (HI must be above LO)");
        f.address_ranges.emplace_back(lo, hi);
      } else if (key == "kernel") {
        if (std::isdigit(static_cast<unsigned char>(value[0])) != 0) {
          f.kernel_ids.push_back(parse_number(term, value));
        } else {
          f.kernel_names.push_back(value);
        }
      } else if (key == "time") {
        const size_t dash = value.find('-');
        if (dash == std::string::npos) fail(term, "expected time=BEGIN-END (END may be empty)");
        const std::string end = value.substr(dash + 1);
        f.begin_ps = parse_time_ps(term, value.substr(0, dash));
        f.end_ps = end.empty() ? std::numeric_limits<uint64_t>::max() : parse_time_ps(term, end);
        if (f.end_ps <= f.begin_ps) fail(term, "the window is empty (END must be after BEGIN)");
      } else if (key == "every") {
        if (every_set) fail(term, "every= given twice");
        every_set = true;
        f.every = parse_number(term, value);
        if (f.every == 0) fail(term, "every=N needs N >= 1");
      } else {
        fail(term, "unknown key '" + key + "' (module, addr, kernel, time, every)");
      }
    }
  }
  return f;
}

bool TraceFilter::link_matches(const std::string& initiator, const std::string& target) const {
  if (modules.empty()) return true;
  for (const std::string& m : modules) {
    if (glob(m, initiator) || glob(m, target)) return true;
  }
  return false;
}

bool TraceFilter::kernel_matches(uint64_t id, const std::string& name) const {
  if (!has_kernel_filter()) return true;
  for (uint64_t k : kernel_ids) {
    if (k == id) return true;
  }
  for (const std::string& g : kernel_names) {
    if (glob(g, name)) return true;
  }
  return false;
}

bool TraceFilter::address_matches(uint64_t address) const {
  if (address_ranges.empty()) return true;
  for (const auto& [lo, hi] : address_ranges) {
    if (address >= lo && address < hi) return true;
  }
  return false;
}

}  // namespace gpuvp::trace
