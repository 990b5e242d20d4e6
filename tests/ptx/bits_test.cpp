// bmsk, szext, fns, dp2a, cvt.pack.sat, the SIMD video instructions, the rarer prmt/shf/bfind
// modes and 16/64-bit integer forms, each against a CPU computation written from the PTX ISA's
// definition (bit by bit where the ISA defines it so), on edge values: zero, widths and
// positions at and beyond 32, negative offsets, saturation bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

constexpr int kOps = 37;
constexpr int kOps64 = 9;

uint32_t bit(uint32_t v, int i) { return (v >> i) & 1; }

// bmsk: bits [a, a+b) set, counted bit by bit; .wrap takes a and b modulo 32, .clamp treats a
// start beyond 31 as an empty mask and a width beyond 31 as "to the top".
uint32_t ref_bmsk(uint32_t a, uint32_t b, bool clamp) {
  uint32_t start = a & 31, width = b & 31;
  if (clamp) {
    if (a >= 32) return 0;
    start = a;
    width = b >= 32 ? 32 : b;
  }
  uint32_t r = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    if (i >= start && i < start + width) r |= 1u << i;
  }
  return r;
}

// szext: keep the low n bits, then copy bit n-1 (signed) or 0 (unsigned) above them; n = 0
// gives 0; .wrap takes n modulo 32, .clamp keeps all 32 bits for n >= 32.
uint32_t ref_szext(uint32_t a, uint32_t b, bool clamp, bool sign) {
  uint32_t n = clamp ? std::min<uint32_t>(b, 32) : (b & 31);
  if (n == 0) return 0;
  uint32_t r = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    uint32_t v = i < n ? bit(a, static_cast<int>(i)) : (sign ? bit(a, static_cast<int>(n - 1)) : 0);
    r |= v << i;
  }
  return r;
}

uint32_t ref_fns(uint32_t mask, int base, int offset) {
  if (offset == 0) return bit(mask, base) ? static_cast<uint32_t>(base) : 0xffffffffu;
  int seen = 0;
  const int want = offset > 0 ? offset : -offset;
  if (offset > 0) {
    for (int p = base; p < 32; ++p) if (bit(mask, p) && ++seen == want) return static_cast<uint32_t>(p);
  } else {
    for (int p = base; p >= 0; --p) if (bit(mask, p) && ++seen == want) return static_cast<uint32_t>(p);
  }
  return 0xffffffffu;
}

int64_t field(uint32_t v, int index, int bits, bool sign) {
  const uint32_t raw = (v >> (index * bits)) & ((1u << bits) - 1);
  if (sign && (raw >> (bits - 1))) return static_cast<int64_t>(raw) - (int64_t{1} << bits);
  return raw;
}

uint32_t ref_dp2a(uint32_t a, uint32_t b, uint32_t c, bool as, bool bs, bool hi) {
  int64_t sum = (as || bs) ? int64_t{static_cast<int32_t>(c)} : int64_t{c};
  for (int i = 0; i < 2; ++i) sum += field(a, i, 16, as) * field(b, i + (hi ? 2 : 0), 8, bs);
  return static_cast<uint32_t>(sum);
}

uint32_t ref_pack(uint32_t a, uint32_t b, uint32_t c, int bits, bool sign) {
  const int64_t lo = sign ? -(int64_t{1} << (bits - 1)) : 0, hi = sign ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  auto sat = [&](uint32_t v) { return static_cast<uint32_t>(std::clamp<int64_t>(static_cast<int32_t>(v), lo, hi)) & ((1u << bits) - 1); };
  const uint64_t packed = (uint64_t{c} << (2 * bits)) | (uint64_t{sat(a)} << bits) | sat(b);
  return static_cast<uint32_t>(packed);
}

enum class V { kAdd, kSub, kAbsdiff, kMin, kMax };
uint32_t ref_vop4(V op, uint32_t a, uint32_t b, uint32_t c, bool ds, bool as, bool bs, bool sat, bool add) {
  int64_t sum = c;
  uint32_t merged = 0;
  for (int i = 0; i < 4; ++i) {
    const int64_t x = field(a, i, 8, as), y = field(b, i, 8, bs);
    int64_t t = op == V::kAdd ? x + y : op == V::kSub ? x - y : op == V::kAbsdiff ? (x > y ? x - y : y - x)
              : op == V::kMin ? std::min(x, y) : std::max(x, y);
    if (add) {
      sum += t;
      continue;
    }
    if (sat) t = ds ? std::clamp<int64_t>(t, -128, 127) : std::clamp<int64_t>(t, 0, 255);
    merged |= (static_cast<uint32_t>(t) & 0xff) << (8 * i);
  }
  return add ? static_cast<uint32_t>(sum) : merged;
}

