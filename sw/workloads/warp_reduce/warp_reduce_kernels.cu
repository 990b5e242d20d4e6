// Warp-level primitives: shuffles in every mode and votes (match is in warp_match).
// The last warp of the input is partial; inactive lanes still execute the full-mask shuffles
// with a neutral value, and the divergent part uses a mask computed by a ballot beforehand.

// Block sum of floats: shfl.down tree per warp, warp totals through shared memory, then warp 0.
extern "C" __global__ void warp_block_sum(const float* in, float* block_sums, int n) {
  __shared__ float warp_totals[32];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset >>= 1) v = __fadd_rn(v, __shfl_down_sync(0xffffffffu, v, offset));
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x >> 5) ? warp_totals[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) v = __fadd_rn(v, __shfl_down_sync(0xffffffffu, v, offset));
    if (lane == 0) block_sums[blockIdx.x] = v;
  }
}

// Butterfly all-reduce (shfl.bfly): every lane ends with the warp maximum.
extern "C" __global__ void warp_all_max(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : -2147483647 - 1;
  for (int mask = 16; mask > 0; mask >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, mask));
  if (i < n) out[i] = v;
}

// Inclusive prefix sum within each warp (shfl.up).
extern "C" __global__ void warp_inclusive_scan(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  int v = i < n ? in[i] : 0;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int up = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v += up;
  }
  if (i < n) out[i] = v;
}

// Rotation inside 16-lane segments (shfl.idx with width 16), then a reversal (width 32).
extern "C" __global__ void warp_segment_rotate(const int* in, int* rotated, int* reversed, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int v = i < n ? in[i] : -1;
  const int r = __shfl_sync(0xffffffffu, v, (lane + 1) & 15, 16);
  const int w = __shfl_sync(0xffffffffu, v, 31 - lane);
  if (i < n) {
    rotated[i] = r;
    reversed[i] = w;
  }
}

// Votes over the lanes that hold data. flags: bit 0 any, bit 1 all, per warp.
extern "C" __global__ void warp_votes(const int* in, int threshold, unsigned* ballots, int* counts, int* flags, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int warp = i >> 5;
  const unsigned holders = __ballot_sync(0xffffffffu, i < n);
  if (i < n) {
    const bool above = in[i] > threshold;
    const unsigned ballot = __ballot_sync(holders, above);
    const int any = __any_sync(holders, above);
    const int all = __all_sync(holders, above);
    const int leader = __ffs(holders) - 1;
    if ((threadIdx.x & 31) == leader) {
      ballots[warp] = ballot;
      counts[warp] = __popc(ballot);
      flags[warp] = (any ? 1 : 0) | (all ? 2 : 0);
    }
  }
}
