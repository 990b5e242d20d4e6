// Kernels for the PTX executor tests: memory, control flow, calls, printf, faults.
#include <cstdio>
#include <cassert>

__constant__ float scale_table[4];
__device__ int global_counter;
__device__ int initialised_table[3] = {7, 8, 9};

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void scale_by_constant(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * scale_table[i & 3] + initialised_table[i % 3];
}

// Divergence: nested branches, a loop with break/continue, early return.
extern "C" __global__ void divergence(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  int acc = 0;
  if (v % 3 == 0) {
    for (int k = 0; k < 100; ++k) {
      if (k == v % 17) break;
      if (k % 2) continue;
      acc += k * v;
    }
  } else if (v % 3 == 1) {
    if (v & 4) { out[i] = -v; return; }
    acc = v * v;
  } else {
    int x = v;
    while (x > 1) { x = (x & 1) ? 3 * x + 1 : x / 2; ++acc; }
  }
  // Warp-level op after reconvergence: every lane must be back.
  unsigned mask = __ballot_sync(__activemask(), acc & 1);
  out[i] = acc + (int)(__popc(mask) * 1000);
}

__device__ __noinline__ int fibonacci(int n) {
  if (n < 2) return n;
  return fibonacci(n - 1) + fibonacci(n - 2);
}

__device__ __noinline__ double mix(double a, int b, float c) { return a * b + c; }

extern "C" __global__ void recursion(const int* in, int* out, double* mixed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = fibonacci(in[i]);
    mixed[i] = mix(1.5, in[i], 0.25f);
  }
}

extern "C" __global__ void say_hello(int value, double d) {
  if (threadIdx.x < 2) printf("hello from thread %d of block %d: %d %.3f %s %c|%5x|\n", threadIdx.x, blockIdx.x, value, d, "str", 'Z', 255);
}

extern "C" __global__ void write_everywhere(int* p, long long offset) { p[offset + threadIdx.x] = 1; }

extern "C" __global__ void trapping(int when) {
  if (threadIdx.x == when) __trap();
}

extern "C" __global__ void asserting(int when) { assert(threadIdx.x != when); }

// Shared-memory tree reduction with barriers.
extern "C" __global__ void block_sum(const int* in, int* out) {
  extern __shared__ int partial[];
  int t = threadIdx.x;
  partial[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

extern "C" __global__ void barrier_reductions(const int* in, int* out) {
  int v = in[threadIdx.x];
  int count = __syncthreads_count(v > 0);
  int all = __syncthreads_and(v > 0);
  int any = __syncthreads_or(v > 10);
  if (threadIdx.x == 0) { out[0] = count; out[1] = all; out[2] = any; }
}

extern "C" __global__ void warp_ops(const int* in, int* out) {
  int lane = threadIdx.x & 31;
  int v = in[threadIdx.x];
  int* o = out + threadIdx.x * 10;
  o[0] = __shfl_sync(0xffffffff, v, (lane * 7) & 31);
  o[1] = __shfl_up_sync(0xffffffff, v, 3);
  o[2] = __shfl_down_sync(0xffffffff, v, 5);
  o[3] = __shfl_xor_sync(0xffffffff, v, 6);
  o[4] = __shfl_sync(0xffffffff, v, lane + 2, 8);   // within segments of 8
  o[5] = (int)__ballot_sync(0xffffffff, v & 1);
  o[6] = __all_sync(0xffffffff, v >= 0);
  o[7] = __any_sync(0xffffffff, v == 5);
  o[8] = (int)__match_any_sync(0xffffffff, v & 3);
  int pred;
  o[9] = (int)__match_all_sync(0xffffffff, v >= -1000, &pred) + pred;
}

// The reduction sample's tail: lanes 0..7 hold the partial sums and shuffle down with a mask of
// themselves; lanes 8..31 (holding other values) do not take part, and their lanes read as 0.
extern "C" __global__ void partial_warp_shuffle_sum(const int* in, int* out) {
  const int lane = threadIdx.x;
  int sum = in[lane] * 1000;  // what the idle lanes hold
  const unsigned members = __ballot_sync(0xffffffff, lane < 8);
  if (lane < 8) {
    sum = in[lane];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(members, sum, offset);
  }
  out[lane] = sum;
}

extern "C" __global__ void atomics(int* ints, unsigned* uints, float* floats, double* doubles, unsigned long long* u64) {
  __shared__ int shared_sum;
  __shared__ unsigned shared_max;
  int t = threadIdx.x;
  if (t == 0) { shared_sum = 0; shared_max = 0; }
  __syncthreads();
  atomicAdd(&shared_sum, t);
  atomicMax(&shared_max, (unsigned)(t * 37 % 101));
  atomicAdd(&ints[0], 1);
  atomicMin(&ints[1], -t);
  atomicMax(&ints[2], t);
  atomicInc(&uints[0], 9u);
  atomicDec(&uints[1], 5u);
  atomicExch(&ints[3], 42);
  while (atomicCAS(&ints[4], t, t + 1) != t) {}  // a chain: thread t waits for thread t - 1
  atomicAnd(&uints[2], ~(1u << (t & 31)));
  atomicOr(&uints[3], 1u << (t & 31));
  atomicXor(&uints[4], (unsigned)t);
  atomicAdd(&floats[0], 0.5f);
  atomicAdd(&doubles[0], 0.25);
  atomicAdd(&u64[0], 1ull << 33);
  __syncthreads();
  if (t == 0) { ints[5] = shared_sum; uints[5] = shared_max; }
}

// Generic addressing: the same device function writes shared, local and global memory.
__device__ __noinline__ void store_through(int* p, int v) { *p = v; }
extern "C" __global__ void generic_addressing(int* out) {
  __shared__ int s[64];
  int local_array[4];
  int t = threadIdx.x;
  store_through(&s[t], t * 2);
  store_through(&local_array[t & 3], t * 3);
  __syncthreads();
  store_through(&out[t], s[(t + 1) % blockDim.x] + local_array[t & 3]);
}

extern "C" __global__ void special_registers(unsigned* out) {
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned* o = out + (block * blockDim.x * blockDim.y * blockDim.z + t) * 8;
  unsigned lane, warp, lanemask_lt;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm("mov.u32 %0, %%warpid;" : "=r"(warp));
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lanemask_lt));
  o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
  o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = lane; o[6] = warp; o[7] = lanemask_lt;
}

extern "C" __global__ void spin_forever(int* flag) {
  while (*(volatile int*)flag == 0) {}
}

// Each half of the block waits at a barrier that also expects the other half.
extern "C" __global__ void divergent_barrier_deadlock() {
  if (threadIdx.x < 32) asm volatile("bar.sync 1;");
  else asm volatile("bar.sync 2;");
}

// Exited threads no longer count: the remaining threads pass the barrier.
extern "C" __global__ void barrier_after_exit(int* out) {
  if (threadIdx.x >= 40) return;
  __syncthreads();
  out[threadIdx.x] = threadIdx.x;
}

// Indirect calls: lanes pick different device functions through a table of pointers.
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_fact(int a, int b) { return a <= 1 ? b : op_fact(a - 1, a * b); }
typedef int (*binary_op)(int, int);
extern "C" __global__ void indirect_calls(const int* selector, int* out) {
  binary_op table[4] = {op_add, op_sub, op_mul, op_fact};
  int t = threadIdx.x;
  out[t] = table[selector[t] & 3](t % 7, 3);
}
