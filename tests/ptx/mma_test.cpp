// mma.sync and ldmatrix on the functional model against a CPU GEMM. The kernels (cuda/mma.cu)
// build fragments with the PTX ISA's layouts written out independently of the model, so a wrong
// layout in either place shows up as a wrong product. Small integer inputs: every product and
// sum is exact, so the f32/f16/s32 results are exact too.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/ptx/half_values.h"
#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

std::vector<int> values(int count, int seed, int spread) {
  std::vector<int> v(count);
  for (int i = 0; i < count; ++i) v[i] = (i * seed + 3) % (2 * spread + 1) - spread;
  return v;
}

// Row-major GEMM: d = a (m x k) * b (k x n) + c.
std::vector<long long> gemm(const std::vector<int>& a, const std::vector<int>& b, const std::vector<int>& c, int m, int n, int k) {
  std::vector<long long> d(m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      long long s = c[i * n + j];
      for (int p = 0; p < k; ++p) s += static_cast<long long>(a[i * k + p]) * b[p * n + j];
      d[i * n + j] = s;
    }
  return d;
}

template <typename T, typename F>
std::vector<T> convert(const std::vector<int>& v, F f) {
  std::vector<T> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = f(static_cast<float>(v[i]));
  return out;
}

enum class Kind { kF16F32, kF16F16, kBf16F32, kTf32 };

void run_float(const char* kernel, Kind kind, int k) {
  SCOPED_TRACE(kernel);
  Harness h("mma");
  const int m = 16, n = 8;
  const auto a = values(m * k, 7, 4), b = values(k * n, 5, 3), c = values(m * n, 3, 5);
  const auto expected = gemm(a, b, c, m, n, k);
  uint64_t da = 0, db = 0, dc = 0, dd = 0;
  if (kind == Kind::kF16F32 || kind == Kind::kF16F16) {
    da = h.upload(convert<uint16_t>(a, to_half));
    db = h.upload(convert<uint16_t>(b, to_half));
  } else if (kind == Kind::kBf16F32) {
    da = h.upload(convert<uint16_t>(a, to_bf16));
    db = h.upload(convert<uint16_t>(b, to_bf16));
  } else {
    // tf32: the instruction reads the upper 19 bits; low mantissa bits set here must not count.
    auto with_low_bits = [](float v) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      if (v != 0.0f) bits |= 0x1fffu;
      float out;
      std::memcpy(&out, &bits, 4);
      return out;
    };
    da = h.upload(convert<float>(a, with_low_bits));
    db = h.upload(convert<float>(b, with_low_bits));
  }
  if (kind == Kind::kF16F16) {
    dc = h.upload(convert<uint16_t>(c, to_half));
    dd = h.upload(std::vector<uint16_t>(m * n, 0xffff));
  } else {
    dc = h.upload(convert<float>(c, [](float v) { return v; }));
    dd = h.upload(std::vector<float>(m * n, -1.0f));
  }
  LaunchResult r = h.launch(kernel, Dim3(1), Dim3(32), 0, da, db, dc, dd);
  ASSERT_TRUE(r.ok()) << r.message;
  if (kind == Kind::kF16F16) {
    const auto d = h.download<uint16_t>(dd, m * n);
    for (int i = 0; i < m * n; ++i) EXPECT_EQ(from_half(d[i]), static_cast<float>(expected[i])) << "element " << i;
  } else {
    const auto d = h.download<float>(dd, m * n);
    for (int i = 0; i < m * n; ++i) EXPECT_EQ(d[i], static_cast<float>(expected[i])) << "element " << i;
  }
}

TEST(PtxMma, F16InputsF32AccumulateM16N8K16) { run_float("mma_f16_f32_m16n8k16", Kind::kF16F32, 16); }
TEST(PtxMma, F16InputsF16AccumulateM16N8K8) { run_float("mma_f16_f16_m16n8k8", Kind::kF16F16, 8); }
TEST(PtxMma, Bf16InputsM16N8K16) { run_float("mma_bf16_f32_m16n8k16", Kind::kBf16F32, 16); }
TEST(PtxMma, Tf32InputsM16N8K4) { run_float("mma_tf32_m16n8k4", Kind::kTf32, 4); }
TEST(PtxMma, Tf32InputsM16N8K8) { run_float("mma_tf32_m16n8k8", Kind::kTf32, 8); }

TEST(PtxMma, S8InputsM8N8K16) {
  Harness h("mma");
  const int m = 8, n = 8, k = 16;
  const auto a = values(m * k, 37, 120), b = values(k * n, 53, 127), c = values(m * n, 1001, 100000);
  const auto expected = gemm(a, b, c, m, n, k);
  const uint64_t da = h.upload(convert<int8_t>(a, [](float v) { return static_cast<int8_t>(v); }));
  const uint64_t db = h.upload(convert<int8_t>(b, [](float v) { return static_cast<int8_t>(v); }));
  const uint64_t dc = h.upload(c), dd = h.upload(std::vector<int>(m * n));
  LaunchResult r = h.launch("mma_s8_m8n8k16", Dim3(1), Dim3(32), 0, da, db, dc, dd);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto d = h.download<int>(dd, m * n);
  for (int i = 0; i < m * n; ++i) EXPECT_EQ(d[i], expected[i]) << "element " << i;
}

