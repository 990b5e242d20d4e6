// Microbenchmarks for `gpuvp validate`: pointer chases and throughput kernels after the method
// of Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (2018),
// and Wong et al. (2010). Our own code. Every latency kernel is ONE thread that follows a chain
// of dependent operations; the host runs it with two chain lengths and divides the difference
// in kernel cycles by the difference in length, which cancels launch, warm-up and drain (the
// model's %clock counts issued instructions, not cycles, so in-kernel clock() cannot be used).
// Inline PTX keeps exactly one instruction per link: no address arithmetic in the chain.
#include <cstdint>

// Global pointer chase: chain[i] holds the address of the next element. `warm` links are
// followed first (to fill L1/L2), then `steps` timed links; the end pointer is stored so the
// chain cannot be optimised away. .ca: cache at all levels (L1 hit path when warm).
extern "C" __global__ void chase_global_ca(uint64_t start, uint32_t warm, uint32_t steps, uint64_t* out) {
  uint64_t p = start;
  for (uint32_t i = 0; i < warm; ++i) asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
#pragma unroll 8
  for (uint32_t i = 0; i < steps; ++i) asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
  *out = p;
}

// The same through .cg (cache in L2 only), for the L2 hit path.
extern "C" __global__ void chase_global_cg(uint64_t start, uint32_t warm, uint32_t steps, uint64_t* out) {
  uint64_t p = start;
  for (uint32_t i = 0; i < warm; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
#pragma unroll 8
  for (uint32_t i = 0; i < steps; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  *out = p;
}

// Shared-memory pointer chase: a ring of `ring` words with the given word stride; each word
// holds the shared-window address of the next. Lane l of the warp starts `l * lane_stride`
// words in, so lane_stride = 0 is one warp-wide broadcast and lane_stride = k (k | 32) puts
// the 32 lanes on 32/k banks: a k-way bank conflict on every link.
extern "C" __global__ void chase_shared(uint32_t stride, uint32_t lane_stride, uint32_t steps, uint32_t* out) {
  __shared__ uint32_t ring[4096];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  if (threadIdx.x == 0) {
    for (uint32_t i = 0; i < 4096; ++i) ring[i] = base + 4u * ((i + stride) % 4096u);
  }
  __syncthreads();
  uint32_t p = base + 4u * ((threadIdx.x * lane_stride) % 4096u);
#pragma unroll 8
  for (uint32_t i = 0; i < steps; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p));
  out[threadIdx.x] = p;
}

// Dependent arithmetic chains: one FMA / DFMA / MUFU per link.
extern "C" __global__ void chain_fp32(uint32_t steps, float* out) {
  float x = threadIdx.x, a = 1.0001f, b = 0.5f;
#pragma unroll 64
  for (uint32_t i = 0; i < steps; ++i) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  out[threadIdx.x] = x;
}

extern "C" __global__ void chain_fp64(uint32_t steps, double* out) {
  double x = threadIdx.x, a = 1.0001, b = 0.5;
#pragma unroll 64
  for (uint32_t i = 0; i < steps; ++i) asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(x) : "d"(a), "d"(b));
  out[threadIdx.x] = x;
}

extern "C" __global__ void chain_sfu(uint32_t steps, float* out) {
  float x = 1.0f + threadIdx.x;
#pragma unroll 64
  for (uint32_t i = 0; i < steps; ++i) asm volatile("ex2.approx.f32 %0, %0;" : "+f"(x));
  out[threadIdx.x] = x;
}

// DRAM bandwidth: a copy of n float4 elements, one per thread (BabelStream's copy kernel).
extern "C" __global__ void stream_copy(const float4* a, float4* c, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i];
}

// vectorAdd as in the CUDA samples (seed 000 Table 3 measured it on a V100).
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// L2 bandwidth: every thread of a full-GPU grid reads float4 elements of an `n`-element buffer
// (2 MiB: inside L2, far beyond one SM's L1) through .cg (L2 only), `laps` times over. The host
// runs two lap counts and divides the difference in bytes by the difference in cycles, which
// cancels the first (DRAM) lap, launch and drain.
extern "C" __global__ void l2_read(const float4* a, uint32_t n, uint32_t laps, float* out) {
  const uint32_t stride = gridDim.x * blockDim.x;
  float acc = 0.0f;
  for (uint32_t lap = 0; lap < laps; ++lap) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
      float4 v;
      asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                   : "l"(a + i));
      acc += v.x + v.y + v.z + v.w;
    }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
