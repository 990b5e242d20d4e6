// Memory of the driver API: allocations, copies and fills through the runtime core.
#include <cstring>
#include <vector>

#include "sw/cuda_driver_api/api.h"

using gpuvp::cuda_driver::device_pointer;
using gpuvp::cuda_driver::Runtime;
using gpuvp::cuda_driver::stream_handle;
using gpuvp::cuda_driver::to_result;
using gpuvp::cuda_driver::with_context;

namespace {

CUresult copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, CUstream stream, bool async) {
  return with_context([&](Runtime& runtime) {
    return to_result(runtime.memcpy(dst, src, bytes, kind, stream_handle(stream), async));
  });
}

// cuMemsetD8/16/32: `count` elements of `element_bytes` each, set to `value`. A value whose bytes
// are all alike is a device memset; any other pattern is written by a copy from the host.
CUresult fill(CUdeviceptr dst, uint32_t value, size_t element_bytes, size_t count, CUstream stream, bool async) {
  return with_context([&](Runtime& runtime) {
    uint8_t bytes[4];
    std::memcpy(bytes, &value, sizeof bytes);
    bool uniform = true;
    for (size_t i = 1; i < element_bytes; ++i) uniform = uniform && bytes[i] == bytes[0];
    if (uniform) {
      return to_result(runtime.memset(device_pointer(dst), bytes[0], count * element_bytes, stream_handle(stream), async));
    }
    std::vector<uint8_t> pattern(count * element_bytes);
    for (size_t i = 0; i < count; ++i) std::memcpy(pattern.data() + i * element_bytes, bytes, element_bytes);
    // Copies from pageable memory are staged before the call returns, so `pattern` may go.
    return to_result(runtime.memcpy(device_pointer(dst), pattern.data(), pattern.size(), cudaMemcpyHostToDevice,
                                    stream_handle(stream), async));
  });
}

}  // namespace

GPUVP_CU_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  return with_context([&](Runtime& runtime) {
    if (pointer == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    void* allocated = nullptr;
    if (const cudaError_t error = runtime.malloc_device(&allocated, bytes); error != cudaSuccess) return to_result(error);
    *pointer = reinterpret_cast<CUdeviceptr>(allocated);
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* pointer, size_t bytes, unsigned int flags) {
  return with_context([&](Runtime& runtime) {
    if (pointer == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
    void* allocated = nullptr;
    if (const cudaError_t error = runtime.malloc_managed(&allocated, bytes); error != cudaSuccess) {
      return to_result(error);
    }
    *pointer = reinterpret_cast<CUdeviceptr>(allocated);
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.free_device(device_pointer(pointer))); });
}

GPUVP_CU_EXPORT CUresult cuMemAllocHost_v2(void** pointer, size_t bytes) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.malloc_host(pointer, bytes, 0)); });
}

// CU_MEMHOSTALLOC_PORTABLE/DEVICEMAP/WRITECOMBINED are cudaHostAlloc's flags, bit for bit.
GPUVP_CU_EXPORT CUresult cuMemHostAlloc(void** pointer, size_t bytes, unsigned int flags) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.malloc_host(pointer, bytes, flags)); });
}

GPUVP_CU_EXPORT CUresult cuMemFreeHost(void* pointer) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.free_host(pointer)); });
}

GPUVP_CU_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.mem_info(free_bytes, total_bytes)); });
}

GPUVP_CU_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) {
  return copy(device_pointer(dst), src, bytes, cudaMemcpyHostToDevice, nullptr, false);
}

GPUVP_CU_EXPORT CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) {
  return copy(dst, device_pointer(src), bytes, cudaMemcpyDeviceToHost, nullptr, false);
}

GPUVP_CU_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return copy(device_pointer(dst), device_pointer(src), bytes, cudaMemcpyDeviceToDevice, nullptr, false);
}

GPUVP_CU_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return copy(device_pointer(dst), device_pointer(src), bytes, cudaMemcpyDefault, nullptr, false);
}

GPUVP_CU_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  return copy(device_pointer(dst), src, bytes, cudaMemcpyHostToDevice, stream, true);
}

GPUVP_CU_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return copy(dst, device_pointer(src), bytes, cudaMemcpyDeviceToHost, stream, true);
}

GPUVP_CU_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return copy(device_pointer(dst), device_pointer(src), bytes, cudaMemcpyDeviceToDevice, stream, true);
}

GPUVP_CU_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return copy(device_pointer(dst), device_pointer(src), bytes, cudaMemcpyDefault, stream, true);
}

GPUVP_CU_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) {
  return fill(dst, value, 1, count, nullptr, false);
}

GPUVP_CU_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count) {
  return fill(dst, value, 2, count, nullptr, false);
}

GPUVP_CU_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count) {
  return fill(dst, value, 4, count, nullptr, false);
}

GPUVP_CU_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
  return fill(dst, value, 1, count, stream, true);
}

GPUVP_CU_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream) {
  return fill(dst, value, 2, count, stream, true);
}

GPUVP_CU_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
  return fill(dst, value, 4, count, stream, true);
}
