// Initialisation, versions, errors, devices and contexts of the driver API.
#include <cstdio>
#include <cstring>

#include "sw/cuda_driver_api/api.h"

namespace gpuvp::cuda_driver {

DriverState& DriverState::instance() {
  static DriverState state;
  return state;
}

std::vector<Context*>& DriverState::stack() {
  thread_local std::vector<Context*> contexts;
  return contexts;
}

Context* DriverState::current() const {
  const std::vector<Context*>& contexts = stack();
  if (contexts.empty() || !is_context(contexts.back())) return nullptr;
  return contexts.back();
}

CUresult to_result(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return CUDA_SUCCESS;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration:  // cuLaunchKernel's answer to an impossible grid or block
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidHostPointer:
    case cudaErrorInvalidMemcpyDirection: return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorMemoryAllocation: return CUDA_ERROR_OUT_OF_MEMORY;
    case cudaErrorInitializationError: return CUDA_ERROR_NOT_INITIALIZED;
    case cudaErrorNoDevice: return CUDA_ERROR_NO_DEVICE;
    case cudaErrorInvalidDevice: return CUDA_ERROR_INVALID_DEVICE;
    case cudaErrorDevicesUnavailable: return CUDA_ERROR_DEVICE_UNAVAILABLE;
    case cudaErrorInvalidKernelImage: return CUDA_ERROR_INVALID_IMAGE;
    case cudaErrorNoKernelImageForDevice: return CUDA_ERROR_NO_BINARY_FOR_GPU;
    case cudaErrorInvalidPtx: return CUDA_ERROR_INVALID_PTX;
    case cudaErrorInvalidSymbol:
    case cudaErrorInvalidDeviceFunction: return CUDA_ERROR_NOT_FOUND;
    case cudaErrorInvalidResourceHandle: return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorNotReady: return CUDA_ERROR_NOT_READY;
    case cudaErrorIllegalAddress: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case cudaErrorLaunchOutOfResources: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    case cudaErrorLaunchTimeout: return CUDA_ERROR_LAUNCH_TIMEOUT;
    case cudaErrorAssert: return CUDA_ERROR_ASSERT;
    case cudaErrorHardwareStackError: return CUDA_ERROR_HARDWARE_STACK_ERROR;
    case cudaErrorIllegalInstruction: return CUDA_ERROR_ILLEGAL_INSTRUCTION;
    case cudaErrorMisalignedAddress: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case cudaErrorLaunchFailure: return CUDA_ERROR_LAUNCH_FAILED;
    case cudaErrorNotPermitted: return CUDA_ERROR_NOT_PERMITTED;
    case cudaErrorNotSupported: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_UNKNOWN;
  }
}

}  // namespace gpuvp::cuda_driver

using gpuvp::cuda_driver::Context;
using gpuvp::cuda_driver::DriverState;
using gpuvp::cuda_driver::Runtime;
using gpuvp::cuda_driver::to_result;
using gpuvp::cuda_driver::with_context;
using gpuvp::cuda_driver::with_driver;

namespace {

// The one device, by its ordinal.
bool is_device(CUdevice device) { return device == 0; }

Context* context_of(CUcontext context) { return reinterpret_cast<Context*>(context); }
CUcontext handle_of(Context* context) { return reinterpret_cast<CUcontext>(context); }

const char* error_name(CUresult error) {
  switch (error) {
#define GPUVP_CU_ERROR(name, text) \
  case name:                       \
    return #name;
#include "sw/cuda_driver_api/error_names.inc"
#undef GPUVP_CU_ERROR
    default:
      return nullptr;
  }
}

const char* error_text(CUresult error) {
  switch (error) {
#define GPUVP_CU_ERROR(name, text) \
  case name:                       \
    return text;
#include "sw/cuda_driver_api/error_names.inc"
#undef GPUVP_CU_ERROR
    default:
      return nullptr;
  }
}

}  // namespace

// ---- Initialisation, versions, errors.

GPUVP_CU_EXPORT CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  // Connects to the platform (GPUVP_SOCKET); a second cuInit answers as the first did.
  if (const cudaError_t error = runtime.ensure_device(); error != cudaSuccess) return to_result(error);
  DriverState::instance().initialized = true;
  return CUDA_SUCCESS;
}

