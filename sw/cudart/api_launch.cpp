// Kernel launch, function attributes, occupancy.
#include "sw/cudart/api.h"

using gpuvp::cudart::Runtime;
using gpuvp::cudart::with_device;

GPUVP_EXPORT cudaError_t cudaLaunchKernel(const void* function, dim3 grid, dim3 block, void** args, size_t shared,
                                          cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.launch(function, grid, block, args, shared, stream); });
}

GPUVP_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void* function, dim3 grid, dim3 block, void** args, size_t shared,
                                               cudaStream_t stream) {
  return cudaLaunchKernel(function, grid, block, args, shared, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* function) {
  return with_device([&](Runtime& runtime) { return runtime.function_attributes(attributes, function); });
}

GPUVP_EXPORT cudaError_t cudaFuncSetCacheConfig(const void* function, cudaFuncCache) {
  return with_device([&](Runtime& runtime) {
    return runtime.function_of(function) != nullptr ? cudaSuccess : cudaErrorInvalidDeviceFunction;
  });
}


GPUVP_EXPORT cudaError_t cudaFuncSetAttribute(const void* function, cudaFuncAttribute attribute, int value) {
  return with_device([&](Runtime& runtime) {
    gpuvp::cudart::Function* f = runtime.function_of(function);
    if (f == nullptr) return cudaErrorInvalidDeviceFunction;
    if (attribute == cudaFuncAttributeMaxDynamicSharedMemorySize) {
      // Up to the opt-in limit: all of an SM's shared memory (the device checks static + dynamic).
      if (value < 0 || static_cast<uint64_t>(value) > runtime.info().shared_memory_per_sm) return cudaErrorInvalidValue;
      f->max_dynamic_shared = static_cast<uint32_t>(value);
    } else if (attribute == cudaFuncAttributePreferredSharedMemoryCarveout) {
      if (value < -1 || value > 100) return cudaErrorInvalidValue;
      f->shared_carveout = value;
    }
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* function,
                                                                        int block_size, size_t shared) {
  return with_device([&](Runtime& runtime) { return runtime.occupancy(blocks, function, block_size, shared); });
}

GPUVP_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* function,
                                                                                 int block_size, size_t shared,
                                                                                 unsigned int) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, function, block_size, shared);
}

GPUVP_EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* shared, const void* function, int blocks,
                                                                    int block_size) {
  (void)block_size;
  return with_device([&](Runtime& runtime) {
    if (shared == nullptr || blocks <= 0) return cudaErrorInvalidValue;
    if (runtime.function_of(function) == nullptr) return cudaErrorInvalidDeviceFunction;
    *shared = runtime.info().shared_memory_per_sm / static_cast<uint64_t>(blocks);
    if (*shared > runtime.info().shared_memory_per_block) *shared = runtime.info().shared_memory_per_block;
    return cudaSuccess;
  });
}
