// Cooperative launches and grid-wide sync (cooperative_groups::this_grid().sync()), the launch
// attributes of cudaLaunchKernelEx and the occupancy API, each checked against a CPU reference
// or the occupancy rule computed here from the kernel's attributes. Prints "PASS cooperative".
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.cuh"

namespace cg = cooperative_groups;

// Sum of `in` in two grid-synchronised phases: per-CTA partial sums, then CTA 0 adds them; then a
// third phase in which every thread reads the total (it must see CTA 0's write after the sync).
__global__ void grid_sum(const int* in, int n, long long* partial, long long* total, long long* seen) {
  cg::grid_group grid = cg::this_grid();
  __shared__ long long block_sum[256];
  long long mine = 0;
  for (unsigned long long i = grid.thread_rank(); i < static_cast<unsigned long long>(n); i += grid.size()) mine += in[i];
  block_sum[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) block_sum[threadIdx.x] += block_sum[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = block_sum[0];
  grid.sync();
  if (grid.thread_rank() == 0) {
    long long sum = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += partial[b];
    *total = sum;
  }
  grid.sync();
  seen[grid.thread_rank()] = *total;
}

// Jacobi smoothing of a 1D array for `steps` steps in one kernel, a grid sync between steps.
__global__ void jacobi(float* a, float* b, int n, int steps) {
  cg::grid_group grid = cg::this_grid();
  for (int s = 0; s < steps; ++s) {
    const float* from = (s % 2 == 0) ? a : b;
    float* to = (s % 2 == 0) ? b : a;
    for (int i = static_cast<int>(grid.thread_rank()); i < n; i += static_cast<int>(grid.size())) {
      const float left = i > 0 ? from[i - 1] : 0.0f;
      const float right = i + 1 < n ? from[i + 1] : 0.0f;
      to[i] = (left + right) * 0.5f;
    }
    grid.sync();
  }
}

// Every CTA counts itself in, syncs, and checks that all did: fails unless all are resident.
__global__ void all_arrive(unsigned* arrived, unsigned* wrong) {
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) atomicAdd(arrived, 1u);
  grid.sync();
  if (threadIdx.x == 0 && *reinterpret_cast<volatile unsigned*>(arrived) != gridDim.x * gridDim.y * gridDim.z) {
    atomicAdd(wrong, 1u);
  }
}

