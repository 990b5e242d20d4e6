// A program that prepares on the host for PREP_MS milliseconds (argv[1], default 0) before its
// first CUDA call, then runs one small kernel and checks it: what gpuvp's start-up can overlap.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

__global__ void increment(int* p) { p[threadIdx.x] += 1; }

int main(int argc, char** argv) {
  const int prep_ms = argc > 1 ? std::atoi(argv[1]) : 0;
  usleep(static_cast<useconds_t>(prep_ms) * 1000);
  int* d = nullptr;
  cudaMalloc(&d, 256 * sizeof(int));
  cudaMemset(d, 0, 256 * sizeof(int));
  increment<<<1, 256>>>(d);
  int h[256];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 256; ++i) {
    if (h[i] != 1) {
      std::printf("FAIL at %d\n", i);
      return 1;
    }
  }
  std::printf("PASS\n");
  return 0;
}
