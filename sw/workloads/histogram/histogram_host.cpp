#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_histogram(Device& device) {
  constexpr int kWords = 65'537;
  constexpr std::uint32_t kGrid = 32;
  constexpr std::uint32_t kBlock = 192;

  // Skewed bytes (a few very hot bins) so shared atomics collide within warps.
  Rng rng(0x5eed0011);
  std::vector<std::uint32_t> words(kWords);
  for (std::uint32_t& w : words) {
    w = 0;
    for (int byte = 0; byte < 4; ++byte) {
      const std::uint32_t value = rng.uniform_int(0, 3) == 0 ? static_cast<std::uint32_t>(rng.uniform_int(0, 255))
                                                             : static_cast<std::uint32_t>(rng.uniform_int(60, 67));
      w |= value << (8 * byte);
    }
  }
  DeviceBuffer<std::uint32_t> d_words(device, words), d_bins(device, 256),
      d_summary(device, std::vector<std::uint32_t>{0xffffffffu, 0, 0, 0});
  d_bins.zero();
  device.launch("histogram_shared", kGrid, kBlock, 0, KernelArgs().ptr(d_words.ptr()).i32(kWords).ptr(d_bins.ptr()));
  device.launch("word_statistics", ceil_div(kWords, 256), 256, 0, KernelArgs().ptr(d_words.ptr()).i32(kWords).ptr(d_summary.ptr()));
  device.synchronize();

  std::vector<std::uint32_t> want_bins(256, 0), want_summary{0xffffffffu, 0, 0, 0};
  for (std::uint32_t w : words) {
    for (int byte = 0; byte < 4; ++byte) ++want_bins[(w >> (8 * byte)) & 0xff];
    want_summary[0] = std::min(want_summary[0], w);
    want_summary[1] = std::max(want_summary[1], w);
    want_summary[2] ^= w;
    if (w > 0x80000000u) ++want_summary[3];
  }

  Check check;
  check.exact("bins", d_bins.download(), want_bins);
  check.exact("min/max/xor/count", d_summary.download(), want_summary);
  return check.result("65537 words, 256 bins, 32 CTAs x 192 with shared atomics");
}

}  // namespace gpuvp::workloads