// prmt modes from the ISA's tables: for selector value k (c & 3), the source byte of result
// bytes 0..3, indexing {b, a} as bytes 0..7.
uint32_t ref_prmt_mode(uint32_t a, uint32_t b, uint32_t c, int mode) {
  static const int kTables[5][4][4] = {
      {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},  // b4e
      {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},  // rc8
      {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},  // ecl
      {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},  // ecr
      {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},  // rc16
  };
  const uint64_t bytes = (uint64_t{b} << 32) | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<uint32_t>((bytes >> (8 * kTables[mode][c & 3][i])) & 0xff) << (8 * i);
  return r;
}

std::vector<uint32_t> edge_operands(uint32_t seed, bool small) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v = {0, 1, 31, 32, 33, 63, 255, 0xffffffffu, 0x80000000u, 0x7fffffffu, 16, 5, 0xffff8000u, 0x8000u,
                             0xffffff80u, 0x7fu};
  while (v.size() < 512) {
    uint32_t x = rng();
    if (small && (v.size() % 2 == 0)) x %= 40;  // positions and widths around 32
    v.push_back(x);
  }
  return v;
}

TEST(PtxBits, MaskExtendFindDotPackVideoMatchTheIsa) {
  Harness h("bits");
  std::vector<uint32_t> a = edge_operands(11, true), b = edge_operands(12, true), c = edge_operands(13, false);
  std::mt19937 rng(14);
  // fns offsets: small signed values, including 0 and negative.
  for (size_t i = 0; i < c.size(); i += 3) c[i] = static_cast<uint32_t>(static_cast<int32_t>(rng() % 11) - 5);
  const int n = static_cast<int>(a.size());
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(c), dout = h.upload(std::vector<uint32_t>(n * kOps));
  LaunchResult r = h.launch("bits_ops", Dim3(n / 64), Dim3(64), 0, da, db, dc, dout, n);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto out = h.download<uint32_t>(dout, n * kOps);
  for (int i = 0; i < n; ++i) {
    const uint32_t x = a[i], y = b[i], z = c[i];
    const int16_t hx = static_cast<int16_t>(x), hy = static_cast<int16_t>(y);
    uint32_t e[kOps];
    e[0] = ref_bmsk(x, y, true);
    e[1] = ref_bmsk(x, y, false);
    e[2] = ref_szext(x, y, true, true);
    e[3] = ref_szext(x, y, false, true);
    e[4] = ref_szext(x, y, true, false);
    e[5] = ref_szext(x, y, false, false);
    e[6] = ref_fns(x, static_cast<int>(y & 31), static_cast<int32_t>(z));
    e[7] = ref_dp2a(x, y, z, false, false, false);
    e[8] = ref_dp2a(x, y, z, true, true, true);
    e[9] = ref_dp2a(x, y, z, true, false, false);
    e[10] = ref_pack(x, y, 0, 16, false);
    e[11] = ref_pack(x, y, 0, 16, true);
    e[12] = ref_pack(x, y, z, 8, false);
    e[13] = ref_pack(x, y, z, 8, true);
    e[14] = ref_vop4(V::kAbsdiff, x, y, z, false, false, false, false, false);
    e[15] = ref_vop4(V::kAdd, x, y, z, true, true, true, true, false);
    e[16] = ref_vop4(V::kSub, x, y, z, false, false, false, true, false);
    e[17] = ref_vop4(V::kMin, x, y, z, true, true, false, false, false);
    e[18] = ref_vop4(V::kMax, x, y, z, false, false, false, false, true);
    e[19] = ref_vop4(V::kAbsdiff, x, y, z, false, true, true, false, true);
    e[20] = ref_vop4(V::kAdd, x, y, z, false, false, false, false, false);
    for (int m = 0; m < 5; ++m) e[21 + m] = ref_prmt_mode(x, y, z, m);
    {
      int top = -1;
      for (int k = 31; k >= 0; --k) if (bit(x, k)) { top = k; break; }
      e[26] = top < 0 ? 0xffffffffu : static_cast<uint32_t>(31 - top);
    }
    const uint64_t joined = (uint64_t{y} << 32) | x;
    e[27] = static_cast<uint32_t>((joined << std::min<uint32_t>(z, 32)) >> 32);
    e[28] = static_cast<uint32_t>(joined >> (z & 31));
    e[29] = static_cast<uint16_t>(std::min(hx, hy));
    e[30] = std::max(static_cast<uint16_t>(x), static_cast<uint16_t>(y));
    e[31] = static_cast<uint16_t>(hx < 0 ? -hx : hx);
    e[32] = static_cast<uint16_t>(-hx);
    e[33] = static_cast<uint32_t>(int32_t{hx} * int32_t{hy});
    e[34] = static_cast<uint32_t>((static_cast<int32_t>(x) > static_cast<int32_t>(y) ? int64_t{static_cast<int32_t>(x)} - static_cast<int32_t>(y)
                                                                                   : int64_t{static_cast<int32_t>(y)} - static_cast<int32_t>(x)) + z);
    e[35] = static_cast<uint32_t>((uint64_t{x & 0xffffff} * (y & 0xffffff)) >> 16);
    {
      const int64_t p = int64_t{static_cast<int32_t>(x << 8) >> 8} * (static_cast<int32_t>(y << 8) >> 8);
      e[36] = static_cast<uint32_t>(static_cast<uint64_t>(p) >> 16) + z;
    }
    for (int k = 0; k < kOps; ++k) {
      ASSERT_EQ(out[i * kOps + k], e[k]) << "op " << k << " a=" << x << " b=" << y << " c=" << z;
    }
  }
}

