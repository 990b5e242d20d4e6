#include <cmath>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_trsv(Device& device) {
  constexpr int kN = 400;  // not a multiple of 32: the last diagonal block is partial
  constexpr int kBlock = 32;
  constexpr std::uint32_t kUpdateThreads = 64;

  // Diagonally dominant, so the solution stays well scaled.
  Rng rng(0x5eed0006);
  std::vector<double> l(static_cast<std::size_t>(kN) * kN, 0.0), b(kN);
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < i; ++j) l[static_cast<std::size_t>(i) * kN + j] = rng.uniform_double(-1.0, 1.0) / kN;
    l[static_cast<std::size_t>(i) * kN + i] = rng.uniform_double(1.0, 2.0);
    b[i] = rng.uniform_double(-1.0, 1.0);
  }

  DeviceBuffer<double> d_l(device, l), d_b(device, b);
  for (int start = 0; start < kN; start += kBlock) {
    device.launch("trsv_diagonal", 1, kBlock, 0, KernelArgs().i32(kN).ptr(d_l.ptr()).ptr(d_b.ptr()).i32(start));
    const int below = kN - start - kBlock;
    if (below > 0) {
      device.launch("trsv_update", ceil_div(static_cast<std::uint64_t>(below), kUpdateThreads), kUpdateThreads, 0,
                    KernelArgs().i32(kN).ptr(d_l.ptr()).ptr(d_b.ptr()).i32(start));
    }
  }
  device.synchronize();

  std::vector<double> x = b;
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < i; ++j) x[i] = std::fma(-l[static_cast<std::size_t>(i) * kN + j], x[j], x[i]);
    x[i] = x[i] / l[static_cast<std::size_t>(i) * kN + i];
  }

  // Same per-row operation sequence as forward substitution: exact.
  Check check;
  check.exact("x", d_b.download(), x);
  return check.result("lower triangular 400x400 double, 13 diagonal blocks of 32");
}

}  // namespace gpuvp::workloads
