#include <algorithm>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_pathfinder(Device& device) {
  constexpr int kRows = 101;
  constexpr int kCols = 8'000;
  constexpr int kPyramid = 8;  // rows per launch
  constexpr int kBlock = 256;

  Rng rng(0x5eed0009);
  std::vector<int> wall(static_cast<std::size_t>(kRows) * kCols);
  for (int& w : wall) w = rng.uniform_int(0, 9);

  DeviceBuffer<int> d_wall(device, wall), d_a(device, kCols), d_b(device, kCols);
  d_a.upload(std::vector<int>(wall.begin(), wall.begin() + kCols));  // row 0 costs its own weight
  DevicePtr in = d_a.ptr();
  DevicePtr out = d_b.ptr();
  for (int row = 1; row < kRows; row += kPyramid) {
    const int steps = std::min(kPyramid, kRows - row);  // the last launch is shorter
    const std::uint32_t grid = ceil_div(kCols, kBlock - 2 * steps);
    device.launch("pathfinder_rows", grid, kBlock, 0,
                  KernelArgs().ptr(d_wall.ptr()).ptr(in).ptr(out).i32(kCols).i32(row).i32(steps));
    std::swap(in, out);
  }
  device.synchronize();
  std::vector<int> got(kCols);
  device.copy_to_host(got.data(), in, kCols * sizeof(int));

  std::vector<int> cost(wall.begin(), wall.begin() + kCols), next(kCols);
  for (int r = 1; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) {
      int best = cost[c];
      if (c > 0) best = std::min(best, cost[c - 1]);
      if (c < kCols - 1) best = std::min(best, cost[c + 1]);
      next[c] = best + wall[static_cast<std::size_t>(r) * kCols + c];
    }
    std::swap(cost, next);
  }

  Check check;
  check.exact("cost", got, cost);
  return check.result("101x8000 grid, pyramid of 8 rows per launch, 256 threads");
}

}  // namespace gpuvp::workloads
