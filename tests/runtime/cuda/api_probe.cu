// Runtime API coverage: properties, symbols, pinned memory, streams and events in simulated
// time, async copies, device printf, an unimplemented call.
#include <cstring>

#include "check.cuh"

__device__ int bias[4];
__constant__ float scale_factor;

__global__ void affine(const int* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(in[i] + bias[i % 4]) * scale_factor;
}

__global__ void hello(int tag) {
  if (threadIdx.x == 0) printf("hello from block %d tag %d\n", blockIdx.x, tag);
}

int main() {
  int count = 0;
  EXPECT_CUDA(cudaGetDeviceCount(&count), cudaSuccess);
  cudaDeviceProp prop;
  EXPECT_CUDA(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  int sms = 0;
  EXPECT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  if (count != 1 || sms != prop.multiProcessorCount || prop.warpSize != 32 || prop.major < 7) {
    std::printf("FAIL: device count %d, SMs %d/%d, warp %d, cc %d.%d\n", count, sms, prop.multiProcessorCount,
                prop.warpSize, prop.major, prop.minor);
    return 1;
  }
  std::printf("device %s cc %d.%d SMs %d\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);

  const int n = 1000;
  int* in = nullptr;
  float* out = nullptr;
  int* pinned_in = nullptr;
  float* pinned_out = nullptr;
  EXPECT_CUDA(cudaMalloc(&in, n * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  EXPECT_CUDA(cudaMallocHost(&pinned_in, n * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaHostAlloc(&pinned_out, n * sizeof(float), cudaHostAllocDefault), cudaSuccess);
  for (int i = 0; i < n; ++i) pinned_in[i] = i;
  const int biases[4] = {1, 2, 3, 4};
  const float factor = 0.5f;
  EXPECT_CUDA(cudaMemcpyToSymbol(bias, biases, sizeof biases), cudaSuccess);
  EXPECT_CUDA(cudaMemcpyToSymbol(scale_factor, &factor, sizeof factor), cudaSuccess);
  int readback[4] = {};
  EXPECT_CUDA(cudaMemcpyFromSymbol(readback, bias, sizeof readback), cudaSuccess);
  void* bias_address = nullptr;
  EXPECT_CUDA(cudaGetSymbolAddress(&bias_address, bias), cudaSuccess);
  if (std::memcmp(readback, biases, sizeof biases) != 0 || bias_address == nullptr) {
    std::printf("FAIL: symbol round trip\n");
    return 1;
  }

  cudaStream_t stream;
  cudaEvent_t start, stop;
  EXPECT_CUDA(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_CUDA(cudaEventCreate(&start), cudaSuccess);
  EXPECT_CUDA(cudaEventCreate(&stop), cudaSuccess);
  EXPECT_CUDA(cudaEventRecord(start, stream), cudaSuccess);
  EXPECT_CUDA(cudaMemcpyAsync(in, pinned_in, n * sizeof(int), cudaMemcpyHostToDevice, stream), cudaSuccess);
  affine<<<(n + 127) / 128, 128, 0, stream>>>(in, out, n);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  EXPECT_CUDA(cudaMemcpyAsync(pinned_out, out, n * sizeof(float), cudaMemcpyDeviceToHost, stream), cudaSuccess);
  EXPECT_CUDA(cudaEventRecord(stop, stream), cudaSuccess);
  EXPECT_CUDA(cudaEventSynchronize(stop), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamQuery(stream), cudaSuccess);
  EXPECT_CUDA(cudaEventQuery(stop), cudaSuccess);
  float ms = -1.0f;
  EXPECT_CUDA(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  for (int i = 0; i < n; ++i) {
    const float expected = static_cast<float>(i + biases[i % 4]) * factor;
    if (pinned_out[i] != expected) {
      std::printf("FAIL: out[%d] = %f, expected %f\n", i, pinned_out[i], expected);
      return 1;
    }
  }
  std::printf("stream work took %s simulated time\n", ms >= 0.0f ? "non-negative" : "negative");

  cudaFuncAttributes attributes;
  EXPECT_CUDA(cudaFuncGetAttributes(&attributes, affine), cudaSuccess);
  int blocks = 0;
  EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, affine, 128, 0), cudaSuccess);
  EXPECT_CUDA(cudaFuncSetCacheConfig(affine, cudaFuncCachePreferL1), cudaSuccess);
  if (blocks <= 0 || attributes.maxThreadsPerBlock <= 0) {
    std::printf("FAIL: occupancy %d, max threads %d\n", blocks, attributes.maxThreadsPerBlock);
    return 1;
  }
  // From the program's sm_75 cubin (nvcc 13's default), as the driver answers them.
  if (attributes.numRegs <= 0 || attributes.numRegs > 255 || attributes.binaryVersion != 75 ||
      attributes.ptxVersion != 75) {
    std::printf("FAIL: numRegs %d, binaryVersion %d, ptxVersion %d\n", attributes.numRegs, attributes.binaryVersion,
                attributes.ptxVersion);
    return 1;
  }

  hello<<<2, 32>>>(42);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);

  EXPECT_CUDA(cudaGraphExternalSemaphoresSignalNodeGetParams(nullptr, nullptr), cudaErrorNotSupported);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorNotSupported);

  EXPECT_CUDA(cudaEventDestroy(start), cudaSuccess);
  EXPECT_CUDA(cudaEventDestroy(stop), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_CUDA(cudaFreeHost(pinned_in), cudaSuccess);
  EXPECT_CUDA(cudaFreeHost(pinned_out), cudaSuccess);
  EXPECT_CUDA(cudaFree(in), cudaSuccess);
  EXPECT_CUDA(cudaFree(out), cudaSuccess);
  std::printf("PASS api_probe\n");
  return 0;
}
