// Instruction-family kernels: every output is one PTX instruction (inline asm where nvcc
// would not pick it by itself) applied to per-thread inputs; the tests compare with CPU code.
#include <cuda_fp16.h>

#define ASM1(op, d, a) asm(op " %0, %1;" : "=r"(d) : "r"(a))
#define ASM2(op, d, a, b) asm(op " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b))
#define ASM3(op, d, a, b, c) asm(op " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c))

extern "C" __global__ void int32_ops(const unsigned* A, const unsigned* B, const unsigned* C, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = A[i], b = B[i], c = C[i], r;
  unsigned* o = out + i * 40;
  ASM2("add.s32", r, a, b); o[0] = r;
  ASM2("sub.s32", r, a, b); o[1] = r;
  ASM2("mul.lo.s32", r, a, b); o[2] = r;
  ASM2("mul.hi.s32", r, a, b); o[3] = r;
  ASM2("mul.hi.u32", r, a, b); o[4] = r;
  ASM3("mad.lo.s32", r, a, b, c); o[5] = r;
  ASM2("mul24.lo.u32", r, a, b); o[6] = r;
  ASM2("mul24.hi.s32", r, a, b); o[7] = r;
  ASM3("sad.u32", r, a, b, c); o[8] = r;
  ASM2("div.s32", r, a, b | 1); o[9] = r;
  ASM2("rem.u32", r, a, b | 1); o[10] = r;
  ASM2("min.s32", r, a, b); o[11] = r;
  ASM2("max.u32", r, a, b); o[12] = r;
  ASM1("abs.s32", r, a); o[13] = r;
  ASM1("neg.s32", r, a); o[14] = r;
  ASM1("popc.b32", r, a); o[15] = r;
  ASM1("clz.b32", r, a); o[16] = r;
  ASM1("bfind.s32", r, a); o[17] = r;
  ASM1("brev.b32", r, a); o[18] = r;
  ASM3("bfe.u32", r, a, b & 31, c & 31); o[19] = r;
  ASM3("bfe.s32", r, a, b & 31, c & 31); o[20] = r;
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(b), "r"(c & 31), "r"((c >> 8) & 31)); o[21] = r;
  ASM3("prmt.b32", r, a, b, c); o[22] = r;
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[23] = r;
  asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[24] = r;
  ASM3("shf.l.wrap.b32", r, a, b, c); o[25] = r;
  ASM3("shf.r.clamp.b32", r, a, b, c & 63); o[26] = r;
  ASM2("shl.b32", r, a, b & 63); o[27] = r;
  ASM2("shr.s32", r, a, b & 63); o[28] = r;
  ASM2("shr.u32", r, a, b & 63); o[29] = r;
  o[30] = (a & b) ^ (~a | c);
  ASM1("cnot.b32", r, a & 1 ? 0 : a); o[31] = r;
  ASM3("dp4a.s32.u32", r, a, b, c); o[32] = r;
  ASM2("add.sat.s32", r, a, b); o[33] = r;
  asm("{ .reg .pred p; setp.lt.s32 p, %1, %2; selp.b32 %0, %1, %3, p; }" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[34] = r;
  asm("set.gt.u32.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); o[35] = r;
  asm("slct.u32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[36] = r;
  ASM1("bfind.shiftamt.u32", r, a); o[37] = r;
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); o[38] = r;
  asm("{ .reg .pred p, q; setp.hi.and.u32 p|q, %1, %2, 1; selp.u32 %0, 1, 0, p; @q add.u32 %0, %0, 2; }" : "=r"(r) : "r"(a), "r"(b)); o[39] = r;
}

extern "C" __global__ void int64_ops(const unsigned long long* A, const unsigned long long* B, unsigned long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long a = A[i], b = B[i];
  unsigned long long* o = out + i * 12;
  o[0] = __umul64hi(a, b);
  o[1] = (unsigned long long)__mul64hi((long long)a, (long long)b);
  o[2] = (unsigned long long)((long long)(int)a * (long long)(int)b);  // mul.wide.s32
  o[3] = a / (b | 1);
  o[4] = (unsigned long long)((long long)a % (long long)(b | 1));
  o[5] = __popcll(a);
  o[6] = __clzll(a);
  o[7] = __brevll(a);
  o[8] = (unsigned long long)((long long)a >> (b & 63));
  unsigned long long sum;
  asm("{ .reg .u32 al, ah, bl, bh, sl, sh; mov.b64 {al, ah}, %1; mov.b64 {bl, bh}, %2;"
      " add.cc.u32 sl, al, bl; addc.u32 sh, ah, bh; mov.b64 %0, {sl, sh}; }" : "=l"(sum) : "l"(a), "l"(b));
  o[9] = sum;
  unsigned long long diff;
  asm("{ .reg .u32 al, ah, bl, bh, sl, sh; mov.b64 {al, ah}, %1; mov.b64 {bl, bh}, %2;"
      " sub.cc.u32 sl, al, bl; subc.u32 sh, ah, bh; mov.b64 %0, {sl, sh}; }" : "=l"(diff) : "l"(a), "l"(b));
  o[10] = diff;
  o[11] = (unsigned long long)min((long long)a, (long long)b);
}

extern "C" __global__ void float_ops(const float* A, const float* B, const float* C, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = A[i], b = B[i], c = C[i];
  float* o = out + i * 24;
  o[0] = __fadd_rn(a, b);
  o[1] = __fadd_rz(a, b);
  o[2] = __fadd_rd(a, b);
  o[3] = __fadd_ru(a, b);
  o[4] = __fmul_rz(a, b);
  o[5] = __fmaf_rd(a, b, c);
  o[6] = __fmaf_ru(a, b, c);
  o[7] = __fdiv_rn(a, b);
  o[8] = __fdiv_ru(a, b);
  o[9] = __frcp_rz(b);
  o[10] = __fsqrt_rn(fabsf(a));
  o[11] = __fsqrt_ru(fabsf(a));
  o[12] = fminf(a, b);
  o[13] = fmaxf(a, c);
  o[14] = __saturatef(a);
  float r;
  asm("add.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); o[15] = r;
  asm("copysign.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); o[16] = r;
  asm("abs.f32 %0, %1;" : "=f"(r) : "f"(a)); o[17] = r;
  asm("neg.f32 %0, %1;" : "=f"(r) : "f"(a)); o[18] = r;
  asm("sub.rm.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); o[19] = r;
  asm("cvt.rni.f32.f32 %0, %1;" : "=f"(r) : "f"(a)); o[20] = r;
  asm("cvt.rmi.f32.f32 %0, %1;" : "=f"(r) : "f"(a)); o[21] = r;
  unsigned flags;
  asm("{ .reg .pred p0, p1, p2, p3; testp.finite.f32 p0, %1; testp.notanumber.f32 p1, %1; testp.subnormal.f32 p2, %1; testp.normal.f32 p3, %1;"
      " selp.u32 %0, 1, 0, p0; @p1 or.b32 %0, %0, 2; @p2 or.b32 %0, %0, 4; @p3 or.b32 %0, %0, 8; }" : "=r"(flags) : "f"(a));
  o[22] = (float)flags;
  unsigned cmp;
  asm("{ .reg .pred p0, p1, p2; setp.ltu.f32 p0, %1, %2; setp.geu.f32 p1, %1, %2; setp.num.f32 p2, %1, %2;"
      " selp.u32 %0, 1, 0, p0; @p1 or.b32 %0, %0, 2; @p2 or.b32 %0, %0, 4; }" : "=r"(cmp) : "f"(a), "f"(b));
  o[23] = (float)cmp;
}

extern "C" __global__ void float_approx(const float* A, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = A[i];
  float* o = out + i * 8;
  o[0] = __sinf(a);
  o[1] = __cosf(a);
  o[2] = __log2f(fabsf(a) + 1.0f);
  o[3] = exp2f(a * 0.25f);
  o[4] = rsqrtf(fabsf(a) + 1.0f);
  o[5] = __fdividef(a, 3.0f);
  o[6] = a / 7.0f;  // div.rn.f32 (IEEE)
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(a * 0.1f));
  o[7] = t;
}

extern "C" __global__ void double_ops(const double* A, const double* B, const double* C, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a = A[i], b = B[i], c = C[i];
  double* o = out + i * 12;
  o[0] = __dadd_rd(a, b);
  o[1] = __dmul_ru(a, b);
  o[2] = fma(a, b, c);
  o[3] = a / b;             // nvcc expands this with rcp.approx + Newton iterations
  o[4] = sqrt(fabs(a));
  o[5] = __drcp_rn(b);
  o[6] = __ddiv_rz(a, b);
  o[7] = fmin(a, c);
  o[8] = (double)__double2float_rz(a);
  o[9] = (double)__double2ll_rn(a * 1e6);
  o[10] = __ll2double_rn((long long)(b * 1e15));
  o[11] = (double)__double2uint_rz(a);
}

extern "C" __global__ void conversions(const float* A, int* ints, unsigned* uints, float* floats, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = A[i];
  ints[i * 4 + 0] = __float2int_rn(a);
  ints[i * 4 + 1] = __float2int_rd(a);
  ints[i * 4 + 2] = (int)(signed char)__float2int_rz(a);
  long long w = __float2ll_ru(a);
  ints[i * 4 + 3] = (int)(w >> 8);
  uints[i * 2 + 0] = __float2uint_rz(a);
  unsigned short s;
  asm("cvt.rni.sat.u8.f32 %0, %1;" : "=h"(s) : "f"(a));
  uints[i * 2 + 1] = s;
  floats[i * 4 + 0] = __int2float_rz((int)(a * 1e5f));
  floats[i * 4 + 1] = __ull2float_ru((unsigned long long)(fabsf(a) * 1e12f));
  floats[i * 4 + 2] = __half2float(__float2half_rn(a));
  floats[i * 4 + 3] = __half2float(__float2half_rz(a));
}

extern "C" __global__ void half_ops(const __half2* A, const __half2* B, const __half2* C, __half2* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 a = A[i], b = B[i], c = C[i];
  __half2* o = out + i * 6;
  o[0] = __hadd2(a, b);
  o[1] = __hmul2(a, b);
  o[2] = __hfma2(a, b, c);
  o[3] = __hsub2(a, c);
  o[4] = __halves2half2(__hadd(__low2half(a), __high2half(b)), __hmul(__high2half(a), __low2half(c)));
  o[5] = __hmax2(a, b);
}

// f64 directed rounding where results are subnormal or overflow.
extern "C" __global__ void double_directed(const double* A, const double* B, const double* C, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double a = A[i], b = B[i], c = C[i];
  double* o = out + i * 6;
  o[0] = __dmul_rd(a, b);
  o[1] = __dmul_ru(a, b);
  o[2] = __ddiv_ru(a, c);
  o[3] = __ddiv_rz(a, c);
  o[4] = __fma_rz(a, b, c * 1e-300);
  o[5] = __fma_rd(a, b, -c * 1e-300);
}
