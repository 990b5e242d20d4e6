// Instruction families against CPU computations: bit-exact where PTX promises IEEE results,
// within the documented error bounds for .approx instructions.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

constexpr int kCount = 256;

template <typename T>
uint64_t bits_of(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

// Directed rounding for CPU references: the operations run in __float128, whose software
// arithmetic follows the rounding mode set here (x86 hosts under emulation do not always
// apply it to SSE float/double instructions). Rounding twice in the same direction, through
// quad precision, equals rounding once.
__extension__ typedef __float128 Quad;
template <typename T>
__attribute__((noinline, optimize("O0"))) Quad q(T v) { return static_cast<Quad>(v); }
// Kept out of the optimiser's reach: at -O2 GCC narrows quad arithmetic on float inputs
// back to float arithmetic, which loses the directed rounding.
template <typename F>
__attribute__((noinline, optimize("O0"))) auto with_rounding(int mode, F&& f) {
  const int saved = std::fegetround();
  std::fesetround(mode);
  auto result = f();
  std::fesetround(saved);
  return result;
}

// sqrt rounded up: the nearest result, stepped up when its square is below x (exact in double).
float sqrt_upward(float x) {
  float s = std::sqrt(x);
  if (std::isfinite(s) && static_cast<double>(s) * static_cast<double>(s) < static_cast<double>(x)) s = std::nextafter(s, std::numeric_limits<float>::infinity());
  return s;
}

std::vector<uint32_t> interesting_u32(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v = {0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 31, 32, 33, 0x12345678, 0xdeadbeef};
  while (v.size() < kCount) {
    uint32_t x = rng();
    if (v.size() % 3 == 0) x >>= (rng() % 31);
    v.push_back(x);
  }
  return v;
}

std::vector<float> interesting_floats(uint32_t seed) {
  std::mt19937 rng(seed);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-40f, -1e-39f, 3.0e38f, -3.0e38f, inf, -inf,
                          std::numeric_limits<float>::quiet_NaN(), 2.5f, -2.5f, 3.5f, 1.17549435e-38f, 7.0f};
  std::uniform_real_distribution<float> small(-100.0f, 100.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  while (v.size() < kCount) v.push_back(std::ldexp(small(rng), exponent(rng)));
  return v;
}

uint32_t ref_bfe(uint32_t a, uint32_t pos, uint32_t len, bool sign) {
  uint32_t r = 0;
  const uint32_t sbit = (pos + len - 1 < 32) ? (a >> (pos + len - 1)) & 1 : (a >> 31) & 1;
  for (uint32_t i = 0; i < 32; ++i) {
    uint32_t bit;
    if (i < len) bit = (pos + i < 32) ? (a >> (pos + i)) & 1 : (sign ? (a >> 31) & 1 : 0);
    else bit = (sign && len > 0) ? sbit : 0;
    r |= bit << i;
  }
  return r;
}

uint32_t ref_prmt(uint32_t a, uint32_t b, uint32_t c) {
  uint64_t bytes = (uint64_t{b} << 32) | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t sel = (c >> (4 * i)) & 15;
    uint32_t byte = (bytes >> (8 * (sel & 7))) & 0xff;
    if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;
    r |= byte << (8 * i);
  }
  return r;
}

