// Several translation units (three fatbins) and several streams: each stream copies its slice
// in, runs saxpy (saxpy.cu) then block sums (reduce.cu), and copies back; the last stream waits
// on an event of the first. Results are checked against the CPU.
#include <cstdio>
#include <vector>

#include "kernels.h"

__global__ void fill(float* p, float value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

#define CHECK(call)                                                                          \
  do {                                                                                       \
    const cudaError_t e = (call);                                                            \
    if (e != cudaSuccess) {                                                                  \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorName(e));                              \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

int main() {
  constexpr int kStreams = 4;
  constexpr int n = 1024;
  constexpr int blocks = n / 128;
  set_offset(0.25f);
  std::vector<float> x(n * kStreams), y(n * kStreams), sums(blocks * kStreams);
  for (int i = 0; i < n * kStreams; ++i) {
    x[i] = static_cast<float>(i % 17);
    y[i] = static_cast<float>(i % 5);
  }
  float *dx = nullptr, *dy = nullptr, *dsums = nullptr, *dscratch = nullptr;
  CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
  CHECK(cudaMalloc(&dsums, sums.size() * sizeof(float)));
  CHECK(cudaMalloc(&dscratch, n * sizeof(float)));
  cudaStream_t streams[kStreams];
  for (auto& s : streams) CHECK(cudaStreamCreate(&s));
  cudaEvent_t first_done;
  CHECK(cudaEventCreate(&first_done));
  for (int s = 0; s < kStreams; ++s) {
    const int base = s * n;
    if (s == kStreams - 1) CHECK(cudaStreamWaitEvent(streams[s], first_done, 0));
    CHECK(cudaMemcpyAsync(dx + base, x.data() + base, n * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
    CHECK(cudaMemcpyAsync(dy + base, y.data() + base, n * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
    launch_saxpy(2.0f, dx + base, dy + base, n, streams[s]);
    launch_block_sums(dy + base, dsums + s * blocks, n, streams[s]);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(sums.data() + s * blocks, dsums + s * blocks, blocks * sizeof(float),
                          cudaMemcpyDeviceToHost, streams[s]));
    if (s == 0) CHECK(cudaEventRecord(first_done, streams[0]));
  }
  // Legacy default stream work orders after the streams' work.
  fill<<<n / 256, 256>>>(dscratch, 3.0f, n);
  for (auto& s : streams) CHECK(cudaStreamSynchronize(s));
  CHECK(cudaDeviceSynchronize());
  std::vector<float> scratch(n);
  CHECK(cudaMemcpy(scratch.data(), dscratch, n * sizeof(float), cudaMemcpyDeviceToHost));
  int errors = 0;
  for (int s = 0; s < kStreams; ++s) {
    for (int b = 0; b < blocks; ++b) {
      float expected = 0.25f;
      float sum = 0.0f;
      for (int t = 0; t < 128; ++t) {
        const int i = s * n + b * 128 + t;
        sum += 2.0f * x[i] + y[i];
      }
      expected += sum;
      const float got = sums[s * blocks + b];
      if (got < expected - 0.01f || got > expected + 0.01f) {
        if (errors++ < 3) std::printf("mismatch stream %d block %d: %f vs %f\n", s, b, got, expected);
      }
    }
  }
  for (float v : scratch) errors += v != 3.0f;
  for (auto& s : streams) CHECK(cudaStreamDestroy(s));
  CHECK(cudaEventDestroy(first_done));
  std::printf("%s multi_tu_streams: %d streams, %d errors\n", errors == 0 ? "PASS" : "FAIL", kStreams, errors);
  return errors == 0 ? 0 : 1;
}
