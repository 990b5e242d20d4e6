// Dynamic parallelism (built with -rdc=true): kernels that launch kernels. A tree sum whose
// grids split their range into two child grids (NULL stream and fire-and-forget) down to
// 128-element leaves; a quicksort whose single-thread grids launch their halves into streams they
// create; a tail launch that checks every block of its parent grid wrote its part.
constexpr int kDpLeaf = 128;

extern "C" __global__ void dp_tree_sum(const int* data, int lo, int hi, unsigned long long* total) {
  if (hi - lo <= kDpLeaf) {
    __shared__ long long partial[kDpLeaf];
    const int i = lo + static_cast<int>(threadIdx.x);
    partial[threadIdx.x] = i < hi ? data[i] : 0;
    __syncthreads();
    for (int stride = kDpLeaf / 2; stride > 0; stride /= 2) {
      if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
      __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, static_cast<unsigned long long>(partial[0]));
    return;
  }
  if (threadIdx.x == 0) {
    const int mid = lo + (hi - lo) / 2;
    dp_tree_sum<<<1, kDpLeaf>>>(data, lo, mid, total);
    dp_tree_sum<<<1, kDpLeaf, 0, cudaStreamFireAndForget>>>(data, mid, hi, total);
  }
}

__device__ void dp_insertion_sort(int* data, int left, int right) {
  for (int i = left + 1; i <= right; ++i) {
    const int v = data[i];
    int j = i - 1;
    while (j >= left && data[j] > v) {
      data[j + 1] = data[j];
      --j;
    }
    data[j + 1] = v;
  }
}

extern "C" __global__ void dp_quicksort(int* data, int left, int right, int depth) {
  if (depth >= 12 || right - left < 16) {
    dp_insertion_sort(data, left, right);
    return;
  }
  const int pivot = data[(left + right) / 2];
  int l = left, r = right;
  while (l <= r) {
    while (data[l] < pivot) ++l;
    while (data[r] > pivot) --r;
    if (l <= r) {
      const int t = data[l];
      data[l] = data[r];
      data[r] = t;
      ++l;
      --r;
    }
  }
  if (left < r) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    dp_quicksort<<<1, 1, 0, s>>>(data, left, r, depth + 1);
    cudaStreamDestroy(s);
  }
  if (l < right) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    dp_quicksort<<<1, 1, 0, s>>>(data, l, right, depth + 1);
    cudaStreamDestroy(s);
  }
}

extern "C" __global__ void dp_count_marks(const int* marks, int n, int* verdict) {
  int good = 0;
  for (int i = 0; i < n; ++i) good += marks[i] == 3 * i + 1;
  *verdict = good;
}

extern "C" __global__ void dp_mark_then_tail(int* marks, int* verdict) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  marks[i] = 3 * i + 1;
  if (i == 0) dp_count_marks<<<1, 1, 0, cudaStreamTailLaunch>>>(marks, gridDim.x * blockDim.x, verdict);
}