TEST(PtxArithmetic, Int32FamilyMatchesCpu) {
  Harness h("arith");
  auto a = interesting_u32(1), b = interesting_u32(2), c = interesting_u32(3);
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(c), dout = h.upload(std::vector<uint32_t>(kCount * 40));
  LaunchResult r = h.launch("int32_ops", Dim3(kCount / 64), Dim3(64), 0, da, db, dc, dout, kCount);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<uint32_t>(dout, kCount * 40);
  for (int i = 0; i < kCount; ++i) {
    const uint32_t x = a[i], y = b[i], z = c[i];
    const int32_t sx = static_cast<int32_t>(x), sy = static_cast<int32_t>(y);
    std::vector<uint32_t> e(40);
    e[0] = x + y;
    e[1] = x - y;
    e[2] = x * y;
    e[3] = static_cast<uint32_t>((int64_t{sx} * sy) >> 32);
    e[4] = static_cast<uint32_t>((uint64_t{x} * y) >> 32);
    e[5] = x * y + z;
    e[6] = static_cast<uint32_t>(uint64_t{x & 0xffffff} * (y & 0xffffff));
    {
      int64_t p = int64_t{static_cast<int32_t>(x << 8) >> 8} * (static_cast<int32_t>(y << 8) >> 8);
      e[7] = static_cast<uint32_t>(static_cast<uint64_t>(p) >> 16);
    }
    e[8] = (x > y ? x - y : y - x) + z;
    const int32_t divisor = static_cast<int32_t>(y | 1);
    e[9] = (sx == INT32_MIN && divisor == -1) ? x : static_cast<uint32_t>(sx / divisor);
    e[10] = x % (y | 1);
    e[11] = static_cast<uint32_t>(std::min(sx, sy));
    e[12] = std::max(x, y);
    e[13] = sx < 0 ? 0u - x : x;
    e[14] = 0u - x;
    e[15] = static_cast<uint32_t>(__builtin_popcount(x));
    e[16] = x ? static_cast<uint32_t>(__builtin_clz(x)) : 32;
    {
      uint32_t m = sx < 0 ? ~x : x;
      e[17] = m ? 31 - static_cast<uint32_t>(__builtin_clz(m)) : 0xffffffffu;
    }
    {
      uint32_t rev = 0;
      for (int k = 0; k < 32; ++k) rev |= ((x >> k) & 1) << (31 - k);
      e[18] = rev;
    }
    e[19] = ref_bfe(x, y & 31, z & 31, false);
    e[20] = ref_bfe(x, y & 31, z & 31, true);
    {
      uint32_t pos = z & 31, len = (z >> 8) & 31, res = y;
      for (uint32_t k = 0; k < len && pos + k < 32; ++k) res = (res & ~(1u << (pos + k))) | (((x >> k) & 1) << (pos + k));
      e[21] = res;
    }
    e[22] = ref_prmt(x, y, z);
    e[23] = x ^ y ^ z;
    e[24] = (x & y) | (x & z) | (y & z);
    e[25] = static_cast<uint32_t>(((uint64_t{y} << 32 | x) << (z & 31)) >> 32);
    e[26] = static_cast<uint32_t>((uint64_t{y} << 32 | x) >> std::min(z & 63, 32u));
    e[27] = (y & 63) >= 32 ? 0 : x << (y & 63);
    e[28] = static_cast<uint32_t>((y & 63) >= 32 ? (sx < 0 ? -1 : 0) : sx >> (y & 63));
    e[29] = (y & 63) >= 32 ? 0 : x >> (y & 63);
    e[30] = (x & y) ^ (~x | z);
    e[31] = (x & 1) ? 1 : (x == 0 ? 1 : 0);
    {
      int64_t s = static_cast<int32_t>(z);
      for (int k = 0; k < 4; ++k) s += int64_t{static_cast<int8_t>(x >> (8 * k))} * ((y >> (8 * k)) & 0xff);
      e[32] = static_cast<uint32_t>(s);
    }
    e[33] = static_cast<uint32_t>(std::clamp<int64_t>(int64_t{sx} + sy, INT32_MIN, INT32_MAX));
    e[34] = sx < sy ? x : z;
    e[35] = sx > sy ? 0xffffffffu : 0;
    e[36] = static_cast<int32_t>(z) >= 0 ? x : y;
    e[37] = x ? static_cast<uint32_t>(__builtin_clz(x)) : 0xffffffffu;
    {
      uint64_t bytes = (uint64_t{y} << 32) | x;
      uint32_t res = 0;
      for (uint32_t k = 0; k < 4; ++k) res |= static_cast<uint32_t>((bytes >> (8 * (((z & 3) + k) & 7))) & 0xff) << (8 * k);
      e[38] = res;
    }
    {
      const bool hi = x > y;
      e[39] = (hi ? 1u : 0u) + (!hi ? 2u : 0u);
    }
    for (int k = 0; k < 40; ++k) ASSERT_EQ(out[i * 40 + k], e[k]) << "op " << k << " a=" << x << " b=" << y << " c=" << z;
  }
}

