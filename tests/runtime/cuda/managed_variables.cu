// __managed__ variables: initialised from the module, written by the host before a kernel, by
// kernels, and read by the host after synchronization through the same name.
#include "check.cuh"

__managed__ int counter = 5;
__managed__ float values[1000];
__managed__ double scale = 0.5;

__global__ void accumulate(int add) {
  atomicAdd(&counter, add);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 1000) values[i] = values[i] * static_cast<float>(scale) + static_cast<float>(i);
}

int main() {
  if (counter != 5 || scale != 0.5) {
    std::printf("FAIL: initial values %d %f\n", counter, scale);
    return 1;
  }
  counter += 1;                 // host writes before the first kernel
  for (int i = 0; i < 1000; ++i) values[i] = 4.0f;
  scale = 0.25;
  accumulate<<<4, 256>>>(3);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  if (counter != 6 + 1024 * 3) {
    std::printf("FAIL: counter = %d, expected %d\n", counter, 6 + 1024 * 3);
    return 1;
  }
  for (int i = 0; i < 1000; ++i) {
    if (values[i] != 1.0f + static_cast<float>(i)) {
      std::printf("FAIL: values[%d] = %f\n", i, values[i]);
      return 1;
    }
  }
  int* address = nullptr;
  EXPECT_CUDA(cudaGetSymbolAddress(reinterpret_cast<void**>(&address), counter), cudaSuccess);
  if (address != &counter) {
    std::printf("FAIL: the device address of counter differs from the host's\n");
    return 1;
  }
  std::printf("PASS managed_variables\n");
  return 0;
}