TEST(PtxMma, S8TimesU8M16N8K32Saturates) {
  Harness h("mma");
  const int m = 16, n = 8, k = 32;
  auto a = values(m * k, 37, 120);
  std::vector<int> b(k * n);
  for (int i = 0; i < k * n; ++i) b[i] = (i * 29 + 11) % 256;  // u8
  auto c = values(m * n, 1001, 100000);
  // Row 0 sums far above INT32_MAX, row 1 far below INT32_MIN: both clamp (.satfinite).
  for (int p = 0; p < k; ++p) a[0 * k + p] = 127, a[1 * k + p] = -128;
  for (int j = 0; j < n; ++j) c[0 * n + j] = INT_MAX - 5, c[1 * n + j] = INT_MIN + 5;
  auto expected = gemm(a, b, c, m, n, k);
  for (auto& e : expected) e = std::min<long long>(INT_MAX, std::max<long long>(INT_MIN, e));
  const uint64_t da = h.upload(convert<int8_t>(a, [](float v) { return static_cast<int8_t>(v); }));
  const uint64_t db = h.upload(convert<uint8_t>(b, [](float v) { return static_cast<uint8_t>(v); }));
  const uint64_t dc = h.upload(c), dd = h.upload(std::vector<int>(m * n));
  LaunchResult r = h.launch("mma_s8u8_m16n8k32_satfinite", Dim3(1), Dim3(32), 0, da, db, dc, dd);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto d = h.download<int>(dd, m * n);
  for (int i = 0; i < m * n; ++i) EXPECT_EQ(d[i], expected[i]) << "element " << i;
  EXPECT_EQ(d[0], INT_MAX);
  EXPECT_EQ(d[n], INT_MIN);
}

// ldmatrix .x4 (A) and .x2.trans (B) feed the f16 mma: the raw registers follow the PTX ISA's
// ldmatrix layout, and the product is the CPU's.
TEST(PtxMma, LdmatrixFeedsMma) {
  Harness h("mma");
  const int m = 16, n = 8, k = 16;
  const auto a = values(m * k, 7, 4), b = values(k * n, 5, 3), c = values(m * n, 3, 5);
  const auto expected = gemm(a, b, c, m, n, k);
  const auto ah = convert<uint16_t>(a, to_half), bh = convert<uint16_t>(b, to_half);
  const uint64_t da = h.upload(ah), db = h.upload(bh);
  const uint64_t dc = h.upload(convert<float>(c, [](float v) { return v; }));
  const uint64_t dd = h.upload(std::vector<float>(m * n)), raw = h.upload(std::vector<uint32_t>(32 * 6));
  LaunchResult r = h.launch("ldmatrix_mma", Dim3(1), Dim3(32), 0, da, db, dc, dd, raw);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto d = h.download<float>(dd, m * n);
  for (int i = 0; i < m * n; ++i) EXPECT_EQ(d[i], static_cast<float>(expected[i])) << "element " << i;
  const auto regs = h.download<uint32_t>(raw, 32 * 6);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int j = 0; j < 4; ++j) {  // A matrix j: rows 8 (j % 2).., cols 8 (j / 2)..; lane holds (g, 2t), (g, 2t + 1)
      const int row = 8 * (j % 2) + g, col = 8 * (j / 2) + 2 * t;
      EXPECT_EQ(regs[lane * 6 + j], ah[row * k + col] | (static_cast<uint32_t>(ah[row * k + col + 1]) << 16)) << lane << " a" << j;
    }
    for (int j = 0; j < 2; ++j) {  // B matrix j transposed: (2t, g), (2t + 1, g) of rows 8j..
      const int row = 8 * j + 2 * t;
      EXPECT_EQ(regs[lane * 6 + 4 + j], bh[row * n + g] | (static_cast<uint32_t>(bh[(row + 1) * n + g]) << 16)) << lane << " b" << j;
    }
  }
}

TEST(PtxMma, BadFormsAreRejectedWithAReason) {
  auto parse_error = [](const std::string& body) {
    const std::string text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() {\n.reg .b32 %r<12>;\n"
                             ".reg .f32 %f<8>;\n" + body + "\nret;\n}\n";
    try {
      Module::parse(text, "bad.ptx");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(parse_error("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2}, {%f4,%f5,%f6,%f7};"), "");
  EXPECT_NE(parse_error("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f0,%f1}, {%r0,%r1}, {%r2}, {%f4,%f5,%f6,%f7};")
                .find("vector of 4 registers, not 2"), std::string::npos);
  EXPECT_NE(parse_error("mma.sync.aligned.m16n8k8.col.row.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2}, {%f4,%f5,%f6,%f7};")
                .find("expected .row"), std::string::npos);
  EXPECT_NE(parse_error("mma.sync.aligned.m16n8k4.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2}, {%f4,%f5,%f6,%f7};")
                .find("type combination not modelled"), std::string::npos);
  EXPECT_NE(parse_error("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32 {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r0,%r1,%r2,%r3};")
                .find("shape .m16n8k64 is not modelled"), std::string::npos);
  EXPECT_EQ(parse_error("ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%r0,%r1}, [%r2];"), "");
  EXPECT_NE(parse_error("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0,%r1}, [%r2];").find("vector of 4 registers"), std::string::npos);
  EXPECT_NE(parse_error("ldmatrix.sync.aligned.m16n16.x1.shared.b8 {%r0}, [%r2];").find("expected .m8n8"), std::string::npos);
}

}  // namespace
}  // namespace gpuvp::ptx::testing