__global__ void big_shared(int* out) {
  __shared__ int buffer[5000];  // 20000 bytes of static shared memory
  buffer[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}

__global__ void dynamic_shared(int* out) {
  extern __shared__ int dyn[];
  dyn[threadIdx.x] = threadIdx.x * 2;
  __syncthreads();
  out[threadIdx.x] = dyn[threadIdx.x];
}

// Dynamic shared memory by block size for cudaOccupancyMaxPotentialBlockSizeVariableSMem.
struct SharedPerThread {
  __host__ __device__ size_t operator()(int block_size) const { return static_cast<size_t>(block_size) * 64; }
};

// The occupancy rule (gpuvp/occupancy.h, as the hardware allocates): CTA, thread, warp,
// register (per warp, units of 256) and shared-memory limits, the smallest wins.
int expected_blocks(const cudaDeviceProp& p, const cudaFuncAttributes& f, int threads, size_t dynamic) {
  const int warps = (threads + 31) / 32;
  int limit = p.maxBlocksPerMultiProcessor;
  limit = std::min(limit, p.maxThreadsPerMultiProcessor / threads);
  limit = std::min(limit, (p.maxThreadsPerMultiProcessor / 32) / warps);
  const int per_warp = (f.numRegs * 32 + 255) / 256 * 256;
  if (per_warp > 0) limit = std::min(limit, p.regsPerMultiprocessor / (per_warp * warps));
  const size_t shared = f.sharedSizeBytes + dynamic;
  if (shared > 0) limit = std::min<int>(limit, static_cast<int>(p.sharedMemPerMultiprocessor / shared));
  return limit;
}

int main() {
  int coop = 0;
  EXPECT_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0), cudaSuccess);
  CHECK(coop == 1);
  cudaDeviceProp prop;
  EXPECT_CUDA(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  CHECK(prop.cooperativeLaunch == 1);
  const int sms = prop.multiProcessorCount;

  // ---- Occupancy answers from the rule.
  cudaFuncAttributes attr;
  EXPECT_CUDA(cudaFuncGetAttributes(&attr, grid_sum), cudaSuccess);
  CHECK(attr.numRegs > 0);
  for (int threads : {32, 64, 96, 128, 256, 512, 1024}) {
    int blocks = -1;
    EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, grid_sum, threads, 0), cudaSuccess);
    CHECK(blocks == expected_blocks(prop, attr, threads, 0));
    EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, grid_sum, threads, 0,
                                                                       cudaOccupancyDisableCachingOverride),
                cudaSuccess);
    CHECK(blocks == expected_blocks(prop, attr, threads, 0));
  }
  cudaFuncAttributes big;
  EXPECT_CUDA(cudaFuncGetAttributes(&big, big_shared), cudaSuccess);
  CHECK(big.sharedSizeBytes == 20000);
  int blocks = -1;
  EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, big_shared, 128, 0), cudaSuccess);
  CHECK(blocks == expected_blocks(prop, big, 128, 0));
  CHECK(blocks == static_cast<int>(prop.sharedMemPerMultiprocessor / 20000));
  cudaFuncAttributes dyn;
  EXPECT_CUDA(cudaFuncGetAttributes(&dyn, dynamic_shared), cudaSuccess);
  EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, dynamic_shared, 64, 32 * 1024), cudaSuccess);
  CHECK(blocks == expected_blocks(prop, dyn, 64, 32 * 1024));
  size_t available = 0;
  EXPECT_CUDA(cudaOccupancyAvailableDynamicSMemPerBlock(&available, big_shared, 2, 128), cudaSuccess);
  CHECK(available == std::min<size_t>(prop.sharedMemPerMultiprocessor / 2 - 20000, prop.sharedMemPerBlock - 20000));
  EXPECT_CUDA(cudaOccupancyAvailableDynamicSMemPerBlock(&available, dynamic_shared, 4, 64), cudaSuccess);
  CHECK(available == std::min<size_t>(prop.sharedMemPerMultiprocessor / 4, prop.sharedMemPerBlock));
  // The header's template searches block sizes through the calls above.
  int min_grid = 0, best_block = 0;
  EXPECT_CUDA(cudaOccupancyMaxPotentialBlockSize(&min_grid, &best_block, grid_sum, 0, 256), cudaSuccess);
  CHECK(best_block > 0 && best_block <= 256 && best_block % 32 == 0);
  EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, grid_sum, best_block, 0), cudaSuccess);
  CHECK(min_grid == blocks * sms);
  int vmin_grid = 0, vbest_block = 0;
  EXPECT_CUDA(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&vmin_grid, &vbest_block, dynamic_shared,
                                                             SharedPerThread{}, 512),
              cudaSuccess);
  EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, dynamic_shared, vbest_block, vbest_block * 64),
              cudaSuccess);
  CHECK(vbest_block > 0 && vmin_grid == blocks * sms);

  // ---- Grid-sync reduction on as many CTAs as can be resident at once.
  int per_sm = 0;
  EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, 256, 0), cudaSuccess);
  CHECK(per_sm > 0);
  const int n = 100003;
  std::vector<int> host(n);
  long long reference = 0;
  for (int i = 0; i < n; ++i) {
    host[i] = (i * 7919) % 1000 - 500;
    reference += host[i];
  }
  const int grid = sms * std::min(per_sm, 2);
  int* in = nullptr;
  long long *partial = nullptr, *total = nullptr, *seen = nullptr;
  EXPECT_CUDA(cudaMalloc(&in, n * sizeof(int)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&partial, grid * sizeof(long long)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&total, sizeof(long long)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&seen, grid * 256 * sizeof(long long)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  int count = n;
  void* args[] = {&in, &count, &partial, &total, &seen};
  for (int round = 0; round < 2; ++round) {  // the workspace is reused: its barrier must be consistent
    EXPECT_CUDA(cudaMemset(seen, 0, grid * 256 * sizeof(long long)), cudaSuccess);
    EXPECT_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(grid_sum), grid, 256, args, 0, nullptr), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    long long result = 0;
    EXPECT_CUDA(cudaMemcpy(&result, total, sizeof result, cudaMemcpyDeviceToHost), cudaSuccess);
    CHECK(result == reference);
    std::vector<long long> seen_host(grid * 256);
    EXPECT_CUDA(cudaMemcpy(seen_host.data(), seen, seen_host.size() * sizeof(long long), cudaMemcpyDeviceToHost),
                cudaSuccess);
    for (long long v : seen_host) CHECK(v == reference);
  }

  // ---- Too large a grid: refused at the call, nothing runs.
  EXPECT_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(grid_sum), per_sm * sms + 1, 256, args, 0, nullptr),
              cudaErrorCooperativeLaunchTooLarge);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorCooperativeLaunchTooLarge);
  EXPECT_CUDA(cudaGetLastError(), cudaSuccess);

  // ---- The largest grid that fits: every CTA resident, each sees all arrive; twice at once, on
  // two streams (a second cooperative grid waits until the first is all resident).
  const int arrive_threads = 512;  // few CTAs per SM: few spinning warps, a short run
  int arrive_per_sm = 0;
  EXPECT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&arrive_per_sm, all_arrive, arrive_threads, 0), cudaSuccess);
  CHECK(arrive_per_sm > 0);
  const int arrive_grid = std::max(1, arrive_per_sm / 2) * sms;
  unsigned* counters = nullptr;
  EXPECT_CUDA(cudaMalloc(&counters, 4 * sizeof(unsigned)), cudaSuccess);
  EXPECT_CUDA(cudaMemset(counters, 0, 4 * sizeof(unsigned)), cudaSuccess);
  cudaStream_t streams[2];
  for (auto& s : streams) EXPECT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (int k = 0; k < 2; ++k) {
    unsigned* arrived = counters + 2 * k;
    unsigned* wrong = counters + 2 * k + 1;
    void* arrive_args[] = {&arrived, &wrong};
    const int fill = arrive_per_sm * sms;  // the whole GPU: no CTA of the other grid fits beside it
    EXPECT_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(all_arrive), k == 0 ? fill : arrive_grid,
                                            arrive_threads, arrive_args, 0, streams[k]),
                cudaSuccess);
  }
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  unsigned counted[4];
  EXPECT_CUDA(cudaMemcpy(counted, counters, sizeof counted, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(counted[0] == static_cast<unsigned>(arrive_per_sm * sms) && counted[1] == 0);
  CHECK(counted[2] == static_cast<unsigned>(arrive_grid) && counted[3] == 0);

  // ---- cudaLaunchKernelEx: cooperative attribute (with a priority and a carve-out), Jacobi steps.
  const int m = 4096, steps = 9;
  std::vector<float> xa(m), xb(m, 0.0f);
  for (int i = 0; i < m; ++i) xa[i] = static_cast<float>((i * 37) % 101);
  float *da = nullptr, *db = nullptr;
  EXPECT_CUDA(cudaMalloc(&da, m * sizeof(float)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&db, m * sizeof(float)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(da, xa.data(), m * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_CUDA(cudaMemset(db, 0, m * sizeof(float)), cudaSuccess);
  cudaLaunchAttribute attributes[3];
  attributes[0].id = cudaLaunchAttributeCooperative;
  attributes[0].val.cooperative = 1;
  attributes[1].id = cudaLaunchAttributePriority;
  attributes[1].val.priority = 0;
  attributes[2].id = cudaLaunchAttributePreferredSharedMemoryCarveout;
  attributes[2].val.sharedMemCarveout = 50;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(sms);
  config.blockDim = dim3(128);
  config.dynamicSmemBytes = 0;
  config.stream = streams[0];
  config.attrs = attributes;
  config.numAttrs = 3;
  EXPECT_CUDA(cudaLaunchKernelEx(&config, jacobi, da, db, m, steps), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(streams[0]), cudaSuccess);
  for (int s = 0; s < steps; ++s) {
    std::vector<float>& from = (s % 2 == 0) ? xa : xb;
    std::vector<float>& to = (s % 2 == 0) ? xb : xa;
    for (int i = 0; i < m; ++i) {
      const float left = i > 0 ? from[i - 1] : 0.0f;
      const float right = i + 1 < m ? from[i + 1] : 0.0f;
      to[i] = (left + right) * 0.5f;
    }
  }
  std::vector<float> result(m);
  EXPECT_CUDA(cudaMemcpy(result.data(), steps % 2 == 0 ? da : db, m * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
  for (int i = 0; i < m; ++i) CHECK(result[i] == (steps % 2 == 0 ? xa[i] : xb[i]));
  // Not cooperative through the attribute: a plain launch with cudaLaunchKernelEx.
  config.numAttrs = 0;
  int* out = nullptr;
  EXPECT_CUDA(cudaMalloc(&out, 64 * sizeof(int)), cudaSuccess);
  config.gridDim = dim3(1);
  config.blockDim = dim3(64);
  config.dynamicSmemBytes = 64 * sizeof(int);
  EXPECT_CUDA(cudaLaunchKernelEx(&config, dynamic_shared, out), cudaSuccess);
  int got[64];
  EXPECT_CUDA(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 64; ++i) CHECK(got[i] == 2 * i);
  // Too large through the attribute too.
  config.attrs = attributes;
  config.numAttrs = 1;
  config.gridDim = dim3(per_sm * sms + 1);
  config.blockDim = dim3(256);
  config.dynamicSmemBytes = 0;
  EXPECT_CUDA(cudaLaunchKernelEx(&config, grid_sum, static_cast<const int*>(in), count, partial, total, seen),
              cudaErrorCooperativeLaunchTooLarge);
  // Clusters need compute capability 9.0: a clear error on these presets.
  cudaLaunchAttribute cluster;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 2;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  config.gridDim = dim3(2);
  config.blockDim = dim3(64);
  config.dynamicSmemBytes = 64 * sizeof(int);
  EXPECT_CUDA(cudaLaunchKernelEx(&config, dynamic_shared, out), cudaErrorNotSupported);
  cudaLaunchAttribute bad;
  bad.id = static_cast<cudaLaunchAttributeID>(999);
  config.attrs = &bad;
  EXPECT_CUDA(cudaLaunchKernelEx(&config, dynamic_shared, out), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

  // ---- grid.sync() in a launch that is not cooperative has no workspace: the kernel traps.
  EXPECT_CUDA(cudaStreamSynchronize(streams[1]), cudaSuccess);
  all_arrive<<<2, 64>>>(counters, counters + 1);
  const cudaError_t trapped = cudaDeviceSynchronize();
  CHECK(trapped != cudaSuccess);
  std::printf("non-cooperative grid sync: %s\n", cudaGetErrorName(trapped));
  std::printf("PASS cooperative\n");
  return 0;
}
