// Bit-exact floating-point helpers for the executor (private): narrow formats and
// rounding-mode control.
#pragma once

#include <algorithm>
#include <cfenv>
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

// Sets the host rounding mode for the lifetime of the guard (restored afterwards). The
// executor compiles with -frounding-math so the compiler honours it.
class RoundingGuard {
 public:
  explicit RoundingGuard(ir::Rounding rounding) : saved_(std::fegetround()) {
    int mode = FE_TONEAREST;
    switch (rounding) {
      case ir::Rounding::kRz: case ir::Rounding::kRzi: mode = FE_TOWARDZERO; break;
      case ir::Rounding::kRm: case ir::Rounding::kRmi: mode = FE_DOWNWARD; break;
      case ir::Rounding::kRp: case ir::Rounding::kRpi: mode = FE_UPWARD; break;
      default: break;
    }
    active_ = mode != saved_;
    if (active_) std::fesetround(mode);
  }
  ~RoundingGuard() {
    if (active_) std::fesetround(saved_);
  }
  RoundingGuard(const RoundingGuard&) = delete;
  RoundingGuard& operator=(const RoundingGuard&) = delete;

 private:
  int saved_;
  bool active_ = false;
};

inline bool is_directed(ir::Rounding r) {
  return r == ir::Rounding::kRz || r == ir::Rounding::kRm || r == ir::Rounding::kRp;
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

inline double small_float_to_double(uint32_t h, int mantissa_bits, int exponent_bias) {
  const int exponent_bits = exponent_bias == 15 ? 5 : 8;
  const bool negative = (h >> (mantissa_bits + exponent_bits)) & 1;
  const uint32_t exponent = (h >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const uint32_t mantissa = h & ((1u << mantissa_bits) - 1);
  double value;
  if (exponent == (1u << exponent_bits) - 1) {
    value = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - exponent_bias - mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1u << mantissa_bits)), static_cast<int>(exponent) - exponent_bias - mantissa_bits);
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
