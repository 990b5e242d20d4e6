// Device management, versions and errors.
#include <cstdio>
#include <cstring>

#include "sw/cudart/api.h"

using gpuvp::cudart::Runtime;
using gpuvp::cudart::with_device;
using gpuvp::cudart::with_runtime;

namespace {
constexpr int kRuntimeVersion = 13000;  // CUDART_VERSION of the headers programs are built with
}

GPUVP_EXPORT const char* cudaGetErrorName(cudaError_t error) { return Runtime::error_name(error); }

GPUVP_EXPORT const char* cudaGetErrorString(cudaError_t error) { return Runtime::error_text(error); }

GPUVP_EXPORT cudaError_t cudaGetLastError(void) {
  if (gpuvp::cudart::CallbackThread::on_callback_thread()) return cudaErrorNotPermitted;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  return runtime.take_last_error();
}

GPUVP_EXPORT cudaError_t cudaPeekAtLastError(void) {
  if (gpuvp::cudart::CallbackThread::on_callback_thread()) return cudaErrorNotPermitted;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  return runtime.peek_last_error();
}

GPUVP_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  if (count == nullptr) return runtime.record(cudaErrorInvalidValue);
  const cudaError_t error = runtime.ensure_device();
  *count = error == cudaSuccess ? 1 : 0;
  return runtime.record(error);
}

GPUVP_EXPORT cudaError_t cudaGetDevice(int* device) {
  return with_runtime([&](Runtime&) {
    if (device == nullptr) return cudaErrorInvalidValue;
    *device = 0;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaSetDevice(int device) {
  return with_device([&](Runtime&) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; });
}

GPUVP_EXPORT cudaError_t cudaInitDevice(int device, unsigned int, unsigned int) { return cudaSetDevice(device); }

GPUVP_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int) { return with_device([](Runtime&) { return cudaSuccess; }); }

GPUVP_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  return with_device([&](Runtime&) {
    if (flags == nullptr) return cudaErrorInvalidValue;
    *flags = 0;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp*) {
  return with_device([&](Runtime&) {
    if (device == nullptr) return cudaErrorInvalidValue;
    *device = 0;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  return with_device([&](Runtime& runtime) {
    if (device != 0) return cudaErrorInvalidDevice;
    return runtime.device_properties(prop);
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  return with_device([&](Runtime& runtime) {
    if (device != 0) return cudaErrorInvalidDevice;
    return runtime.device_attribute(value, attr);
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  return with_device([](Runtime& runtime) { return runtime.synchronize(); });
}

GPUVP_EXPORT cudaError_t cudaDeviceReset(void) {
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  return runtime.reset();
}

GPUVP_EXPORT cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }

GPUVP_EXPORT cudaError_t cudaDriverGetVersion(int* version) {
  return with_runtime([&](Runtime&) {
    if (version == nullptr) return cudaErrorInvalidValue;
    *version = kRuntimeVersion;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaRuntimeGetVersion(int* version) {
  return with_runtime([&](Runtime&) {
    if (version == nullptr) return cudaErrorInvalidValue;
    *version = kRuntimeVersion;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  return with_device([&](Runtime& runtime) { return runtime.get_limit(value, limit); });
}

GPUVP_EXPORT cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  return with_device([&](Runtime& runtime) { return runtime.set_limit(limit, value); });
}

GPUVP_EXPORT cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) {
  return with_device([](Runtime&) { return cudaSuccess; });
}

GPUVP_EXPORT cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
  return with_device([&](Runtime&) {
    if (config == nullptr) return cudaErrorInvalidValue;
    *config = cudaFuncCachePreferNone;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  return with_device([&](Runtime&) {
    if (least != nullptr) *least = 0;
    if (greatest != nullptr) *greatest = 0;
    return cudaSuccess;
  });
}

// No profiler is attached to the model: starting and stopping profiling succeed and do nothing
// (gpuvp run --trace records the whole run).
GPUVP_EXPORT cudaError_t cudaProfilerStart(void) { return with_runtime([](Runtime&) { return cudaSuccess; }); }

GPUVP_EXPORT cudaError_t cudaProfilerStop(void) { return with_runtime([](Runtime&) { return cudaSuccess; }); }

GPUVP_EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                enum cudaChannelFormatKind f) {
  cudaChannelFormatDesc desc;
  desc.x = x;
  desc.y = y;
  desc.z = z;
  desc.w = w;
  desc.f = f;
  return desc;
}

// The model has no PCI identity: its address is all zeros, as cudaDevAttrPciBusId/DeviceId/DomainId say.
constexpr const char* kPciBusId = "0000:00:00.0";

GPUVP_EXPORT cudaError_t cudaDeviceGetPCIBusId(char* bus_id, int length, int device) {
  return with_device([&](Runtime&) {
    if (bus_id == nullptr || length <= 0) return cudaErrorInvalidValue;
    if (device != 0) return cudaErrorInvalidDevice;
    std::snprintf(bus_id, static_cast<size_t>(length), "%s", kPciBusId);
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* bus_id) {
  return with_device([&](Runtime&) {
    if (device == nullptr || bus_id == nullptr) return cudaErrorInvalidValue;
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    const bool full = std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &slot, &function) == 4;
    const bool short_form = !full && std::sscanf(bus_id, "%x:%x.%x", &bus, &slot, &function) == 3;
    if (!full && !short_form) return cudaErrorInvalidValue;
    if (domain != 0 || bus != 0 || slot != 0 || function != 0) return cudaErrorInvalidDevice;
    *device = 0;
    return cudaSuccess;
  });
}

// One device: there is no peer to access.
GPUVP_EXPORT cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer_device) {
  return with_device([&](Runtime&) {
    if (can_access == nullptr) return cudaErrorInvalidValue;
    if (device != 0 || peer_device != 0) return cudaErrorInvalidDevice;
    *can_access = 0;
    return cudaSuccess;
  });
}
