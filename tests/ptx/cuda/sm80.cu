// Instructions that need sm_80: redux.sync, packed f16x2/bf16x2 conversions, bf16 fma.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void redux_ops(const unsigned* in, unsigned* out) {
  unsigned v = in[threadIdx.x];
  unsigned* o = out + threadIdx.x * 4;
  o[0] = __reduce_add_sync(0xffffffff, v);
  o[1] = __reduce_min_sync(0xffffffff, (int)v);
  o[2] = __reduce_max_sync(0xffffffff, v);
  o[3] = __reduce_xor_sync(0xffffffff, v);
}

extern "C" __global__ void pack_halves(const float* a, __half2* halves, __nv_bfloat162* bfloats, __nv_bfloat16* products) {
  int i = threadIdx.x;
  halves[i] = __floats2half2_rn(a[2 * i], a[2 * i + 1]);
  bfloats[i] = __floats2bfloat162_rn(a[2 * i], a[2 * i + 1]);
  products[i] = __hmul(__float2bfloat16(a[i]), __float2bfloat16(a[i + 1]));
}
