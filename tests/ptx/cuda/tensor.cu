// wmma (tensor cores) through the toolkit's nvcuda::wmma API: one warp per M x N tile of
// D = A * B + C, looping over K, with the element-wise scaling of fragments that the samples'
// GEMMs do. Shapes, layouts and element types of sm_70 (f16), sm_72 (s8/u8) and sm_80
// (bf16, tf32). Matrices: A is m x k, B is k x n, C and D are m x n.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

template <typename In, typename Frag, typename Acc, int M, int N, int K, typename ALayout, typename BLayout>
__device__ void tile_gemm(const In* a, const In* b, const Acc* c, Acc* d, int m, int n, int k, Acc scale) {
  const int tile_row = blockIdx.y * M, tile_col = blockIdx.x * N;
  constexpr bool a_row = std::is_same<ALayout, wmma::row_major>::value;
  constexpr bool b_row = std::is_same<BLayout, wmma::row_major>::value;
  wmma::fragment<wmma::matrix_a, M, N, K, Frag, ALayout> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, Frag, BLayout> fb;
  wmma::fragment<wmma::accumulator, M, N, K, Acc> acc;
  wmma::fill_fragment(acc, Acc(0));
  for (int kk = 0; kk < k; kk += K) {
    wmma::load_matrix_sync(fa, a_row ? a + tile_row * k + kk : a + kk * m + tile_row, a_row ? k : m);
    wmma::load_matrix_sync(fb, b_row ? b + kk * n + tile_col : b + tile_col * k + kk, b_row ? n : k);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::fragment<wmma::accumulator, M, N, K, Acc> cf;
  wmma::load_matrix_sync(cf, c + tile_row * n + tile_col, n, wmma::mem_row_major);
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = acc.x[i] * scale + cf.x[i];
  wmma::store_matrix_sync(d + tile_row * n + tile_col, acc, n, wmma::mem_row_major);
}

#define GEMM(name, In, Frag, Acc, M, N, K, AL, BL)                                                              \
  extern "C" __global__ void name(const In* a, const In* b, const Acc* c, Acc* d, int m, int n, int k, Acc s) { \
    tile_gemm<In, Frag, Acc, M, N, K, wmma::AL, wmma::BL>(a, b, c, d, m, n, k, s);                             \
  }

GEMM(gemm_f16_f32_16x16x16_rc, half, half, float, 16, 16, 16, row_major, col_major)
GEMM(gemm_f16_f16_32x8x16_cr, half, half, half, 32, 8, 16, col_major, row_major)
GEMM(gemm_f16_f32_8x32x16_rr, half, half, float, 8, 32, 16, row_major, row_major)
GEMM(gemm_s8_s32_16x16x16_rc, signed char, signed char, int, 16, 16, 16, row_major, col_major)
GEMM(gemm_u8_s32_32x8x16_rr, unsigned char, unsigned char, int, 32, 8, 16, row_major, row_major)
GEMM(gemm_bf16_f32_16x16x16_rc, __nv_bfloat16, __nv_bfloat16, float, 16, 16, 16, row_major, col_major)
GEMM(gemm_tf32_f32_16x16x8_rc, float, wmma::precision::tf32, float, 16, 16, 8, row_major, col_major)

// cvt to tf32 (what wmma::__float_to_tf32 emits), three roundings.
extern "C" __global__ void to_tf32(const float* in, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(in[i])); out[3 * i] = r;
  asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(in[i])); out[3 * i + 1] = r;
  asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(r) : "f"(in[i])); out[3 * i + 2] = r;
}
