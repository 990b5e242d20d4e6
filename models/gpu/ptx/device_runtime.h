// The device-side CUDA runtime as a kernel reaches it: the external functions nvcc's PTX calls
// for malloc/free/new/delete (`malloc`, `free`, `__nv_aligned_device_malloc`) and for dynamic
// parallelism with the CUDA 12+ device runtime (`__cudaCDP2GetParameterBufferV2`,
// `__cudaCDP2LaunchDeviceV2`, `__cudaCDP2StreamCreateWithFlags`, ...). The executor decodes the
// call's arguments and hands them to a DeviceRuntime (ExecutorOptions::device_runtime); the
// owner of the memory and of the launch queue (the command processor, a test) implements it.
// Calls are serial steps (InstructionInfo::serial): they run in a fixed order, so allocation
// addresses and child launch order are deterministic for any number of simulation threads.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "models/gpu/ptx/executor.h"

namespace gpuvp::ptx {

// The runtime functions a kernel may call (ir::Function::External maps onto these).
enum class DeviceCall : uint8_t {
  kMalloc,              // void* malloc(size_t)
  kAlignedMalloc,       // void* __nv_aligned_device_malloc(size_t size, size_t align)
  kFree,                // void free(void*)
  kGetParameterBuffer,  // void* cudaGetParameterBufferV2(void* func, dim3 grid, dim3 block, unsigned smem)
  kLaunchDevice,        // cudaError_t cudaLaunchDeviceV2(void* buffer, cudaStream_t stream)
  kStreamCreate,        // cudaError_t cudaStreamCreateWithFlags(cudaStream_t*, unsigned)
  kStreamDestroy,       // cudaError_t cudaStreamDestroy(cudaStream_t)
  kGetLastError,        // cudaError_t cudaGetLastError()
  kPeekAtLastError,     // cudaError_t cudaPeekAtLastError()
  kGetDevice,           // cudaError_t cudaGetDevice(int*)
  kCudaMalloc,          // cudaError_t cudaMalloc(void**, size_t): from the device heap, as in CUDA
  kCudaFree,            // cudaError_t cudaFree(void*)
  kMemcpyAsync,         // cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t, kind, stream)
  kGetErrorString,      // const char* cudaGetErrorString(cudaError_t)
};

// A child grid a thread asked for with cudaLaunchDeviceV2, or (kernel == nullptr) a copy it asked
// for with cudaMemcpyAsync: both are stream work that runs after the launching grid.
struct DeviceLaunch {
  const LoadedModule* module = nullptr;
  const Kernel* kernel = nullptr;
  uint64_t copy_destination = 0, copy_source = 0, copy_bytes = 0;  // a copy (kernel == nullptr)
  LaunchConfig config;
  std::vector<uint8_t> params;
  uint64_t stream = 0;  // the device stream handle (0: NULL stream, 3: tail launch, 4: fire-and-forget)
  Dim3 parent_cta;      // the launching thread's CTA
  uint64_t parameter_buffer = 0;  // where the parent wrote the arguments (parameter_buffer())
};

// CUDA error codes the device runtime answers with (cudaError_t numbering).
inline constexpr uint32_t kCudaSuccess = 0;
inline constexpr uint32_t kCudaErrorInvalidValue = 1;
inline constexpr uint32_t kCudaErrorMemoryAllocation = 2;
inline constexpr uint32_t kCudaErrorInvalidConfiguration = 9;
inline constexpr uint32_t kCudaErrorInvalidDeviceFunction = 98;
inline constexpr uint32_t kCudaErrorLaunchMaxDepthExceeded = 65;
inline constexpr uint32_t kCudaErrorLaunchPendingCountExceeded = 69;

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  // malloc: a 16-byte aligned (or `alignment`-aligned) block of the device heap, 0 when the heap
  // cannot satisfy the request.
  virtual uint64_t malloc(uint64_t bytes, uint64_t alignment) = 0;
  // free: false when `address` is neither 0 nor a live block (the caller faults).
  virtual bool free(uint64_t address) = 0;
  // A parameter buffer for a child launch of `bytes` bytes in device memory (0: none left).
  virtual uint64_t parameter_buffer(uint64_t bytes) = 0;
  // Queues a child grid or a copy; returns a cudaError_t code (0: queued).
  virtual uint32_t launch(DeviceLaunch launch) = 0;
  // Nesting depth of the grid making the calls (0: launched by the host).
  virtual uint32_t depth() const = 0;
  // Core cycles the calling warp is held for a call (the timing model's cost of the call;
  // 0: none). The owner documents how it was chosen.
  virtual uint32_t call_cycles(DeviceCall call) const = 0;
};

}  // namespace gpuvp::ptx
