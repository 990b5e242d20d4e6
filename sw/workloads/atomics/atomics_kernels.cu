// Atomic operations on global and shared memory, 32 and 64 bit, integer and floating point,
// plus barrier reductions (__syncthreads_count/and/or). Inputs are chosen so every final value
// is independent of the order in which threads win (floating-point sums are exact), and the
// values atomics return are checked as sets (tickets form a permutation, exchanges a chain).

struct GlobalCounters {
  float float_sum;
  int int_sub;
  double double_sum;
  unsigned long long and64;
  unsigned long long or64;
  unsigned long long xor64;
  unsigned wrap_inc;
  unsigned wrap_dec;
  int min32;
  int max32;
  long long min64;
  long long max64;
  double cas_max;  // maximum via an atomicCAS loop on the bit pattern
  unsigned ticket;
  int exchange_slot;
  int block_scope_sum;
};

__device__ void atomic_max_double(double* address, double value) {
  unsigned long long* bits = reinterpret_cast<unsigned long long*>(address);
  unsigned long long old = *bits;
  while (__longlong_as_double(old) < value) {
    const unsigned long long seen = atomicCAS(bits, old, __double_as_longlong(value));
    if (seen == old) break;
    old = seen;
  }
}

extern "C" __global__ void atomics_global(const float* quarters, const double* fine, const int* ints,
                                          const unsigned long long* masks, GlobalCounters* counters,
                                          unsigned* tickets, int* exchanged, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&counters->float_sum, quarters[i]);
  atomicSub(&counters->int_sub, ints[i]);
  atomicAdd(&counters->double_sum, fine[i]);
  atomicAnd(&counters->and64, masks[i] | (masks[i] >> 3));
  atomicOr(&counters->or64, masks[i] & (masks[i] << 5));
  atomicXor(&counters->xor64, masks[i]);
  atomicInc(&counters->wrap_inc, 9u);
  atomicDec(&counters->wrap_dec, 9u);
  atomicMin(&counters->min32, ints[i]);
  atomicMax(&counters->max32, ints[i]);
  atomicMin(&counters->min64, static_cast<long long>(ints[i]) * 1000003LL);
  atomicMax(&counters->max64, static_cast<long long>(ints[i]) * 1000003LL);
  atomic_max_double(&counters->cas_max, fine[i]);
  tickets[i] = atomicAdd(&counters->ticket, 1u);
  exchanged[i] = atomicExch(&counters->exchange_slot, i);
  atomicAdd_block(&counters->block_scope_sum, 1);
  __threadfence();
}

// Per CTA: shared-memory atomics and barrier reductions.
// block_out[b] = {shared sum, shared CAS-increment count, count, and, or}
extern "C" __global__ void atomics_shared(const int* ints, int* block_out, int n) {
  __shared__ int sum;
  __shared__ int cas_counter;
  if (threadIdx.x == 0) {
    sum = 0;
    cas_counter = 0;
  }
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int value = i < n ? ints[i] : 0;
  atomicAdd(&sum, value);
  // Increment through a CAS loop: every thread must eventually succeed exactly once.
  int old = cas_counter;
  for (;;) {
    const int seen = atomicCAS(&cas_counter, old, old + 1);
    if (seen == old) break;
    old = seen;
  }
  const int count = __syncthreads_count(value > 0);
  const int all = __syncthreads_and(value > -900);
  const int any = __syncthreads_or(value > 990);
  if (threadIdx.x == 0) {
    int* out = block_out + blockIdx.x * 5;
    out[0] = sum;
    out[1] = cas_counter;
    out[2] = count;
    out[3] = all;
    out[4] = any;
  }
}
