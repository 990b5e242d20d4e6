#include "ptx_device.h"

#include <deque>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "gpuvp_workload_paths.h"
#include "models/gpu/ptx/device_heap.h"
#include "models/gpu/ptx/device_runtime.h"

namespace gpuvp::conformance {

using workloads::DeviceError;
using workloads::DevicePtr;

namespace {

// A kernel stuck in a loop fails the test instead of hanging CI; real workloads stay far below.
constexpr std::uint64_t kWarpInstructionLimit = 2'000'000'000ULL;

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw DeviceError("cannot open " + path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

QueuedDeviceRuntime::QueuedDeviceRuntime(ptx::DeviceMemory& memory) : memory_(memory) {
  constexpr uint64_t kHeapBytes = uint64_t{8} << 20;  // CUDA's default cudaLimitMallocHeapSize
  heap_.reset(memory.allocate(kHeapBytes, 4096), kHeapBytes);
}

uint32_t QueuedDeviceRuntime::launch(ptx::DeviceLaunch launch) {
  if (launch.parameter_buffer != 0) memory_.release(launch.parameter_buffer);
  if (depth_ + 1 > 24) return ptx::kCudaErrorLaunchMaxDepthExceeded;
  children.push_back({std::move(launch), depth_ + 1});
  return ptx::kCudaSuccess;
}

void QueuedDeviceRuntime::copy(const ptx::DeviceLaunch& copy) {
  std::vector<std::uint8_t> bytes(copy.copy_bytes);
  if (!memory_.read(copy.copy_source, bytes.data(), bytes.size()) ||
      !memory_.write(copy.copy_destination, bytes.data(), bytes.size())) {
    throw DeviceError("device-side cudaMemcpyAsync: illegal address");
  }
}

std::string workload_ptx_path(std::string_view workload_name) {
  return std::string(workloads::kWorkloadPtxDir) + "/" + std::string(workload_name) + ".ptx";
}

PtxDevice::PtxDevice(const std::string& ptx_path) {
  try {
    module_ = std::make_unique<ptx::LoadedModule>(ptx::Module::parse(read_file(ptx_path), ptx_path), memory_);
  } catch (const ptx::ParseError& error) {
    throw DeviceError(error.what());
  }
  runtime_ = std::make_unique<QueuedDeviceRuntime>(memory_);
  ptx::ExecutorOptions options;
  options.device_runtime = runtime_.get();
  options.printf_sink = [this](std::string_view text) { print(text); };
  options.instruction_limit = kWarpInstructionLimit;
  executor_ = std::make_unique<ptx::Executor>(memory_, options);
}

PtxDevice::~PtxDevice() = default;

DevicePtr PtxDevice::malloc(std::size_t bytes) { return memory_.allocate(bytes); }

void PtxDevice::free(DevicePtr ptr) { memory_.release(ptr); }

void PtxDevice::copy_to_device(DevicePtr dst, const void* src, std::size_t bytes) {
  try {
    memory_.copy_to_device(dst, src, bytes);
  } catch (const ptx::IllegalHostAccess& error) {
    throw DeviceError(error.what());
  }
}

void PtxDevice::copy_to_host(void* dst, DevicePtr src, std::size_t bytes) {
  try {
    memory_.copy_from_device(dst, src, bytes);
  } catch (const ptx::IllegalHostAccess& error) {
    throw DeviceError(error.what());
  }
}

void PtxDevice::memset(DevicePtr dst, int value, std::size_t bytes) {
  try {
    memory_.fill(dst, static_cast<std::uint8_t>(value), bytes);
  } catch (const ptx::IllegalHostAccess& error) {
    throw DeviceError(error.what());
  }
}

void PtxDevice::launch(const std::string& kernel_name, workloads::Dim3 grid, workloads::Dim3 block,
                       std::uint32_t dynamic_shared_bytes, const workloads::KernelArgs& args) {
  const ptx::Kernel* kernel = module_->module().find_kernel(kernel_name);
  if (kernel == nullptr) throw DeviceError("no kernel " + kernel_name + " in " + module_->module().file_name());
  std::vector<std::uint8_t> params;
  try {
    ptx::ParamPacker packer(*kernel);
    for (const workloads::KernelArg& arg : args.list()) packer.add_bytes(arg.data(), arg.size());
    params = packer.finish();
  } catch (const std::invalid_argument& error) {
    throw DeviceError("arguments of " + kernel_name + ": " + error.what());
  }
  const ptx::LaunchConfig config{ptx::Dim3(grid.x, grid.y, grid.z), ptx::Dim3(block.x, block.y, block.z),
                                 dynamic_shared_bytes};
  runtime_->depth_ = 0;
  ptx::LaunchResult result = executor_->launch(*module_, *kernel, config, params);
  ++launches_;
  thread_instructions_ += result.thread_instructions;
  // Child grids (dynamic parallelism), in launch order, after their parent, as the platform runs them.
  while (result.ok() && !runtime_->children.empty()) {
    QueuedDeviceRuntime::Child child = std::move(runtime_->children.front());
    runtime_->children.pop_front();
    runtime_->depth_ = child.depth;
    const ptx::DeviceLaunch& c = child.launch;
    if (c.kernel == nullptr) {  // a device-side cudaMemcpyAsync
      runtime_->copy(c);
      continue;
    }
    result = executor_->launch(*c.module, *c.kernel, c.config, c.params);
    ++launches_;
    thread_instructions_ += result.thread_instructions;
  }
  runtime_->children.clear();
  if (!result.ok()) throw DeviceError("launch of " + kernel_name + " failed: " + result.message);
}

void PtxDevice::begin_output_capture() {
  capturing_ = true;
  captured_.clear();
}

std::string PtxDevice::end_output_capture() {
  capturing_ = false;
  return std::move(captured_);
}

void PtxDevice::print(std::string_view text) {
  if (capturing_) {
    captured_.append(text);
  } else {
    std::cout << text;
  }
}

}  // namespace gpuvp::conformance
