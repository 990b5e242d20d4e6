// 256-bin byte histogram: each CTA counts into shared memory with atomicAdd (grid-stride over
// the input, four bytes per 32-bit load), then merges its bins into the global histogram with
// one atomicAdd per non-empty bin. A second kernel tracks min/max/xor with global atomics.

#define HIST_BINS 256

extern "C" __global__ void histogram_shared(const unsigned* words, int word_count, unsigned* bins) {
  __shared__ unsigned local[HIST_BINS];
  for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < word_count; i += gridDim.x * blockDim.x) {
    const unsigned w = words[i];
    atomicAdd(&local[w & 0xff], 1u);
    atomicAdd(&local[(w >> 8) & 0xff], 1u);
    atomicAdd(&local[(w >> 16) & 0xff], 1u);
    atomicAdd(&local[w >> 24], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x) {
    if (local[b] != 0) atomicAdd(&bins[b], local[b]);
  }
}

// summary[0] = min, [1] = max, [2] = xor of all words, [3] = count of words above 2^31 (atomicInc
// wrapping at a bound larger than the input, so it just counts).
extern "C" __global__ void word_statistics(const unsigned* words, int word_count, unsigned* summary) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= word_count) return;
  const unsigned w = words[i];
  atomicMin(&summary[0], w);
  atomicMax(&summary[1], w);
  atomicXor(&summary[2], w);
  if (w > 0x80000000u) atomicInc(&summary[3], 0xffffffffu);
}
