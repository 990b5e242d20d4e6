// Integer and bit-manipulation intrinsics: popc, clz, brev, ffs, byte_perm (prmt), funnel
// shifts (shf), mulhi/mul24/sad, bit-field extraction, boolean expressions nvcc folds into lop3,
// rotates, and 64-bit division/remainder with negative operands. One thread per input tuple.

#define BIT_OPS_32 18
#define BIT_OPS_64 8

extern "C" __global__ void bit_ops(const unsigned* x, const unsigned* y, const unsigned* s, const unsigned long long* z,
                                   const unsigned long long* w, unsigned* out32, unsigned long long* out64, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned a = x[i], b = y[i], c = s[i];
  const unsigned shift = c & 31;
  unsigned* o = out32 + i * BIT_OPS_32;
  o[0] = __popc(a);
  o[1] = __clz(a);
  o[2] = __brev(a);
  o[3] = __ffs(a);
  o[4] = __byte_perm(a, b, c & 0x7777);
  o[5] = __funnelshift_l(a, b, c);
  o[6] = __funnelshift_r(a, b, c);
  o[7] = __funnelshift_lc(a, b, c & 63);
  o[8] = __funnelshift_rc(a, b, c & 63);
  o[9] = __umulhi(a, b);
  o[10] = static_cast<unsigned>(__mulhi(static_cast<int>(a), static_cast<int>(b)));
  o[11] = static_cast<unsigned>(__mul24(static_cast<int>(a), static_cast<int>(b)));
  o[12] = __umul24(a, b);
  o[13] = __usad(a, b, c);
  o[14] = (a >> (c & 15)) & 0x7fu;                     // bit-field extract
  o[15] = (a & b) | ((~a & c) ^ (b | ~c));             // three-input boolean function
  o[16] = shift == 0 ? a : (a << shift) | (a >> (32 - shift));  // rotate left
  o[17] = static_cast<unsigned>(static_cast<int>(a) >> shift);  // arithmetic shift

  const unsigned long long p = z[i], q = w[i];
  unsigned long long* o64 = out64 + i * BIT_OPS_64;
  o64[0] = __popcll(p);
  o64[1] = __clzll(p);
  o64[2] = __brevll(p);
  o64[3] = __umul64hi(p, q);
  o64[4] = static_cast<unsigned long long>(__mul64hi(static_cast<long long>(p), static_cast<long long>(q)));
  // q | 1 keeps the divisor non-zero; signed operands are often negative.
  o64[5] = static_cast<unsigned long long>(static_cast<long long>(p) / static_cast<long long>(q | 1));
  o64[6] = static_cast<unsigned long long>(static_cast<long long>(p) % static_cast<long long>(q | 1));
  o64[7] = p / ((q >> 40) | 1) + p % ((q >> 40) | 1);
}
