#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/reduction_order.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

constexpr int kElements = 100'003;  // odd, so the grid-stride tails differ per thread
constexpr std::uint32_t kGrid = 48;
constexpr std::uint32_t kBlock = 256;
constexpr std::uint32_t kFinalBlock = 64;

enum ReduceKind { kSum = 0, kNrm1 = 1, kNrm2 = 2, kNrmInf = 3, kDot = 4 };

double cpu_reduce(int kind, const std::vector<double>& x, const std::vector<double>& y) {
  const auto combine = [kind](double a, double b) { return kind == kNrmInf ? std::fmax(a, b) : a + b; };
  const auto term = [&](std::size_t i) {
    switch (kind) {
      case kNrm1:
      case kNrmInf:
        return std::fabs(x[i]);
      case kNrm2:
        return x[i] * x[i];
      case kDot:
        return x[i] * y[i];
      default:
        return x[i];
    }
  };
  const std::vector<double> partials = grid_stride_partials<double>(x.size(), kGrid, kBlock, 0.0, term, combine);
  const double total = grid_stride_partials<double>(partials.size(), 1, kFinalBlock, 0.0,
                                                    [&](std::size_t i) { return partials[i]; }, combine)[0];
  return kind == kNrm2 ? std::sqrt(total) : total;
}

}  // namespace

WorkloadResult run_blas1(Device& device) {
  Rng rng(0x5eed0002);
  std::vector<double> x(kElements), y(kElements);
  for (int i = 0; i < kElements; ++i) {
    x[i] = rng.uniform_double(-10.0, 10.0);
    y[i] = rng.uniform_double(-10.0, 10.0);
  }
  const double alpha = 1.0 / 3.0;
  const double beta = -2.75;

  DeviceBuffer<double> d_x(device, x), d_y(device, y), d_out(device, kElements);
  DeviceBuffer<double> d_partial(device, kGrid), d_scalar(device, 1);
  const auto elementwise = [&](const std::string& kernel, const KernelArgs& args) {
    device.launch(kernel, kGrid, kBlock, 0, args);
    device.synchronize();
  };
  // Every element-wise operation is one correctly rounded operation (or one fma) per element on
  // both sides, and the reductions follow the kernels' exact order: all checks are bitwise.
  Check check;

  elementwise("blas_abs", KernelArgs().ptr(d_x.ptr()).ptr(d_out.ptr()).i32(kElements));
  std::vector<double> want(kElements);
  for (int i = 0; i < kElements; ++i) want[i] = std::fabs(x[i]);
  check.exact("abs", d_out.download(), want);

  d_out.upload(y);
  elementwise("blas_axpy", KernelArgs().f64(alpha).ptr(d_x.ptr()).ptr(d_out.ptr()).i32(kElements));
  for (int i = 0; i < kElements; ++i) want[i] = std::fma(alpha, x[i], y[i]);
  check.exact("axpy", d_out.download(), want);

  d_out.upload(y);
  elementwise("blas_axpby", KernelArgs().f64(alpha).ptr(d_x.ptr()).f64(beta).ptr(d_out.ptr()).i32(kElements));
  for (int i = 0; i < kElements; ++i) want[i] = std::fma(alpha, x[i], beta * y[i]);
  check.exact("axpby", d_out.download(), want);

  d_out.upload(x);
  elementwise("blas_scal", KernelArgs().f64(beta).ptr(d_out.ptr()).i32(kElements));
  for (int i = 0; i < kElements; ++i) want[i] = beta * x[i];
  check.exact("scal", d_out.download(), want);

  elementwise("blas_reciprocal", KernelArgs().ptr(d_x.ptr()).ptr(d_out.ptr()).i32(kElements));
  for (int i = 0; i < kElements; ++i) want[i] = 1.0 / x[i];
  check.exact("reciprocal", d_out.download(), want);

  elementwise("blas_mult", KernelArgs().ptr(d_x.ptr()).ptr(d_y.ptr()).ptr(d_out.ptr()).i32(kElements));
  for (int i = 0; i < kElements; ++i) want[i] = x[i] * y[i];
  check.exact("mult", d_out.download(), want);

  const char* reduce_names[] = {"sum", "nrm1", "nrm2", "nrminf", "dot"};
  std::vector<double> reduced(5);
  for (int kind = kSum; kind <= kDot; ++kind) {
    device.launch("blas_reduce_partial", kGrid, kBlock, kBlock * sizeof(double),
                  KernelArgs().i32(kind).ptr(d_x.ptr()).ptr(d_y.ptr()).ptr(d_partial.ptr()).i32(kElements));
    device.launch("blas_reduce_final", 1, kFinalBlock, kFinalBlock * sizeof(double),
                  KernelArgs().i32(kind).ptr(d_partial.ptr()).ptr(d_scalar.ptr()).i32(static_cast<int>(kGrid)));
    device.synchronize();
    reduced[static_cast<std::size_t>(kind)] = d_scalar.download()[0];
    check.exact(reduce_names[kind], reduced[static_cast<std::size_t>(kind)], cpu_reduce(kind, x, y));
  }

  // update: y += dot(x, y) / 1e6 * x, with the scale taken from the device's own dot result.
  d_out.upload(y);
  const double scale = reduced[kDot] / 1e6;
  d_scalar.upload({scale});
  elementwise("blas_update", KernelArgs().ptr(d_scalar.ptr()).ptr(d_x.ptr()).ptr(d_out.ptr()).i32(kElements));
  for (int i = 0; i < kElements; ++i) want[i] = std::fma(scale, x[i], y[i]);
  check.exact("update", d_out.download(), want);

  return check.result("12 BLAS-1 ops on 100003 doubles, " + std::to_string(kGrid) + " CTAs x " + std::to_string(kBlock));
}

}  // namespace gpuvp::workloads