TEST(PtxArithmetic, Int64FamilyAndCarryChainsMatchCpu) {
  Harness h("arith");
  std::mt19937_64 rng(7);
  std::vector<uint64_t> a = {0, 1, ~0ULL, 1ULL << 63, 0x7fffffffffffffffULL, 0xffffffff, 0x100000000ULL};
  std::vector<uint64_t> b = {~0ULL, 1ULL << 32, 3, ~0ULL, 2, 0xffffffff, 0xffffffff};
  while (a.size() < kCount) a.push_back(rng() >> (rng() % 40)), b.push_back(rng() >> (rng() % 40));
  const uint64_t da = h.upload(a), db = h.upload(b), dout = h.upload(std::vector<uint64_t>(kCount * 12));
  LaunchResult r = h.launch("int64_ops", Dim3(kCount / 32), Dim3(32), 0, da, db, dout, kCount);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<uint64_t>(dout, kCount * 12);
  for (int i = 0; i < kCount; ++i) {
    const uint64_t x = a[i], y = b[i];
    const int64_t sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
    __extension__ typedef unsigned __int128 U128;
    __extension__ typedef __int128 S128;
    uint64_t e[12];
    e[0] = static_cast<uint64_t>((static_cast<U128>(x) * y) >> 64);
    e[1] = static_cast<uint64_t>((static_cast<S128>(sx) * sy) >> 64);
    e[2] = static_cast<uint64_t>(int64_t{static_cast<int32_t>(x)} * static_cast<int32_t>(y));
    e[3] = x / (y | 1);
    const int64_t d = static_cast<int64_t>(y | 1);
    e[4] = (sx == INT64_MIN && d == -1) ? 0 : static_cast<uint64_t>(sx % d);
    e[5] = static_cast<uint64_t>(__builtin_popcountll(x));
    e[6] = x ? static_cast<uint64_t>(__builtin_clzll(x)) : 64;
    uint64_t rev = 0;
    for (int k = 0; k < 64; ++k) rev |= ((x >> k) & 1) << (63 - k);
    e[7] = rev;
    e[8] = static_cast<uint64_t>(sx >> (y & 63));
    e[9] = x + y;
    e[10] = x - y;
    e[11] = static_cast<uint64_t>(std::min(sx, sy));
    for (int k = 0; k < 12; ++k) ASSERT_EQ(out[i * 12 + k], e[k]) << "op " << k << " a=" << x << " b=" << y;
  }
}

void expect_same_float(float actual, float expected, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what;
  } else {
    EXPECT_EQ(bits_of(actual), bits_of(expected)) << what << ": got " << actual << " expected " << expected;
  }
}