TEST(PtxBits, SixtyFourBitFormsMatchTheCpu) {
  Harness h("bits");
  std::mt19937_64 rng(21);
  std::vector<uint64_t> a = {0, 1, ~0ULL, 1ULL << 63, (1ULL << 63) - 1, 0xffffffffULL, 1ULL << 32, 0x8000000000000001ULL};
  std::vector<uint64_t> b = {~0ULL, 0, 1, 1ULL << 63, 2, 0xffffffffULL, 3, 5};
  while (a.size() < 128) a.push_back(rng() >> (rng() % 64)), b.push_back(rng());
  const int n = static_cast<int>(a.size());
  const uint64_t da = h.upload(a), db = h.upload(b), dout = h.upload(std::vector<uint64_t>(n * kOps64));
  LaunchResult r = h.launch("bits64_ops", Dim3(n / 32), Dim3(32), 0, da, db, dout, n);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto out = h.download<uint64_t>(dout, n * kOps64);
  for (int i = 0; i < n; ++i) {
    const uint64_t x = a[i], y = b[i];
    const int64_t sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
    uint64_t e[kOps64];
    e[0] = static_cast<uint64_t>(__builtin_popcountll(x));
    e[1] = x == 0 ? 64 : static_cast<uint64_t>(__builtin_clzll(x));
    {
      const uint64_t m = sx < 0 ? ~x : x;
      e[2] = m == 0 ? 0xffffffffULL : static_cast<uint64_t>(63 - __builtin_clzll(m));
    }
    uint64_t rev = 0;
    for (int k = 0; k < 64; ++k) rev |= ((x >> k) & 1) << (63 - k);
    e[3] = rev;
    e[4] = static_cast<uint64_t>(std::min(sx, sy));
    e[5] = std::max(x, y);
    e[6] = sx < 0 ? 0 - x : x;
    e[7] = 0 - x;
    __extension__ typedef unsigned __int128 U128;
    e[8] = static_cast<uint64_t>((static_cast<U128>(x) * y) >> 64);
    for (int k = 0; k < kOps64; ++k) ASSERT_EQ(out[i * kOps64 + k], e[k]) << "op " << k << " a=" << x << " b=" << y;
  }
}

// Bad forms are refused at load time with the place and the reason.
TEST(PtxBits, MalformedFormsAreRejectedWithAReason) {
  auto parse_error = [](const std::string& body) {
    const std::string text = ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k() {\n.reg .b32 %r<4>;\n" + body + "\nret;\n}\n";
    try {
      Module::parse(text, "bad.ptx");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(parse_error("bmsk.clamp.u32 %r1, %r2, %r3;").find("bmsk is .b32 only"), std::string::npos);
  EXPECT_NE(parse_error("szext.wrap.b32 %r1, %r2, %r3;").find("szext needs .u32 or .s32"), std::string::npos);
  EXPECT_NE(parse_error("dp2a.u32.u32 %r1, %r2, %r3, %r0;").find("dp2a needs .lo or .hi"), std::string::npos);
  EXPECT_NE(parse_error("cvt.pack.sat.u8.s32 %r1, %r2, %r3;").find("cvt.pack to 8 bits"), std::string::npos);
  EXPECT_NE(parse_error("vadd4.u32.u32.u32.sat.add %r1, %r2, %r3, %r0;").find("cannot saturate"), std::string::npos);
  EXPECT_EQ(parse_error("vadd4.u32.u32.u32 %r1, %r2, %r3, %r0;"), "");
  EXPECT_NE(parse_error("bmsk.clamp.b32 %r1, %r2, %r3;\nfoo.b32 %r1;").find("bad.ptx:7"), std::string::npos);
}

}  // namespace
}  // namespace gpuvp::ptx::testing
