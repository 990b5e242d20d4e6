// wmma on the functional model: D = scale * (A x B) + C per the samples' GEMM pattern, for
// every modelled shape/layout/type combination, against a CPU GEMM. Inputs are small integers,
// so every product and sum is exact in f32 (and in f16 for the f16 accumulator case).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "models/gpu/ptx/float_util.h"
#include "tests/ptx/half_values.h"
#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

// The fragment element conversions (every element of every mma) against the definition, for all
// 2^16 half and bfloat16 bit patterns: sign, exponent and mantissa scaled with ldexp.
double small_float_by_definition(uint32_t h, int mantissa_bits, int exponent_bits, int bias) {
  const bool negative = (h >> (mantissa_bits + exponent_bits)) & 1;
  const int exponent = static_cast<int>((h >> mantissa_bits) & ((1u << exponent_bits) - 1));
  const double mantissa = h & ((1u << mantissa_bits) - 1);
  if (exponent == (1 << exponent_bits) - 1) {
    return mantissa != 0 ? std::numeric_limits<double>::quiet_NaN()
                         : (negative ? -1 : 1) * std::numeric_limits<double>::infinity();
  }
  const double value = exponent == 0 ? std::ldexp(mantissa, 1 - bias - mantissa_bits)
                                     : std::ldexp(mantissa + std::ldexp(1.0, mantissa_bits), exponent - bias - mantissa_bits);
  return negative ? -value : value;
}

TEST(SmallFloats, EveryHalfAndBfloat16ConvertsExactly) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const double half = fp::half_to_double(h), half_ref = small_float_by_definition(h, 10, 5, 15);
    const double bf16 = fp::bf16_to_double(h), bf16_ref = small_float_by_definition(h, 7, 8, 127);
    if (std::isnan(half_ref)) {
      EXPECT_TRUE(std::isnan(half)) << std::hex << h;
    } else {
      EXPECT_EQ(std::memcmp(&half, &half_ref, sizeof half), 0) << std::hex << h << ": " << half << " vs " << half_ref;
    }
    if (std::isnan(bf16_ref)) {
      EXPECT_TRUE(std::isnan(bf16)) << std::hex << h;
    } else {
      EXPECT_EQ(std::memcmp(&bf16, &bf16_ref, sizeof bf16), 0) << std::hex << h << ": " << bf16 << " vs " << bf16_ref;
    }
  }
}

enum class In { kF16, kBF16, kTF32, kS8, kU8 };
enum class Acc { kF32, kF16, kS32 };

struct Case {
  const char* kernel;
  In in;
  Acc acc;
  int tile_m, tile_n;
  bool a_row, b_row;
};