TEST(PtxArithmetic, Float32RoundingModesAreIeeeExact) {
  Harness h("arith");
  auto a = interesting_floats(11), b = interesting_floats(12), c = interesting_floats(13);
  std::rotate(b.begin(), b.begin() + 5, b.end());
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(c), dout = h.upload(std::vector<float>(kCount * 24));
  LaunchResult r = h.launch("float_ops", Dim3(kCount / 64), Dim3(64), 0, da, db, dc, dout, kCount);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<float>(dout, kCount * 24);
  auto flush = [](float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; };
  for (int i = 0; i < kCount; ++i) {
    volatile float x = a[i], y = b[i], z = c[i];
    const std::string at = "i=" + std::to_string(i) + " a=" + std::to_string(x) + " b=" + std::to_string(y);
    const float* o = &out[i * 24];
    expect_same_float(o[0], x + y, "add.rn " + at);
    expect_same_float(o[1], with_rounding(FE_TOWARDZERO, [&] { return static_cast<float>(q(x) + q(y)); }), "add.rz " + at);
    expect_same_float(o[2], with_rounding(FE_DOWNWARD, [&] { return static_cast<float>(q(x) + q(y)); }), "add.rm " + at);
    expect_same_float(o[3], with_rounding(FE_UPWARD, [&] { return static_cast<float>(q(x) + q(y)); }), "add.rp " + at);
    expect_same_float(o[4], with_rounding(FE_TOWARDZERO, [&] { return static_cast<float>(q(x) * q(y)); }), "mul.rz " + at);
    expect_same_float(o[5], with_rounding(FE_DOWNWARD, [&] { return static_cast<float>(q(x) * q(y) + q(z)); }), "fma.rm " + at);
    expect_same_float(o[6], with_rounding(FE_UPWARD, [&] { return static_cast<float>(q(x) * q(y) + q(z)); }), "fma.rp " + at);
    expect_same_float(o[7], x / y, "div.rn " + at);
    expect_same_float(o[8], with_rounding(FE_UPWARD, [&] { return static_cast<float>(q(x) / q(y)); }), "div.rp " + at);
    expect_same_float(o[9], with_rounding(FE_TOWARDZERO, [&] { return static_cast<float>(q(1.0f) / q(y)); }), "rcp.rz " + at);
    expect_same_float(o[10], std::sqrt(std::fabs(x)), "sqrt.rn " + at);
    expect_same_float(o[11], sqrt_upward(std::fabs(x)), "sqrt.rp " + at);
    expect_same_float(o[12], std::fmin(x, y), "min " + at);
    expect_same_float(o[13], std::fmax(x, z), "max " + at);
    expect_same_float(o[14], std::isnan(x) ? 0.0f : std::clamp(static_cast<float>(x), 0.0f, 1.0f), "sat " + at);
    expect_same_float(o[15], flush(flush(x) + flush(y)), "add.ftz " + at);
    expect_same_float(o[16], std::copysign(y, x), "copysign " + at);
    expect_same_float(o[17], std::fabs(x), "abs " + at);
    expect_same_float(o[18], -x, "neg " + at);
    expect_same_float(o[19], with_rounding(FE_DOWNWARD, [&] { return static_cast<float>(q(x) - q(y)); }), "sub.rm " + at);
    expect_same_float(o[20], std::nearbyint(x), "cvt.rni " + at);
    expect_same_float(o[21], std::floor(x), "cvt.rmi " + at);
    const int cls = std::fpclassify(x);
    const unsigned flags = (std::isfinite(x) ? 1u : 0u) | (std::isnan(x) ? 2u : 0u) | (cls == FP_SUBNORMAL ? 4u : 0u) | (cls == FP_NORMAL ? 8u : 0u);
    EXPECT_EQ(o[22], static_cast<float>(flags)) << "testp " << at;
    const bool unordered = std::isnan(x) || std::isnan(y);
    const unsigned cmp = ((unordered || x < y) ? 1u : 0u) | ((unordered || x >= y) ? 2u : 0u) | (!unordered ? 4u : 0u);
    EXPECT_EQ(o[23], static_cast<float>(cmp)) << "setp " << at;
  }
}

TEST(PtxArithmetic, ApproximateFloat32StaysWithinPtxErrorBounds) {
  Harness h("arith");
  std::vector<float> a;
  for (int i = 0; i < kCount; ++i) a.push_back(-50.0f + 100.0f * static_cast<float>(i) / kCount);
  const uint64_t da = h.upload(a), dout = h.upload(std::vector<float>(kCount * 8));
  LaunchResult r = h.launch("float_approx", Dim3(kCount / 64), Dim3(64), 0, da, dout, kCount);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<float>(dout, kCount * 8);
  for (int i = 0; i < kCount; ++i) {
    const double x = a[i];
    const float* o = &out[i * 8];
    if (std::fabs(x) < 3.14159) {  // sin/cos.approx: 2^-20.5 absolute in [-pi, pi]
      EXPECT_NEAR(o[0], std::sin(x), 1e-6) << x;
      EXPECT_NEAR(o[1], std::cos(x), 1e-6) << x;
    }
    EXPECT_NEAR(o[2], std::log2(std::fabs(x) + 1.0), 2e-6 * std::max(1.0, std::fabs(std::log2(std::fabs(x) + 1.0)))) << x;
    EXPECT_NEAR(o[3], std::exp2(x * 0.25), 4e-7 * std::exp2(x * 0.25) + 1e-30) << x;
    EXPECT_NEAR(o[4], 1.0 / std::sqrt(std::fabs(x) + 1.0), 3e-7 / std::sqrt(std::fabs(x) + 1.0)) << x;
    EXPECT_NEAR(o[5], x / 3.0, 2.5e-7 * std::fabs(x / 3.0) + 1e-30) << x;
    EXPECT_EQ(bits_of(o[6]), bits_of(static_cast<float>(a[i]) / 7.0f)) << x;
    EXPECT_NEAR(o[7], std::tanh(static_cast<double>(static_cast<float>(a[i]) * 0.1f)), 1e-3) << x;
  }
}

