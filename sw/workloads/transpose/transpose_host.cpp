#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_transpose(Device& device) {
  constexpr int kRows = 300;
  constexpr int kCols = 457;
  constexpr std::uint32_t kTile = 32;

  Rng rng(0x5eed0012);
  std::vector<float> in(kRows * kCols);
  for (float& v : in) v = rng.uniform_float(-1e6f, 1e6f);

  DeviceBuffer<float> d_in(device, in), d_tiled(device, in.size()), d_naive(device, in.size());
  device.launch("transpose_tiled", Dim3(ceil_div(kCols, kTile), ceil_div(kRows, kTile)), Dim3(kTile, 8), 0,
                KernelArgs().ptr(d_in.ptr()).ptr(d_tiled.ptr()).i32(kRows).i32(kCols));
  device.launch("transpose_naive", Dim3(ceil_div(kCols, 16), ceil_div(kRows, 16)), Dim3(16, 16), 0,
                KernelArgs().ptr(d_in.ptr()).ptr(d_naive.ptr()).i32(kRows).i32(kCols));
  device.synchronize();

  std::vector<float> want(in.size());
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) want[c * kRows + r] = in[r * kCols + c];
  }
  Check check;
  check.exact("tiled", d_tiled.download(), want);
  check.exact("naive", d_naive.download(), want);
  return check.result("300x457 float, 32x32 shared tiles and naive");
}

}  // namespace gpuvp::workloads