GPUVP_CU_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = gpuvp::cuda_driver::kDriverVersion;
  return CUDA_SUCCESS;
}

GPUVP_CU_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *name = error_name(error);
  return *name != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

GPUVP_CU_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *text = error_text(error);
  return *text != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// ---- Devices.

GPUVP_CU_EXPORT CUresult cuDeviceGetCount(int* count) {
  return with_driver([&](Runtime&) {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  return with_driver([&](Runtime&) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!is_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  return with_driver([&](Runtime& runtime) {
    if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    const auto& d = runtime.info();
    std::snprintf(name, static_cast<std::size_t>(length), "%.*s", static_cast<int>(strnlen(d.name, sizeof d.name)),
                  d.name);
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice device) {
  return with_driver([&](Runtime& runtime) {
    if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    const cudaUUID_t id = runtime.device_uuid();
    std::memcpy(uuid->bytes, id.bytes, sizeof uuid->bytes);
    return CUDA_SUCCESS;
  });
}

#undef cuDeviceGetUuid  // cuda.h maps the name to the _v2 one; the older symbol has the same arguments
GPUVP_CU_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice device) { return cuDeviceGetUuid_v2(uuid, device); }

GPUVP_CU_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  return with_driver([&](Runtime& runtime) {
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = runtime.info().global_memory_bytes;
    return CUDA_SUCCESS;
  });
}

// CUdevice_attribute and cudaDeviceAttr number the same attributes alike: the runtime's table
// answers both. The few the runtime API does not have are capabilities gpuvp lacks.
GPUVP_CU_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
  return with_driver([&](Runtime& runtime) {
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    switch (attribute) {
      case CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER:                     // no texture sampling
      case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:  // no cuMemCreate/cuMemMap
      case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
      case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED:
      case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED:
      case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
      case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
      case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK:  // no decompression engine
      case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH:
      case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED:
        if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
        *value = 0;
        return CUDA_SUCCESS;
      default: break;
    }
    return to_result(runtime.device_attribute(value, static_cast<cudaDeviceAttr>(attribute)));
  });
}

GPUVP_CU_EXPORT CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice device) {
  return with_driver([&](Runtime& runtime) {
    if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    *major = static_cast<int>(runtime.info().compute_capability / 10);
    *minor = static_cast<int>(runtime.info().compute_capability % 10);
    return CUDA_SUCCESS;
  });
}

// ---- The primary context.

GPUVP_CU_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  return with_driver([&](Runtime&) {
    if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    DriverState& state = DriverState::instance();
    ++state.primary_retains;
    *context = handle_of(&state.primary);
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  return with_driver([&](Runtime&) {
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    DriverState& state = DriverState::instance();
    if (state.primary_retains == 0) return CUDA_ERROR_INVALID_CONTEXT;
    --state.primary_retains;
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active) {
  return with_driver([&](Runtime&) {
    if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    const DriverState& state = DriverState::instance();
    *flags = state.primary.flags;
    *active = state.primary_retains > 0 ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice device, unsigned int flags) {
  return with_driver([&](Runtime&) {
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    DriverState::instance().primary.flags = flags;  // scheduling hints: the model has no host threads to spin
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice device) {
  return with_driver([&](Runtime& runtime) {
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    DriverState& state = DriverState::instance();
    state.primary_retains = 0;
    state.primary.flags = 0;
    return to_result(runtime.synchronize());
  });
}

// ---- Contexts.

namespace {

CUresult create_context(CUcontext* context, unsigned int flags, CUdevice device) {
  return with_driver([&](Runtime&) {
    if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!is_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    DriverState& state = DriverState::instance();
    auto created = std::make_unique<Context>();
    created->flags = flags;
    created->id = state.next_context_id++;
    Context* raw = created.get();
    state.created[raw] = std::move(created);
    DriverState::stack().push_back(raw);  // a new context is current on the creating thread
    *context = handle_of(raw);
    return CUDA_SUCCESS;
  });
}

}  // namespace

GPUVP_CU_EXPORT CUresult cuCtxCreate_v2(CUcontext* context, unsigned int flags, CUdevice device) {
  return create_context(context, flags, device);
}

GPUVP_CU_EXPORT CUresult cuCtxCreate_v3(CUcontext* context, CUexecAffinityParam* params, int count, unsigned int flags,
                                        CUdevice device) {
  if (count != 0 || params != nullptr) return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;  // no SM partitioning
  return create_context(context, flags, device);
}

GPUVP_CU_EXPORT CUresult cuCtxCreate_v4(CUcontext* context, CUctxCreateParams* params, unsigned int flags,
                                        CUdevice device) {
  if (params != nullptr && (params->execAffinityParams != nullptr || params->cigParams != nullptr)) {
    return CUDA_ERROR_NOT_SUPPORTED;  // no SM partitioning, no graphics interop
  }
  return create_context(context, flags, device);
}

GPUVP_CU_EXPORT CUresult cuCtxDestroy_v2(CUcontext context) {
  return with_driver([&](Runtime& runtime) {
    DriverState& state = DriverState::instance();
    Context* target = context_of(context);
    if (target == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (state.created.count(target) == 0) return CUDA_ERROR_INVALID_CONTEXT;  // also the primary one
    const cudaError_t error = runtime.synchronize();  // its work completes first
    std::vector<Context*>& stack = DriverState::stack();
    if (!stack.empty() && stack.back() == target) stack.pop_back();
    state.created.erase(target);
    return to_result(error);
  });
}

GPUVP_CU_EXPORT CUresult cuCtxGetCurrent(CUcontext* context) {
  return with_driver([&](Runtime&) {
    if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *context = handle_of(DriverState::instance().current());
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  return with_driver([&](Runtime&) {
    std::vector<Context*>& stack = DriverState::stack();
    if (context == nullptr) {
      if (!stack.empty()) stack.pop_back();
      return CUDA_SUCCESS;
    }
    if (!DriverState::instance().is_context(context_of(context))) return CUDA_ERROR_INVALID_CONTEXT;
    if (stack.empty()) {
      stack.push_back(context_of(context));
    } else {
      stack.back() = context_of(context);
    }
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext context) {
  return with_driver([&](Runtime&) {
    if (!DriverState::instance().is_context(context_of(context))) return CUDA_ERROR_INVALID_CONTEXT;
    DriverState::stack().push_back(context_of(context));
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* context) {
  return with_driver([&](Runtime&) {
    std::vector<Context*>& stack = DriverState::stack();
    if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (context != nullptr) *context = handle_of(stack.back());
    stack.pop_back();
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  return with_context([&](Runtime&) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *device = 0;
    return CUDA_SUCCESS;
  });
}

// The CUDA 13 form: the device of `context` (the current one for nullptr).
GPUVP_CU_EXPORT CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext context) {
  return with_driver([&](Runtime&) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (DriverState::instance().named_or_current(context) == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    *device = 0;
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuCtxGetFlags(unsigned int* flags) {
  return with_context([&](Runtime&) {
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = DriverState::instance().current()->flags;
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuCtxGetId(CUcontext context, unsigned long long* id) {
  return with_driver([&](Runtime&) {
    if (id == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Context* target = DriverState::instance().named_or_current(context);
    if (target == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    *id = target->id;
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuCtxGetApiVersion(CUcontext context, unsigned int* version) {
  return with_driver([&](Runtime&) {
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (DriverState::instance().named_or_current(context) == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    *version = static_cast<unsigned>(gpuvp::cuda_driver::kDriverVersion);
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuCtxSynchronize(void) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.synchronize()); });
}

// The CUDA 13 form: waits for `context` (the current one for nullptr). Contexts share the
// device channel, so that is all of the process's work.
GPUVP_CU_EXPORT CUresult cuCtxSynchronize_v2(CUcontext context) {
  return with_driver([&](Runtime& runtime) {
    if (DriverState::instance().named_or_current(context) == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    return to_result(runtime.synchronize());
  });
}

GPUVP_CU_EXPORT CUresult cuCtxGetStreamPriorityRange(int* least, int* greatest) {
  return with_context([&](Runtime&) {
    if (least != nullptr) *least = 0;  // priorities are accepted and ignored, as the runtime does
    if (greatest != nullptr) *greatest = 0;
    return CUDA_SUCCESS;
  });
}
