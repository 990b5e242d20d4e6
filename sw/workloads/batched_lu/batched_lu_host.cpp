#include <cmath>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_batched_lu(Device& device) {
  constexpr int kSize = 8;
  constexpr int kBatch = 1000;  // 1000 / 16 per CTA leaves a partly empty last CTA
  constexpr std::uint32_t kThreads = 128;
  constexpr std::uint32_t kPerCta = kThreads / kSize;
  constexpr std::size_t kElems = kSize * kSize;

  Rng rng(0x5eed0007);
  std::vector<double> matrices(kBatch * kElems);
  for (double& v : matrices) v = rng.uniform_double(-1.0, 1.0);

  DeviceBuffer<double> d_matrices(device, matrices);
  DeviceBuffer<int> d_pivots(device, kBatch * kSize);
  device.launch("batched_lu", ceil_div(kBatch, kPerCta), kThreads, kPerCta * kElems * sizeof(double),
                KernelArgs().ptr(d_matrices.ptr()).ptr(d_pivots.ptr()).i32(kBatch));
  device.synchronize();

  std::vector<double> want = matrices;
  std::vector<int> want_pivots(kBatch * kSize);
  for (int m = 0; m < kBatch; ++m) {
    double* a = &want[static_cast<std::size_t>(m) * kElems];
    for (int k = 0; k < kSize; ++k) {
      int pivot = k;
      for (int i = k + 1; i < kSize; ++i) {
        if (std::fabs(a[i * kSize + k]) > std::fabs(a[pivot * kSize + k])) pivot = i;
      }
      want_pivots[static_cast<std::size_t>(m * kSize + k)] = pivot;
      for (int j = 0; j < kSize; ++j) std::swap(a[k * kSize + j], a[pivot * kSize + j]);
      for (int r = k + 1; r < kSize; ++r) {
        const double factor = a[r * kSize + k] / a[k * kSize + k];
        a[r * kSize + k] = factor;
        for (int j = k + 1; j < kSize; ++j) a[r * kSize + j] = std::fma(-factor, a[k * kSize + j], a[r * kSize + j]);
      }
    }
  }

  // Same pivot choice and same divide/fma sequence per element: exact.
  Check check;
  check.exact("pivots", d_pivots.download(), want_pivots);
  check.exact("LU", d_matrices.download(), want);
  return check.result("1000 8x8 double LU with partial pivoting, 16 per CTA");
}

}  // namespace gpuvp::workloads
