// cuda::barrier and cuda::pipeline (built for sm_80: mbarrier objects and cp.async), checked
// against CPU references:
//   1. A tiled matrix multiply whose tiles arrive with cuda::memcpy_async on a block-scoped
//      cuda::barrier (cp.async.mbarrier.arrive + mbarrier.arrive/test_wait), double-buffered.
//   2. The same with a two-stage block-scoped cuda::pipeline shared by the whole block.
//   3. Producer and consumer threads of one warp on a cuda::barrier: each round the even lanes
//      write a slot, the odd lanes read it after the barrier (one half of the warp spins until
//      the other half, diverged from it, arrives).
//   4. arrive_and_drop: half the block leaves the barrier after the first phase.
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>

#include <cstdio>
#include <vector>

#include "check.cuh"

// Block-scoped barriers live in __shared__ variables that their first thread init()s (the
// documented pattern; the constructor itself never runs).
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

constexpr int kN = 64;
constexpr int kTile = 16;

__global__ void matmul_barrier(const float* a, const float* b, float* c) {
  __shared__ __align__(16) float as[2][kTile][kTile];
  __shared__ __align__(16) float bs[2][kTile][kTile];
  __shared__ block_barrier bar[2];
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) {
    init(&bar[0], block.size());
    init(&bar[1], block.size());
  }
  block.sync();
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  auto load = [&](int stage, int t) {
    cuda::memcpy_async(&as[stage][ty][tx], &a[row * kN + t * kTile + tx], sizeof(float), bar[stage]);
    cuda::memcpy_async(&bs[stage][ty][tx], &b[(t * kTile + ty) * kN + col], sizeof(float), bar[stage]);
  };
  load(0, 0);
  float sum = 0.0f;
  for (int t = 0; t < kN / kTile; ++t) {
    const int stage = t & 1;
    if (t + 1 < kN / kTile) load(stage ^ 1, t + 1);
    bar[stage].arrive_and_wait();
    for (int k = 0; k < kTile; ++k) sum += as[stage][ty][k] * bs[stage][k][tx];
    block.sync();  // the stage is refilled next round
  }
  c[row * kN + col] = sum;
}

__global__ void matmul_pipeline(const float* a, const float* b, float* c) {
  constexpr int kStages = 2;
  __shared__ __align__(16) float as[kStages][kTile][kTile];
  __shared__ __align__(16) float bs[kStages][kTile][kTile];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, kStages> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  const int tiles = kN / kTile;
  int fetched = 0;
  float sum = 0.0f;
  for (int t = 0; t < tiles; ++t) {
    for (; fetched < tiles && fetched < t + kStages; ++fetched) {
      const int stage = fetched % kStages;
      pipe.producer_acquire();
      cuda::memcpy_async(&as[stage][ty][tx], &a[row * kN + fetched * kTile + tx], sizeof(float), pipe);
      cuda::memcpy_async(&bs[stage][ty][tx], &b[(fetched * kTile + ty) * kN + col], sizeof(float), pipe);
      pipe.producer_commit();
    }
    const int stage = t % kStages;
    pipe.consumer_wait();
    block.sync();
    for (int k = 0; k < kTile; ++k) sum += as[stage][ty][k] * bs[stage][k][tx];
    block.sync();
    pipe.consumer_release();
  }
  c[row * kN + col] = sum;
}

// One warp: even lanes produce, odd lanes consume, 8 rounds on one barrier of 32 threads; whichever
// half reaches the barrier first spins in test_wait until the other half of its own warp arrives.
__global__ void warp_producer_consumer(int* out) {
  __shared__ block_barrier bar;
  __shared__ int slot[16];
  const int lane = threadIdx.x;
  if (lane == 0) init(&bar, 32);
  __syncthreads();
  for (int round = 0; round < 8; ++round) {
    if (lane % 2 == 0) {
      slot[lane / 2] = round * 100 + lane;
      bar.arrive_and_wait();  // the slot is written
    } else {
      bar.arrive_and_wait();
      out[round * 16 + lane / 2] = slot[lane / 2];
    }
    bar.arrive_and_wait();  // the slot is read: the next round may overwrite it
  }
}

// 64 threads; after phase 0 the upper half drops out; phase 1 completes with the lower half.
__global__ void drop_out(int* seen) {
  __shared__ block_barrier bar;
  __shared__ int before_first, before_second;
  const int t = threadIdx.x;
  if (t == 0) {
    init(&bar, 64);
    before_first = before_second = 0;
  }
  __syncthreads();
  atomicAdd(&before_first, 1);
  if (t >= 32) {
    bar.arrive_and_drop();
    return;
  }
  bar.arrive_and_wait();  // all 64 incremented before_first before phase 0 completed
  const int first = before_first;
  atomicAdd(&before_second, 1);
  bar.arrive_and_wait();  // 32 arrivals expected now
  seen[t] = first * 1000 + before_second;
}

int main() {
  std::vector<float> a(kN * kN), b(kN * kN), expected(kN * kN);
  for (int i = 0; i < kN * kN; ++i) {
    a[i] = static_cast<float>((i * 7 + 3) % 9 - 4);
    b[i] = static_cast<float>((i * 5 + 1) % 7 - 3);
  }
  for (int r = 0; r < kN; ++r)
    for (int col = 0; col < kN; ++col) {
      float s = 0;
      for (int k = 0; k < kN; ++k) s += a[r * kN + k] * b[k * kN + col];
      expected[r * kN + col] = s;
    }
  float *da, *db, *dc;
  EXPECT_CUDA(cudaMalloc(&da, kN * kN * sizeof(float)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&db, kN * kN * sizeof(float)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&dc, kN * kN * sizeof(float)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(da, a.data(), kN * kN * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(db, b.data(), kN * kN * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<float> c(kN * kN);
  const dim3 grid(kN / kTile, kN / kTile), block(kTile, kTile);

  EXPECT_CUDA(cudaMemset(dc, 0, kN * kN * sizeof(float)), cudaSuccess);
  matmul_barrier<<<grid, block>>>(da, db, dc);
  EXPECT_CUDA(cudaMemcpy(c.data(), dc, kN * kN * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kN * kN; ++i) CHECK(c[i] == expected[i]);

  EXPECT_CUDA(cudaMemset(dc, 0, kN * kN * sizeof(float)), cudaSuccess);
  matmul_pipeline<<<grid, block>>>(da, db, dc);
  EXPECT_CUDA(cudaMemcpy(c.data(), dc, kN * kN * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kN * kN; ++i) CHECK(c[i] == expected[i]);

  int* dout;
  EXPECT_CUDA(cudaMalloc(&dout, 8 * 16 * sizeof(int)), cudaSuccess);
  warp_producer_consumer<<<1, 32>>>(dout);
  std::vector<int> out(8 * 16);
  EXPECT_CUDA(cudaMemcpy(out.data(), dout, out.size() * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int round = 0; round < 8; ++round)
    for (int i = 0; i < 16; ++i) CHECK(out[round * 16 + i] == round * 100 + 2 * i);

  drop_out<<<1, 64>>>(dout);
  EXPECT_CUDA(cudaMemcpy(out.data(), dout, 32 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 0; t < 32; ++t) CHECK(out[t] == 64 * 1000 + 32);

  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  std::printf("PASS barriers_and_pipelines\n");
  return 0;
}
