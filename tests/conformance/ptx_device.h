// gpuvp::workloads::Device on the PTX functional model: the workloads' host code drives
// models/gpu/ptx directly, without runtime, driver or timing model.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "common/device_api.h"
#include "models/gpu/ptx/device_heap.h"
#include "models/gpu/ptx/device_runtime.h"
#include "models/gpu/ptx/executor.h"

namespace gpuvp::conformance {

// The device runtime as the platform serves it, for devices built on the PTX model directly:
// in-kernel malloc/free from CUDA's default 8 MiB heap; child grids (and device-side copies)
// queued for the caller to run after the grid that launched them, in launch order.
class QueuedDeviceRuntime final : public ptx::DeviceRuntime {
 public:
  struct Child {
    ptx::DeviceLaunch launch;
    uint32_t depth;
  };
  explicit QueuedDeviceRuntime(ptx::DeviceMemory& memory);
  uint64_t malloc(uint64_t bytes, uint64_t alignment) override { return heap_.allocate(bytes, alignment); }
  bool free(uint64_t address) override { return heap_.release(address); }
  uint64_t parameter_buffer(uint64_t bytes) override { return memory_.allocate(bytes, 256); }
  uint32_t launch(ptx::DeviceLaunch launch) override;
  uint32_t depth() const override { return depth_; }
  uint32_t call_cycles(ptx::DeviceCall) const override { return 0; }
  // Runs a queued device-side cudaMemcpyAsync (a child whose kernel is null).
  void copy(const ptx::DeviceLaunch& copy);

  std::deque<Child> children;
  uint32_t depth_ = 0;  // of the grid running now

 private:
  ptx::DeviceMemory& memory_;
  ptx::DeviceHeap heap_;
};

class PtxDevice final : public workloads::Device {
 public:
  // Parses the PTX file (throws workloads::DeviceError with the parser's file:line:col message).
  explicit PtxDevice(const std::string& ptx_path);
  ~PtxDevice() override;

  workloads::DevicePtr malloc(std::size_t bytes) override;
  void free(workloads::DevicePtr ptr) override;
  void copy_to_device(workloads::DevicePtr dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, workloads::DevicePtr src, std::size_t bytes) override;
  void memset(workloads::DevicePtr dst, int value, std::size_t bytes) override;
  // The functional model runs the grid to completion here; a kernel fault throws DeviceError.
  void launch(const std::string& kernel, workloads::Dim3 grid, workloads::Dim3 block,
              std::uint32_t dynamic_shared_bytes, const workloads::KernelArgs& args) override;
  void synchronize() override {}
  void begin_output_capture() override;
  std::string end_output_capture() override;

  // Totals over every launch so far (for the summary line of the runner).
  std::uint64_t thread_instructions() const { return thread_instructions_; }
  std::uint64_t launches() const { return launches_; }

 private:
  void print(std::string_view text);

  ptx::DeviceMemory memory_;
  std::unique_ptr<QueuedDeviceRuntime> runtime_;
  std::unique_ptr<ptx::LoadedModule> module_;
  std::unique_ptr<ptx::Executor> executor_;
  bool capturing_ = false;
  std::string captured_;
  std::uint64_t thread_instructions_ = 0;
  std::uint64_t launches_ = 0;
};

// Where the build put <name>.ptx.
std::string workload_ptx_path(std::string_view workload_name);

}  // namespace gpuvp::conformance
