// The CPU reference switches the host rounding mode (fesetround) around each directed-rounding
// operation; this file is compiled with -frounding-math so the compiler keeps that order.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

constexpr int kF32 = 32;
constexpr int kF64 = 16;

template <typename To, typename From>
To bits(From value) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

// Evaluates op() with the host rounding mode set to `mode`.
template <typename Op>
auto rounded(int mode, Op op) {
  using Result = decltype(op());
  const int saved = std::fegetround();
  std::fesetround(mode);
  // GCC moves arithmetic across fesetround even with -frounding-math (GCC bug 34678); the
  // volatile store pins the operation before the mode is restored.
  volatile Result result = op();
  std::fesetround(saved);
  return static_cast<Result>(result);
}

// PTX cvt to integer with rounding: NaN gives 0, out-of-range values saturate.
template <typename Int, typename Float>
Int to_integer(Float value, int mode) {
  if (std::isnan(value)) return 0;
  const Float integral = rounded(mode, [&] { return std::nearbyint(value); });
  if (integral <= static_cast<Float>(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
  // max() + 1 is a power of two, exact in Float.
  if (integral >= static_cast<Float>(std::numeric_limits<Int>::max()) + Float{1}) return std::numeric_limits<Int>::max();
  return static_cast<Int>(integral);
}

// GPU NaN results are canonical (0x7fffffff / 0x7fffffffffffffff); the host's default NaN has
// another payload. PTX does not promise payloads for most operations, so compare NaN as NaN.
template <typename Float, typename Bits>
Bits canonical(Bits raw) {
  return std::isnan(bits<Float>(raw)) ? static_cast<Bits>(~Bits{0} >> 1) : raw;
}

// Interesting floats: specials, subnormals, halfway cases for rounding to integers, huge values.
float special_float(Rng& rng) {
  static constexpr float kSpecial[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 0x1p-149f, -0x1p-140f,
                                       0x1.fffffep127f, 3.0e9f, -3.0e9f, 5.0e9f, 1.0e-40f,
                                       std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                       std::numeric_limits<float>::quiet_NaN()};
  return kSpecial[rng.next_u32() % (sizeof kSpecial / sizeof kSpecial[0])];
}
double special_double(Rng& rng) {
  static constexpr double kSpecial[] = {0.0, -0.0, 1.0, -2.5, 3.5, 0x1p-1074, -0x1p-1060, 1e300, -1e300, 1.0e19, -1.0e19,
                                        0x1.000001p0, 3.4028235677973366e38, 1.0e-45,
                                        std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  return kSpecial[rng.next_u32() % (sizeof kSpecial / sizeof kSpecial[0])];
}

}  // namespace

WorkloadResult run_float_rounding(Device& device) {
  constexpr int kElements = 3000;
  constexpr std::uint32_t kBlock = 128;

  Rng rng(0x5eed0019);
  std::vector<float> fa(kElements), fb(kElements), fc(kElements);
  std::vector<double> da(kElements), db(kElements);
  std::vector<int> ia(kElements);
  std::vector<long long> la(kElements);
  for (int i = 0; i < kElements; ++i) {
    const bool special = i % 4 == 0;
    fa[i] = special ? special_float(rng) : rng.uniform_float(-1000.0f, 1000.0f) * static_cast<float>(1 << (i % 7));
    fb[i] = i % 5 == 0 ? special_float(rng) : rng.uniform_float(-8.0f, 8.0f);
    fc[i] = i % 6 == 0 ? special_float(rng) : rng.uniform_float(-100.0f, 100.0f);
    da[i] = special ? special_double(rng) : rng.uniform_double(-1e6, 1e6);
    db[i] = i % 5 == 0 ? special_double(rng) : rng.uniform_double(-3.0, 3.0);
    ia[i] = static_cast<int>(rng.next_u32());
    la[i] = static_cast<long long>(rng.next_u64()) >> (i % 40);
  }

  DeviceBuffer<float> d_fa(device, fa), d_fb(device, fb), d_fc(device, fc);
  DeviceBuffer<double> d_da(device, da), d_db(device, db);
  DeviceBuffer<int> d_ia(device, ia);
  DeviceBuffer<long long> d_la(device, la);
  DeviceBuffer<std::uint32_t> d_out32(device, kElements * kF32);
  DeviceBuffer<std::uint64_t> d_out64(device, kElements * kF64);
  device.launch("float_rounding", ceil_div(kElements, kBlock), kBlock, 0,
                KernelArgs().ptr(d_fa.ptr()).ptr(d_fb.ptr()).ptr(d_fc.ptr()).ptr(d_da.ptr()).ptr(d_db.ptr())
                    .ptr(d_ia.ptr()).ptr(d_la.ptr()).ptr(d_out32.ptr()).ptr(d_out64.ptr()).i32(kElements));
  device.synchronize();

  std::vector<std::uint32_t> want32(kElements * kF32);
  std::vector<std::uint64_t> want64(kElements * kF64);
  const auto f32 = [](float v) { return canonical<float>(bits<std::uint32_t>(v)); };
  const auto f64 = [](double v) { return canonical<double>(bits<std::uint64_t>(v)); };
  for (int i = 0; i < kElements; ++i) {
    // volatile: keep the compiler from evaluating anything outside the chosen rounding mode.
    volatile float a = fa[i], b = fb[i], c = fc[i];
    volatile double x = da[i], y = db[i];
    volatile int int_a = ia[i];
    volatile long long long_a = la[i];
    std::uint32_t* o = &want32[static_cast<std::size_t>(i) * kF32];
    o[0] = f32(a + b);
    o[1] = f32(rounded(FE_TOWARDZERO, [&] { return a + b; }));
    o[2] = f32(rounded(FE_UPWARD, [&] { return a + b; }));
    o[3] = f32(rounded(FE_DOWNWARD, [&] { return a + b; }));
    o[4] = f32(rounded(FE_TOWARDZERO, [&] { return a * b; }));
    o[5] = f32(rounded(FE_UPWARD, [&] { return a * b; }));
    o[6] = f32(a / b);
    o[7] = f32(rounded(FE_DOWNWARD, [&] { return a / b; }));
    o[8] = f32(std::fma(a, b, c));
    o[9] = f32(rounded(FE_TOWARDZERO, [&] { return std::fma(a, b, c); }));
    o[10] = f32(std::sqrt(std::fabs(a)));
    o[11] = f32(rounded(FE_UPWARD, [&] { return std::sqrt(std::fabs(a)); }));
    o[12] = f32(1.0f / b);
    // saturate: NaN -> 0, clamp to [0, 1]
    o[13] = f32(std::isnan(a) ? 0.0f : (a < 0.0f ? 0.0f : (a > 1.0f ? 1.0f : a)));
    o[14] = bits<std::uint32_t>(std::copysign(static_cast<float>(a), static_cast<float>(b)));
    o[15] = f32(std::fmin(a, b));
    o[16] = f32(std::fmax(a, c));
    o[17] = static_cast<std::uint32_t>(to_integer<std::int32_t>(static_cast<float>(a), FE_TONEAREST));
    o[18] = static_cast<std::uint32_t>(to_integer<std::int32_t>(static_cast<float>(a), FE_TOWARDZERO));
    o[19] = static_cast<std::uint32_t>(to_integer<std::int32_t>(static_cast<float>(a), FE_UPWARD));
    o[20] = static_cast<std::uint32_t>(to_integer<std::int32_t>(static_cast<float>(a), FE_DOWNWARD));
    o[21] = to_integer<std::uint32_t>(static_cast<float>(a), FE_TONEAREST);
    o[22] = f32(rounded(FE_TOWARDZERO, [&] { return static_cast<float>(int_a); }));
    o[23] = f32(rounded(FE_UPWARD, [&] { return static_cast<float>(int_a); }));
    o[24] = f32(rounded(FE_DOWNWARD, [&] { return static_cast<float>(long_a); }));
    o[25] = f32(static_cast<float>(x));
    o[26] = f32(rounded(FE_TOWARDZERO, [&] { return static_cast<float>(x); }));
    o[27] = f32(rounded(FE_UPWARD, [&] { return static_cast<float>(x); }));
    o[28] = f32(std::trunc(a));
    o[29] = f32(std::floor(a));
    o[30] = f32(std::nearbyint(a));
    o[31] = (std::isnan(a) ? 1u : 0u) | (std::isinf(a) ? 2u : 0u) | (std::isfinite(a) ? 4u : 0u) |
            (std::signbit(a) ? 8u : 0u);

    std::uint64_t* o64 = &want64[static_cast<std::size_t>(i) * kF64];
    o64[0] = f64(x + y);
    o64[1] = f64(rounded(FE_TOWARDZERO, [&] { return x + y; }));
    o64[2] = f64(rounded(FE_UPWARD, [&] { return x + y; }));
    o64[3] = f64(rounded(FE_DOWNWARD, [&] { return x * y; }));
    o64[4] = f64(rounded(FE_UPWARD, [&] { return x / y; }));
    o64[5] = f64(rounded(FE_DOWNWARD, [&] { return std::sqrt(std::fabs(x)); }));
    o64[6] = f64(rounded(FE_TOWARDZERO, [&] { return std::fma(x, y, x); }));
    o64[7] = f64(1.0 / y);
    o64[8] = static_cast<std::uint64_t>(to_integer<std::int64_t>(static_cast<double>(x), FE_TONEAREST));
    o64[9] = static_cast<std::uint64_t>(to_integer<std::int64_t>(static_cast<double>(x), FE_TOWARDZERO));
    o64[10] = to_integer<std::uint64_t>(static_cast<double>(x), FE_DOWNWARD);
    o64[11] = static_cast<std::uint64_t>(std::int64_t{to_integer<std::int32_t>(static_cast<double>(x), FE_UPWARD)});
    o64[12] = f64(rounded(FE_TOWARDZERO, [&] { return static_cast<double>(long_a); }));
    o64[13] = f64(static_cast<double>(a));
    o64[14] = f64(std::floor(x));
    o64[15] = f64(std::ceil(y));
  }
  // saturate (13), fmin (15) and fmax (16) may return either zero when the inputs are zeros of
  // opposite sign (IEEE 754-2008 and PTX leave it open), so those slots compare zeros unsigned.
  const auto is_signless_zero_slot = [](int k) { return k == 13 || k == 15 || k == 16; };
  const auto unsigned_zero = [](std::uint32_t raw) { return raw == 0x80000000u ? 0u : raw; };
  for (int i = 0; i < kElements; ++i) {
    for (int k = 0; k < kF32; ++k) {
      if (is_signless_zero_slot(k)) want32[static_cast<std::size_t>(i) * kF32 + k] = unsigned_zero(want32[static_cast<std::size_t>(i) * kF32 + k]);
    }
  }
  std::vector<std::uint32_t> got32 = d_out32.download();
  std::vector<std::uint64_t> got64 = d_out64.download();
  // Integer and classification slots are not floats; canonicalize only the float slots.
  for (int i = 0; i < kElements; ++i) {
    for (int k = 0; k < kF32; ++k) {
      const bool is_float = !(k >= 17 && k <= 21) && k != 31;
      std::uint32_t& g = got32[static_cast<std::size_t>(i) * kF32 + k];
      if (is_float && k != 14) g = canonical<float>(g);
      if (is_signless_zero_slot(k)) g = unsigned_zero(g);
    }
    for (int k = 0; k < kF64; ++k) {
      const bool is_float = !(k >= 8 && k <= 11);
      std::uint64_t& g = got64[static_cast<std::size_t>(i) * kF64 + k];
      if (is_float) g = canonical<double>(g);
    }
  }

  // One comparison per operation, so a failure names the instruction.
  static const char* const kNames32[kF32] = {
      "add.rn.f32", "add.rz.f32", "add.rp.f32", "add.rm.f32", "mul.rz.f32", "mul.rp.f32", "div.rn.f32", "div.rm.f32",
      "fma.rn.f32", "fma.rz.f32", "sqrt.rn.f32", "sqrt.rp.f32", "rcp.rn.f32", "saturate.f32", "copysign.f32",
      "min.f32", "max.f32", "cvt.rni.s32.f32", "cvt.rzi.s32.f32", "cvt.rpi.s32.f32", "cvt.rmi.s32.f32",
      "cvt.rni.u32.f32", "cvt.rz.f32.s32", "cvt.rp.f32.s32", "cvt.rm.f32.s64", "cvt.rn.f32.f64", "cvt.rz.f32.f64",
      "cvt.rp.f32.f64", "cvt.rzi.f32.f32", "cvt.rmi.f32.f32", "cvt.rni.f32.f32", "testp.f32"};
  static const char* const kNames64[kF64] = {
      "add.rn.f64", "add.rz.f64", "add.rp.f64", "mul.rm.f64", "div.rp.f64", "sqrt.rm.f64", "fma.rz.f64",
      "rcp.rn.f64", "cvt.rni.s64.f64", "cvt.rzi.s64.f64", "cvt.rmi.u64.f64", "cvt.rpi.s32.f64", "cvt.rz.f64.s64",
      "cvt.f64.f32", "cvt.rmi.f64.f64", "cvt.rpi.f64.f64"};
  const auto column = [](const auto& all, int width, int k) {
    std::vector<typename std::decay_t<decltype(all)>::value_type> out;
    for (std::size_t i = static_cast<std::size_t>(k); i < all.size(); i += static_cast<std::size_t>(width)) out.push_back(all[i]);
    return out;
  };
  Check check;
  for (int k = 0; k < kF32; ++k) check.exact(kNames32[k], column(got32, kF32, k), column(want32, kF32, k));
  for (int k = 0; k < kF64; ++k) check.exact(kNames64[k], column(got64, kF64, k), column(want64, kF64, k));
  return check.result("3000 inputs (1/4 special values) x 48 rounding-mode, conversion and classification ops");
}

}  // namespace gpuvp::workloads
