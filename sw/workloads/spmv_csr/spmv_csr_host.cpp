#include <cmath>
#include <vector>

#include "common/check.h"
#include "common/reduction_order.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_spmv_csr(Device& device) {
  constexpr int kRows = 3000;
  constexpr int kCols = 2500;
  constexpr std::uint32_t kBlock = 128;

  // Row lengths 0..80 with a few empty rows; columns sorted and distinct per row.
  Rng rng(0x5eed0005);
  std::vector<int> row_start{0}, columns;
  std::vector<float> values;
  for (int r = 0; r < kRows; ++r) {
    const int length = (r % 17 == 0) ? 0 : rng.uniform_int(1, 80);
    int col = rng.uniform_int(0, 20);
    for (int e = 0; e < length && col < kCols; ++e) {
      columns.push_back(col);
      values.push_back(rng.uniform_float(-2.0f, 2.0f));
      col += rng.uniform_int(1, 60);
    }
    row_start.push_back(static_cast<int>(columns.size()));
  }
  std::vector<float> x(kCols);
  for (float& v : x) v = rng.uniform_float(-1.0f, 1.0f);

  DeviceBuffer<int> d_start(device, row_start), d_cols(device, columns);
  DeviceBuffer<float> d_vals(device, values), d_x(device, x), d_y_scalar(device, kRows), d_y_vector(device, kRows);
  const auto args = [&](const DeviceBuffer<float>& y) {
    return KernelArgs().i32(kRows).ptr(d_start.ptr()).ptr(d_cols.ptr()).ptr(d_vals.ptr()).ptr(d_x.ptr()).ptr(y.ptr());
  };
  device.launch("spmv_csr_scalar", ceil_div(kRows, kBlock), kBlock, 0, args(d_y_scalar));
  device.launch("spmv_csr_vector", ceil_div(std::uint64_t{kRows} * 32, kBlock), kBlock, 0, args(d_y_vector));
  device.synchronize();

  std::vector<float> want_scalar(kRows), want_vector(kRows);
  for (int r = 0; r < kRows; ++r) {
    float acc = 0.0f;
    std::vector<float> lanes(32, 0.0f);
    for (int e = row_start[r]; e < row_start[r + 1]; ++e) {
      acc = std::fma(values[e], x[columns[e]], acc);
      float& lane = lanes[static_cast<std::size_t>(e - row_start[r]) % 32];
      lane = std::fma(values[e], x[columns[e]], lane);
    }
    want_scalar[r] = acc;
    want_vector[r] = warp_shuffle_down_reduce(lanes, [](float p, float q) { return p + q; });
  }

  // Both kernels' summation orders are reproduced on the CPU: exact.
  Check check;
  check.exact("y (thread per row)", d_y_scalar.download(), want_scalar);
  check.exact("y (warp per row)", d_y_vector.download(), want_vector);
  return check.result("CSR 3000x2500, " + std::to_string(values.size()) + " nonzeros, scalar and warp kernels");
}

}  // namespace gpuvp::workloads
