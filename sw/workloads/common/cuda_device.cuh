// Device implemented on the CUDA runtime: what a workload's _main.cu uses so that it is an
// ordinary CUDA program (built with `nvcc -cudart shared`, run natively or under gpuvp).
#pragma once

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "common/device_api.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

// Kernel name -> host stub, listed in each _main.cu with GPUVP_CUDA_KERNEL(name).
struct CudaKernel {
  const char* name;
  const void* function;
};
#define GPUVP_CUDA_KERNEL(fn) ::gpuvp::workloads::CudaKernel{#fn, reinterpret_cast<const void*>(&(fn))}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(std::vector<CudaKernel> kernels) : kernels_(std::move(kernels)) {}

  DevicePtr malloc(std::size_t bytes) override {
    void* ptr = nullptr;
    check(cudaMalloc(&ptr, bytes), "cudaMalloc");
    return reinterpret_cast<DevicePtr>(ptr);
  }
  void free(DevicePtr ptr) override { check(cudaFree(to_pointer(ptr)), "cudaFree"); }
  void copy_to_device(DevicePtr dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpy(to_pointer(dst), src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  void copy_to_host(void* dst, DevicePtr src, std::size_t bytes) override {
    check(cudaMemcpy(dst, to_pointer(src), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  }
  void memset(DevicePtr dst, int value, std::size_t bytes) override {
    check(cudaMemset(to_pointer(dst), value, bytes), "cudaMemset");
  }
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, std::uint32_t dynamic_shared_bytes,
              const KernelArgs& args) override {
    const void* function = find(kernel);
    std::vector<void*> pointers;
    for (const KernelArg& arg : args.list()) pointers.push_back(const_cast<void*>(arg.data()));
    check(cudaLaunchKernel(function, dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z),
                           pointers.data(), dynamic_shared_bytes, nullptr),
          ("cudaLaunchKernel " + kernel).c_str());
  }
  void synchronize() override { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

  // CUDA flushes device printf to the process's stdout at synchronization, so capture by
  // pointing file descriptor 1 at a temporary file for the duration.
  void begin_output_capture() override {
    std::fflush(stdout);
    capture_file_ = std::tmpfile();
    saved_stdout_ = ::dup(STDOUT_FILENO);
    if (capture_file_ == nullptr || saved_stdout_ < 0 || ::dup2(::fileno(capture_file_), STDOUT_FILENO) < 0) {
      throw DeviceError("cannot redirect stdout to capture device printf");
    }
  }
  std::string end_output_capture() override {
    cudaError_t status = cudaDeviceSynchronize();
    std::fflush(stdout);
    ::dup2(saved_stdout_, STDOUT_FILENO);
    ::close(saved_stdout_);
    std::string captured;
    std::rewind(capture_file_);
    char chunk[4096];
    std::size_t n = 0;
    while ((n = std::fread(chunk, 1, sizeof chunk, capture_file_)) > 0) captured.append(chunk, n);
    std::fclose(capture_file_);
    capture_file_ = nullptr;
    check(status, "cudaDeviceSynchronize");
    return captured;
  }

 private:
  static void* to_pointer(DevicePtr ptr) { return reinterpret_cast<void*>(ptr); }
  static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
      throw DeviceError(std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
    }
  }
  const void* find(const std::string& name) const {
    for (const CudaKernel& kernel : kernels_) {
      if (name == kernel.name) return kernel.function;
    }
    throw DeviceError("no kernel named " + name + " in this program");
  }

  std::vector<CudaKernel> kernels_;
  std::FILE* capture_file_ = nullptr;
  int saved_stdout_ = -1;
};

// main() of every workload program: run on the CUDA device, print the one-line result,
// exit 0 on pass.
inline int cuda_workload_main(const std::string& name, WorkloadFunction run, std::vector<CudaKernel> kernels) {
  CudaDevice device(std::move(kernels));
  const WorkloadResult result = run_and_report(name, run, device, std::cout);
  return result.passed ? 0 : 1;
}

}  // namespace gpuvp::workloads