TEST(PtxArithmetic, Float64IncludingNvccDivisionExpansionIsExact) {
  Harness h("arith");
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> dist(-1e3, 1e3);
  std::vector<double> a = {1.0, -1.0, 0.0, 1e-310, 3.0, 1e300}, b = {3.0, 7.0, -2.0, 3.0, 1e-300, 1e-10}, c = {0.5, 0.5, 1.0, -1.0, 2.0, 1.0};
  while (a.size() < kCount) a.push_back(dist(rng)), b.push_back(dist(rng)), c.push_back(dist(rng));
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(c), dout = h.upload(std::vector<double>(kCount * 12));
  LaunchResult r = h.launch("double_ops", Dim3(kCount / 64), Dim3(64), 0, da, db, dc, dout, kCount);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<double>(dout, kCount * 12);
  for (int i = 0; i < kCount; ++i) {
    volatile double x = a[i], y = b[i], z = c[i];
    const double* o = &out[i * 12];
    const std::string at = "a=" + std::to_string(x) + " b=" + std::to_string(y);
    EXPECT_EQ(bits_of(o[0]), bits_of(with_rounding(FE_DOWNWARD, [&] { return static_cast<double>(q(x) + q(y)); }))) << "add.rm " << at;
    EXPECT_EQ(bits_of(o[1]), bits_of(with_rounding(FE_UPWARD, [&] { return static_cast<double>(q(x) * q(y)); }))) << "mul.rp " << at;
    EXPECT_EQ(bits_of(o[2]), bits_of(std::fma(x, y, z))) << "fma " << at;
    EXPECT_EQ(bits_of(o[3]), bits_of(x / y)) << "div " << at;
    EXPECT_EQ(bits_of(o[4]), bits_of(std::sqrt(std::fabs(x)))) << "sqrt " << at;
    EXPECT_EQ(bits_of(o[5]), bits_of(1.0 / y)) << "rcp.rn " << at;
    EXPECT_EQ(bits_of(o[6]), bits_of(with_rounding(FE_TOWARDZERO, [&] { return static_cast<double>(q(x) / q(y)); }))) << "div.rz " << at;
    EXPECT_EQ(bits_of(o[7]), bits_of(std::fmin(x, z))) << "min " << at;
    EXPECT_EQ(bits_of(o[8]), bits_of(static_cast<double>(with_rounding(FE_TOWARDZERO, [&] { return static_cast<float>(q(x)); })))) << "cvt.rz.f32.f64 " << at;
    const double scaled = std::nearbyint(x * 1e6);
    const double saturated = scaled >= 9.223372036854775807e18 ? 9.223372036854775807e18 : scaled <= -9.223372036854775808e18 ? -9.223372036854775808e18 : scaled;
    EXPECT_EQ(o[9], static_cast<double>(scaled >= 9.2e18 ? INT64_MAX : scaled <= -9.2e18 ? INT64_MIN : static_cast<long long>(saturated))) << "cvt.rni.s64.f64 " << at;
    EXPECT_EQ(bits_of(o[10]), bits_of(static_cast<double>(static_cast<long long>(y * 1e15)))) << "cvt.rn.f64.s64 " << at;
    const double truncated = std::trunc(x);
    const double expected_u32 = std::isnan(truncated) || truncated <= 0 ? 0.0 : truncated >= 4294967295.0 ? 4294967295.0 : truncated;
    EXPECT_EQ(o[11], expected_u32) << "cvt.rzi.u32.f64 (saturating) " << at;
  }
}

