#include <cmath>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_gemm(Device& device) {
  // Deliberately not multiples of the tile, so edge tiles are partly padded.
  constexpr int kM = 150;
  constexpr int kN = 123;
  constexpr int kK = 90;
  constexpr int kTile = 16;
  const float alpha = 0.75f;
  const float beta = 2.0f;

  Rng rng(0x5eed0004);
  std::vector<float> a(kM * kK), b(kK * kN), c(kM * kN);
  for (float& v : a) v = rng.uniform_float(-1.0f, 1.0f);
  for (float& v : b) v = rng.uniform_float(-1.0f, 1.0f);
  for (float& v : c) v = rng.uniform_float(-1.0f, 1.0f);

  DeviceBuffer<float> d_a(device, a), d_b(device, b), d_c(device, c);
  device.launch("gemm_tiled", Dim3(ceil_div(kN, kTile), ceil_div(kM, kTile)), Dim3(kTile, kTile), 0,
                KernelArgs().i32(kM).i32(kN).i32(kK).f32(alpha).ptr(d_a.ptr()).ptr(d_b.ptr()).f32(beta).ptr(d_c.ptr()));
  device.synchronize();

  std::vector<float> want(kM * kN);
  const int padded_k = (kK + kTile - 1) / kTile * kTile;
  for (int r = 0; r < kM; ++r) {
    for (int col = 0; col < kN; ++col) {
      float acc = 0.0f;
      for (int i = 0; i < padded_k; ++i) {
        const float av = i < kK ? a[r * kK + i] : 0.0f;
        const float bv = i < kK ? b[i * kN + col] : 0.0f;
        acc = std::fma(av, bv, acc);
      }
      want[r * kN + col] = std::fma(alpha, acc, beta * c[r * kN + col]);
    }
  }

  // Identical fmaf sequence per element: exact.
  Check check;
  check.exact("C", d_c.download(), want);
  return check.result("150x123x90 float, 16x16 tiles, 80 CTAs");
}

}  // namespace gpuvp::workloads
