// Microbenchmarks for `gpuvp validate`: pointer chases and throughput kernels after the method
// of Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (2018),
// and Wong et al. (2010). Our own code. Every latency kernel is ONE thread that follows a chain
// of dependent operations, measured two ways:
//   kernel cycles: the host runs it with two chain lengths and divides the difference in kernel
//     cycles by the difference in length, which cancels launch, warm-up and drain;
//   clock64: the timed_* kernels read clock64() before and after a fully unrolled chain of
//     kTimedLinks links, as the papers do; the chain's result is stored before the second read,
//     so the store waits for the last link and the second read follows it. The arithmetic
//     chains run twice and time the second pass, with the instruction cache warm (a cold chain
//     of 4-cycle links outruns the instruction prefetch). A clock read waits
//     for nothing, so a warm-up chain is stored the same way before the first read (else the
//     first link would also wait for the warm-up's last load, a miss). The host divides the
//     difference by kTimedLinks (no loop overhead inside the timed region; the two clock reads
//     and the store add a few cycles, under 0.1 cycle per link).
// Inline PTX keeps exactly one instruction per link: no address arithmetic in the chain.
#include <cstdint>

// Links between the two clock64() reads of every timed_* kernel (the host divides by it).
constexpr uint32_t kTimedLinks = 256;

// The chain's end value stored with a memory clobber: neither the compiler nor the PTX
// scheduler moves it across the clock reads, and it cannot issue before the last link ended.
__device__ __forceinline__ void store_end(uint64_t* out, uint64_t v) {
  asm volatile("st.u64 [%0], %1;" ::"l"(out), "l"(v) : "memory");
}
__device__ __forceinline__ uint64_t timer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

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

// ---- clock64-timed versions (one thread; `cycles` receives the clock difference) ----

extern "C" __global__ void timed_chase_global_ca(uint64_t start, uint32_t warm, uint64_t* out, uint64_t* cycles) {
  uint64_t p = start;
  for (uint32_t i = 0; i < warm; ++i) asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
  store_end(out, p);  // the warm-up's last load has returned before the first read
  const uint64_t t0 = timer();
#pragma unroll
  for (uint32_t i = 0; i < kTimedLinks; ++i) asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
  store_end(out, p);
  const uint64_t t1 = timer();
  *cycles = t1 - t0;
}

extern "C" __global__ void timed_chase_global_cg(uint64_t start, uint32_t warm, uint64_t* out, uint64_t* cycles) {
  uint64_t p = start;
  for (uint32_t i = 0; i < warm; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  store_end(out, p);  // the warm-up's last load has returned before the first read
  const uint64_t t0 = timer();
#pragma unroll
  for (uint32_t i = 0; i < kTimedLinks; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  store_end(out, p);
  const uint64_t t1 = timer();
  *cycles = t1 - t0;
}

// Shared-memory chase as chase_shared; thread 0's clock difference is stored (with
// lane_stride = k all 32 lanes move in lock step, so thread 0 sees the warp's conflicts).
extern "C" __global__ void timed_chase_shared(uint32_t stride, uint32_t lane_stride, uint64_t* out, uint64_t* cycles) {
  __shared__ uint32_t ring[4096];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
  if (threadIdx.x == 0) {
    for (uint32_t i = 0; i < 4096; ++i) ring[i] = base + 4u * ((i + stride) % 4096u);
  }
  __syncthreads();
  uint32_t p = base + 4u * ((threadIdx.x * lane_stride) % 4096u);
  uint64_t* end = out + threadIdx.x;
  asm volatile("" : "+r"(p), "+l"(end));  // the start address computed before the first read
  const uint64_t t0 = timer();
#pragma unroll
  for (uint32_t i = 0; i < kTimedLinks; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p));
  store_end(end, p);
  const uint64_t t1 = timer();
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

extern "C" __global__ void timed_chain_fp32(uint64_t* out, uint64_t* cycles) {
  float x = threadIdx.x, a = 1.0001f, b = 0.5f;
  asm volatile("" : "+f"(x), "+f"(a), "+f"(b));  // operands computed before the first read
  uint64_t t0 = 0, t1 = 0;
#pragma unroll 1
  for (uint32_t pass = 0; pass < 2; ++pass) {  // the first pass fills the instruction cache
    t0 = timer();
#pragma unroll
    for (uint32_t i = 0; i < kTimedLinks; ++i) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
    store_end(out, __float_as_uint(x));
    t1 = timer();
  }
  *cycles = t1 - t0;
}

extern "C" __global__ void timed_chain_fp64(uint64_t* out, uint64_t* cycles) {
  double x = threadIdx.x, a = 1.0001, b = 0.5;
  asm volatile("" : "+d"(x), "+d"(a), "+d"(b));  // operands computed before the first read
  uint64_t t0 = 0, t1 = 0;
#pragma unroll 1
  for (uint32_t pass = 0; pass < 2; ++pass) {  // the first pass fills the instruction cache
    t0 = timer();
#pragma unroll
    for (uint32_t i = 0; i < kTimedLinks; ++i) asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(x) : "d"(a), "d"(b));
    store_end(out, __double_as_longlong(x));
    t1 = timer();
  }
  *cycles = t1 - t0;
}

extern "C" __global__ void timed_chain_sfu(uint64_t* out, uint64_t* cycles) {
  float x = 1.0f + threadIdx.x;
  asm volatile("" : "+f"(x));  // the operand computed before the first read
  uint64_t t0 = 0, t1 = 0;
#pragma unroll 1
  for (uint32_t pass = 0; pass < 2; ++pass) {  // the first pass fills the instruction cache
    t0 = timer();
#pragma unroll
    for (uint32_t i = 0; i < kTimedLinks; ++i) asm volatile("ex2.approx.f32 %0, %0;" : "+f"(x));
    store_end(out, __float_as_uint(x));
    t1 = timer();
  }
  *cycles = t1 - t0;
}

// ---- clock64-timed bandwidth: a full-GPU grid of co-resident CTAs; `cycles[cta]` receives
// each CTA's clock difference and the host divides the bytes moved by the longest CTA's time ----

// A software grid barrier (the host sizes the grid so that every CTA is resident at once):
// one thread per CTA arrives with an atomic and polls the count through L2 until every CTA
// arrived, so the timed regions of all CTAs start within one L2 round trip of each other.
// Bounded: a grid that is not co-resident goes on after 2^14 polls instead of hanging (the
// CTAs then time staggered regions, which the longest-CTA figure shows as a lower bandwidth).
__device__ __forceinline__ void grid_barrier(uint32_t* arrived) {
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(arrived, 1u);
    uint32_t seen = 0;
    for (uint32_t polls = 0; polls < (1u << 14); ++polls) {
      asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(seen) : "l"(arrived) : "memory");
      if (seen >= gridDim.x) break;
    }
  }
  __syncthreads();
}