TEST(PtxArithmetic, Float64DirectedRoundingInTheSubnormalRange) {
  Harness h("arith");
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> mantissa(-2.0, 2.0);
  std::uniform_int_distribution<int> exponent(-560, -500);
  std::vector<double> a, b, c;
  while (a.size() < kCount) {
    a.push_back(std::ldexp(mantissa(rng), exponent(rng)));
    b.push_back(std::ldexp(mantissa(rng), exponent(rng)));
    c.push_back(a.size() % 7 == 0 ? 3.0 : std::ldexp(std::fabs(mantissa(rng)) + 0.5, 540));
  }
  a[0] = 1e308, b[0] = 10.0;  // overflow: rd/rz stay finite, ru goes to infinity
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(c), dout = h.upload(std::vector<double>(kCount * 6));
  LaunchResult r = h.launch("double_directed", Dim3(kCount / 64), Dim3(64), 0, da, db, dc, dout, kCount);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<double>(dout, kCount * 6);
  for (int i = 0; i < kCount; ++i) {
    const double x = a[i], y = b[i], z = c[i];
    const double small = z * 1e-300;
    const double* o = &out[i * 6];
    const std::string at = "i=" + std::to_string(i);
    EXPECT_EQ(bits_of(o[0]), bits_of(with_rounding(FE_DOWNWARD, [&] { return static_cast<double>(q(x) * q(y)); }))) << "mul.rm " << at;
    EXPECT_EQ(bits_of(o[1]), bits_of(with_rounding(FE_UPWARD, [&] { return static_cast<double>(q(x) * q(y)); }))) << "mul.rp " << at;
    EXPECT_EQ(bits_of(o[2]), bits_of(with_rounding(FE_UPWARD, [&] { return static_cast<double>(q(x) / q(z)); }))) << "div.rp " << at;
    EXPECT_EQ(bits_of(o[3]), bits_of(with_rounding(FE_TOWARDZERO, [&] { return static_cast<double>(q(x) / q(z)); }))) << "div.rz " << at;
    EXPECT_EQ(bits_of(o[4]), bits_of(with_rounding(FE_TOWARDZERO, [&] { return static_cast<double>(q(x) * q(y) + q(small)); }))) << "fma.rz " << at;
    EXPECT_EQ(bits_of(o[5]), bits_of(with_rounding(FE_DOWNWARD, [&] { return static_cast<double>(q(x) * q(y) - q(small)); }))) << "fma.rm " << at;
  }
}

TEST(PtxArithmetic, ConversionsRoundAndSaturate) {
  Harness h("arith");
  auto a = interesting_floats(21);
  const uint64_t da = h.upload(a), di = h.upload(std::vector<int>(kCount * 4)), du = h.upload(std::vector<unsigned>(kCount * 2)),
                 df = h.upload(std::vector<float>(kCount * 4));
  LaunchResult r = h.launch("conversions", Dim3(kCount / 64), Dim3(64), 0, da, di, du, df, kCount);
  ASSERT_TRUE(r.ok()) << r.message;
  auto ints = h.download<int>(di, kCount * 4);
  auto uints = h.download<unsigned>(du, kCount * 2);
  auto floats = h.download<float>(df, kCount * 4);
  auto sat_s32 = [](double v) -> int {
    if (std::isnan(v)) return 0;
    if (v <= -2147483648.0) return INT32_MIN;
    if (v >= 2147483647.0) return INT32_MAX;
    return static_cast<int>(v);
  };
  for (int i = 0; i < kCount; ++i) {
    const float x = a[i];
    const std::string at = "a=" + std::to_string(x);
    EXPECT_EQ(ints[i * 4 + 0], sat_s32(std::nearbyint(static_cast<double>(x)))) << "cvt.rni.s32 " << at;
    EXPECT_EQ(ints[i * 4 + 1], sat_s32(std::floor(static_cast<double>(x)))) << "cvt.rmi.s32 " << at;
    EXPECT_EQ(ints[i * 4 + 2], static_cast<int>(static_cast<signed char>(sat_s32(std::trunc(static_cast<double>(x)))))) << at;
    double up = std::ceil(static_cast<double>(x));
    long long ll = std::isnan(up) ? 0 : up >= 9.2e18 ? INT64_MAX : up <= -9.2e18 ? INT64_MIN : static_cast<long long>(up);
    EXPECT_EQ(ints[i * 4 + 3], static_cast<int>(ll >> 8)) << "cvt.rpi.s64 " << at;
    double tz = std::trunc(static_cast<double>(x));
    unsigned u = std::isnan(tz) || tz <= 0 ? 0u : tz >= 4294967295.0 ? 4294967295u : static_cast<unsigned>(tz);
    EXPECT_EQ(uints[i * 2 + 0], u) << "cvt.rzi.u32 " << at;
    double rn = std::nearbyint(static_cast<double>(x));
    unsigned u8 = std::isnan(rn) || rn <= 0 ? 0u : rn >= 255 ? 255u : static_cast<unsigned>(rn);
    EXPECT_EQ(uints[i * 2 + 1], u8) << "cvt.rni.sat.u8 " << at;
    const int scaled = std::isnan(x * 1e5f) ? 0 : sat_s32(std::trunc(static_cast<double>(x * 1e5f)));
    EXPECT_EQ(bits_of(floats[i * 4 + 0]), bits_of(with_rounding(FE_TOWARDZERO, [&] { return static_cast<float>(q(scaled)); }))) << at;
    const float magnitude = std::fabs(x) * 1e12f;
    const double mt = std::trunc(static_cast<double>(magnitude));
    const unsigned long long big = std::isnan(mt) ? 0 : mt >= 1.8e19 ? ~0ULL : static_cast<unsigned long long>(mt);
    EXPECT_EQ(bits_of(floats[i * 4 + 1]), bits_of(with_rounding(FE_UPWARD, [&] { return static_cast<float>(q(big)); }))) << at;
    const _Float16 half = static_cast<_Float16>(x);
    expect_same_float(floats[i * 4 + 2], static_cast<float>(half), "f16 rn " + at);
    // Round toward zero to f16: the rn result, stepped toward zero when it grew in magnitude.
    float rz = static_cast<float>(half);
    if (std::isfinite(x) && std::fabs(rz) > std::fabs(x)) {
      uint16_t hb;
      std::memcpy(&hb, &half, 2);
      --hb;
      _Float16 smaller;
      std::memcpy(&smaller, &hb, 2);
      rz = static_cast<float>(smaller);
    }
    if (std::isinf(rz) && std::isfinite(x)) rz = std::copysign(65504.0f, x);
    expect_same_float(floats[i * 4 + 3], rz, "f16 rz " + at);
  }
}

