#include "models/gpu/command_processor/device_runtime_service.h"

#include <algorithm>
#include <utility>

namespace gpuvp::gpu {

DeviceRuntimeStats::DeviceRuntimeStats(stats::Registry& registry) {
  stats::Group& g = registry.group("gpu.device_runtime");
  mallocs = &g.counter("mallocs", "call",
                       "in-kernel malloc/new calls served (each held its warp gpu.device_malloc.latency: "
                       "a fixed cost, an approximation)");
  malloc_failures = &g.counter("malloc_failures", "call", "in-kernel mallocs answered NULL: the heap had no room");
  frees = &g.counter("frees", "call", "in-kernel free/delete calls of a live block");
  child_launches = &g.counter("child_launches", "kernel",
                              "grids launched from device code (dynamic parallelism); each run after the grid that "
                              "launched it, gpu.device_launch.latency later (an approximation)");
  child_launch_errors = &g.counter("child_launch_errors", "call",
                                   "device launches refused (nesting depth beyond 24, bad configuration)");
}

DeviceRuntimeService::~DeviceRuntimeService() = default;

uint64_t DeviceRuntimeService::malloc(uint64_t bytes, uint64_t alignment) {
  const uint64_t address = heap_.allocate(bytes, alignment);
  if (address != 0) {
    ++*stats_.mallocs;
  } else if (bytes != 0) {
    ++*stats_.malloc_failures;
  }
  return address;
}

bool DeviceRuntimeService::free(uint64_t address) {
  if (!heap_.release(address)) return false;
  ++*stats_.frees;
  return true;
}

uint64_t DeviceRuntimeService::parameter_buffer(uint64_t bytes) {
  const uint64_t address = memory_.allocate(bytes, 256);
  parameter_buffers_.push_back(address);
  return address;
}

uint32_t DeviceRuntimeService::launch(ptx::DeviceLaunch launch) {
  // The buffer's bytes are in `launch.params` now: unmap it.
  if (const auto it = std::find(parameter_buffers_.begin(), parameter_buffers_.end(), launch.parameter_buffer);
      it != parameter_buffers_.end()) {
    memory_.release(*it);
    parameter_buffers_.erase(it);
  }
  if (launch.kernel == nullptr) {  // a copy: checked when it runs
    children_.push_back(Child{std::move(launch), depth_ + 1});
    return ptx::kCudaSuccess;
  }
  const ptx::LaunchConfig& c = launch.config;
  const uint64_t threads = c.block.count();
  if (depth_ + 1 > kMaxDeviceLaunchDepth) {
    ++*stats_.child_launch_errors;
    return ptx::kCudaErrorLaunchMaxDepthExceeded;
  }
  if (c.grid.count() == 0 || threads == 0 || threads > 1024 || c.block.z > 64 || c.grid.y > 65535 ||
      c.grid.z > 65535 || c.grid.x > 0x7fffffffu) {
    ++*stats_.child_launch_errors;
    return ptx::kCudaErrorInvalidConfiguration;
  }
  ++*stats_.child_launches;
  children_.push_back(Child{std::move(launch), depth_ + 1});
  return ptx::kCudaSuccess;
}

uint32_t DeviceRuntimeService::call_cycles(ptx::DeviceCall call) const {
  switch (call) {
    case ptx::DeviceCall::kMalloc:
    case ptx::DeviceCall::kAlignedMalloc:
    case ptx::DeviceCall::kFree:
    case ptx::DeviceCall::kCudaMalloc:
    case ptx::DeviceCall::kCudaFree:
      return static_cast<uint32_t>(std::min<uint64_t>(params_.device_malloc_cycles, UINT32_MAX));
    default:
      return 0;  // a launch's cost is the child's launch latency (gpu.device_launch.latency)
  }
}

DeviceRuntimeService::Child DeviceRuntimeService::take_child() {
  Child child = std::move(children_.front());
  children_.pop_front();
  return child;
}

void DeviceRuntimeService::drop_children() {
  children_.clear();
  for (uint64_t address : parameter_buffers_) memory_.release(address);
  parameter_buffers_.clear();
}

}  // namespace gpuvp::gpu