void run_case(const Case& k) {
  SCOPED_TRACE(k.kernel);
  Harness h("tensor");
  const int m = 2 * k.tile_m, n = 2 * k.tile_n, depth = 48;  // 2 x 2 tiles; K loop of 3 (16) or 6 (8) steps
  std::vector<int> a(m * depth), b(depth * n), c(m * n);
  for (int i = 0; i < m * depth; ++i) a[i] = (i * 7 + 3) % 9 - (k.in == In::kU8 ? 0 : 4);
  for (int i = 0; i < depth * n; ++i) b[i] = (i * 5 + 1) % 7 - (k.in == In::kU8 ? 0 : 3);
  for (int i = 0; i < m * n; ++i) c[i] = (i * 3) % 11 - 5;
  const int scale = 2;
  // Device layouts: A (m x depth) row- or column-major, B (depth x n) likewise, C row-major.
  auto a_at = [&](int r, int col) { return k.a_row ? r * depth + col : col * m + r; };
  auto b_at = [&](int r, int col) { return k.b_row ? r * n + col : col * depth + r; };
  std::vector<int> a_dev(a.size()), b_dev(b.size());
  for (int r = 0; r < m; ++r) for (int col = 0; col < depth; ++col) a_dev[a_at(r, col)] = a[r * depth + col];
  for (int r = 0; r < depth; ++r) for (int col = 0; col < n; ++col) b_dev[b_at(r, col)] = b[r * n + col];
  auto upload_inputs = [&](const std::vector<int>& values) -> uint64_t {
    switch (k.in) {
      case In::kF16: { std::vector<uint16_t> v; for (int x : values) v.push_back(to_half(static_cast<float>(x))); return h.upload(v); }
      case In::kBF16: { std::vector<uint16_t> v; for (int x : values) v.push_back(to_bf16(static_cast<float>(x))); return h.upload(v); }
      case In::kTF32: { std::vector<float> v; for (int x : values) v.push_back(static_cast<float>(x)); return h.upload(v); }
      case In::kS8: { std::vector<int8_t> v; for (int x : values) v.push_back(static_cast<int8_t>(x)); return h.upload(v); }
      case In::kU8: { std::vector<uint8_t> v; for (int x : values) v.push_back(static_cast<uint8_t>(x)); return h.upload(v); }
    }
    return 0;
  };
  const uint64_t da = upload_inputs(a_dev), db = upload_inputs(b_dev);
  uint64_t dc = 0, dd = 0;
  LaunchResult r;
  const Dim3 grid(static_cast<uint32_t>(n / k.tile_n), static_cast<uint32_t>(m / k.tile_m));
  if (k.acc == Acc::kF32) {
    std::vector<float> cv(c.begin(), c.end());
    dc = h.upload(cv), dd = h.upload(std::vector<float>(m * n));
    r = h.launch(k.kernel, grid, Dim3(32), 0, da, db, dc, dd, m, n, depth, static_cast<float>(scale));
  } else if (k.acc == Acc::kF16) {
    std::vector<uint16_t> cv;
    for (int x : c) cv.push_back(to_half(static_cast<float>(x)));
    dc = h.upload(cv), dd = h.upload(std::vector<uint16_t>(m * n));
    r = h.launch(k.kernel, grid, Dim3(32), 0, da, db, dc, dd, m, n, depth, to_half(static_cast<float>(scale)));
  } else {
    dc = h.upload(c), dd = h.upload(std::vector<int>(m * n));
    r = h.launch(k.kernel, grid, Dim3(32), 0, da, db, dc, dd, m, n, depth, scale);
  }
  ASSERT_TRUE(r.ok()) << r.message;
  std::vector<double> got(m * n);
  if (k.acc == Acc::kF32) {
    auto d = h.download<float>(dd, m * n);
    for (int i = 0; i < m * n; ++i) got[i] = d[i];
  } else if (k.acc == Acc::kF16) {
    auto d = h.download<uint16_t>(dd, m * n);
    for (int i = 0; i < m * n; ++i) got[i] = from_half(d[i]);
  } else {
    auto d = h.download<int>(dd, m * n);
    for (int i = 0; i < m * n; ++i) got[i] = d[i];
  }
  for (int row = 0; row < m; ++row) {
    for (int col = 0; col < n; ++col) {
      long long sum = 0;
      for (int x = 0; x < depth; ++x) sum += static_cast<long long>(a[row * depth + x]) * b[x * n + col];
      const long long expected = sum * scale + c[row * n + col];
      ASSERT_EQ(got[row * n + col], static_cast<double>(expected)) << "D(" << row << ", " << col << ")";
    }
  }
}

TEST(PtxWmma, F16InputsF32AccumulateRowCol) { run_case({"gemm_f16_f32_16x16x16_rc", In::kF16, Acc::kF32, 16, 16, true, false}); }
TEST(PtxWmma, F16InputsF16AccumulateM32N8ColRow) { run_case({"gemm_f16_f16_32x8x16_cr", In::kF16, Acc::kF16, 32, 8, false, true}); }
TEST(PtxWmma, F16InputsM8N32RowRow) { run_case({"gemm_f16_f32_8x32x16_rr", In::kF16, Acc::kF32, 8, 32, true, true}); }
TEST(PtxWmma, S8InputsS32Accumulate) { run_case({"gemm_s8_s32_16x16x16_rc", In::kS8, Acc::kS32, 16, 16, true, false}); }
TEST(PtxWmma, U8InputsM32N8) { run_case({"gemm_u8_s32_32x8x16_rr", In::kU8, Acc::kS32, 32, 8, true, true}); }
TEST(PtxWmma, Bf16Inputs) { run_case({"gemm_bf16_f32_16x16x16_rc", In::kBF16, Acc::kF32, 16, 16, true, false}); }
TEST(PtxWmma, Tf32InputsM16N16K8) { run_case({"gemm_tf32_f32_16x16x8_rc", In::kTF32, Acc::kF32, 16, 16, true, false}); }

