// Half and bfloat16 bit patterns for the tensor tests' CPU references (small integers: exact).
#pragma once

#include <cstdint>
#include <cstring>

namespace gpuvp::ptx::testing {

inline uint16_t to_half(float v) {  // small integers only: exact
  if (v == 0.0f) return 0;
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) | ((bits >> 13) & 0x3ffu));
}

inline float from_half(uint16_t h) {
  if ((h & 0x7fffu) == 0) return 0.0f;
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exponent = ((h >> 10) & 0x1fu) - 15 + 127;
  const uint32_t bits = sign | (exponent << 23) | ((h & 0x3ffu) << 13);
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

inline uint16_t to_bf16(float v) {  // truncates: exact for the tests' small integers
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace gpuvp::ptx::testing
