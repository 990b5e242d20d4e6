// The device runtime of one context (channel): what a kernel's malloc/free and child launches
// reach (models/gpu/ptx/device_runtime.h). The heap is a range the host mapped and named with the
// DeviceHeap command (cudaLimitMallocHeapSize; libcudart does it before the first launch of a
// module that calls malloc), so the host sees what kernels store there through ordinary copies.
// Child launches queue here; the command processor runs them after the grid that launched them
// (see CommandProcessor::launch for the order).
//
// Statistics (group gpu.device_runtime): mallocs, malloc_failures (NULL: heap exhausted), frees,
// child_launches, child_launch_errors; each call costs a fixed time (the knobs
// gpu.device_malloc.latency, gpu.device_launch.latency: an approximation, no contention modelled).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "models/gpu/command_processor/command_processor_params.h"
#include "models/gpu/ptx/device_heap.h"
#include "models/gpu/ptx/device_runtime.h"
#include "models/gpu/ptx/memory.h"
#include "platform/stats/registry.h"

namespace gpuvp::gpu {

// CUDA's limit on the nesting depth of dynamic parallelism (the programming guide's 24 levels).
inline constexpr uint32_t kMaxDeviceLaunchDepth = 24;

struct DeviceRuntimeStats {
  stats::Counter* mallocs;
  stats::Counter* malloc_failures;
  stats::Counter* frees;
  stats::Counter* child_launches;
  stats::Counter* child_launch_errors;
  explicit DeviceRuntimeStats(stats::Registry& registry);
};

class DeviceRuntimeService final : public ptx::DeviceRuntime {
 public:
  struct Child {
    ptx::DeviceLaunch launch;
    uint32_t depth = 0;  // 1: launched by a grid the host launched
  };

  DeviceRuntimeService(ptx::DeviceMemory& memory, const CommandProcessorParams& params, DeviceRuntimeStats& stats)
      : memory_(memory), params_(params), stats_(stats) {}
  ~DeviceRuntimeService() override;

  ptx::DeviceHeap& heap() { return heap_; }

  uint64_t malloc(uint64_t bytes, uint64_t alignment) override;
  bool free(uint64_t address) override;
  uint64_t parameter_buffer(uint64_t bytes) override;
  uint32_t launch(ptx::DeviceLaunch launch) override;
  uint32_t depth() const override { return depth_; }
  uint32_t call_cycles(ptx::DeviceCall call) const override;

  // The grid about to run is at this nesting depth (0: launched by the host).
  void set_depth(uint32_t depth) { depth_ = depth; }
  bool has_children() const { return !children_.empty(); }
  Child take_child();
  // Forgets queued children and unmaps parameter buffers no launch consumed (after a fault).
  void drop_children();

 private:
  ptx::DeviceMemory& memory_;
  const CommandProcessorParams& params_;
  DeviceRuntimeStats& stats_;
  ptx::DeviceHeap heap_;
  std::deque<Child> children_;
  std::vector<uint64_t> parameter_buffers_;  // mapped, not yet consumed by a launch
  uint32_t depth_ = 0;
};

}  // namespace gpuvp::gpu
