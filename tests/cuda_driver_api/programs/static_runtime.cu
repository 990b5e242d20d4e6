// Built with nvcc's default static runtime: what the runtime answers under gpuvp's libcuda.so.1.
// Prints the first runtime call's result and the launch's; exits 0 only when the kernel ran and
// its result matched the CPU (which gpuvp cannot achieve today: README "Static runtime").
#include <cstdio>

__global__ void square(int* values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] *= values[i];
}

int main() {
  constexpr int kN = 64;
  int* values = nullptr;
  const cudaError_t allocated = cudaMalloc(&values, kN * sizeof(int));
  std::printf("cudaMalloc: %s\n", cudaGetErrorName(allocated));
  if (allocated != cudaSuccess) return 1;
  int host[kN];
  for (int i = 0; i < kN; ++i) host[i] = i - 20;
  cudaMemcpy(values, host, sizeof host, cudaMemcpyHostToDevice);
  square<<<1, kN>>>(values, kN);
  cudaMemcpy(host, values, sizeof host, cudaMemcpyDeviceToHost);
  for (int i = 0; i < kN; ++i) {
    if (host[i] != (i - 20) * (i - 20)) return 1;
  }
  std::printf("PASS static_runtime\n");
  return 0;
}
