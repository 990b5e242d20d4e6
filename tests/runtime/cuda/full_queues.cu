// More work queued on each of 8 streams than a device queue holds (256 entries), before one
// synchronizing call: the driver must wait for room as a host that waits (HostWaiting for the
// queue's oldest command) -- simulated time moves only while the host waits, so a full queue
// whose host just polled for room never drained (a hang before the fix). Up to 2040 commands are
// outstanding at once, more than the completion ring's 1024 entries. Checks every buffer's final
// contents (the last memset, then the last launch: stream order).
#include <cstdint>
#include <vector>

#include "check.cuh"

__global__ void add_index(uint32_t* data, uint32_t n, uint32_t step) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += i + step;
}

int main() {
  constexpr int kStreams = 8;
  constexpr uint32_t kSteps = 300;  // per stream: memsets, and a launch every 10th step (the last)
  constexpr uint32_t kElements = 1000;
  cudaStream_t streams[kStreams];
  uint32_t* buffers[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    EXPECT_CUDA(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking), cudaSuccess);
    EXPECT_CUDA(cudaMalloc(&buffers[s], kElements * sizeof(uint32_t)), cudaSuccess);
  }
  for (uint32_t step = 0; step < kSteps; ++step) {
    for (int s = 0; s < kStreams; ++s) {
      if (step % 10 == 9) {
        add_index<<<(kElements + 127) / 128, 128, 0, streams[s]>>>(buffers[s], kElements, step + s);
      } else {
        EXPECT_CUDA(cudaMemsetAsync(buffers[s], static_cast<int>(step & 0x7f), kElements * sizeof(uint32_t), streams[s]),
                    cudaSuccess);
      }
    }
  }
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint32_t> host(kElements);
  uint64_t checked = 0;
  const uint32_t last_fill = ((kSteps - 2) & 0x7f) * 0x01010101u;  // the last memset, then the last launch
  for (int s = 0; s < kStreams; ++s) {
    EXPECT_CUDA(cudaMemcpy(host.data(), buffers[s], kElements * sizeof(uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
    for (uint32_t i = 0; i < kElements; ++i) {
      const uint32_t expected = last_fill + i + (kSteps - 1) + static_cast<uint32_t>(s);
      if (host[i] != expected) {
        std::printf("FAIL full_queues: stream %d element %u is %u, expected %u\n", s, i, host[i], expected);
        return 1;
      }
      ++checked;
    }
    EXPECT_CUDA(cudaFree(buffers[s]), cudaSuccess);
    EXPECT_CUDA(cudaStreamDestroy(streams[s]), cudaSuccess);
  }
  std::printf("PASS full_queues: %d streams x %u commands before one synchronize; %llu values match\n", kStreams,
              kSteps, static_cast<unsigned long long>(checked));
  return 0;
}
