// The device runtime on the functional model: the heap allocator alone (DeviceHeap), and kernels
// calling malloc/free/new/delete and launching child grids through a DeviceRuntime, checked
// against CPU references.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <set>
#include <vector>

#include "models/gpu/ptx/device_heap.h"
#include "models/gpu/ptx/device_runtime.h"
#include "tests/ptx/harness.h"

namespace gpuvp::ptx {
namespace {

using testing::Harness;

// ---- DeviceHeap alone.

TEST(DeviceHeap, FirstFitIn16ByteGranulesAndNullWhenExhausted) {
  DeviceHeap heap(0x1000, 256);
  EXPECT_EQ(heap.allocate(1), 0x1000u);
  EXPECT_EQ(heap.allocate(17), 0x1010u);   // rounded to 32
  EXPECT_EQ(heap.allocate(16), 0x1030u);
  EXPECT_EQ(heap.allocate(0), 0u);         // malloc(0): NULL
  EXPECT_EQ(heap.allocate(256), 0u);       // no room left for it
  EXPECT_EQ(heap.allocate(256 - 64), 0x1040u);
  EXPECT_EQ(heap.allocate(1), 0u);         // exhausted
  EXPECT_EQ(heap.live_bytes(), 256u);
}

TEST(DeviceHeap, FreedBlocksCoalesceAndAreReusedLowestFirst) {
  DeviceHeap heap(0x2000, 4096);
  std::vector<uint64_t> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(heap.allocate(512));
  EXPECT_EQ(heap.allocate(16), 0u);
  EXPECT_TRUE(heap.release(blocks[3]));
  EXPECT_TRUE(heap.release(blocks[1]));
  EXPECT_TRUE(heap.release(blocks[2]));  // joins 1 and 3: 1536 contiguous bytes
  EXPECT_FALSE(heap.release(blocks[2]));  // twice
  EXPECT_FALSE(heap.release(blocks[4] + 16));  // not a block's start
  EXPECT_EQ(heap.allocate(1536), blocks[1]);
  for (uint64_t b : {blocks[0], blocks[1], blocks[4], blocks[5], blocks[6], blocks[7]}) EXPECT_TRUE(heap.release(b));
  EXPECT_EQ(heap.live_blocks(), 0u);
  EXPECT_EQ(heap.allocate(4096), 0x2000u);  // all of it again, in one piece
}

TEST(DeviceHeap, AlignedAllocationsLeaveThePaddingFree) {
  DeviceHeap heap(0x10010, 8192);  // base 16 past a 64 KiB boundary
  const uint64_t a = heap.allocate(40, 256);
  EXPECT_EQ(a % 256, 0u);
  EXPECT_EQ(heap.allocate(16), 0x10010u);  // the padding before it is still free
  EXPECT_EQ(heap.allocate(40, 3), 0u);     // not a power of two
}

// ---- Kernels through a DeviceRuntime.

// What the command processor does, on the functional model: a heap and a FIFO of child grids run
// after the grid that launched them.
class TestRuntime final : public DeviceRuntime {
 public:
  explicit TestRuntime(uint64_t heap_bytes) : heap_bytes_(heap_bytes) {}
  void attach(DeviceMemory& memory) {
    memory_ = &memory;
    heap_.reset(memory.allocate(heap_bytes_, 4096), heap_bytes_);
  }
  uint64_t malloc(uint64_t bytes, uint64_t alignment) override { return heap_.allocate(bytes, alignment); }
  bool free(uint64_t address) override { return heap_.release(address); }
  uint64_t parameter_buffer(uint64_t bytes) override { return memory_->allocate(bytes, 256); }
  uint32_t launch(DeviceLaunch launch) override {
    children.push_back(std::move(launch));
    return kCudaSuccess;
  }
  uint32_t depth() const override { return 0; }
  uint32_t call_cycles(DeviceCall) const override { return 0; }

  DeviceHeap heap_;
  std::deque<DeviceLaunch> children;

