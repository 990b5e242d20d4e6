// Memory: device, pinned host, managed, copies, sets, symbols.
#include <cstring>

#include "sw/cudart/api.h"

using gpuvp::cudart::Runtime;
using gpuvp::cudart::with_device;

GPUVP_EXPORT cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  return with_device([&](Runtime& runtime) { return runtime.malloc_device(ptr, bytes); });
}

GPUVP_EXPORT cudaError_t cudaFree(void* ptr) {
  return with_device([&](Runtime& runtime) { return runtime.free_device(ptr); });
}

GPUVP_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t bytes) {
  return with_device([&](Runtime& runtime) { return runtime.malloc_host(ptr, bytes); });
}

GPUVP_EXPORT cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned int) {
  return with_device([&](Runtime& runtime) { return runtime.malloc_host(ptr, bytes); });
}

GPUVP_EXPORT cudaError_t cudaFreeHost(void* ptr) {
  return with_device([&](Runtime& runtime) { return runtime.free_host(ptr); });
}

GPUVP_EXPORT cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int) {
  (void)device;
  (void)host;
  return gpuvp::cudart::not_supported("cudaHostGetDevicePointer");
}

GPUVP_EXPORT cudaError_t cudaMallocManaged(void** ptr, size_t bytes, unsigned int) {
  return with_device([&](Runtime& runtime) { return runtime.malloc_managed(ptr, bytes); });
}

GPUVP_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) { return runtime.memcpy(dst, src, bytes, kind, nullptr, false); });
}

GPUVP_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                                         cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.memcpy(dst, src, bytes, kind, stream, true); });
}

GPUVP_EXPORT cudaError_t cudaMemset(void* dst, int value, size_t bytes) {
  return with_device([&](Runtime& runtime) { return runtime.memset(dst, value, bytes, nullptr, false); });
}

GPUVP_EXPORT cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.memset(dst, value, bytes, stream, true); });
}

GPUVP_EXPORT cudaError_t cudaGetSymbolAddress(void** address, const void* symbol) {
  return with_device([&](Runtime& runtime) {
    if (address == nullptr) return cudaErrorInvalidValue;
    return runtime.symbol_address(address, nullptr, symbol);
  });
}

GPUVP_EXPORT cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  return with_device([&](Runtime& runtime) {
    if (size == nullptr) return cudaErrorInvalidValue;
    return runtime.symbol_address(nullptr, size, symbol);
  });
}

namespace {

cudaError_t symbol_copy(Runtime& runtime, const void* symbol, size_t bytes, size_t offset, void** device) {
  void* base = nullptr;
  size_t size = 0;
  if (const cudaError_t error = runtime.symbol_address(&base, &size, symbol); error != cudaSuccess) return error;
  if (offset > size || bytes > size - offset) return cudaErrorInvalidValue;
  *device = static_cast<char*>(base) + offset;
  return cudaSuccess;
}

}  // namespace

GPUVP_EXPORT cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t bytes, size_t offset,
                                            cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    void* device = nullptr;
    if (const cudaError_t e = symbol_copy(runtime, symbol, bytes, offset, &device); e != cudaSuccess) return e;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) {
      return cudaErrorInvalidMemcpyDirection;
    }
    return runtime.memcpy(device, src, bytes, kind, nullptr, false);
  });
}

GPUVP_EXPORT cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t bytes, size_t offset,
                                              cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) {
    void* device = nullptr;
    if (const cudaError_t e = symbol_copy(runtime, symbol, bytes, offset, &device); e != cudaSuccess) return e;
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) {
      return cudaErrorInvalidMemcpyDirection;
    }
    return runtime.memcpy(dst, device, bytes, kind, nullptr, false);
  });
}

GPUVP_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t bytes, size_t offset,
                                                 cudaMemcpyKind kind, cudaStream_t stream) {
  return with_device([&](Runtime& runtime) {
    void* device = nullptr;
    if (const cudaError_t e = symbol_copy(runtime, symbol, bytes, offset, &device); e != cudaSuccess) return e;
    return runtime.memcpy(device, src, bytes, kind, stream, true);
  });
}

GPUVP_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t bytes, size_t offset,
                                                   cudaMemcpyKind kind, cudaStream_t stream) {
  return with_device([&](Runtime& runtime) {
    void* device = nullptr;
    if (const cudaError_t e = symbol_copy(runtime, symbol, bytes, offset, &device); e != cudaSuccess) return e;
    return runtime.memcpy(dst, device, bytes, kind, stream, true);
  });
}

GPUVP_EXPORT cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t bytes, struct cudaMemLocation location,
                                              unsigned int flags, cudaStream_t stream) {
  (void)flags;
  return with_device([&](Runtime& runtime) {
    if (location.type != cudaMemLocationTypeDevice && location.type != cudaMemLocationTypeHost) {
      return cudaErrorInvalidValue;
    }
    if (location.type == cudaMemLocationTypeDevice && location.id != 0) return cudaErrorInvalidDevice;
    return runtime.prefetch(ptr, bytes, location.type == cudaMemLocationTypeDevice, stream);
  });
}

GPUVP_EXPORT cudaError_t cudaMemAdvise(const void* ptr, size_t bytes, enum cudaMemoryAdvise advice,
                                       struct cudaMemLocation location) {
  return with_device([&](Runtime& runtime) { return runtime.mem_advise(ptr, bytes, static_cast<int>(advice), location); });
}

GPUVP_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  return with_device([&](Runtime& runtime) { return runtime.pointer_attributes(attributes, ptr); });
}

GPUVP_EXPORT cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  return with_device([&](Runtime& runtime) { return runtime.mem_info(free_bytes, total_bytes); });
}
