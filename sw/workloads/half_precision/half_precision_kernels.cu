// Half precision (f16 and f16x2) through cuda_fp16.h: add, sub, mul, fma, neg, abs, compares,
// packed half2 arithmetic, and float<->half conversions in all four rounding modes.
#include <cuda_fp16.h>

#define HALF_OPS 16

extern "C" __global__ void half_ops(const unsigned short* a_bits, const unsigned short* b_bits, const unsigned short* c_bits,
                                    const float* f, unsigned short* out, float* widened, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half a = __ushort_as_half(a_bits[i]);
  const __half b = __ushort_as_half(b_bits[i]);
  const __half c = __ushort_as_half(c_bits[i]);
  unsigned short* o = out + i * HALF_OPS;
  o[0] = __half_as_ushort(__hadd(a, b));
  o[1] = __half_as_ushort(__hsub(a, b));
  o[2] = __half_as_ushort(__hmul(a, b));
  o[3] = __half_as_ushort(__hfma(a, b, c));
  o[4] = __half_as_ushort(__hneg(a));
  o[5] = __half_as_ushort(__habs(b));
  o[6] = __half_as_ushort(__float2half_rn(f[i]));
  o[7] = __half_as_ushort(__float2half_rz(f[i]));
  o[8] = __half_as_ushort(__float2half_ru(f[i]));
  o[9] = __half_as_ushort(__float2half_rd(f[i]));
  const __half2 ab = __halves2half2(a, b);
  const __half2 ca = __halves2half2(c, a);
  const __half2 sum = __hadd2(ab, ca);
  const __half2 fused = __hfma2(ab, ca, ab);
  o[10] = __half_as_ushort(__low2half(sum));
  o[11] = __half_as_ushort(__high2half(sum));
  o[12] = __half_as_ushort(__low2half(fused));
  o[13] = __half_as_ushort(__high2half(fused));
  o[14] = static_cast<unsigned short>((__hlt(a, b) ? 1 : 0) | (__heq(a, b) ? 2 : 0) | (__hge(a, c) ? 4 : 0));
  o[15] = static_cast<unsigned short>(__hisnan(a) ? 1 : 0);
  widened[i] = __half2float(a);
}
