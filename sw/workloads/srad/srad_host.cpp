#include <algorithm>
#include <vector>

#include "common/check.h"
#include "common/reduction_order.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

constexpr int kRows = 160;
constexpr int kCols = 120;
constexpr int kPixels = kRows * kCols;
constexpr int kIterations = 4;
constexpr float kLambda = 0.5f;
constexpr std::uint32_t kStatsGrid = 30;
constexpr std::uint32_t kStatsBlock = 128;

// q0^2 = variance / mean^2 from the per-CTA partials, folded in CTA order.
float q0_squared(const std::vector<float>& partial_sum, const std::vector<float>& partial_square) {
  float sum = 0.0f;
  float square = 0.0f;
  for (std::size_t b = 0; b < partial_sum.size(); ++b) {
    sum += partial_sum[b];
    square += partial_square[b];
  }
  const float mean = sum / static_cast<float>(kPixels);
  const float variance = square / static_cast<float>(kPixels) - mean * mean;
  return variance / (mean * mean);
}

void cpu_iteration(std::vector<float>& image) {
  const auto add = [](float a, float b) { return a + b; };
  const std::vector<float> partial_sum =
      grid_stride_partials<float>(kPixels, kStatsGrid, kStatsBlock, 0.0f, [&](std::size_t i) { return image[i]; }, add);
  const std::vector<float> partial_square = grid_stride_partials<float>(
      kPixels, kStatsGrid, kStatsBlock, 0.0f, [&](std::size_t i) { return image[i] * image[i]; }, add);
  const float q0 = q0_squared(partial_sum, partial_square);

  std::vector<float> dn(kPixels), ds(kPixels), dw(kPixels), de(kPixels), coefficient(kPixels);
  for (int row = 0; row < kRows; ++row) {
    for (int col = 0; col < kCols; ++col) {
      const int i = row * kCols + col;
      const float centre = image[i];
      dn[i] = image[std::max(row - 1, 0) * kCols + col] - centre;
      ds[i] = image[std::min(row + 1, kRows - 1) * kCols + col] - centre;
      dw[i] = image[row * kCols + std::max(col - 1, 0)] - centre;
      de[i] = image[row * kCols + std::min(col + 1, kCols - 1)] - centre;
      const float gradient_sq = (((dn[i] * dn[i]) + (ds[i] * ds[i])) + (dw[i] * dw[i]) + (de[i] * de[i])) / (centre * centre);
      const float laplacian = (((dn[i] + ds[i]) + dw[i]) + de[i]) / centre;
      const float numerator = 0.5f * gradient_sq - 0.0625f * (laplacian * laplacian);
      const float denominator = 1.0f + 0.25f * laplacian;
      const float q_squared = numerator / (denominator * denominator);
      const float relative = (q_squared - q0) / (q0 * (1.0f + q0));
      float c = 1.0f / (1.0f + relative);
      coefficient[i] = c < 0.0f ? 0.0f : (c > 1.0f ? 1.0f : c);
    }
  }
  for (int row = 0; row < kRows; ++row) {
    for (int col = 0; col < kCols; ++col) {
      const int i = row * kCols + col;
      const float cs = coefficient[std::min(row + 1, kRows - 1) * kCols + col];
      const float ce = coefficient[row * kCols + std::min(col + 1, kCols - 1)];
      const float divergence =
          ((coefficient[i] * dn[i] + cs * ds[i]) + coefficient[i] * dw[i]) + ce * de[i];
      image[i] = image[i] + (0.25f * kLambda) * divergence;
    }
  }
}

}  // namespace

WorkloadResult run_srad(Device& device) {
  constexpr std::uint32_t kTileX = 16;
  constexpr std::uint32_t kTileY = 8;

  // A speckled image: smooth gradient times random multiplicative noise, strictly positive.
  Rng rng(0x5eed000d);
  std::vector<float> image(kPixels);
  for (int row = 0; row < kRows; ++row) {
    for (int col = 0; col < kCols; ++col) {
      const float base = 0.2f + 0.6f * static_cast<float>(row + col) / static_cast<float>(kRows + kCols);
      image[row * kCols + col] = base * rng.uniform_float(0.5f, 1.5f);
    }
  }

  DeviceBuffer<float> d_image(device, image), d_n(device, kPixels), d_s(device, kPixels), d_w(device, kPixels),
      d_e(device, kPixels), d_c(device, kPixels), d_psum(device, kStatsGrid), d_psquare(device, kStatsGrid);
  const Dim3 grid(ceil_div(kCols, kTileX), ceil_div(kRows, kTileY));
  const Dim3 block(kTileX, kTileY);
  for (int it = 0; it < kIterations; ++it) {
    device.launch("srad_statistics", kStatsGrid, kStatsBlock, 2 * kStatsBlock * sizeof(float),
                  KernelArgs().ptr(d_image.ptr()).i32(kPixels).ptr(d_psum.ptr()).ptr(d_psquare.ptr()));
    device.synchronize();
    const float q0 = q0_squared(d_psum.download(), d_psquare.download());
    device.launch("srad_coefficients", grid, block, 0,
                  KernelArgs().ptr(d_image.ptr()).i32(kRows).i32(kCols).f32(q0).ptr(d_n.ptr()).ptr(d_s.ptr())
                      .ptr(d_w.ptr()).ptr(d_e.ptr()).ptr(d_c.ptr()));
    device.launch("srad_update", grid, block, 0,
                  KernelArgs().ptr(d_image.ptr()).i32(kRows).i32(kCols).f32(kLambda).ptr(d_n.ptr()).ptr(d_s.ptr())
                      .ptr(d_w.ptr()).ptr(d_e.ptr()).ptr(d_c.ptr()));
  }
  device.synchronize();

  for (int it = 0; it < kIterations; ++it) cpu_iteration(image);

  // Unfused, correctly rounded operations in the same order on both sides: exact.
  Check check;
  check.exact("image", d_image.download(), image);
  return check.result("160x120 image, 4 iterations, 16x8 CTAs");
}

}  // namespace gpuvp::workloads
