// Thousands of small launches, as an iterative solver makes them: `accumulate` N times (N from
// the command line, 2000 by default), then `finish` once; the result against a CPU reference.
// The statistics of such a run must stay small (one scope per kernel name by default).
#include <cstdlib>
#include <vector>

#include "check.cuh"

constexpr int kElements = 1024;
constexpr int kBlock = 256;

__global__ void accumulate(int* x, int step) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kElements) x[i] += (i ^ step) & 7;
}

__global__ void finish(int* x) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kElements) x[i] = x[i] * 3 + 1;
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 2000;
  int* device = nullptr;
  EXPECT_CUDA(cudaMalloc(&device, kElements * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMemset(device, 0, kElements * sizeof(int)), cudaSuccess);
  for (int step = 0; step < launches; ++step) accumulate<<<kElements / kBlock, kBlock>>>(device, step);
  finish<<<kElements / kBlock, kBlock>>>(device);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  std::vector<int> result(kElements);
  EXPECT_CUDA(cudaMemcpy(result.data(), device, kElements * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kElements; ++i) {
    int want = 0;
    for (int step = 0; step < launches; ++step) want += (i ^ step) & 7;
    want = want * 3 + 1;
    if (result[i] != want) {
      std::printf("FAIL many_launches: x[%d] = %d, expected %d\n", i, result[i], want);
      return 1;
    }
  }
  std::printf("PASS many_launches: %d launches of accumulate, 1 of finish\n", launches);
  return 0;
}
