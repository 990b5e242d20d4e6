#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

// The host's printf is the reference for how the device's printf formats.
__attribute__((format(printf, 1, 2))) std::string format(const char* pattern, ...) {
  char buffer[512];
  std::va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof buffer, pattern, args);
  va_end(args);
  return buffer;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

}  // namespace

WorkloadResult run_printf(Device& device) {
  const int i = -1234;
  const unsigned u = 3'000'000'123u;
  const long long ll = -9'000'000'000'123LL;
  const double d = 3.14159265358979;
  const float f = 2.71828f;
  const std::string text = "from-host-memory";
  constexpr int kCtas = 4;
  constexpr int kThreads = 96;
  constexpr int kEvery = 16;

  std::vector<char> text_bytes(text.begin(), text.end());
  text_bytes.push_back('\0');
  DeviceBuffer<char> d_text(device, text_bytes);

  Check check;
  // A single thread prints in program order, so the text must match exactly (glibc's printf
  // is the reference for the formatting).
  device.begin_output_capture();
  device.launch("printf_formats", 1, 1, 0, KernelArgs().i32(i).u32(u).i64(ll).f64(d).f32(f).ptr(d_text.ptr()));
  const std::string formats = device.end_output_capture();
  std::string want_formats;
  want_formats += format("int %d unsigned %u hex %x HEX %X octal %o long %lld\n", i, u, u, u, u, ll);
  want_formats += format("double %f %e %g %.10g float %.3f\n", d, d, d, d, static_cast<double>(f));
  want_formats += format("char %c string %s literal %s\n", 'Q', text.c_str(), "in-kernel");
  want_formats += format("width [%6d] [%-6d] [%06d] [%+d] [%8.3f] [%-10s]\n", i, i, i, i, d, "left");
  want_formats += "percent % and no arguments\n";
  check.expect(formats == want_formats, "formats: got \"" + formats + "\", expected \"" + want_formats + "\"");

  // CUDA does not order output between warps or CTAs, so compare the set of lines, and check
  // each thread's two lines appear in its program order.
  device.begin_output_capture();
  device.launch("printf_threads", kCtas, kThreads, 0, KernelArgs().i32(kEvery));
  const std::vector<std::string> got = lines_of(device.end_output_capture());
  std::vector<std::string> want;
  for (int cta = 0; cta < kCtas; ++cta) {
    for (int t = 0; t < kThreads; t += kEvery) {
      want.push_back(format("cta %d thread %d first", cta, t));
      want.push_back(format("cta %d thread %d second %d", cta, t, cta * 1000 + t));
    }
  }
  std::map<std::string, std::size_t> position;
  for (std::size_t n = 0; n < got.size(); ++n) position[got[n]] = n;
  for (int cta = 0; cta < kCtas; ++cta) {
    for (int t = 0; t < kThreads; t += kEvery) {
      const auto first = position.find(format("cta %d thread %d first", cta, t));
      const auto second = position.find(format("cta %d thread %d second %d", cta, t, cta * 1000 + t));
      if (first != position.end() && second != position.end()) {
        check.expect(first->second < second->second, format("cta %d thread %d printed out of program order", cta, t));
      }
    }
  }
  std::vector<std::string> got_sorted = got;
  std::sort(got_sorted.begin(), got_sorted.end());
  std::sort(want.begin(), want.end());
  check.expect(got_sorted == want, "threads: got " + std::to_string(got.size()) + " lines, expected " +
                                       std::to_string(want.size()) + (got.empty() ? "" : ", first \"" + got[0] + "\""));
  return check.result("5 formatted lines from one thread, 48 lines from 4 CTAs");
}

}  // namespace gpuvp::workloads
