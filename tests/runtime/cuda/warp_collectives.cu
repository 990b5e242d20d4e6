// Warp collectives (shfl.sync, vote.sync, match.sync, bar.warp.sync) reached by divergent lanes at
// different times: a collective waits until every non-exited lane of its membermask has arrived,
// so each lane's path runs first. Checked against a CPU reference.
//   1. A non-inlined function with a shuffle and a ballot, called from both sides of a branch
//      (the two halves of the warp reach it from different call sites, one after the other).
//   2. Inline PTX whose odd lanes run an out-of-line block after the shuffle's position in the
//      code and jump back to it: the even lanes reach the shuffle first.
//   3. Partitioning as a quadtree build does: per-warp ballots in a loop whose trip count the
//      warp agrees on with any(), where only some lanes store before each count.
//   4. Lanes that exit early do not hold up the others' collectives.
#include <cooperative_groups.h>

#include <cstdio>
#include <vector>

#include "check.cuh"

namespace cg = cooperative_groups;

constexpr unsigned kFull = 0xffffffffu;

struct Exchanged {
  unsigned partner;  // the value of lane ^ 16
  unsigned ballot;   // lanes whose value is odd
  unsigned matched;  // lanes with the same value modulo 4 (match.any)
};

__device__ __noinline__ Exchanged exchange(unsigned v) {
  Exchanged e;
  e.partner = __shfl_xor_sync(kFull, v, 16);
  e.ballot = __ballot_sync(kFull, v & 1);
  e.matched = __match_any_sync(kFull, v & 3);
  __syncwarp(kFull);
  return e;
}

__global__ void two_call_sites(const unsigned* in, unsigned* out) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned lane = threadIdx.x & 31;
  unsigned v = in[tid];
  Exchanged e;
  if (lane < 16) {
    e = exchange(v * 3u);
  } else {
    for (unsigned i = 0; i < (v & 7); ++i) v = v * 1664525u + 1013904223u;  // a different path first
    e = exchange(v);
  }
  out[3 * tid] = e.partner;
  out[3 * tid + 1] = e.ballot;
  out[3 * tid + 2] = e.matched;
}

// Odd lanes take an out-of-line block that sits after the shuffle and vote in the code, change
// their value there and jump back: every lane must see the odd lanes' changed values.
__global__ void out_of_line_block(const unsigned* in, unsigned* out) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned v = in[tid];
  unsigned from_lane1, ballot;
  asm volatile(
      "{\n"
      ".reg .pred odd, big;\n"
      ".reg .b32 value, bit;\n"
      "mov.b32 value, %2;\n"
      "and.b32 bit, %3, 1;\n"
      "setp.ne.u32 odd, bit, 0;\n"
      "@odd bra LATE%=;\n"
      "JOIN%=:\n"
      "shfl.sync.idx.b32 %0, value, 1, 31, -1;\n"
      "setp.gt.u32 big, value, 1000;\n"
      "vote.sync.ballot.b32 %1, big, -1;\n"
      "bra.uni DONE%=;\n"
      "LATE%=:\n"
      "add.u32 value, value, 5000;\n"
      "bra.uni JOIN%=;\n"
      "DONE%=:\n"
      "}\n"
      : "=r"(from_lane1), "=r"(ballot)
      : "r"(v), "r"(threadIdx.x));
  out[2 * tid] = from_lane1;
  out[2 * tid + 1] = ballot;
}

// Each warp counts its points per quadrant with ballots and places them, as a quadtree build
// does; counts[warp * 4 + q] and the placed points are checked.
__global__ void partition(const float2* points, int n, int* counts, float2* placed) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int warps = gridDim.x * blockDim.x / 32;
  const int per_warp = (n + warps - 1) / warps;
  const int begin = warp * per_warp;
  const int end = min(n, begin + per_warp);
  const unsigned lane_mask_lt = (1u << tile.thread_rank()) - 1;
  int placed_count[4] = {0, 0, 0, 0};
  for (int it = begin + tile.thread_rank(); tile.any(it < end); it += 32) {
    const bool active = it < end;
    const float2 p = active ? points[it] : make_float2(0.0f, 0.0f);
    for (int q = 0; q < 4; ++q) {
      const bool right = (q & 1) != 0, top = (q & 2) != 0;
      const bool pred = active && ((p.x >= 0.5f) == right) && ((p.y >= 0.5f) == top);
      const unsigned vote = tile.ballot(pred);
      const int dest = placed_count[q] + __popc(vote & lane_mask_lt);
      if (pred) placed[(warp * 4 + q) * per_warp + dest] = p;
      placed_count[q] += tile.shfl(__popc(vote), 0);
    }
  }
  if (tile.thread_rank() == 0) {
    for (int q = 0; q < 4; ++q) counts[warp * 4 + q] = placed_count[q];
  }
}

// Lanes 24..31 of each warp exit at once; the rest shuffle and vote with a full mask.
__global__ void early_exit(const unsigned* in, unsigned* out) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned lane = threadIdx.x & 31;
  if (lane >= 24) return;
  const unsigned v = in[tid];
  out[2 * tid] = __shfl_down_sync(kFull, v, 1);
  out[2 * tid + 1] = __ballot_sync(kFull, v & 1);
}

