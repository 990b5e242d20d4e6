// IEEE arithmetic with explicit rounding modes, conversions with rounding and saturation,
// special values (signed zeros, subnormals, infinities, NaN) and the float classification and
// rounding-to-integer functions. Every result is written as raw bits.

#define FR_F32 32
#define FR_F64 16

extern "C" __global__ void float_rounding(const float* fa, const float* fb, const float* fc, const double* da,
                                          const double* db, const int* ia, const long long* la, unsigned* out32,
                                          unsigned long long* out64, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float a = fa[i], b = fb[i], c = fc[i];
  unsigned* o = out32 + i * FR_F32;
  o[0] = __float_as_uint(__fadd_rn(a, b));
  o[1] = __float_as_uint(__fadd_rz(a, b));
  o[2] = __float_as_uint(__fadd_ru(a, b));
  o[3] = __float_as_uint(__fadd_rd(a, b));
  o[4] = __float_as_uint(__fmul_rz(a, b));
  o[5] = __float_as_uint(__fmul_ru(a, b));
  o[6] = __float_as_uint(__fdiv_rn(a, b));
  o[7] = __float_as_uint(__fdiv_rd(a, b));
  o[8] = __float_as_uint(__fmaf_rn(a, b, c));
  o[9] = __float_as_uint(__fmaf_rz(a, b, c));
  o[10] = __float_as_uint(__fsqrt_rn(fabsf(a)));
  o[11] = __float_as_uint(__fsqrt_ru(fabsf(a)));
  o[12] = __float_as_uint(__frcp_rn(b));
  o[13] = __float_as_uint(__saturatef(a));
  o[14] = __float_as_uint(copysignf(a, b));
  o[15] = __float_as_uint(fminf(a, b));
  o[16] = __float_as_uint(fmaxf(a, c));
  o[17] = static_cast<unsigned>(__float2int_rn(a));
  o[18] = static_cast<unsigned>(__float2int_rz(a));
  o[19] = static_cast<unsigned>(__float2int_ru(a));
  o[20] = static_cast<unsigned>(__float2int_rd(a));
  o[21] = __float2uint_rn(a);
  o[22] = __float_as_uint(__int2float_rz(ia[i]));
  o[23] = __float_as_uint(__int2float_ru(ia[i]));
  o[24] = __float_as_uint(__ll2float_rd(la[i]));
  o[25] = __float_as_uint(__double2float_rn(da[i]));
  o[26] = __float_as_uint(__double2float_rz(da[i]));
  o[27] = __float_as_uint(__double2float_ru(da[i]));
  o[28] = __float_as_uint(truncf(a));
  o[29] = __float_as_uint(floorf(a));
  o[30] = __float_as_uint(rintf(a));
  o[31] = (isnan(a) ? 1u : 0u) | (isinf(a) ? 2u : 0u) | (isfinite(a) ? 4u : 0u) | (signbit(a) ? 8u : 0u);

  const double x = da[i], y = db[i];
  unsigned long long* o64 = out64 + i * FR_F64;
  o64[0] = __double_as_longlong(__dadd_rn(x, y));
  o64[1] = __double_as_longlong(__dadd_rz(x, y));
  o64[2] = __double_as_longlong(__dadd_ru(x, y));
  o64[3] = __double_as_longlong(__dmul_rd(x, y));
  o64[4] = __double_as_longlong(__ddiv_ru(x, y));
  o64[5] = __double_as_longlong(__dsqrt_rd(fabs(x)));
  o64[6] = __double_as_longlong(__fma_rz(x, y, x));
  o64[7] = __double_as_longlong(__drcp_rn(y));
  o64[8] = static_cast<unsigned long long>(__double2ll_rn(x));
  o64[9] = static_cast<unsigned long long>(__double2ll_rz(x));
  o64[10] = __double2ull_rd(x);
  o64[11] = static_cast<unsigned long long>(static_cast<long long>(__double2int_ru(x)));
  o64[12] = __double_as_longlong(__ll2double_rz(la[i]));
  o64[13] = __double_as_longlong(static_cast<double>(a));  // exact widening, keeps subnormals
  o64[14] = __double_as_longlong(floor(x));
  o64[15] = __double_as_longlong(ceil(y));
}
