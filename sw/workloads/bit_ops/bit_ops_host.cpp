#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

constexpr int kOps32 = 18;
constexpr int kOps64 = 8;

int popcount64(std::uint64_t v) {
  int count = 0;
  for (; v != 0; v &= v - 1) ++count;
  return count;
}
int leading_zeros(std::uint64_t v, int bits) {
  int count = 0;
  for (int bit = bits - 1; bit >= 0 && ((v >> bit) & 1) == 0; --bit) ++count;
  return count;
}
std::uint64_t reverse_bits(std::uint64_t v, int bits) {
  std::uint64_t r = 0;
  for (int bit = 0; bit < bits; ++bit) r |= ((v >> bit) & 1) << (bits - 1 - bit);
  return r;
}
// High 64 bits of a 128-bit product, from 32-bit halves.
std::uint64_t mul_high_unsigned(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const std::uint64_t middle = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + (lo_hi & 0xffffffffu);
  return hi_hi + (hi_lo >> 32) + (lo_hi >> 32) + (middle >> 32);
}
std::uint64_t mul_high_signed(std::int64_t a, std::int64_t b) {
  // Two's-complement correction of the unsigned high product.
  std::uint64_t high = mul_high_unsigned(static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b));
  if (a < 0) high -= static_cast<std::uint64_t>(b);
  if (b < 0) high -= static_cast<std::uint64_t>(a);
  return high;
}
std::uint32_t sign_extend_24(std::uint32_t v) { return (v & 0x800000u) ? (v | 0xff000000u) : (v & 0xffffffu); }

}  // namespace

WorkloadResult run_bit_ops(Device& device) {
  constexpr int kElements = 4000;
  constexpr std::uint32_t kBlock = 128;

  Rng rng(0x5eed0017);
  std::vector<std::uint32_t> x(kElements), y(kElements), s(kElements);
  std::vector<std::uint64_t> z(kElements), w(kElements);
  for (int i = 0; i < kElements; ++i) {
    // Mix in sparse values (few bits set, zero) so clz/ffs/popc see edge cases.
    x[i] = i % 11 == 0 ? (rng.next_u32() >> rng.uniform_int(0, 31)) : rng.next_u32();
    if (i % 97 == 0) x[i] = 0;
    y[i] = rng.next_u32();
    s[i] = rng.next_u32();
    z[i] = i % 13 == 0 ? rng.next_u64() >> rng.uniform_int(0, 63) : rng.next_u64();
    w[i] = rng.next_u64();
  }
  DeviceBuffer<std::uint32_t> d_x(device, x), d_y(device, y), d_s(device, s), d_out32(device, kElements * kOps32);
  DeviceBuffer<std::uint64_t> d_z(device, z), d_w(device, w), d_out64(device, kElements * kOps64);
  device.launch("bit_ops", ceil_div(kElements, kBlock), kBlock, 0,
                KernelArgs().ptr(d_x.ptr()).ptr(d_y.ptr()).ptr(d_s.ptr()).ptr(d_z.ptr()).ptr(d_w.ptr())
                    .ptr(d_out32.ptr()).ptr(d_out64.ptr()).i32(kElements));
  device.synchronize();

  std::vector<std::uint32_t> want32(kElements * kOps32);
  std::vector<std::uint64_t> want64(kElements * kOps64);
  for (int i = 0; i < kElements; ++i) {
    const std::uint32_t a = x[i], b = y[i], c = s[i], shift = c & 31;
    const std::uint64_t pair = (std::uint64_t{b} << 32) | a;  // funnel shifts: b is the high word
    std::uint32_t* o = &want32[static_cast<std::size_t>(i) * kOps32];
    o[0] = static_cast<std::uint32_t>(popcount64(a));
    o[1] = static_cast<std::uint32_t>(leading_zeros(a, 32));
    o[2] = static_cast<std::uint32_t>(reverse_bits(a, 32));
    o[3] = a == 0 ? 0 : static_cast<std::uint32_t>(32 - leading_zeros(a & (~a + 1), 32));
    const std::uint32_t selector = c & 0x7777;
    o[4] = 0;
    for (int byte = 0; byte < 4; ++byte) {
      const std::uint32_t from = (selector >> (4 * byte)) & 7;
      o[4] |= static_cast<std::uint32_t>((pair >> (8 * from)) & 0xff) << (8 * byte);
    }
    o[5] = static_cast<std::uint32_t>((pair << shift) >> 32);
    o[6] = static_cast<std::uint32_t>(pair >> shift);
    const std::uint32_t clamped = std::min<std::uint32_t>(c & 63, 32);
    o[7] = clamped == 32 ? a : static_cast<std::uint32_t>((pair << clamped) >> 32);
    o[8] = clamped == 32 ? b : static_cast<std::uint32_t>(pair >> clamped);
    o[9] = static_cast<std::uint32_t>((std::uint64_t{a} * b) >> 32);
    o[10] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(std::int64_t{static_cast<std::int32_t>(a)} * static_cast<std::int32_t>(b)) >> 32);
    o[11] = sign_extend_24(a) * sign_extend_24(b);
    o[12] = (a & 0xffffffu) * (b & 0xffffffu);
    o[13] = (a > b ? a - b : b - a) + c;
    o[14] = (a >> (c & 15)) & 0x7fu;
    o[15] = (a & b) | ((~a & c) ^ (b | ~c));
    o[16] = shift == 0 ? a : (a << shift) | (a >> (32 - shift));
    o[17] = static_cast<std::uint32_t>(static_cast<std::int32_t>(a) >> shift);

    const std::uint64_t p = z[i], q = w[i];
    std::uint64_t* o64 = &want64[static_cast<std::size_t>(i) * kOps64];
    o64[0] = static_cast<std::uint64_t>(popcount64(p));
    o64[1] = static_cast<std::uint64_t>(leading_zeros(p, 64));
    o64[2] = reverse_bits(p, 64);
    o64[3] = mul_high_unsigned(p, q);
    o64[4] = mul_high_signed(static_cast<std::int64_t>(p), static_cast<std::int64_t>(q));
    o64[5] = static_cast<std::uint64_t>(static_cast<std::int64_t>(p) / static_cast<std::int64_t>(q | 1));
    o64[6] = static_cast<std::uint64_t>(static_cast<std::int64_t>(p) % static_cast<std::int64_t>(q | 1));
    o64[7] = p / ((q >> 40) | 1) + p % ((q >> 40) | 1);
  }

  Check check;
  check.exact("32-bit results", d_out32.download(), want32);
  check.exact("64-bit results", d_out64.download(), want64);
  return check.result("4000 tuples x 26 integer/bit operations");
}

}  // namespace gpuvp::workloads