 private:
  uint64_t heap_bytes_;
  DeviceMemory* memory_ = nullptr;
};

struct RuntimeHarness {
  explicit RuntimeHarness(uint64_t heap_bytes) : runtime(heap_bytes), harness("device_runtime", options()) {
    runtime.attach(harness.memory());
  }
  ExecutorOptions options() {
    ExecutorOptions o;
    o.device_runtime = &runtime;
    return o;
  }
  TestRuntime runtime;
  Harness harness;
};

TEST(DeviceRuntime, ManyThreadsMallocDistinctBlocksTheHostCanRead) {
  RuntimeHarness h(1 << 20);
  constexpr int kThreads = 8 * 128, kCount = 24;
  const uint64_t out = h.harness.upload(std::vector<uint64_t>(kThreads, 0));
  ASSERT_TRUE(h.harness.launch("malloc_fill", Dim3(8), Dim3(128), 0, out, kCount).ok());
  const auto blocks = h.harness.download<uint64_t>(out, kThreads);
  std::set<uint64_t> seen;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_NE(blocks[t], 0u) << t;
    EXPECT_EQ(blocks[t] % 16, 0u);
    ASSERT_GE(blocks[t], h.runtime.heap_.base());
    ASSERT_LE(blocks[t] + kCount * 4, h.runtime.heap_.base() + h.runtime.heap_.bytes());
    seen.insert(blocks[t]);
    const auto values = h.harness.download<int32_t>(blocks[t], kCount);
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(values[i], t * 1000 + i) << t << " " << i;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads));
  // Blocks do not overlap: sorted, each ends before the next begins.
  std::vector<uint64_t> sorted(seen.begin(), seen.end());
  for (size_t i = 1; i < sorted.size(); ++i) EXPECT_GE(sorted[i], sorted[i - 1] + kCount * 4);
  EXPECT_EQ(h.runtime.heap_.live_bytes(), uint64_t{kThreads} * 96);  // 24 ints, 16-byte granules
}

TEST(DeviceRuntime, ExhaustedHeapAnswersNullToTheLaterThreadsOnly) {
  RuntimeHarness h(64 * 1024);
  constexpr int kThreads = 256, kCount = 64;  // 256 B each: 256 blocks fit, 512 threads do not
  const uint64_t out = h.harness.upload(std::vector<uint64_t>(2 * kThreads, 0));
  ASSERT_TRUE(h.harness.launch("malloc_fill", Dim3(2), Dim3(kThreads), 0, out, kCount).ok());
  const auto blocks = h.harness.download<uint64_t>(out, 2 * kThreads);
  // CPU reference: calls are served in a fixed order (CTA, warp, lane), first fit.
  for (int t = 0; t < 2 * kThreads; ++t) {
    if (t < kThreads) {
      EXPECT_EQ(blocks[t], h.runtime.heap_.base() + uint64_t{static_cast<uint64_t>(t)} * 256) << t;
    } else {
      EXPECT_EQ(blocks[t], 0u) << t;
    }
  }
  // Free everything from the device, then the whole heap is one block again.
  ASSERT_TRUE(h.harness.launch("free_all", Dim3(2), Dim3(kThreads), 0, out).ok());
  EXPECT_EQ(h.runtime.heap_.live_blocks(), 0u);
  EXPECT_EQ(h.runtime.heap_.allocate(64 * 1024), h.runtime.heap_.base());
}

TEST(DeviceRuntime, NewAndDeleteBuildAndFreeLinkedLists) {
  RuntimeHarness h(1 << 20);
  constexpr int kThreads = 96, kLength = 37;
  const uint64_t sums = h.harness.upload(std::vector<int64_t>(kThreads, 0));
  ASSERT_TRUE(h.harness.launch("list_sum", Dim3(3), Dim3(32), 0, sums, kLength).ok());
  const auto got = h.harness.download<int64_t>(sums, kThreads);
  for (int t = 0; t < kThreads; ++t) {
    int64_t expected = 0;
    for (int i = 0; i < kLength; ++i) expected += t + i;
    EXPECT_EQ(got[t], expected) << t;
  }
  EXPECT_EQ(h.runtime.heap_.live_blocks(), 0u);  // every node deleted
}

TEST(DeviceRuntime, AlignedMallocHonoursTheAlignment) {
  RuntimeHarness h(1 << 20);
  const uint64_t out = h.harness.upload(std::vector<uint64_t>(32, 1));
  ASSERT_TRUE(h.harness.launch("aligned_malloc", Dim3(1), Dim3(32), 0, out, uint64_t{1024}).ok());
  for (uint64_t p : h.harness.download<uint64_t>(out, 32)) {
    ASSERT_NE(p, 0u);
    EXPECT_EQ(p % 1024, 0u);
  }
}

