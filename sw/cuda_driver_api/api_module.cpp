// Modules, functions and launches of the driver API: PTX text and fatbins loaded at run time
// through the runtime core, whose kernels launch like registered ones.
#include <cstring>
#include <fstream>
#include <iterator>

#include "sw/cuda_driver_api/api.h"

using gpuvp::cuda_driver::DriverState;
using gpuvp::cuda_driver::Runtime;
using gpuvp::cuda_driver::stream_handle;
using gpuvp::cuda_driver::to_result;
using gpuvp::cuda_driver::with_context;
using gpuvp::cudart::Function;
using gpuvp::cudart::Module;

namespace {

Module* module_of(CUmodule module) { return reinterpret_cast<Module*>(module); }
Function* function_of(CUfunction function) { return reinterpret_cast<Function*>(function); }

// The JIT options a load fills in: the error log (the platform's message on failure), the info
// log (empty: no JIT messages), and their sizes as written.
struct JitLogs {
  char* error = nullptr;
  std::size_t error_bytes = 0;
  void** error_size_slot = nullptr;
  char* info = nullptr;
  std::size_t info_bytes = 0;
  void** info_size_slot = nullptr;
};

JitLogs jit_logs(unsigned count, const CUjit_option* options, void** values) {
  JitLogs logs;
  if (options == nullptr || values == nullptr) return logs;
  for (unsigned i = 0; i < count; ++i) {
    switch (options[i]) {
      case CU_JIT_ERROR_LOG_BUFFER: logs.error = static_cast<char*>(values[i]); break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        logs.error_bytes = reinterpret_cast<uintptr_t>(values[i]);
        logs.error_size_slot = &values[i];
        break;
      case CU_JIT_INFO_LOG_BUFFER: logs.info = static_cast<char*>(values[i]); break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        logs.info_bytes = reinterpret_cast<uintptr_t>(values[i]);
        logs.info_size_slot = &values[i];
        break;
      default: break;  // optimisation levels, targets, timings: the PTX runs as written
    }
  }
  return logs;
}

void write_log(char* buffer, std::size_t bytes, void** size_slot, const std::string& text) {
  if (buffer == nullptr || bytes == 0) return;
  const std::size_t written = std::min(bytes - 1, text.size());
  std::memcpy(buffer, text.data(), written);
  buffer[written] = '\0';
  if (size_slot != nullptr) *size_slot = reinterpret_cast<void*>(static_cast<uintptr_t>(written + 1));
}

CUresult load(CUmodule* module, const void* image, JitLogs logs) {
  return with_context([&](Runtime& runtime) {
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Module* loaded = nullptr;
    std::string log;
    const cudaError_t error = runtime.load_image(image, &loaded, &log);
    write_log(logs.error, logs.error_bytes, logs.error_size_slot, error == cudaSuccess ? std::string() : log);
    write_log(logs.info, logs.info_bytes, logs.info_size_slot, std::string());
    if (error != cudaSuccess) return to_result(error);  // the runtime core has said why on stderr
    *module = reinterpret_cast<CUmodule>(loaded);
    return CUDA_SUCCESS;
  });
}

}  // namespace

GPUVP_CU_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) { return load(module, image, {}); }

GPUVP_CU_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int count,
                                            CUjit_option* options, void** values) {
  return load(module, image, jit_logs(count, options, values));
}

GPUVP_CU_EXPORT CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatbin) {
  return load(module, fatbin, {});
}

GPUVP_CU_EXPORT CUresult cuModuleLoad(CUmodule* module, const char* path) {
  if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
  std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  image.push_back('\0');  // PTX text files carry no terminator
  return load(module, image.data(), {});
}

GPUVP_CU_EXPORT CUresult cuModuleUnload(CUmodule module) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.unload_image(module_of(module))); });
}

