// Sorting with the toolkit's own CUB and Thrust (their radix sorts use bmsk, vote, match and
// shared-memory atomics): thrust::sort of 100,000 keys and cub::DeviceRadixSort::SortPairs of
// 100,000 key/value pairs, each checked against std::sort / std::stable_sort on the host.
#include <cub/device/device_radix_sort.cuh>
#include <thrust/device_vector.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e = (call);                                                             \
    if (e != cudaSuccess) {                                                             \
      std::printf("FAIL cub_sort: %s at line %d: %s\n", #call, __LINE__, cudaGetErrorString(e)); \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

int main() {
  const int n = 100000;
  std::vector<uint32_t> keys(n);
  std::vector<int32_t> values(n);
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    keys[i] = static_cast<uint32_t>(state >> 32) % 50000;  // duplicates: stability matters for pairs
    values[i] = i;
  }

  // thrust::sort on unsigned keys.
  thrust::device_vector<uint32_t> d_thrust(keys.begin(), keys.end());
  thrust::sort(d_thrust.begin(), d_thrust.end());
  std::vector<uint32_t> thrust_sorted(n);
  thrust::copy(d_thrust.begin(), d_thrust.end(), thrust_sorted.begin());
  std::vector<uint32_t> expected_keys = keys;
  std::sort(expected_keys.begin(), expected_keys.end());
  if (thrust_sorted != expected_keys) {
    std::printf("FAIL cub_sort: thrust::sort differs from std::sort\n");
    return 1;
  }

  // cub::DeviceRadixSort::SortPairs (stable) on key/value pairs.
  uint32_t *d_keys_in, *d_keys_out;
  int32_t *d_values_in, *d_values_out;
  CHECK(cudaMalloc(&d_keys_in, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&d_keys_out, n * sizeof(uint32_t)));
  CHECK(cudaMalloc(&d_values_in, n * sizeof(int32_t)));
  CHECK(cudaMalloc(&d_values_out, n * sizeof(int32_t)));
  CHECK(cudaMemcpy(d_keys_in, keys.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_values_in, values.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
  void* temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out, n));
  CHECK(cudaMalloc(&temp, temp_bytes));
  CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out, n));
  CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> out_keys(n);
  std::vector<int32_t> out_values(n);
  CHECK(cudaMemcpy(out_keys.data(), d_keys_out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(out_values.data(), d_values_out, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  std::vector<std::pair<uint32_t, int32_t>> pairs(n);
  for (int i = 0; i < n; ++i) pairs[i] = {keys[i], values[i]};
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (int i = 0; i < n; ++i) {
    if (out_keys[i] != pairs[i].first || out_values[i] != pairs[i].second) {
      std::printf("FAIL cub_sort: SortPairs element %d is (%u, %d), expected (%u, %d)\n", i, out_keys[i], out_values[i],
                  pairs[i].first, pairs[i].second);
      return 1;
    }
  }
  cudaFree(temp);
  cudaFree(d_keys_in);
  cudaFree(d_keys_out);
  cudaFree(d_values_in);
  cudaFree(d_values_out);
  std::printf("PASS cub_sort: thrust::sort and cub::DeviceRadixSort::SortPairs of %d keys\n", n);
  return 0;
}