TEST(DeviceRuntime, FreeOfAPointerMallocDidNotReturnFaults) {
  RuntimeHarness h(1 << 20);
  const uint64_t data = h.harness.upload(std::vector<int32_t>(4, 0));
  const LaunchResult r = h.harness.launch("bad_free", Dim3(1), Dim3(1), 0, data);
  EXPECT_EQ(r.status, LaunchStatus::kIllegalAddress);
  EXPECT_NE(r.message.find("not a block that device malloc returned"), std::string::npos) << r.message;
}

TEST(DeviceRuntime, WithoutARuntimeMallocIsNull) {
  Harness h("device_runtime");
  const uint64_t out = h.upload(std::vector<uint64_t>(32, 7));
  ASSERT_TRUE(h.launch("malloc_fill", Dim3(1), Dim3(32), 0, out, 4).ok());
  for (uint64_t p : h.download<uint64_t>(out, 32)) EXPECT_EQ(p, 0u);
}

TEST(DeviceRuntime, ChildLaunchesCarryKernelConfigurationArgumentsAndStream) {
  RuntimeHarness h(1 << 20);
  std::vector<int32_t> data(2048, 0);
  for (int i = 0; i < 1024; ++i) data[i] = i;
  const uint64_t d = h.harness.upload(data);
  ASSERT_TRUE(h.harness.launch("parent_launch", Dim3(1), Dim3(32), 0, d).ok());
  ASSERT_EQ(h.runtime.children.size(), 4u);
  // Launches come in the order the warp issued the lanes' calls (its divergent branches by pc),
  // not by thread: identify each child by the value its thread passed (t + 1).
  const uint64_t streams[4] = {0, 3, 4, 0x100};  // NULL, tail launch, fire-and-forget, created
  std::set<int> threads;
  for (const DeviceLaunch& child : h.runtime.children) {
    EXPECT_EQ(child.kernel->name, "child_add");
    EXPECT_EQ(child.config.block.count() * child.config.grid.count(), 64u);
    ASSERT_EQ(child.params.size(), 12u);
    uint64_t pointer = 0;
    int32_t value = 0;
    std::memcpy(&pointer, child.params.data(), 8);
    std::memcpy(&value, child.params.data() + 8, 4);
    const int t = value - 1;
    ASSERT_TRUE(t >= 0 && t < 4) << value;
    threads.insert(t);
    EXPECT_EQ(child.stream, streams[t]) << t;
    EXPECT_EQ(pointer, d + uint64_t{static_cast<uint64_t>(t)} * 64 * 4);
  }
  EXPECT_EQ(threads.size(), 4u);
  // Run the children after the parent, as the command processor does; check against the CPU.
  Executor executor(h.harness.memory(), ExecutorOptions{});
  while (!h.runtime.children.empty()) {
    DeviceLaunch child = std::move(h.runtime.children.front());
    h.runtime.children.pop_front();
    ASSERT_TRUE(executor.launch(*child.module, *child.kernel, child.config, child.params).ok());
  }
  const auto got = h.harness.download<int32_t>(d, 1024 + 32);
  for (int i = 0; i < 1024; ++i) EXPECT_EQ(got[i], i + (i < 256 ? i / 64 + 1 : 0)) << i;
  for (int t = 0; t < 32; ++t) EXPECT_EQ(got[1024 + t], 0) << t;  // cudaGetLastError: success
}

// C++ virtual functions (the CUDA samples' newdelete): a vtable is a .global initializer
// naming functions, and each call goes through the function address loaded from it.
TEST(DeviceRuntime, VirtualCallsGoThroughVtablesOfFunctionAddresses) {
  RuntimeHarness h(1 << 20);
  const int threads = 64;
  std::vector<int> kind(threads);
  for (int t = 0; t < threads; ++t) kind[t] = (t / 3) % 2;
  const uint64_t dkind = h.harness.upload(kind), out = h.harness.upload(std::vector<int>(threads));
  LaunchResult r = h.harness.launch("virtual_calls", Dim3(1), Dim3(threads), 0, dkind, out);
  ASSERT_TRUE(r.ok()) << r.message;
  auto o = h.harness.download<int>(out, threads);
  for (int t = 0; t < threads; ++t) EXPECT_EQ(o[t], kind[t] ? t * t : t * 3) << t;
  EXPECT_EQ(h.runtime.heap_.live_bytes(), 0u);  // every object deleted
}

}  // namespace
}  // namespace gpuvp::ptx
