// Deterministic input generation. The standard distributions are implementation-defined, so
// inputs are derived from a hand-rolled SplitMix64 stream to be identical on every platform.
#pragma once

#include <cstdint>

namespace gpuvp::workloads {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next_u64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint32_t next_u32() { return static_cast<std::uint32_t>(next_u64() >> 32); }

  // Uniform in [lo, hi]; the tiny modulo bias is irrelevant for test inputs.
  std::int32_t uniform_int(std::int32_t lo, std::int32_t hi) {
    const std::uint64_t span = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo) + 1;
    return static_cast<std::int32_t>(lo + static_cast<std::int64_t>(next_u64() % span));
  }
  // Uniform in [lo, hi) with 53 random mantissa bits.
  double uniform_double(double lo, double hi) {
    const double unit = static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * unit;
  }
  // Uniform in [lo, hi) with 24 random mantissa bits.
  float uniform_float(float lo, float hi) {
    const float unit = static_cast<float>(next_u32() >> 8) * 0x1.0p-24f;
    return lo + (hi - lo) * unit;
  }

 private:
  std::uint64_t state_;
};

}  // namespace gpuvp::workloads