// tf32 rounding by value: to 11 significant bits (at the subnormal spacing 2^-136 below 2^-126).
float ref_tf32(float x, int mode) {  // 0 rna, 1 rn, 2 rz
  if (std::isnan(x) || std::isinf(x) || x == 0.0f) return x;
  int e = 0;
  std::frexp(x, &e);
  const int quantum = std::max(e - 11, -136);
  const double scaled = std::ldexp(static_cast<double>(x), -quantum);
  double r = mode == 0 ? std::copysign(std::floor(std::fabs(scaled) + 0.5), scaled) : mode == 1 ? std::nearbyint(scaled) : std::trunc(scaled);
  return static_cast<float>(std::ldexp(r, quantum));
}

TEST(PtxWmma, Tf32ConversionRoundsLikeTheIsa) {
  Harness h("tensor");
  std::vector<float> in = {0.0f, -0.0f, 1.0f, -1.0f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 4096, 1.0f + 1.0f / 4096, -(1.0f + 1.0f / 4096),
                           1.0f + 3.0f / 2048 + 1.0f / 4096, 3.4028235e38f, -3.4028235e38f, 1e-40f, -3e-39f, 1.17549435e-38f,
                           std::numeric_limits<float>::infinity(), 0.1f, 3.14159265f, 65504.0f, 1e-3f};
  uint32_t seed = 12345;
  while (in.size() < 256) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t bits = seed;
    if ((bits & 0x7f800000u) == 0x7f800000u) bits &= 0xbfffffffu;  // no NaN/inf from the generator
    float v;
    std::memcpy(&v, &bits, 4);
    in.push_back(v);
  }
  const int n = static_cast<int>(in.size());
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<uint32_t>(3 * n));
  LaunchResult r = h.launch("to_tf32", Dim3(n / 64), Dim3(64), 0, din, dout, n);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto out = h.download<uint32_t>(dout, 3 * n);
  for (int i = 0; i < n; ++i) {
    for (int mode = 0; mode < 3; ++mode) {
      const float expected = ref_tf32(in[i], mode);
      float got;
      std::memcpy(&got, &out[3 * i + mode], 4);
      ASSERT_EQ(std::memcmp(&got, &expected, 4), 0) << "input " << in[i] << " mode " << mode << ": " << got << " vs " << expected;
    }
  }
}

TEST(PtxWmma, BadFormsAreRejectedWithAReason) {
  auto parse_error = [](const std::string& body) {
    const std::string text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() {\n.reg .b32 %r<16>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<4>;\n" +
                             body + "\nret;\n}\n";
    try {
      Module::parse(text, "bad.ptx");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(parse_error("wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1], 16;"), "");
  EXPECT_NE(parse_error("wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r0, %r1, %r2}, [%rd1], 16;").find("does not hold a 16x16 matrix"),
            std::string::npos);
  EXPECT_NE(parse_error("wmma.load.a.sync.aligned.row.m8n8k32.s4 {%r0}, [%rd1], 16;").find("not modelled"), std::string::npos);
  EXPECT_NE(parse_error("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f64 {%f0}, {%r0}, {%r1}, {%f1};").find("not modelled"),
            std::string::npos);
  EXPECT_NE(parse_error("wmma.load.a.sync.row.m16n16k16.f16 {%r0}, [%rd1];").find("expected .aligned"), std::string::npos);
}

}  // namespace
}  // namespace gpuvp::ptx::testing
