// In-kernel malloc/free/new/delete under gpuvp run: the heap's size follows
// cudaLimitMallocHeapSize (default 8 MiB, fixed once a kernel that uses malloc ran), thousands of
// threads allocate at once, the host reads the blocks through the pointers kernels stored, blocks
// outlive their launch, and an exhausted heap answers NULL. Prints "PASS device_malloc".
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "check.cuh"

struct Item {
  int id;
  double weight;
  Item* next;
};

__global__ void fill(int** out, int count) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  int* block = static_cast<int*>(malloc(count * sizeof(int)));
  if (block != nullptr) {
    for (int i = 0; i < count; ++i) block[i] = tid * 1000 + i;
  }
  out[tid] = block;
}

// A later launch reads what an earlier one allocated.
__global__ void sum_blocks(int* const* blocks, int count, long long* sums) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  long long sum = 0;
  for (int i = 0; i < count; ++i) sum += blocks[tid][i];
  sums[tid] = sum;
}

__global__ void drain(int** blocks) { free(blocks[blockIdx.x * blockDim.x + threadIdx.x]); }

__global__ void grab(char** out, unsigned bytes) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = static_cast<char*>(malloc(bytes));
}

// new/delete: each thread keeps a chain of `length` items; the host walks it.
__global__ void chains(Item** heads, int length) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  Item* head = nullptr;
  for (int i = 0; i < length; ++i) {
    Item* item = new Item;
    item->id = tid * 100 + i;
    item->weight = 0.5 * i;
    item->next = head;
    head = item;
  }
  heads[tid] = head;
}

__global__ void delete_chains(Item** heads) {
  Item* item = heads[blockIdx.x * blockDim.x + threadIdx.x];
  while (item != nullptr) {
    Item* next = item->next;
    delete item;
    item = next;
  }
}

int main() {
  size_t limit = 0;
  EXPECT_CUDA(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize), cudaSuccess);
  CHECK(limit == (size_t{8} << 20));
  const size_t heap = size_t{1} << 20;
  EXPECT_CUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap), cudaSuccess);
  EXPECT_CUDA(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize), cudaSuccess);
  CHECK(limit == heap);

  // 2048 threads, 128 bytes each.
  constexpr int kThreads = 2048, kCount = 32;
  int** d_blocks = nullptr;
  long long* d_sums = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_blocks, kThreads * sizeof(int*)), cudaSuccess);
  EXPECT_CUDA(cudaMalloc(&d_sums, kThreads * sizeof(long long)), cudaSuccess);
  fill<<<kThreads / 128, 128>>>(d_blocks, kCount);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  // Fixed from now on.
  EXPECT_CUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap * 2), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize), cudaSuccess);
  CHECK(limit == heap);

  std::vector<int*> blocks(kThreads);
  EXPECT_CUDA(cudaMemcpy(blocks.data(), d_blocks, kThreads * sizeof(int*), cudaMemcpyDeviceToHost), cudaSuccess);
  std::set<int*> distinct(blocks.begin(), blocks.end());
  CHECK(distinct.size() == static_cast<size_t>(kThreads));
  std::vector<int> values(kCount);
  for (int t = 0; t < kThreads; ++t) {
    CHECK(blocks[t] != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(blocks[t]) % 16 == 0);
    EXPECT_CUDA(cudaMemcpy(values.data(), blocks[t], kCount * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < kCount; ++i) CHECK(values[i] == t * 1000 + i);
  }
  sum_blocks<<<kThreads / 128, 128>>>(d_blocks, kCount, d_sums);
  std::vector<long long> sums(kThreads);
  EXPECT_CUDA(cudaMemcpy(sums.data(), d_sums, kThreads * sizeof(long long), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 0; t < kThreads; ++t) CHECK(sums[t] == 1000LL * t * kCount + kCount * (kCount - 1) / 2);

  // Free everything, then ask for twice the heap in 1 KiB pieces: exactly the heap's worth succeed.
  drain<<<kThreads / 128, 128>>>(d_blocks);
  char** d_grabs = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_grabs, kThreads * sizeof(char*)), cudaSuccess);
  grab<<<kThreads / 256, 256>>>(d_grabs, 1024);
  std::vector<char*> grabs(kThreads);
  EXPECT_CUDA(cudaMemcpy(grabs.data(), d_grabs, kThreads * sizeof(char*), cudaMemcpyDeviceToHost), cudaSuccess);
  size_t granted = 0;
  std::set<char*> granted_blocks;
  for (char* p : grabs) {
    if (p != nullptr) {
      ++granted;
      granted_blocks.insert(p);
    }
  }
  CHECK(granted == heap / 1024);
  CHECK(granted_blocks.size() == granted);
  // They tile the heap: lowest to highest spans exactly its size.
  CHECK(static_cast<size_t>(*granted_blocks.rbegin() - *granted_blocks.begin()) == heap - 1024);
  drain<<<kThreads / 256, 256>>>(reinterpret_cast<int**>(d_grabs));

  // new/delete, walked by the host through device pointers.
  constexpr int kChains = 256, kLength = 12;
  Item** d_heads = nullptr;
  EXPECT_CUDA(cudaMalloc(&d_heads, kChains * sizeof(Item*)), cudaSuccess);
  chains<<<kChains / 64, 64>>>(d_heads, kLength);
  std::vector<Item*> heads(kChains);
  EXPECT_CUDA(cudaMemcpy(heads.data(), d_heads, kChains * sizeof(Item*), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 0; t < kChains; ++t) {
    Item* at = heads[t];
    for (int i = kLength - 1; i >= 0; --i) {
      CHECK(at != nullptr);
      Item item;
      EXPECT_CUDA(cudaMemcpy(&item, at, sizeof item, cudaMemcpyDeviceToHost), cudaSuccess);
      CHECK(item.id == t * 100 + i);
      CHECK(item.weight == 0.5 * i);
      at = item.next;
    }
    CHECK(at == nullptr);
  }
  delete_chains<<<kChains / 64, 64>>>(d_heads);
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
  std::printf("PASS device_malloc\n");
  return 0;
}