TEST(PtxArithmetic, HalfPrecisionPairsMatchCpuFloat16) {
  Harness h("arith");
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
  auto pack = [](float lo, float hi) {
    _Float16 l = static_cast<_Float16>(lo), u = static_cast<_Float16>(hi);
    uint16_t lb, ub;
    std::memcpy(&lb, &l, 2);
    std::memcpy(&ub, &u, 2);
    return static_cast<uint32_t>(lb) | (static_cast<uint32_t>(ub) << 16);
  };
  std::vector<uint32_t> a, b, c;
  for (int i = 0; i < kCount; ++i) {
    a.push_back(pack(dist(rng), dist(rng)));
    b.push_back(pack(dist(rng), i == 0 ? 65504.0f : dist(rng)));
    c.push_back(pack(dist(rng), dist(rng) * 1e-3f));
  }
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(c), dout = h.upload(std::vector<uint32_t>(kCount * 6));
  LaunchResult r = h.launch("half_ops", Dim3(kCount / 64), Dim3(64), 0, da, db, dc, dout, kCount);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<uint32_t>(dout, kCount * 6);
  auto half = [](uint32_t v, int which) {
    uint16_t bits = static_cast<uint16_t>(v >> (16 * which));
    _Float16 f;
    std::memcpy(&f, &bits, 2);
    return f;
  };
  auto bits16 = [](_Float16 f) {
    uint16_t raw;
    std::memcpy(&raw, &f, 2);
    return raw;
  };
  for (int i = 0; i < kCount; ++i) {
    for (int w = 0; w < 2; ++w) {
      const _Float16 x = half(a[i], w), y = half(b[i], w), z = half(c[i], w);
      const double xd = static_cast<double>(x), yd = static_cast<double>(y), zd = static_cast<double>(z);
      EXPECT_EQ(static_cast<uint16_t>(out[i * 6 + 0] >> (16 * w)), bits16(static_cast<_Float16>(xd + yd))) << i;
      EXPECT_EQ(static_cast<uint16_t>(out[i * 6 + 1] >> (16 * w)), bits16(static_cast<_Float16>(xd * yd))) << i;
      EXPECT_EQ(static_cast<uint16_t>(out[i * 6 + 2] >> (16 * w)), bits16(static_cast<_Float16>(std::fma(xd, yd, zd)))) << i;
      EXPECT_EQ(static_cast<uint16_t>(out[i * 6 + 3] >> (16 * w)), bits16(static_cast<_Float16>(xd - zd))) << i;
      EXPECT_EQ(static_cast<uint16_t>(out[i * 6 + 5] >> (16 * w)), bits16(xd > yd ? x : y)) << i;
    }
    const double lo = static_cast<double>(half(a[i], 0)) + static_cast<double>(half(b[i], 1));
    const double hi = static_cast<double>(half(a[i], 1)) * static_cast<double>(half(c[i], 0));
    EXPECT_EQ(static_cast<uint16_t>(out[i * 6 + 4]), bits16(static_cast<_Float16>(lo))) << i;
    EXPECT_EQ(static_cast<uint16_t>(out[i * 6 + 4] >> 16), bits16(static_cast<_Float16>(hi))) << i;
  }
}

