// Memory: device, pinned host, managed, copies, sets, symbols.
#include <cstring>
#include <functional>

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

GPUVP_EXPORT cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned int flags) {
  return with_device([&](Runtime& runtime) { return runtime.malloc_host(ptr, bytes, flags); });
}

GPUVP_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t bytes, unsigned int flags) {
  return with_device([&](Runtime& runtime) { return runtime.host_register(ptr, bytes, flags); });
}

GPUVP_EXPORT cudaError_t cudaHostUnregister(void* ptr) {
  return with_device([&](Runtime& runtime) { return runtime.host_unregister(ptr); });
}

GPUVP_EXPORT cudaError_t cudaHostGetFlags(unsigned int* flags, void* ptr) {
  return with_device([&](Runtime& runtime) { return runtime.host_flags(flags, ptr); });
}

GPUVP_EXPORT cudaError_t cudaFreeHost(void* ptr) {
  return with_device([&](Runtime& runtime) { return runtime.free_host(ptr); });
}

GPUVP_EXPORT cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int flags) {
  return with_device([&](Runtime& runtime) { return runtime.host_device_pointer(device, host, flags); });
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

GPUVP_EXPORT cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  return with_device([&](Runtime& runtime) { return runtime.memcpy(dst, src, bytes, kind, cudaStreamPerThread, false); });
}

GPUVP_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                                              cudaStream_t stream) {
  return cudaMemcpyAsync(dst, src, bytes, kind, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaMemset_ptds(void* dst, int value, size_t bytes) {
  return with_device([&](Runtime& runtime) { return runtime.memset(dst, value, bytes, cudaStreamPerThread, false); });
}

GPUVP_EXPORT cudaError_t cudaMemsetAsync_ptsz(void* dst, int value, size_t bytes, cudaStream_t stream) {
  return cudaMemsetAsync(dst, value, bytes, Runtime::per_thread(stream));
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

namespace {

cudaError_t copy_to_symbol(const void* symbol, const void* src, size_t bytes, size_t offset, cudaMemcpyKind kind,
                           cudaStream_t stream, bool async) {
  return with_device([&](Runtime& runtime) {
    void* device = nullptr;
    if (const cudaError_t e = symbol_copy(runtime, symbol, bytes, offset, &device); e != cudaSuccess) return e;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) {
      return cudaErrorInvalidMemcpyDirection;
    }
    return runtime.memcpy(device, src, bytes, kind, stream, async);
  });
}

cudaError_t copy_from_symbol(void* dst, const void* symbol, size_t bytes, size_t offset, cudaMemcpyKind kind,
                             cudaStream_t stream, bool async) {
  return with_device([&](Runtime& runtime) {
    void* device = nullptr;
    if (const cudaError_t e = symbol_copy(runtime, symbol, bytes, offset, &device); e != cudaSuccess) return e;
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) {
      return cudaErrorInvalidMemcpyDirection;
    }
    return runtime.memcpy(dst, device, bytes, kind, stream, async);
  });
}

}  // namespace

GPUVP_EXPORT cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t bytes, size_t offset,
                                            cudaMemcpyKind kind) {
  return copy_to_symbol(symbol, src, bytes, offset, kind, nullptr, false);
}

GPUVP_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t bytes, size_t offset,
                                                 cudaMemcpyKind kind) {
  return copy_to_symbol(symbol, src, bytes, offset, kind, cudaStreamPerThread, false);
}

GPUVP_EXPORT cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t bytes, size_t offset,
                                              cudaMemcpyKind kind) {
  return copy_from_symbol(dst, symbol, bytes, offset, kind, nullptr, false);
}

GPUVP_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t bytes, size_t offset,
                                                   cudaMemcpyKind kind) {
  return copy_from_symbol(dst, symbol, bytes, offset, kind, cudaStreamPerThread, false);
}

GPUVP_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t bytes, size_t offset,
                                                 cudaMemcpyKind kind, cudaStream_t stream) {
  return copy_to_symbol(symbol, src, bytes, offset, kind, stream, true);
}

GPUVP_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t bytes, size_t offset,
                                                      cudaMemcpyKind kind, cudaStream_t stream) {
  return copy_to_symbol(symbol, src, bytes, offset, kind, Runtime::per_thread(stream), true);
}

GPUVP_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t bytes, size_t offset,
                                                   cudaMemcpyKind kind, cudaStream_t stream) {
  return copy_from_symbol(dst, symbol, bytes, offset, kind, stream, true);
}

GPUVP_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t bytes, size_t offset,
                                                        cudaMemcpyKind kind, cudaStream_t stream) {
  return copy_from_symbol(dst, symbol, bytes, offset, kind, Runtime::per_thread(stream), true);
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

GPUVP_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void* ptr, size_t bytes, struct cudaMemLocation location,
                                                   unsigned int flags, cudaStream_t stream) {
  return cudaMemPrefetchAsync(ptr, bytes, location, flags, Runtime::per_thread(stream));
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

// ---- Stream-ordered allocation and memory pools.

namespace {

cudaError_t with_pool(cudaMemPool_t handle, const std::function<cudaError_t(Runtime&, gpuvp::cudart::MemPool&)>& body) {
  return with_device([&](Runtime& runtime) {
    gpuvp::cudart::MemPool* pool = runtime.pool_of(handle);
    if (pool == nullptr) return cudaErrorInvalidValue;
    return body(runtime, *pool);
  });
}

}  // namespace

GPUVP_EXPORT cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.malloc_async(ptr, bytes, *runtime.current_pool(), stream); });
}

