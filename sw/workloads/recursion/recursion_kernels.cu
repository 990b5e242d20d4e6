// Device calls that nvcc keeps as real calls (__noinline__): recursion with a per-thread stack
// (fibonacci, gcd, merge sort on thread-local arrays passed by generic pointer), a function that
// returns a struct, and calls chosen per thread by a switch (divergent call targets). Calls
// through function pointers are in the function_pointers workload.

__device__ __noinline__ int fibonacci(int n) { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }

__device__ __noinline__ unsigned gcd(unsigned a, unsigned b) { return b == 0 ? a : gcd(b, a % b); }

// Sorts data[lo, hi) using scratch of the same size; recursion depth log2(hi - lo).
__device__ __noinline__ void merge_sort(int* data, int* scratch, int lo, int hi) {
  if (hi - lo < 2) return;
  const int mid = lo + (hi - lo) / 2;
  merge_sort(data, scratch, lo, mid);
  merge_sort(data, scratch, mid, hi);
  int left = lo, right = mid, out = lo;
  while (left < mid && right < hi) scratch[out++] = data[left] <= data[right] ? data[left++] : data[right++];
  while (left < mid) scratch[out++] = data[left++];
  while (right < hi) scratch[out++] = data[right++];
  for (int i = lo; i < hi; ++i) data[i] = scratch[i];
}

struct Extremes {
  int smallest;
  int largest;
  long long total;
};

__device__ __noinline__ Extremes extremes(const int* data, int n) {
  Extremes e{data[0], data[0], 0};
  for (int i = 0; i < n; ++i) {
    e.smallest = min(e.smallest, data[i]);
    e.largest = max(e.largest, data[i]);
    e.total += data[i];
  }
  return e;
}

__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_xor(int a, int b) { return a ^ b; }

#define SORT_LENGTH 24

// results per thread: [fibonacci, gcd, smallest, largest, total (low 32 bits), op(largest, smallest)]
extern "C" __global__ void recursion_kernel(const int* sort_input, const unsigned* gcd_input, int* sorted, int* results,
                                            int threads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  int data[SORT_LENGTH];
  int scratch[SORT_LENGTH];
  for (int i = 0; i < SORT_LENGTH; ++i) data[i] = sort_input[t * SORT_LENGTH + i];
  // Sort a thread-dependent prefix so recursion depths differ between lanes.
  const int length = SORT_LENGTH - (t % 7);
  merge_sort(data, scratch, 0, length);
  for (int i = 0; i < SORT_LENGTH; ++i) sorted[t * SORT_LENGTH + i] = data[i];

  const Extremes e = extremes(data, length);
  int* out = results + t * 6;
  out[0] = fibonacci(t % 16);
  out[1] = static_cast<int>(gcd(gcd_input[2 * t], gcd_input[2 * t + 1]));
  out[2] = e.smallest;
  out[3] = e.largest;
  out[4] = static_cast<int>(e.total);
  switch (t % 4) {
    case 0: out[5] = op_add(e.largest, e.smallest); break;
    case 1: out[5] = op_sub(e.largest, e.smallest); break;
    case 2: out[5] = op_mul(e.largest, e.smallest); break;
    default: out[5] = op_xor(e.largest, e.smallest); break;
  }
}
