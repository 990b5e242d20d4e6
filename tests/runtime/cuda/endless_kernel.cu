// Launches a kernel that never ends, says so on stdout, then either waits for it
// (argument "wait": the test kills the platform and expects cudaErrorDevicesUnavailable within
// a bounded time) or dies mid-kernel (argument "die": the platform must free the channel and
// serve the next program).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "check.cuh"

__global__ void spin(volatile int* flag) {
  while (*flag == 0) {
  }
}

int main(int argc, char** argv) {
  const bool die = argc > 1 && std::strcmp(argv[1], "die") == 0;
  int* flag = nullptr;
  EXPECT_CUDA(cudaMalloc(&flag, sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMemset(flag, 0, sizeof(int)), cudaSuccess);
  spin<<<1, 1>>>(flag);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  std::printf("kernel running\n");
  std::fflush(stdout);
  if (die) {
    ::usleep(200 * 1000);
    ::kill(::getpid(), SIGKILL);
  }
  const auto start = std::chrono::steady_clock::now();
  const cudaError_t result = cudaDeviceSynchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s after %.1f s\n", cudaGetErrorName(result), seconds);
  EXPECT_CUDA(result, cudaErrorDevicesUnavailable);
  EXPECT_CUDA(cudaMalloc(&flag, 16), cudaErrorDevicesUnavailable);  // and it stays so
  std::printf("PASS platform_gone\n");
  return 0;
}