GPUVP_CU_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  return with_context([&](Runtime& runtime) {
    if (function == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!runtime.is_loaded_image(module_of(module))) return CUDA_ERROR_INVALID_HANDLE;
    Function* found = nullptr;
    if (const cudaError_t error = runtime.module_function(&found, *module_of(module), name); error != cudaSuccess) {
      return to_result(error);  // CUDA_ERROR_NOT_FOUND for a name the module does not define
    }
    *function = reinterpret_cast<CUfunction>(found);
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr* address, size_t* bytes, CUmodule module, const char* name) {
  return with_context([&](Runtime& runtime) {
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!runtime.is_loaded_image(module_of(module))) return CUDA_ERROR_INVALID_HANDLE;
    uint64_t found = 0;
    if (const cudaError_t error = runtime.module_global(&found, bytes, *module_of(module), name); error != cudaSuccess) {
      return to_result(error);
    }
    if (address != nullptr) *address = found;
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuFuncGetModule(CUmodule* module, CUfunction function) {
  return with_context([&](Runtime& runtime) {
    if (module == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!runtime.is_module_function(function_of(function))) return CUDA_ERROR_INVALID_HANDLE;
    *module = reinterpret_cast<CUmodule>(function_of(function)->module);
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuFuncGetName(const char** name, CUfunction function) {
  return with_context([&](Runtime& runtime) {
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!runtime.is_module_function(function_of(function))) return CUDA_ERROR_INVALID_HANDLE;
    *name = function_of(function)->name.c_str();
    return CUDA_SUCCESS;
  });
}

GPUVP_CU_EXPORT CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction function) {
  return with_context([&](Runtime& runtime) {
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!runtime.is_module_function(function_of(function))) return CUDA_ERROR_INVALID_HANDLE;
    cudaFuncAttributes a{};
    if (const cudaError_t error = runtime.function_attributes(&a, function); error != cudaSuccess) {
      return to_result(error);
    }
    switch (attribute) {
      case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = a.maxThreadsPerBlock; break;
      case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = static_cast<int>(a.sharedSizeBytes); break;
      case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = static_cast<int>(a.constSizeBytes); break;
      case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = static_cast<int>(a.localSizeBytes); break;
      case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = a.numRegs; break;
      case CU_FUNC_ATTRIBUTE_PTX_VERSION: *value = a.ptxVersion; break;
      case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = a.binaryVersion; break;
      case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *value = a.cacheModeCA; break;
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = a.maxDynamicSharedSizeBytes; break;
      case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *value = a.preferredShmemCarveout; break;
      case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *value = a.clusterDimMustBeSet; break;
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *value = a.requiredClusterWidth; break;
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *value = a.requiredClusterHeight; break;
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *value = a.requiredClusterDepth; break;
      case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *value = a.nonPortableClusterSizeAllowed; break;
      case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *value = a.clusterSchedulingPolicyPreference; break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
  });
}

// kernelParams: one pointer per parameter. extra: CU_LAUNCH_PARAM_BUFFER_POINTER, the packed
// parameter buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, its size, CU_LAUNCH_PARAM_END.
GPUVP_CU_EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                                        unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                        unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                                        void** kernel_params, void** extra) {
  return with_context([&](Runtime& runtime) {
    Function* kernel = function_of(function);
    if (!runtime.is_module_function(kernel)) return CUDA_ERROR_INVALID_HANDLE;
    if (kernel_params != nullptr && extra != nullptr) return CUDA_ERROR_INVALID_VALUE;  // one form or the other
    std::vector<void*> pointers;
    if (extra != nullptr) {
      const char* buffer = nullptr;
      std::size_t buffer_bytes = 0;
      for (std::size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
          buffer = static_cast<const char*>(extra[i + 1]);
        } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
          if (extra[i + 1] == nullptr) return CUDA_ERROR_INVALID_VALUE;
          buffer_bytes = *static_cast<const std::size_t*>(extra[i + 1]);
        } else {
          return CUDA_ERROR_INVALID_VALUE;
        }
      }
      if ((buffer == nullptr && !kernel->params.empty()) || buffer_bytes < kernel->param_bytes) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      for (const gpuvp::device::ParamLayout& p : kernel->params) pointers.push_back(const_cast<char*>(buffer) + p.offset);
      kernel_params = pointers.data();
    }
    if (kernel_params == nullptr && !kernel->params.empty()) return CUDA_ERROR_INVALID_VALUE;
    return to_result(runtime.launch_kernel(kernel, dim3(grid_x, grid_y, grid_z), dim3(block_x, block_y, block_z),
                                           kernel_params, shared_bytes, stream_handle(stream)));
  });
}

// Modules load when cuModuleLoad* is called (the static runtime asks before registering its fatbins).
GPUVP_CU_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *mode = CU_MODULE_EAGER_LOADING;
  return CUDA_SUCCESS;
}