GPUVP_EXPORT cudaError_t cudaMallocAsync_ptsz(void** ptr, size_t bytes, cudaStream_t stream) {
  return cudaMallocAsync(ptr, bytes, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t bytes, cudaMemPool_t pool, cudaStream_t stream) {
  return with_pool(pool, [&](Runtime& runtime, gpuvp::cudart::MemPool& p) {
    return runtime.malloc_async(ptr, bytes, p, stream);
  });
}

GPUVP_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t bytes, cudaMemPool_t pool,
                                                      cudaStream_t stream) {
  return cudaMallocFromPoolAsync(ptr, bytes, pool, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.free_async(ptr, stream); });
}

GPUVP_EXPORT cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream) {
  return cudaFreeAsync(ptr, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  return with_device([&](Runtime& runtime) { return runtime.pool_create(pool, props); });
}

GPUVP_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  return with_device([&](Runtime& runtime) { return runtime.pool_destroy(pool); });
}

GPUVP_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep_bytes) {
  return with_pool(pool, [&](Runtime& runtime, gpuvp::cudart::MemPool& p) { return runtime.pool_trim(p, keep_bytes); });
}

GPUVP_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  return with_pool(pool, [&](Runtime& runtime, gpuvp::cudart::MemPool& p) {
    return runtime.pool_attribute(p, attr, value, true);
  });
}

GPUVP_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  return with_pool(pool, [&](Runtime& runtime, gpuvp::cudart::MemPool& p) {
    return runtime.pool_attribute(p, attr, value, false);
  });
}

// The one device reads and writes every pool's memory.
GPUVP_EXPORT cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool,
                                              cudaMemLocation* location) {
  return with_pool(pool, [&](Runtime&, gpuvp::cudart::MemPool&) {
    if (flags == nullptr || location == nullptr) return cudaErrorInvalidValue;
    if (location->type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
    if (location->id != 0) return cudaErrorInvalidDevice;
    *flags = cudaMemAccessFlagsProtReadWrite;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descs, size_t count) {
  return with_pool(pool, [&](Runtime&, gpuvp::cudart::MemPool&) {
    if (descs == nullptr && count != 0) return cudaErrorInvalidValue;
    for (size_t i = 0; i < count; ++i) {
      if (descs[i].location.type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
      if (descs[i].location.id != 0) return cudaErrorInvalidDevice;
      if (descs[i].flags != cudaMemAccessFlagsProtReadWrite) return cudaErrorInvalidValue;  // the owner's access
    }
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  return with_device([&](Runtime& runtime) {
    if (pool == nullptr) return cudaErrorInvalidValue;
    if (device != 0) return cudaErrorInvalidDevice;
    *pool = reinterpret_cast<cudaMemPool_t>(runtime.default_pool());
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  return with_device([&](Runtime& runtime) {
    if (pool == nullptr) return cudaErrorInvalidValue;
    if (device != 0) return cudaErrorInvalidDevice;
    *pool = reinterpret_cast<cudaMemPool_t>(runtime.current_pool());
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  return with_device([&](Runtime& runtime) {
    if (device != 0) return cudaErrorInvalidDevice;
    return runtime.set_current_pool(pool);
  });
}

// The pools of a memory location (CUDA 13): device 0's pinned device memory only.
namespace {

cudaError_t device_location(const cudaMemLocation* location, cudaMemAllocationType type) {
  if (location == nullptr || type != cudaMemAllocationTypePinned) return cudaErrorInvalidValue;
  if (location->type == cudaMemLocationTypeHost || location->type == cudaMemLocationTypeHostNuma ||
      location->type == cudaMemLocationTypeHostNumaCurrent) {
    return cudaErrorNotSupported;  // host memory pools
  }
  if (location->type != cudaMemLocationTypeDevice) return cudaErrorInvalidValue;
  return location->id == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

}  // namespace

GPUVP_EXPORT cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t* pool, cudaMemLocation* location,
                                                  cudaMemAllocationType type) {
  return with_device([&](Runtime& runtime) {
    if (pool == nullptr) return cudaErrorInvalidValue;
    if (const cudaError_t e = device_location(location, type); e != cudaSuccess) return e;
    *pool = reinterpret_cast<cudaMemPool_t>(runtime.default_pool());
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaMemGetMemPool(cudaMemPool_t* pool, cudaMemLocation* location, cudaMemAllocationType type) {
  return with_device([&](Runtime& runtime) {
    if (pool == nullptr) return cudaErrorInvalidValue;
    if (const cudaError_t e = device_location(location, type); e != cudaSuccess) return e;
    *pool = reinterpret_cast<cudaMemPool_t>(runtime.current_pool());
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaMemSetMemPool(cudaMemLocation* location, cudaMemAllocationType type, cudaMemPool_t pool) {
  return with_device([&](Runtime& runtime) {
    if (const cudaError_t e = device_location(location, type); e != cudaSuccess) return e;
    return runtime.set_current_pool(pool);
  });
}

GPUVP_EXPORT cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* ptr, size_t bytes, unsigned int flags) {
  return with_device([&](Runtime& runtime) { return runtime.attach_memory(stream, ptr, bytes, flags); });
}

GPUVP_EXPORT cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void* ptr, size_t bytes,
                                                       unsigned int flags) {
  return cudaStreamAttachMemAsync(Runtime::per_thread(stream), ptr, bytes, flags);
}
