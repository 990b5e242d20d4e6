// The shape of the CUDA samples' multi-threaded callback program: worker threads queue copies, a
// kernel and a callback on their own streams and end; each callback starts a thread that checks
// the results, frees the resources and signals a host barrier; the main thread only waits on that
// barrier, never on the device. The callbacks must still run. Checked against the CPU.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "check.cuh"

constexpr int kWorkloads = 6;
constexpr int kElements = 20000;

__global__ void increment(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

struct Workload {
  int id = 0;
  int* host = nullptr;
  int* device = nullptr;
  cudaStream_t stream = nullptr;
  bool success = false;
};

std::mutex g_mutex;
std::condition_variable g_done;
int g_finished = 0;
std::vector<std::thread> g_postprocessors;

void postprocess(Workload* w) {
  w->success = true;
  for (int i = 0; i < kElements && w->success; ++i) {
    if (w->host[i] != w->id + i + 1) {
      std::printf("FAIL workload %d element %d = %d, expected %d\n", w->id, i, w->host[i], w->id + i + 1);
      w->success = false;
    }
  }
  const cudaError_t freed = cudaFree(w->device);
  const cudaError_t freed_host = cudaFreeHost(w->host);
  const cudaError_t destroyed = cudaStreamDestroy(w->stream);
  if (freed != cudaSuccess || freed_host != cudaSuccess || destroyed != cudaSuccess) {
    std::printf("FAIL workload %d: cudaFree %s, cudaFreeHost %s, cudaStreamDestroy %s\n", w->id,
                cudaGetErrorName(freed), cudaGetErrorName(freed_host), cudaGetErrorName(destroyed));
    w->success = false;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_finished;
  g_done.notify_all();
}

void CUDART_CB on_done(cudaStream_t, cudaError_t status, void* data) {
  if (status != cudaSuccess) std::printf("FAIL callback status %s\n", cudaGetErrorName(status));
  std::lock_guard<std::mutex> lock(g_mutex);
  g_postprocessors.emplace_back(postprocess, static_cast<Workload*>(data));
}

void launch(Workload* w) {
  EXPECT_CUDA(cudaStreamCreate(&w->stream), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&w->device, kElements * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaHostAlloc(&w->host, kElements * sizeof(int), cudaHostAllocPortable), cudaSuccess);
  for (int i = 0; i < kElements; ++i) w->host[i] = w->id + i;
  EXPECT_CUDA(cudaMemcpyAsync(w->device, w->host, kElements * sizeof(int), cudaMemcpyHostToDevice, w->stream),
              cudaSuccess);
  increment<<<(kElements + 511) / 512, 512, 0, w->stream>>>(w->device, kElements);
  EXPECT_CUDA(cudaMemcpyAsync(w->host, w->device, kElements * sizeof(int), cudaMemcpyDeviceToHost, w->stream),
              cudaSuccess);
  EXPECT_CUDA(cudaStreamAddCallback(w->stream, on_done, w, 0), cudaSuccess);
}

int main() {
  std::vector<Workload> workloads(kWorkloads);
  std::vector<std::thread> launchers;
  for (int i = 0; i < kWorkloads; ++i) {
    workloads[i].id = i;
    launchers.emplace_back(launch, &workloads[i]);
  }
  for (auto& t : launchers) t.join();
  {
    std::unique_lock<std::mutex> lock(g_mutex);
    if (!g_done.wait_for(lock, std::chrono::seconds(120), [] { return g_finished == kWorkloads; })) {
      std::printf("FAIL only %d of %d callbacks' work finished: host functions did not run\n", g_finished,
                  kWorkloads);
      std::fflush(stdout);
      std::_Exit(1);
    }
  }
  for (auto& t : g_postprocessors) t.join();
  for (const Workload& w : workloads) {
    if (!w.success) {
      std::printf("FAIL workload %d\n", w.id);
      return 1;
    }
  }
  std::printf("PASS host_function_barrier: %d workloads\n", kWorkloads);
  return 0;
}