// The copy of stream_copy by persistent CTAs, timed per CTA from the grid barrier to a barrier
// after its last load returned (stores are posted: the last ones still drain, which over
// tens of thousands of cycles is under 1 %). CTAs take one element per thread, chunk after
// chunk in address order, from an atomic ticket, as the hardware's CTA dispatcher hands out
// stream_copy's CTAs, so the DRAM sees the same sweeping access front (a grid-stride loop
// spreads every warp's next access over the whole grid's stride instead).
extern "C" __global__ void timed_stream_copy(const float4* a, float4* c, uint32_t n, uint32_t* arrived,
                                             uint32_t* ticket, uint64_t* cycles) {
  __shared__ uint32_t chunk;
  grid_barrier(arrived);
  const uint64_t t0 = timer();
  for (;;) {
    if (threadIdx.x == 0) chunk = atomicAdd(ticket, 1u);
    __syncthreads();
    const uint32_t base = chunk * blockDim.x;
    __syncthreads();  // every thread has read `chunk` before thread 0 takes the next ticket
    if (base >= n) break;
    const uint32_t i = base + threadIdx.x;
    if (i < n) c[i] = a[i];
  }
  const uint64_t t1 = timer();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// l2_read timed: one untimed lap brings the buffer into L2 (its sum is stored, so every load of
// it has returned before the grid barrier), then `laps` timed laps whose sum is stored before
// the closing barrier.
extern "C" __global__ void timed_l2_read(const float4* a, uint32_t n, uint32_t laps, float* out, uint32_t* arrived,
                                         uint64_t* cycles) {
  const uint32_t stride = gridDim.x * blockDim.x;
  const uint32_t first = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (uint32_t i = first; i < n; i += stride) {
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(a + i));
    acc += v.x + v.y + v.z + v.w;
  }
  store_end(reinterpret_cast<uint64_t*>(out) + first, __float_as_uint(acc));
  grid_barrier(arrived);
  const uint64_t t0 = timer();
  for (uint32_t lap = 0; lap < laps; ++lap) {
    for (uint32_t i = first; i < n; i += stride) {
      float4 v;
      asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(a + i));
      acc += v.x + v.y + v.z + v.w;
    }
  }
  store_end(reinterpret_cast<uint64_t*>(out) + first, __float_as_uint(acc));
  __syncthreads();
  const uint64_t t1 = timer();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}