// bf16 round-to-nearest-even from a float, independent of the executor's converter.
uint16_t bf16_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if (std::isnan(x)) return 0x7fc0;
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
float bf16_value(uint16_t b) {
  const uint32_t bits = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(PtxArithmetic, PackedHalfAndBfloat16ConversionsOnSm80) {
  Harness h("sm80");
  const int threads = 64;
  std::vector<float> a(2 * threads + 1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::ldexp(static_cast<float>(i) * 1.37f - 40.0f, static_cast<int>(i % 9) - 4);
  const uint64_t da = h.upload(a), dh = h.upload(std::vector<uint32_t>(threads)), db = h.upload(std::vector<uint32_t>(threads)),
                 dp = h.upload(std::vector<uint16_t>(threads));
  LaunchResult r = h.launch("pack_halves", Dim3(1), Dim3(threads), 0, da, dh, db, dp);
  ASSERT_TRUE(r.ok()) << r.message;
  auto halves = h.download<uint32_t>(dh, threads);
  auto bfloats = h.download<uint32_t>(db, threads);
  auto products = h.download<uint16_t>(dp, threads);
  auto half_bits = [](float x) {
    _Float16 f = static_cast<_Float16>(x);
    uint16_t raw;
    std::memcpy(&raw, &f, 2);
    return raw;
  };
  for (int i = 0; i < threads; ++i) {
    // __floats2half2_rn(x, y): x in the low half, y in the high half.
    EXPECT_EQ(halves[i] & 0xffff, half_bits(a[2 * i])) << i;
    EXPECT_EQ(halves[i] >> 16, half_bits(a[2 * i + 1])) << i;
    EXPECT_EQ(bfloats[i] & 0xffff, bf16_bits(a[2 * i])) << i;
    EXPECT_EQ(bfloats[i] >> 16, bf16_bits(a[2 * i + 1])) << i;
    const double product = static_cast<double>(bf16_value(bf16_bits(a[i]))) * static_cast<double>(bf16_value(bf16_bits(a[i + 1])));
    EXPECT_EQ(products[i], bf16_bits(static_cast<float>(product))) << i;  // exact in float: 8x8-bit mantissas
  }
}

TEST(PtxArithmetic, ReduxSyncOnSm80) {
  Harness h("sm80");
  std::vector<unsigned> in(64);
  for (unsigned i = 0; i < 64; ++i) in[i] = (i * 2654435761u) >> 7;
  in[40] = 0x80000001u;  // negative as s32
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<unsigned>(64 * 4));
  LaunchResult r = h.launch("redux_ops", Dim3(1), Dim3(64), 0, din, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<unsigned>(dout, 64 * 4);
  for (int w = 0; w < 2; ++w) {
    unsigned sum = 0, mx = 0, x = 0;
    int mn = INT32_MAX;
    for (int l = 0; l < 32; ++l) {
      const unsigned v = in[w * 32 + l];
      sum += v;
      mx = std::max(mx, v);
      x ^= v;
      mn = std::min(mn, static_cast<int>(v));
    }
    for (int l = 0; l < 32; ++l) {
      const unsigned* o = &out[(w * 32 + l) * 4];
      EXPECT_EQ(o[0], sum);
      EXPECT_EQ(o[1], static_cast<unsigned>(mn));
      EXPECT_EQ(o[2], mx);
      EXPECT_EQ(o[3], x);
    }
  }
}

}  // namespace
}  // namespace gpuvp::ptx::testing
