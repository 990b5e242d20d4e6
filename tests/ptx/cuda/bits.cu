// Integer and bit instructions that nvcc emits only through intrinsics, CUB's radix sort and
// the SIMD intrinsics of the toolkit headers (bmsk, szext, fns, dp2a, cvt.pack.sat, vop4), and
// the rarer modes of prmt/shf/bfind and 16-bit integer forms. One output per instruction.
#include <cstdint>

#define OP2(text, k) asm(text " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); o[k] = r
#define OP3(text, k) asm(text " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[k] = r
#define OP16_2(text, k) asm(text " %0, %1, %2;" : "=h"(h) : "h"(ha), "h"(hb)); o[k] = h
#define OP16_1(text, k) asm(text " %0, %1;" : "=h"(h) : "h"(ha)); o[k] = h

constexpr int kBitsOps = 37;

extern "C" __global__ void bits_ops(const uint32_t* av, const uint32_t* bv, const uint32_t* cv, uint32_t* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t a = av[i], b = bv[i], c = cv[i];
  const uint16_t ha = static_cast<uint16_t>(a), hb = static_cast<uint16_t>(b);
  uint32_t* o = out + i * kBitsOps;
  uint32_t r;
  uint16_t h;
  OP2("bmsk.clamp.b32", 0);
  OP2("bmsk.wrap.b32", 1);
  OP2("szext.clamp.s32", 2);
  OP2("szext.wrap.s32", 3);
  OP2("szext.clamp.u32", 4);
  OP2("szext.wrap.u32", 5);
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b & 31), "r"(c)); o[6] = r;
  OP3("dp2a.lo.u32.u32", 7);
  OP3("dp2a.hi.s32.s32", 8);
  OP3("dp2a.lo.s32.u32", 9);
  OP2("cvt.pack.sat.u16.s32", 10);
  OP2("cvt.pack.sat.s16.s32", 11);
  OP3("cvt.pack.sat.u8.s32.b32", 12);
  OP3("cvt.pack.sat.s8.s32.b32", 13);
  OP3("vabsdiff4.u32.u32.u32", 14);
  OP3("vadd4.s32.s32.s32.sat", 15);
  OP3("vsub4.u32.u32.u32.sat", 16);
  OP3("vmin4.s32.s32.u32", 17);
  OP3("vmax4.u32.u32.u32.add", 18);
  OP3("vabsdiff4.u32.s32.s32.add", 19);
  OP3("vadd4.u32.u32.u32", 20);
  OP3("prmt.b32.b4e", 21);
  OP3("prmt.b32.rc8", 22);
  OP3("prmt.b32.ecl", 23);
  OP3("prmt.b32.ecr", 24);
  OP3("prmt.b32.rc16", 25);
  asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r) : "r"(a)); o[26] = r;
  OP3("shf.l.clamp.b32", 27);
  OP3("shf.r.wrap.b32", 28);
  OP16_2("min.s16", 29);
  OP16_2("max.u16", 30);
  OP16_1("abs.s16", 31);
  OP16_1("neg.s16", 32);
  asm("mul.wide.s16 %0, %1, %2;" : "=r"(r) : "h"(ha), "h"(hb)); o[33] = r;
  OP3("sad.s32", 34);
  OP2("mul24.hi.u32", 35);
  OP3("mad24.hi.s32", 36);
}

// 64-bit forms: popc/clz/bfind/brev on b64, min/max/abs/neg on s64, mul.hi.u64.
constexpr int kBits64Ops = 9;
extern "C" __global__ void bits64_ops(const uint64_t* av, const uint64_t* bv, uint64_t* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint64_t a = av[i], b = bv[i];
  uint64_t* o = out + i * kBits64Ops;
  uint32_t w;
  uint64_t r;
  asm("popc.b64 %0, %1;" : "=r"(w) : "l"(a)); o[0] = w;
  asm("clz.b64 %0, %1;" : "=r"(w) : "l"(a)); o[1] = w;
  asm("bfind.s64 %0, %1;" : "=r"(w) : "l"(a)); o[2] = w;
  asm("brev.b64 %0, %1;" : "=l"(r) : "l"(a)); o[3] = r;
  asm("min.s64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(b)); o[4] = r;
  asm("max.u64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(b)); o[5] = r;
  asm("abs.s64 %0, %1;" : "=l"(r) : "l"(a)); o[6] = r;
  asm("neg.s64 %0, %1;" : "=l"(r) : "l"(a)); o[7] = r;
  asm("mul.hi.u64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(b)); o[8] = r;
}
