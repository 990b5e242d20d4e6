// cp.async (sm_80): copies of 4, 8 and 16 bytes, zero fill by src-size and ignore-src, and a
// tiled matrix multiply whose tiles are double-buffered with cp.async groups, as the CUDA
// samples' globalToShmemAsyncCopy does (here through the <cuda_pipeline.h> primitives).
#include <cuda_pipeline.h>

#include <cstdint>

// Thread t copies 16 bytes with src-size t % 17 (capped at 16: the rest is zero-filled), 8
// bytes, and 4 bytes unless (t % 3 == 0), which sets ignore-src (zero-filled); then waits for
// all and writes its 28 bytes of shared memory out.
extern "C" __global__ void async_forms(const uint32_t* in, uint32_t* out) {
  __shared__ __align__(16) uint32_t tile[64 * 7];
  const uint32_t t = threadIdx.x;
  const uint32_t dst16 = static_cast<uint32_t>(__cvta_generic_to_shared(&tile[t * 7]));
  const uint32_t src_size = t % 17 > 16 ? 16 : t % 17;
  // 16-byte copies need 16-byte aligned addresses: thread t's 16 bytes go to a separate area.
  __shared__ __align__(16) uint32_t wide[64 * 4];
  const uint32_t dst_wide = static_cast<uint32_t>(__cvta_generic_to_shared(&wide[t * 4]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst_wide), "l"(in + t * 4), "r"(src_size) : "memory");
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(dst16 + (t & 1 ? 4u : 0u)), "l"(in + 256 + t * 2) : "memory");
  asm volatile("{ .reg .pred p; setp.eq.u32 p, %2, 0; cp.async.ca.shared.global [%0], [%1], 4, p; }" ::"r"(dst16 + 20),
               "l"(in + 384 + t), "r"(t % 3) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  for (int k = 0; k < 4; ++k) out[t * 8 + k] = wide[t * 4 + k];
  out[t * 8 + 4] = tile[t * 7 + (t & 1 ? 1 : 0)];
  out[t * 8 + 5] = tile[t * 7 + (t & 1 ? 2 : 1)];
  out[t * 8 + 6] = tile[t * 7 + 5];
  out[t * 8 + 7] = 0;
}

// C = A * B for n x n float matrices (n a multiple of 16), 16 x 16 tiles, two stages: the
// next tiles are in flight while the current ones are multiplied.
extern "C" __global__ void matmul_async(const float* a, const float* b, float* c, int n) {
  constexpr int kTile = 16;
  __shared__ __align__(16) float as[2][kTile][kTile];
  __shared__ __align__(16) float bs[2][kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  const int tiles = n / kTile;
  auto load = [&](int stage, int tile) {
    __pipeline_memcpy_async(&as[stage][ty][tx], &a[row * n + tile * kTile + tx], sizeof(float));
    __pipeline_memcpy_async(&bs[stage][ty][tx], &b[(tile * kTile + ty) * n + col], sizeof(float));
    __pipeline_commit();
  };
  load(0, 0);
  float sum = 0.0f;
  for (int t = 0; t < tiles; ++t) {
    const int stage = t & 1;
    if (t + 1 < tiles) {
      load(stage ^ 1, t + 1);
      __pipeline_wait_prior(1);  // tile t has landed; t + 1 may still be in flight
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum += as[stage][ty][k] * bs[stage][k][tx];
    __syncthreads();
  }
  c[row * n + col] = sum;
}
