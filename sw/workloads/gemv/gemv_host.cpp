#include <cmath>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_gemv(Device& device) {
  constexpr int kRows = 700;
  constexpr int kCols = 517;
  constexpr std::uint32_t kBlock = 128;
  const double alpha = 1.5;
  const double beta = -0.5;

  Rng rng(0x5eed0003);
  std::vector<double> a(static_cast<std::size_t>(kRows) * kCols), x_n(kCols), x_t(kRows), y_n(kRows), y_t(kCols);
  for (double& v : a) v = rng.uniform_double(-1.0, 1.0);
  for (double& v : x_n) v = rng.uniform_double(-1.0, 1.0);
  for (double& v : x_t) v = rng.uniform_double(-1.0, 1.0);
  for (double& v : y_n) v = rng.uniform_double(-1.0, 1.0);
  for (double& v : y_t) v = rng.uniform_double(-1.0, 1.0);

  DeviceBuffer<double> d_a(device, a), d_xn(device, x_n), d_xt(device, x_t), d_yn(device, y_n), d_yt(device, y_t);
  device.launch("gemv_n", ceil_div(kRows, kBlock), kBlock, 0,
                KernelArgs().i32(kRows).i32(kCols).f64(alpha).ptr(d_a.ptr()).ptr(d_xn.ptr()).f64(beta).ptr(d_yn.ptr()));
  device.launch("gemv_t", ceil_div(kCols, kBlock), kBlock, kBlock * sizeof(double),
                KernelArgs().i32(kRows).i32(kCols).f64(alpha).ptr(d_a.ptr()).ptr(d_xt.ptr()).f64(beta).ptr(d_yt.ptr()));
  device.synchronize();

  std::vector<double> want_n(kRows), want_t(kCols);
  for (int r = 0; r < kRows; ++r) {
    double acc = 0.0;
    for (int j = 0; j < kCols; ++j) acc = std::fma(a[static_cast<std::size_t>(r) * kCols + j], x_n[j], acc);
    want_n[r] = std::fma(alpha, acc, beta * y_n[r]);
  }
  for (int c = 0; c < kCols; ++c) {
    double acc = 0.0;
    for (int i = 0; i < kRows; ++i) acc = std::fma(a[static_cast<std::size_t>(i) * kCols + c], x_t[i], acc);
    want_t[c] = std::fma(alpha, acc, beta * y_t[c]);
  }

  // Same fma sequence on both sides: exact.
  Check check;
  check.exact("y = A x", d_yn.download(), want_n);
  check.exact("y = A^T x", d_yt.download(), want_t);
  return check.result("700x517 double, N and T forms, 128 threads per CTA");
}

}  // namespace gpuvp::workloads