// The kernel's loop: its bound is re-read from the changing value.
static unsigned lcg_steps(unsigned v) {
  for (unsigned i = 0; i < (v & 7); ++i) v = v * 1664525u + 1013904223u;
  return v;
}

int main() {
  constexpr int kThreads = 256;
  std::vector<unsigned> in(kThreads);
  for (int i = 0; i < kThreads; ++i) in[i] = static_cast<unsigned>(i * 2654435761u >> 7) % 10007u;
  unsigned *d_in, *d_out;
  EXPECT_CUDA(cudaMalloc(&d_in, kThreads * sizeof(unsigned)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_out, 3 * kThreads * sizeof(unsigned)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(d_in, in.data(), kThreads * sizeof(unsigned), cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<unsigned> out(3 * kThreads);

  // 1. Two call sites.
  two_call_sites<<<2, kThreads / 2>>>(d_in, d_out);
  EXPECT_CUDA(cudaMemcpy(out.data(), d_out, 3 * kThreads * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int w = 0; w < kThreads / 32; ++w) {
    unsigned value[32];
    for (int l = 0; l < 32; ++l) value[l] = l < 16 ? in[w * 32 + l] * 3u : lcg_steps(in[w * 32 + l]);
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) ballot |= (value[l] & 1u) << l;
    for (int l = 0; l < 32; ++l) {
      unsigned matched = 0;
      for (int m = 0; m < 32; ++m) matched |= static_cast<unsigned>((value[m] & 3) == (value[l] & 3)) << m;
      const int t = w * 32 + l;
      CHECK(out[3 * t] == value[l ^ 16]);
      CHECK(out[3 * t + 1] == ballot);
      CHECK(out[3 * t + 2] == matched);
    }
  }

  // 2. Out-of-line block.
  out_of_line_block<<<2, kThreads / 2>>>(d_in, d_out);
  EXPECT_CUDA(cudaMemcpy(out.data(), d_out, 2 * kThreads * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int w = 0; w < kThreads / 32; ++w) {
    unsigned value[32];
    for (int l = 0; l < 32; ++l) value[l] = in[w * 32 + l] + ((l & 1) ? 5000u : 0u);
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) ballot |= static_cast<unsigned>(value[l] > 1000) << l;
    for (int l = 0; l < 32; ++l) {
      const int t = w * 32 + l;
      CHECK(out[2 * t] == value[1]);
      CHECK(out[2 * t + 1] == ballot);
    }
  }

  // 3. Quadtree-style partition: 8 warps, 1000 points.
  constexpr int kPoints = 1000, kWarps = 8, kPerWarp = (kPoints + kWarps - 1) / kWarps;
  std::vector<float2> points(kPoints);
  for (int i = 0; i < kPoints; ++i) {
    points[i] = make_float2(static_cast<float>((i * 37) % 101) / 100.0f, static_cast<float>((i * 53) % 97) / 96.0f);
  }
  float2 *d_points, *d_placed;
  int* d_counts;
  EXPECT_CUDA(cudaMalloc(&d_points, kPoints * sizeof(float2)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_placed, kWarps * 4 * kPerWarp * sizeof(float2)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_counts, kWarps * 4 * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(d_points, points.data(), kPoints * sizeof(float2), cudaMemcpyHostToDevice), cudaSuccess);
  partition<<<2, 128>>>(d_points, kPoints, d_counts, d_placed);
  std::vector<int> counts(kWarps * 4);
  std::vector<float2> placed(kWarps * 4 * kPerWarp);
  EXPECT_CUDA(cudaMemcpy(counts.data(), d_counts, counts.size() * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(placed.data(), d_placed, placed.size() * sizeof(float2), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int w = 0; w < kWarps; ++w) {
    int expected_count[4] = {0, 0, 0, 0};
    for (int i = w * kPerWarp; i < std::min(kPoints, (w + 1) * kPerWarp); ++i) {
      const int q = (points[i].x >= 0.5f ? 1 : 0) | (points[i].y >= 0.5f ? 2 : 0);
      const float2 got = placed[(w * 4 + q) * kPerWarp + expected_count[q]++];
      CHECK(got.x == points[i].x && got.y == points[i].y);
    }
    for (int q = 0; q < 4; ++q) CHECK(counts[w * 4 + q] == expected_count[q]);
  }

  // 4. Early exit.
  EXPECT_CUDA(cudaMemset(d_out, 0xff, 2 * kThreads * sizeof(unsigned)), cudaSuccess);
  early_exit<<<2, kThreads / 2>>>(d_in, d_out);
  EXPECT_CUDA(cudaMemcpy(out.data(), d_out, 2 * kThreads * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int w = 0; w < kThreads / 32; ++w) {
    unsigned ballot = 0;
    for (int l = 0; l < 24; ++l) ballot |= (in[w * 32 + l] & 1u) << l;
    for (int l = 0; l < 32; ++l) {
      const int t = w * 32 + l;
      if (l >= 24) {
        CHECK(out[2 * t] == 0xffffffffu && out[2 * t + 1] == 0xffffffffu);
        continue;
      }
      // Lane 23 reads lane 24's value: an exited lane's source (its register before it exited,
      // i.e. unspecified); lanes 0..22 read their neighbour.
      if (l < 23) CHECK(out[2 * t] == in[t + 1]);
      CHECK(out[2 * t + 1] == ballot);
    }
  }
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  std::printf("PASS warp_collectives\n");
  return 0;
}
