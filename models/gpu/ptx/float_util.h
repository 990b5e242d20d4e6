// Bit-exact floating-point helpers for the executor (private): narrow formats and
// rounding-mode control.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "models/gpu/ptx/ir.h"

namespace gpuvp::ptx::fp {

inline float f32(uint64_t bits) {
  uint32_t b = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline double f64(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
inline uint64_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline uint64_t bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

inline bool is_directed(ir::Rounding r) {
  return r == ir::Rounding::kRz || r == ir::Rounding::kRm || r == ir::Rounding::kRp;
}

// Directed rounding in software. Results are computed as an exact value hi + lo (hi the
// round-to-nearest double result, lo the exact error or just its sign, from error-free
// transformations), then rounded as the instruction asks. This does not depend on the host
// FPU's rounding-mode register (which emulated hosts do not always honour).
inline int sign_of(double x) { return (x > 0) - (x < 0); }

// Sign of (exact - hi) for a + b, with hi = fl(a + b) (Knuth's TwoSum).
inline double two_sum_error(double a, double b, double hi) {
  const double bb = hi - a;
  return (a - (hi - bb)) + (b - bb);
}

inline double step(double x, int direction) {
  return std::nextafter(x, direction > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
}
inline float step(float x, int direction) {
  return std::nextafter(x, direction > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity());
}

// Rounds exact = hi + lo to float. For .rn, lo breaks ties that rounding hi alone would
// misjudge (double rounding when hi sits exactly between two floats).
inline float round_to_f32(double hi, double lo, ir::Rounding rounding) {
  float f = static_cast<float>(hi);
  if (std::isnan(hi) || std::isinf(hi)) return f;
  const double fd = static_cast<double>(f);
  const int cmp = fd < hi ? 1 : fd > hi ? -1 : sign_of(lo);  // sign of (exact - f)
  if (cmp == 0) return f;
  switch (rounding) {
    case ir::Rounding::kRp: return cmp > 0 ? step(f, 1) : f;
    case ir::Rounding::kRm: return cmp < 0 ? step(f, -1) : f;
    case ir::Rounding::kRz:
      if ((f > 0 && cmp < 0) || (f < 0 && cmp > 0)) return step(f, f > 0 ? -1 : 1);
      return f;
    default: {
      if (lo == 0 || fd == hi) return f;
      const float other = step(f, hi > fd ? 1 : -1);
      if (std::isinf(other)) return f;
      const double midpoint = (fd + static_cast<double>(other)) / 2;
      if (midpoint != hi) return f;
      // hi is a tie; the exact value lies on lo's side of it.
      return (sign_of(lo) > 0) == (static_cast<double>(other) > fd) ? other : f;
    }
  }
}

// Rounds exact = hi + lo to double (hi already the nearest double).
inline double round_to_f64(double hi, double lo, ir::Rounding rounding) {
  if (std::isnan(hi) || std::isinf(hi) || lo == 0 || std::isnan(lo)) return hi;
  const int cmp = sign_of(lo);
  switch (rounding) {
    case ir::Rounding::kRp: return cmp > 0 ? step(hi, 1) : hi;
    case ir::Rounding::kRm: return cmp < 0 ? step(hi, -1) : hi;
    case ir::Rounding::kRz:
      if ((hi > 0 && cmp < 0) || (hi < 0 && cmp > 0)) return step(hi, hi > 0 ? -1 : 1);
      return hi;
    default: return hi;
  }
}

// Directed overflow: the nearest result is infinite but the exact one finite.
inline double overflow_result(double inf_hi, ir::Rounding rounding) {
  const bool positive = inf_hi > 0;
  const bool to_max = rounding == ir::Rounding::kRz || (rounding == ir::Rounding::kRm && positive) ||
                      (rounding == ir::Rounding::kRp && !positive);
  if (!to_max) return inf_hi;
  return positive ? std::numeric_limits<double>::max() : -std::numeric_limits<double>::max();
}

enum class ExactOp { kAdd, kSub, kMul, kDiv, kSqrt, kFma };

// hi = fl(op), lo = exact - hi (or a value of the same sign), in double.
inline void exact_double(ExactOp op, double a, double b, double c, double& hi, double& lo) {
  switch (op) {
    case ExactOp::kAdd: hi = a + b; lo = two_sum_error(a, b, hi); break;
    case ExactOp::kSub: hi = a - b; lo = two_sum_error(a, -b, hi); break;
    case ExactOp::kMul: hi = a * b; lo = std::fma(a, b, -hi); break;
    case ExactOp::kDiv: hi = a / b; lo = std::isfinite(hi) && hi != 0 ? -std::fma(hi, b, -a) * (b < 0 ? -1 : 1) : 0; break;
    case ExactOp::kSqrt: hi = std::sqrt(a); lo = std::isfinite(hi) && hi != 0 ? -std::fma(hi, hi, -a) : 0; break;
    case ExactOp::kFma: {
      hi = std::fma(a, b, c);
      const double p = a * b;
      const double pe = std::fma(a, b, -p);
      const double s = p + c;
      lo = (s - hi) + two_sum_error(p, c, s) + pe;  // sign is what matters
      break;
    }
  }
  if (std::isnan(lo)) lo = 0;
}

// An exact zero sum is -0 when rounding toward -inf unless both terms are +0 (IEEE 754 6.3).
inline bool negative_zero_sum(ExactOp op, double a, double b, double c, ir::Rounding rounding) {
  if (rounding != ir::Rounding::kRm) return false;
  double x, y;
  switch (op) {
    case ExactOp::kAdd: x = a; y = b; break;
    case ExactOp::kSub: x = a; y = -b; break;
    case ExactOp::kFma: x = a * b; y = c; break;
    default: return false;
  }
  return !(x == 0 && y == 0 && !std::signbit(x) && !std::signbit(y));
}

// f32 operation with a PTX rounding mode: exact in double (p=53 >= 2*24+2) plus error sign.
inline float f32_op(ExactOp op, float a, float b, float c, ir::Rounding rounding) {
  double hi, lo;
  const double da = a, db = b, dc = c;
  switch (op) {
    case ExactOp::kMul: hi = da * db; lo = 0; break;  // exact in double
    case ExactOp::kFma: hi = da * db + dc; lo = two_sum_error(da * db, dc, hi); break;
    default: exact_double(op, da, db, dc, hi, lo); break;
  }
  if (hi == 0 && lo == 0 && negative_zero_sum(op, da, db, dc, rounding)) return -0.0f;
  return round_to_f32(hi, lo, rounding);
}

__extension__ typedef unsigned __int128 ExactInt;

// fma(a, b, c) with a*b == 0: exactly c, or the signed zero sum of (+-0) + c.
inline double f64_exact_sum_of_zero_product(double a, double b, double c, ir::Rounding rounding) {
  if (c != 0) return c;
  const double product = (std::signbit(a) != std::signbit(b)) ? -0.0 : 0.0;
  if (std::signbit(product) == std::signbit(c)) return c;
  return rounding == ir::Rounding::kRm ? -0.0 : 0.0;
}

inline int bit_length(ExactInt m) {
  const uint64_t high = static_cast<uint64_t>(m >> 64);
  if (high) return 128 - __builtin_clzll(high);
  const uint64_t low = static_cast<uint64_t>(m);
  return low ? 64 - __builtin_clzll(low) : 0;
}

// Rounds (-1)^negative * (m + f) * 2^e to double, where 0 <= f < 1 and `sticky` says f > 0.
// Handles the subnormal range and overflow, so it is exact where the error-free
// transformations in double are not (results near or below 2^-1022).
inline double round_exact_to_f64(bool negative, ExactInt m, int e, bool sticky, ir::Rounding rounding) {
  if (m == 0 && !sticky) return negative ? -0.0 : 0.0;
  if (m == 0) {  // only a fraction of a unit: make it a sticky bit one position lower
    m = 1;
    e -= 1;
  }
  const int bits = bit_length(m);
  const int exponent = e + bits - 1;
  const int lsb = exponent >= -1022 ? exponent - 52 : -1074;  // weight of the last kept bit
  const int shift = lsb - e;
  ExactInt kept;
  bool round_bit, rest;
  if (shift <= 0) {
    kept = m << (-shift);
    round_bit = false;
    rest = sticky;
  } else if (shift > 128) {
    kept = 0;
    round_bit = false;
    rest = true;
  } else if (shift == 128) {
    kept = 0;
    round_bit = (m >> 127) & 1;
    rest = (m & ((ExactInt{1} << 127) - 1)) != 0 || sticky;
  } else {
    kept = m >> shift;
    round_bit = (m >> (shift - 1)) & 1;
    rest = (m & ((ExactInt{1} << (shift - 1)) - 1)) != 0 || sticky;
  }
  const bool inexact = round_bit || rest;
  bool up;
  switch (rounding) {
    case ir::Rounding::kRz: up = false; break;
    case ir::Rounding::kRp: up = inexact && !negative; break;
    case ir::Rounding::kRm: up = inexact && negative; break;
    default: up = round_bit && (rest || (kept & 1)); break;
  }
  if (up) kept += 1;
  double result = std::ldexp(static_cast<double>(static_cast<uint64_t>(kept)), lsb);
  if (std::isinf(result)) {
    const bool away = rounding == ir::Rounding::kRn || rounding == ir::Rounding::kDefault ||
                      (rounding == ir::Rounding::kRp && !negative) || (rounding == ir::Rounding::kRm && negative);
    if (!away) result = std::numeric_limits<double>::max();
  }
  return negative ? -result : result;
}

// x = m * 2^e with m a 53-bit integer (x finite, nonzero).
inline void decompose(double x, uint64_t& m, int& e) {
  int exponent;
  const double fraction = std::frexp(std::fabs(x), &exponent);
  m = static_cast<uint64_t>(std::ldexp(fraction, 53));
  e = exponent - 53;
}

// Exact f64 multiply, divide and fused multiply-add with any rounding (finite operands).
inline double exact_f64(ExactOp op, double a, double b, double c, ir::Rounding rounding) {
  const bool negative_ab = std::signbit(a) != std::signbit(b);
  if (op == ExactOp::kMul || (op == ExactOp::kFma && (a == 0 || b == 0))) {
    if (op == ExactOp::kFma) return f64_exact_sum_of_zero_product(a, b, c, rounding);
    if (a == 0 || b == 0) return negative_ab ? -0.0 : 0.0;
    uint64_t ma, mb;
    int ea, eb;
    decompose(a, ma, ea);
    decompose(b, mb, eb);
    return round_exact_to_f64(negative_ab, static_cast<ExactInt>(ma) * mb, ea + eb, false, rounding);
  }
  if (op == ExactOp::kDiv) {
    if (a == 0) return negative_ab ? -0.0 : 0.0;
    uint64_t ma, mb;
    int ea, eb;
    decompose(a, ma, ea);
    decompose(b, mb, eb);
    const ExactInt numerator = static_cast<ExactInt>(ma) << 74;
    const ExactInt quotient = numerator / mb;
    const bool sticky = numerator % mb != 0;
    return round_exact_to_f64(negative_ab, quotient, ea - eb - 74, sticky, rounding);
  }
  // fma: a*b exactly as X or Y, c as the other; align to the larger and add.
  uint64_t ma, mb, mc = 0;
  int ea, eb, ec = 0;
  decompose(a, ma, ea);
  decompose(b, mb, eb);
  ExactInt product = static_cast<ExactInt>(ma) * mb;
  int ep = ea + eb;
  if (c == 0) return round_exact_to_f64(negative_ab, product, ep, false, rounding);
  decompose(c, mc, ec);
  bool x_negative = negative_ab, y_negative = std::signbit(c);
  ExactInt x = product, y = mc;
  int ex = ep, ey = ec;
  if (ey + bit_length(y) > ex + bit_length(x)) {
    std::swap(x, y);
    std::swap(ex, ey);
    std::swap(x_negative, y_negative);
  }
  const int widen = 125 - bit_length(x);  // x gets 125 bits of headroom
  x <<= widen;
  ex -= widen;
  bool fraction = false;
  ExactInt y_aligned;
  if (ey >= ex) {
    y_aligned = y << (ey - ex);
  } else if (ex - ey >= 128) {
    y_aligned = 0;
    fraction = true;
  } else {
    const int drop = ex - ey;
    y_aligned = y >> drop;
    fraction = (y & ((ExactInt{1} << drop) - 1)) != 0;
  }
  if (x_negative == y_negative) return round_exact_to_f64(x_negative, x + y_aligned, ex, fraction, rounding);
  if (x > y_aligned || (x == y_aligned && !fraction)) {
    if (x == y_aligned) return rounding == ir::Rounding::kRm ? -0.0 : 0.0;
    return round_exact_to_f64(x_negative, x - y_aligned - (fraction ? 1 : 0), ex, fraction, rounding);
  }
  return round_exact_to_f64(y_negative, y_aligned - x, ex, fraction, rounding);
}

inline double f64_op(ExactOp op, double a, double b, double c, ir::Rounding rounding) {
  const bool directed = rounding == ir::Rounding::kRz || rounding == ir::Rounding::kRm || rounding == ir::Rounding::kRp;
  if (directed && (op == ExactOp::kMul || op == ExactOp::kDiv || op == ExactOp::kFma) && std::isfinite(a) &&
      std::isfinite(b) && std::isfinite(c) && !(op == ExactOp::kDiv && b == 0)) {
    return exact_f64(op, a, b, c, rounding);
  }
  double hi, lo;
  exact_double(op, a, b, c, hi, lo);
  if (hi == 0 && lo == 0 && negative_zero_sum(op, a, b, c, rounding)) return -0.0;
  if (std::isinf(hi) && std::isfinite(a) && std::isfinite(b) && std::isfinite(c) && op != ExactOp::kDiv) return overflow_result(hi, rounding);
  if (op == ExactOp::kDiv && std::isinf(hi) && std::isfinite(a) && b != 0) return overflow_result(hi, rounding);
  return round_to_f64(hi, lo, rounding);
}

// Rounds an exact 64-bit integer to f32/f64.
template <typename Int>
inline void integer_as_double(Int value, double& hi, double& lo) {
  hi = static_cast<double>(value);
  __extension__ typedef __int128 Wide;
  const Wide exact = static_cast<Wide>(value);
  if (hi >= 1.8446744073709552e19) {  // 2^64 rounds out of range of a u64 conversion back
    lo = -1;
    return;
  }
  const Wide back = hi < 0 ? static_cast<Wide>(static_cast<int64_t>(hi)) : static_cast<Wide>(static_cast<uint64_t>(hi));
  lo = exact > back ? 1 : exact < back ? -1 : 0;
}

// Rounds a double (exact value) to a binary format with `mantissa_bits` explicit bits and
// the given exponent range; returns the encoded bits. Used for f16 (10, 15) and bf16 (7, 127).
inline uint32_t round_to_small_float(double x, int mantissa_bits, int exponent_bias, ir::Rounding rounding) {
  const int exponent_bits = exponent_bias == 15 ? 5 : 8;
  const uint32_t sign = std::signbit(x) ? 1u << (mantissa_bits + exponent_bits) : 0u;
  const uint32_t exp_all_ones = ((1u << exponent_bits) - 1) << mantissa_bits;
  if (std::isnan(x)) return exp_all_ones | (1u << (mantissa_bits - 1));  // canonical NaN
  if (std::isinf(x)) return sign | exp_all_ones;
  double a = std::fabs(x);
  if (a == 0) return sign;
  const int min_exponent = 1 - exponent_bias;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exponent = std::max(e - 1, min_exponent);
  double quantum = std::ldexp(1.0, exponent - mantissa_bits);
  double q = a / quantum;  // exact: power-of-two scaling
  double rounded;
  const bool negative = sign != 0;
  switch (rounding) {
    case ir::Rounding::kRz: rounded = std::trunc(q); break;
    case ir::Rounding::kRm: rounded = negative ? std::ceil(q) : std::floor(q); break;
    case ir::Rounding::kRp: rounded = negative ? std::floor(q) : std::ceil(q); break;
    case ir::Rounding::kRna: rounded = std::round(q); break;
    default: {
      rounded = std::floor(q);
      double frac = q - rounded;
      if (frac > 0.5 || (frac == 0.5 && std::fmod(rounded, 2.0) != 0)) rounded += 1;
      break;
    }
  }
  double value = rounded * quantum;
  const int max_exponent = exponent_bias;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), max_exponent);
  if (value > max_finite) {
    bool to_inf = rounding == ir::Rounding::kRn || rounding == ir::Rounding::kDefault || rounding == ir::Rounding::kRna ||
                  (rounding == ir::Rounding::kRp && !negative) || (rounding == ir::Rounding::kRm && negative);
    if (to_inf) return sign | exp_all_ones;
    return sign | (exp_all_ones - (1u << mantissa_bits)) | ((1u << mantissa_bits) - 1);
  }
  if (value == 0) return sign;
  std::frexp(value, &e);
  int value_exponent = e - 1;
  if (value_exponent < min_exponent) {
    // subnormal
    return sign | static_cast<uint32_t>(value / std::ldexp(1.0, min_exponent - mantissa_bits));
  }
  uint32_t mantissa = static_cast<uint32_t>(value / std::ldexp(1.0, value_exponent - mantissa_bits)) - (1u << mantissa_bits);
  return sign | (static_cast<uint32_t>(value_exponent + exponent_bias) << mantissa_bits) | mantissa;
}

// Exact: every half / bf16 value is a double. Built from bits (not ldexp): tensor-core fragments
// convert every element of every mma, and ldexp was most of the functional model's time there.
inline double small_float_to_double(uint32_t h, int mantissa_bits, int exponent_bias) {
  const int exponent_bits = exponent_bias == 15 ? 5 : 8;
  const bool negative = (h >> (mantissa_bits + exponent_bits)) & 1;
  const uint32_t exponent = (h >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const uint32_t mantissa = h & ((1u << mantissa_bits) - 1);
  double value;
  if (exponent == (1u << exponent_bits) - 1) {
    value = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    // mantissa * 2^(1 - bias - mantissa_bits): a power of two inside double's normal range, so exact.
    const uint64_t scale_bits = static_cast<uint64_t>(1023 + 1 - exponent_bias - mantissa_bits) << 52;
    double scale;
    std::memcpy(&scale, &scale_bits, sizeof scale);
    value = static_cast<double>(mantissa) * scale;
  } else {
    const uint64_t bits = (static_cast<uint64_t>(static_cast<int>(exponent) - exponent_bias + 1023) << 52) |
                          (static_cast<uint64_t>(mantissa) << (52 - mantissa_bits));
    std::memcpy(&value, &bits, sizeof value);
  }
  return negative ? -value : value;
}

inline double half_to_double(uint32_t h) { return small_float_to_double(h & 0xffff, 10, 15); }
inline uint32_t double_to_half(double x, ir::Rounding r = ir::Rounding::kRn) { return round_to_small_float(x, 10, 15, r); }
inline double bf16_to_double(uint32_t h) { return small_float_to_double(h & 0xffff, 7, 127); }
inline uint32_t double_to_bf16(double x, ir::Rounding r = ir::Rounding::kRn) { return round_to_small_float(x, 7, 127, r); }

inline float flush_subnormal(float x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}
inline double flush_subnormal(double x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0, x) : x;
}
template <typename F>
inline F saturate01(F x) {
  if (std::isnan(x)) return F(0);
  if (x < F(0)) return F(0);
  if (x > F(1)) return F(1);
  return x;
}

}  // namespace gpuvp::ptx::fp
