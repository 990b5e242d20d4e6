#include <cmath>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_lud(Device& device) {
  constexpr int kN = 192;
  constexpr int kBlock = 16;
  constexpr int kBlocks = kN / kBlock;

  // Diagonally dominant, so no pivoting is needed.
  Rng rng(0x5eed000e);
  std::vector<float> a(kN * kN);
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) a[i * kN + j] = rng.uniform_float(-1.0f, 1.0f) + (i == j ? static_cast<float>(kN) : 0.0f);
  }

  DeviceBuffer<float> d_a(device, a);
  for (int step = 0; step < kBlocks; ++step) {
    const int offset = step * kBlock;
    const std::uint32_t remaining = static_cast<std::uint32_t>(kBlocks - step - 1);
    device.launch("lud_diagonal", 1, Dim3(kBlock, kBlock), 0, KernelArgs().ptr(d_a.ptr()).i32(kN).i32(offset));
    if (remaining == 0) break;
    device.launch("lud_perimeter", remaining, Dim3(kBlock, kBlock), 0, KernelArgs().ptr(d_a.ptr()).i32(kN).i32(offset));
    device.launch("lud_internal", Dim3(remaining, remaining), Dim3(kBlock, kBlock), 0,
                  KernelArgs().ptr(d_a.ptr()).i32(kN).i32(offset));
  }
  device.synchronize();

  // Unblocked right-looking Doolittle.
  for (int k = 0; k < kN; ++k) {
    for (int i = k + 1; i < kN; ++i) {
      a[i * kN + k] = a[i * kN + k] / a[k * kN + k];
      for (int j = k + 1; j < kN; ++j) a[i * kN + j] = std::fma(-a[i * kN + k], a[k * kN + j], a[i * kN + j]);
    }
  }

  // The blocked kernels apply the same operations per element in the same order: exact.
  Check check;
  check.exact("LU", d_a.download(), a);
  return check.result("192x192 float, 16x16 blocks, 12 steps of diagonal/perimeter/internal kernels");
}

}  // namespace gpuvp::workloads
