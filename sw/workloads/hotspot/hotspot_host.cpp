#include <algorithm>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

struct Coefficients {
  float step_over_capacitance;
  float rx_inverse;
  float ry_inverse;
  float rz_inverse;
  float ambient;
};

float cell(float center, float north, float south, float east, float west, float power, const Coefficients& k) {
  const float two_center = 2.0f * center;
  const float vertical = ((north + south) - two_center) * k.ry_inverse;
  const float horizontal = ((east + west) - two_center) * k.rx_inverse;
  const float to_ambient = (k.ambient - center) * k.rz_inverse;
  const float delta = ((power + vertical) + horizontal) + to_ambient;
  return center + k.step_over_capacitance * delta;
}

}  // namespace

WorkloadResult run_hotspot(Device& device) {
  constexpr int kRows = 200;
  constexpr int kCols = 184;  // neither a multiple of the tile
  constexpr int kSteps = 8;
  constexpr std::uint32_t kTile = 16;
  const Coefficients k{0.35f, 0.1f, 0.12f, 0.01f, 80.0f};

  Rng rng(0x5eed0008);
  std::vector<float> power(kRows * kCols), temp(kRows * kCols);
  for (float& p : power) p = rng.uniform_float(0.0f, 5.0f);
  for (float& t : temp) t = rng.uniform_float(320.0f, 345.0f);

  DeviceBuffer<float> d_power(device, power), d_a(device, temp), d_b(device, kRows * kCols);
  DevicePtr in = d_a.ptr();
  DevicePtr out = d_b.ptr();
  for (int step = 0; step < kSteps; ++step) {
    device.launch("hotspot_step", Dim3(ceil_div(kCols, kTile), ceil_div(kRows, kTile)), Dim3(kTile, kTile), 0,
                  KernelArgs().i32(kRows).i32(kCols).ptr(d_power.ptr()).ptr(in).ptr(out)
                      .f32(k.step_over_capacitance).f32(k.rx_inverse).f32(k.ry_inverse).f32(k.rz_inverse).f32(k.ambient));
    std::swap(in, out);
  }
  device.synchronize();
  std::vector<float> got(kRows * kCols);
  device.copy_to_host(got.data(), in, got.size() * sizeof(float));

  std::vector<float> next(temp.size());
  for (int step = 0; step < kSteps; ++step) {
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < kCols; ++c) {
        const float center = temp[r * kCols + c];
        const float north = r > 0 ? temp[(r - 1) * kCols + c] : center;
        const float south = r < kRows - 1 ? temp[(r + 1) * kCols + c] : center;
        const float west = c > 0 ? temp[r * kCols + c - 1] : center;
        const float east = c < kCols - 1 ? temp[r * kCols + c + 1] : center;
        next[r * kCols + c] = cell(center, north, south, east, west, power[r * kCols + c], k);
      }
    }
    std::swap(temp, next);
  }

  // Unfused float operations in the same order on both sides: exact.
  Check check;
  check.exact("temperature", got, temp);
  return check.result("200x184 grid, 8 steps, 16x16 tiles with halo");
}

}  // namespace gpuvp::workloads
