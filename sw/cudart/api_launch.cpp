// Kernel launch, function attributes, occupancy.
#include "sw/cudart/api.h"

#include <cstdio>
#include <set>
#include <string>

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

GPUVP_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void* function, dim3 grid, dim3 block, void** args,
                                                     size_t shared, cudaStream_t stream) {
  gpuvp::cudart::LaunchOptions options;
  options.cooperative = true;
  return with_device(
      [&](Runtime& runtime) { return runtime.launch(function, grid, block, args, shared, stream, options); });
}

GPUVP_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* function, dim3 grid, dim3 block, void** args,
                                                          size_t shared, cudaStream_t stream) {
  return cudaLaunchCooperativeKernel(function, grid, block, args, shared, Runtime::per_thread(stream));
}

namespace {
// Says once per message on stderr why a launch attribute is refused (called under the runtime's lock).
cudaError_t refuse_attribute(cudaError_t error, const std::string& why) {
  static std::set<std::string> said;
  if (said.insert(why).second) std::fprintf(stderr, "gpuvp: cudaLaunchKernelEx: %s\n", why.c_str());
  return error;
}

// cudaLaunchKernelEx's attributes: what changes this launch, what is accepted without effect on
// the model, what the device cannot do (a clear error, said once on stderr).
cudaError_t launch_options(const cudaLaunchConfig_t& config, const gpuvp::device::DeviceInfo& device,
                           gpuvp::cudart::LaunchOptions& options) {
  if (config.numAttrs != 0 && config.attrs == nullptr) return cudaErrorInvalidValue;
  const std::string cc = std::to_string(device.compute_capability / 10) + "." + std::to_string(device.compute_capability % 10);
  for (unsigned i = 0; i < config.numAttrs; ++i) {
    const cudaLaunchAttribute& attribute = config.attrs[i];
    const cudaLaunchAttributeValue& value = attribute.val;
    switch (attribute.id) {
      case cudaLaunchAttributeIgnore: break;
      case cudaLaunchAttributeCooperative: options.cooperative = value.cooperative != 0; break;
      case cudaLaunchAttributePreferredSharedMemoryCarveout:
        if (value.sharedMemCarveout > 100 && value.sharedMemCarveout != static_cast<unsigned>(-1)) {
          return cudaErrorInvalidValue;
        }
        options.shared_carveout = value.sharedMemCarveout > 100 ? -1 : static_cast<int32_t>(value.sharedMemCarveout);
        break;
      // Hints the model has nothing to act on: stream order is kept as it is.
      case cudaLaunchAttributePriority:                        // streams run by the device's queue order
      case cudaLaunchAttributeAccessPolicyWindow:              // L2 persistence is not modelled
      case cudaLaunchAttributeProgrammaticStreamSerialization: // no early launch before 9.0: plain stream order
      case cudaLaunchAttributeMemSyncDomain:                   // 9.0 feature: one domain
      case cudaLaunchAttributeMemSyncDomainMap:
      case cudaLaunchAttributeNvlinkUtilCentricScheduling:     // one device, no NVLink
        break;
      case cudaLaunchAttributeClusterDimension:
      case cudaLaunchAttributeClusterSchedulingPolicyPreference:
      case cudaLaunchAttributePreferredClusterDimension:
        return refuse_attribute(cudaErrorNotSupported, "thread block clusters (launch attribute " +
                                                           std::to_string(attribute.id) +
                                                           ") need compute capability 9.0; the device is " + cc +
                                                           " and gpuvp does not model clusters");
      case cudaLaunchAttributeProgrammaticEvent:
      case cudaLaunchAttributeLaunchCompletionEvent:
        return refuse_attribute(cudaErrorNotSupported, "launch attribute " + std::to_string(attribute.id) +
                                                           " (an event triggered from inside the kernel) is not "
                                                           "implemented");
      case cudaLaunchAttributeSynchronizationPolicy:  // valid for streams only
      case cudaLaunchAttributeDeviceUpdatableKernelNode:  // graph nodes only
      default:
        return refuse_attribute(cudaErrorInvalidValue,
                                "launch attribute " + std::to_string(attribute.id) + " is not valid for a launch");
    }
  }
  return cudaSuccess;
}
}  // namespace

GPUVP_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* function, void** args) {
  return with_device([&](Runtime& runtime) {
    if (config == nullptr) return cudaErrorInvalidValue;
    gpuvp::cudart::LaunchOptions options;
    if (const cudaError_t e = launch_options(*config, runtime.info(), options); e != cudaSuccess) return e;
    return runtime.launch(function, config->gridDim, config->blockDim, args, config->dynamicSmemBytes, config->stream,
                          options);
  });
}

GPUVP_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* function, void** args) {
  if (config == nullptr) return cudaLaunchKernelExC(config, function, args);
  cudaLaunchConfig_t own = *config;
  own.stream = Runtime::per_thread(config->stream);
  return cudaLaunchKernelExC(&own, function, args);
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
  return with_device(
      [&](Runtime& runtime) { return runtime.available_dynamic_shared(shared, function, blocks, block_size); });
}
