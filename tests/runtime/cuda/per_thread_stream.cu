// Built with --default-stream per-thread, so the runtime calls are the _ptsz/_ptds variants:
// two host threads each run kernels, copies and a host function on their own per-thread default
// stream, checked against the CPU. Also the profiler calls and cudaCreateChannelDesc, which
// programs call before their first kernel.
#include <cuda_profiler_api.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "check.cuh"

__global__ void affine(int* p, int a, int b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = a * i + b;
}

__global__ void add(int* p, int value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += value;
}

void CUDART_CB mark(void* flag) { *static_cast<int*>(flag) = 1; }

int failures[2] = {0, 0};
unsigned long long stream_ids[2] = {0, 0};

void work(int t) {
  constexpr int n = 2048;
  int* d = nullptr;
  EXPECT_CUDA(cudaMalloc(&d, n * sizeof(int)), cudaSuccess);
  affine<<<n / 128, 128>>>(d, t + 2, 5, n);  // the per-thread default stream
  add<<<n / 128, 128>>>(d, 1000 * (t + 1), n);
  int ran = 0;
  EXPECT_CUDA(cudaLaunchHostFunc(0, mark, &ran), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(0), cudaSuccess);
  if (ran != 1) ++failures[t];
  std::vector<int> host(n);
  EXPECT_CUDA(cudaMemcpy(host.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i) {
    if (host[i] != (t + 2) * i + 5 + 1000 * (t + 1)) {
      std::printf("FAIL thread %d element %d = %d\n", t, i, host[i]);
      ++failures[t];
      break;
    }
  }
  EXPECT_CUDA(cudaMemsetAsync(d, 0, n * sizeof(int), 0), cudaSuccess);
  EXPECT_CUDA(cudaMemcpyAsync(host.data(), d, sizeof(int), cudaMemcpyDeviceToHost, 0), cudaSuccess);
  EXPECT_CUDA(cudaStreamQuery(0) == cudaErrorNotReady ? cudaStreamSynchronize(0) : cudaSuccess, cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(0), cudaSuccess);
  if (host[0] != 0) ++failures[t];
  EXPECT_CUDA(cudaStreamGetId(0, &stream_ids[t]), cudaSuccess);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusActive;
  EXPECT_CUDA(cudaStreamIsCapturing(0, &capture), cudaSuccess);
  if (capture != cudaStreamCaptureStatusNone) ++failures[t];
  capture = cudaStreamCaptureStatusActive;
  EXPECT_CUDA(cudaStreamGetCaptureInfo(0, &capture), cudaSuccess);
  if (capture != cudaStreamCaptureStatusNone) ++failures[t];
  // The capture mode is the thread's own.
  cudaStreamCaptureMode mode = t == 0 ? cudaStreamCaptureModeRelaxed : cudaStreamCaptureModeThreadLocal;
  EXPECT_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
  if (mode != cudaStreamCaptureModeGlobal) ++failures[t];
  mode = cudaStreamCaptureModeGlobal;
  EXPECT_CUDA(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
  if (mode != (t == 0 ? cudaStreamCaptureModeRelaxed : cudaStreamCaptureModeThreadLocal)) ++failures[t];
  EXPECT_CUDA(cudaFree(d), cudaSuccess);
}

int main() {
  EXPECT_CUDA(cudaProfilerStart(), cudaSuccess);
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc(8, 16, 32, 0, cudaChannelFormatKindSigned);
  if (desc.x != 8 || desc.y != 16 || desc.z != 32 || desc.w != 0 || desc.f != cudaChannelFormatKindSigned) {
    std::printf("FAIL cudaCreateChannelDesc\n");
    return 1;
  }
  const cudaChannelFormatDesc float4_desc = cudaCreateChannelDesc<float4>();
  if (float4_desc.x != 32 || float4_desc.w != 32 || float4_desc.f != cudaChannelFormatKindFloat) {
    std::printf("FAIL cudaCreateChannelDesc<float4>\n");
    return 1;
  }
  std::thread first(work, 0);
  std::thread second(work, 1);
  first.join();
  second.join();
  EXPECT_CUDA(cudaProfilerStop(), cudaSuccess);
  // A per-thread variant of a function gpuvp does not implement names itself and says so.
  EXPECT_CUDA(cudaSignalExternalSemaphoresAsync(nullptr, nullptr, 0), cudaErrorNotSupported);
  EXPECT_CUDA(cudaSignalExternalSemaphoresAsync(nullptr, nullptr, 0), cudaErrorNotSupported);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorNotSupported);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  if (failures[0] != 0 || failures[1] != 0) {
    std::printf("FAIL per-thread default streams computed wrong results\n");
    return 1;
  }
  if (stream_ids[0] == stream_ids[1]) {
    std::printf("FAIL the two threads shared one per-thread default stream\n");
    return 1;
  }
  std::printf("PASS per_thread_stream\n");
  return 0;
}
