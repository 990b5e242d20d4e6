// Dynamic parallelism (nvcc -rdc=true ... -lcudadevrt) under gpuvp run: a recursive tree sum whose
// kernels launch two children each (NULL stream and fire-and-forget), a quicksort whose kernels
// launch their halves into streams they create (cudaStreamCreateWithFlags), a tail launch that
// reads what its parent grid wrote, and the nesting limit (24 levels: cudaGetLastError in the
// thread that went too deep). Checked against CPU references; prints "PASS cdp".
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.cuh"

constexpr int kLeaf = 256;

// Sums data[lo, hi) into *total: a leaf block reduces in shared memory, larger ranges split.
__global__ void tree_sum(const int* data, int lo, int hi, unsigned long long* total) {
  if (hi - lo <= kLeaf) {
    __shared__ unsigned long long partial[kLeaf];
    const int i = lo + static_cast<int>(threadIdx.x);
    partial[threadIdx.x] = i < hi ? static_cast<unsigned long long>(data[i]) : 0;
    __syncthreads();
    for (int stride = kLeaf / 2; stride > 0; stride /= 2) {
      if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
      __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, partial[0]);
    return;
  }
  if (threadIdx.x == 0) {
    const int mid = lo + (hi - lo) / 2;
    tree_sum<<<1, kLeaf>>>(data, lo, mid, total);
    tree_sum<<<1, kLeaf, 0, cudaStreamFireAndForget>>>(data, mid, hi, total);
  }
}

constexpr int kMaxSortDepth = 16;
constexpr int kSelectionSortBelow = 32;

__device__ void selection_sort(unsigned* data, int left, int right) {
  for (int i = left; i <= right; ++i) {
    unsigned smallest = data[i];
    int at = i;
    for (int j = i + 1; j <= right; ++j) {
      if (data[j] < smallest) {
        smallest = data[j];
        at = j;
      }
    }
    data[at] = data[i];
    data[i] = smallest;
  }
}

// One thread partitions, then launches each half into a stream of its own.
__global__ void quicksort(unsigned* data, int left, int right, int depth) {
  if (depth >= kMaxSortDepth || right - left <= kSelectionSortBelow) {
    selection_sort(data, left, right);
    return;
  }
  const unsigned pivot = data[(left + right) / 2];
  int l = left, r = right;
  while (l <= r) {
    while (data[l] < pivot) ++l;
    while (data[r] > pivot) --r;
    if (l <= r) {
      const unsigned t = data[l];
      data[l] = data[r];
      data[r] = t;
      ++l;
      --r;
    }
  }
  if (left < r) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    quicksort<<<1, 1, 0, s>>>(data, left, r, depth + 1);
    cudaStreamDestroy(s);
  }
  if (l < right) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    quicksort<<<1, 1, 0, s>>>(data, l, right, depth + 1);
    cudaStreamDestroy(s);
  }
}

// The tail launch runs after every block of its parent grid: it sees all their writes.
__global__ void check_all(const int* flags, int n, int* verdict) {
  int all = 1;
  for (int i = 0; i < n; ++i) all &= flags[i] == i + 1;
  *verdict = all;
}
__global__ void mark_then_tail(int* flags, int* verdict) {
  flags[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x * blockDim.x + threadIdx.x + 1;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    check_all<<<1, 1, 0, cudaStreamTailLaunch>>>(flags, gridDim.x * blockDim.x, verdict);
  }
}

// Recurses until the launch fails; records each level's launch result.
__global__ void dive(int level, int* errors) {
  dive<<<1, 1>>>(level + 1, errors);
  errors[level] = static_cast<int>(cudaGetLastError());
}

int main() {
  // Tree sum.
  const int n = 1 << 16;
  std::vector<int> data(n);
  unsigned long long expected = 0;
  for (int i = 0; i < n; ++i) {
    data[i] = (i * 7919) % 1000;
    expected += static_cast<unsigned long long>(data[i]);
  }
  int* d_data = nullptr;
  unsigned long long* d_total = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_data, n * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_total, sizeof(unsigned long long)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(d_data, data.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_CUDA(cudaMemset(d_total, 0, sizeof(unsigned long long)), cudaSuccess);
  tree_sum<<<1, kLeaf>>>(d_data, 0, n, d_total);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  unsigned long long total = 0;
  EXPECT_CUDA(cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(total == expected);

  // Quicksort.
  const int m = 4096;
  std::vector<unsigned> keys(m);
  unsigned state = 12345;
  for (int i = 0; i < m; ++i) {
    state = state * 1664525u + 1013904223u;
    keys[i] = state >> 8;
  }
  unsigned* d_keys = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_keys, m * sizeof(unsigned)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(d_keys, keys.data(), m * sizeof(unsigned), cudaMemcpyHostToDevice), cudaSuccess);
  quicksort<<<1, 1>>>(d_keys, 0, m - 1, 0);
  std::vector<unsigned> sorted(m);
  EXPECT_CUDA(cudaMemcpy(sorted.data(), d_keys, m * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  std::sort(keys.begin(), keys.end());
  CHECK(sorted == keys);

  // Tail launch after the whole parent grid.
  int* d_flags = nullptr;
  int* d_verdict = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_flags, 1024 * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_verdict, sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMemset(d_verdict, 0, sizeof(int)), cudaSuccess);
  mark_then_tail<<<8, 128>>>(d_flags, d_verdict);
  int verdict = 0;
  EXPECT_CUDA(cudaMemcpy(&verdict, d_verdict, sizeof verdict, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(verdict == 1);

  // Nesting limit: the host's grid is depth 0; grids at depths 0..23 launch a child, the grid at
  // depth 24 cannot.
  int* d_errors = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_errors, 32 * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMemset(d_errors, 0xff, 32 * sizeof(int)), cudaSuccess);
  dive<<<1, 1>>>(0, d_errors);
  std::vector<int> errors(32);
  EXPECT_CUDA(cudaMemcpy(errors.data(), d_errors, 32 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int level = 0; level < 24; ++level) CHECK(errors[level] == cudaSuccess);
  CHECK(errors[24] == cudaErrorLaunchMaxDepthExceeded);
  CHECK(errors[25] == -1);  // never ran
  std::printf("PASS cdp\n");
  return 0;
}
