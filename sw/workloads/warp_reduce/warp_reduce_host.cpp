#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/reduction_order.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_warp_reduce(Device& device) {
  constexpr int kElements = 10'003;  // last warp partial
  constexpr std::uint32_t kBlock = 256;
  constexpr int kWarps = (kElements + 31) / 32;
  constexpr int kThreshold = 500;
  const std::uint32_t grid = ceil_div(kElements, kBlock);

  Rng rng(0x5eed0010);
  std::vector<float> values(kElements);
  std::vector<int> numbers(kElements);
  for (float& v : values) v = rng.uniform_float(-1.0f, 1.0f);
  for (int& v : numbers) v = rng.uniform_int(0, 1000);
  // Some warps all above or all below the threshold, so any/all take both values.
  for (int i = 0; i < 32; ++i) numbers[i] = 900 + i;
  for (int i = 32; i < 64; ++i) numbers[i] = i;

  DeviceBuffer<float> d_values(device, values), d_block_sums(device, grid);
  DeviceBuffer<int> d_numbers(device, numbers), d_max(device, kElements), d_scan(device, kElements),
      d_rotated(device, kElements), d_reversed(device, kElements), d_counts(device, kWarps), d_flags(device, kWarps);
  DeviceBuffer<std::uint32_t> d_ballots(device, kWarps);

  device.launch("warp_block_sum", grid, kBlock, 0, KernelArgs().ptr(d_values.ptr()).ptr(d_block_sums.ptr()).i32(kElements));
  device.launch("warp_all_max", grid, kBlock, 0, KernelArgs().ptr(d_numbers.ptr()).ptr(d_max.ptr()).i32(kElements));
  device.launch("warp_inclusive_scan", grid, kBlock, 0, KernelArgs().ptr(d_numbers.ptr()).ptr(d_scan.ptr()).i32(kElements));
  device.launch("warp_segment_rotate", grid, kBlock, 0,
                KernelArgs().ptr(d_numbers.ptr()).ptr(d_rotated.ptr()).ptr(d_reversed.ptr()).i32(kElements));
  device.launch("warp_votes", grid, kBlock, 0,
                KernelArgs().ptr(d_numbers.ptr()).i32(kThreshold).ptr(d_ballots.ptr()).ptr(d_counts.ptr())
                    .ptr(d_flags.ptr()).i32(kElements));
  device.synchronize();

  // CPU replicas, warp by warp.
  const auto add = [](float p, float q) { return p + q; };
  std::vector<float> want_sums(grid);
  for (std::uint32_t b = 0; b < grid; ++b) {
    std::vector<float> warp_totals(32, 0.0f);
    for (std::uint32_t w = 0; w < kBlock / 32; ++w) {
      std::vector<float> lanes(32, 0.0f);
      for (std::uint32_t l = 0; l < 32; ++l) {
        const std::size_t i = b * kBlock + w * 32 + l;
        if (i < kElements) lanes[l] = values[i];
      }
      warp_totals[w] = warp_shuffle_down_reduce(lanes, add);
    }
    want_sums[b] = warp_shuffle_down_reduce(warp_totals, add);
  }
  std::vector<int> want_max(kElements), want_scan(kElements), want_rotated(kElements), want_reversed(kElements);
  std::vector<std::uint32_t> want_ballots(kWarps, 0);
  std::vector<int> want_counts(kWarps), want_flags(kWarps);
  for (int w = 0; w < kWarps; ++w) {
    const int base = w * 32;
    const int end = std::min(base + 32, kElements);
    const auto lane_value = [&](int lane, int fill) { return base + lane < kElements ? numbers[base + lane] : fill; };
    const int warp_max = *std::max_element(numbers.begin() + base, numbers.begin() + end);
    int running = 0;
    bool any = false;
    bool all = true;
    for (int i = base; i < end; ++i) {
      const int lane = i - base;
      want_max[i] = warp_max;
      running += numbers[i];
      want_scan[i] = running;
      want_rotated[i] = lane_value((lane & 16) + (((lane & 15) + 1) & 15), -1);
      want_reversed[i] = lane_value(31 - lane, -1);
      const bool above = numbers[i] > kThreshold;
      if (above) want_ballots[w] |= 1u << lane;
      any = any || above;
      all = all && above;
    }
    want_counts[w] = __builtin_popcount(want_ballots[w]);
    want_flags[w] = (any ? 1 : 0) | (all ? 2 : 0);
  }

  // Float sums follow the exact shuffle-tree order; everything else is integer: all exact.
  Check check;
  check.exact("block sums (shfl.down)", d_block_sums.download(), want_sums);
  check.exact("warp max (shfl.bfly)", d_max.download(), want_max);
  check.exact("warp scan (shfl.up)", d_scan.download(), want_scan);
  check.exact("segment rotate (shfl.idx width 16)", d_rotated.download(), want_rotated);
  check.exact("reverse (shfl.idx)", d_reversed.download(), want_reversed);
  check.exact("ballots", d_ballots.download(), want_ballots);
  check.exact("ballot popc", d_counts.download(), want_counts);
  check.exact("any/all", d_flags.download(), want_flags);
  return check.result("10003 elements, 40 CTAs x 256: shfl down/bfly/up/idx, ballot, any, all");
}

}  // namespace gpuvp::workloads
