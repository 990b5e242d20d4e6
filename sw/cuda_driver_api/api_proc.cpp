// Entry-point lookup (cuGetProcAddress), the private export tables (cuGetExportTable) and the
// report of unimplemented symbols.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sw/cuda_driver_api/api.h"
#include "sw/cuda_driver_api/private_tables.h"

using gpuvp::cuda_driver::DriverState;
using gpuvp::cuda_driver::Runtime;

namespace {

struct ProcName {
  const char* name;        // as a program asks for it
  const char* legacy;      // the symbol with the ABI of the headers, legacy default stream
  const char* per_thread;  // the same on the per-thread default stream
};

constexpr ProcName kProcNames[] = {
#define GPUVP_CU_PROC(name, legacy, per_thread) {#name, #legacy, #per_thread},
#include "sw/cuda_driver_api/proc_names.inc"
#undef GPUVP_CU_PROC
};

// Entry points whose ABI changed: a program asking with `cuda_version` gets the newest variant
// introduced at or before that version, the unsuffixed symbol before the first (the CUDA
// versions that introduced each variant, as NVIDIA's libcudart_static asks for them).
struct VersionedName {
  const char* name;
  int since;
  const char* symbol;
};

constexpr VersionedName kVersioned[] = {
    {"cuCtxCreate", 3020, "cuCtxCreate_v2"},
    {"cuCtxCreate", 11040, "cuCtxCreate_v3"},
    {"cuCtxCreate", 12050, "cuCtxCreate_v4"},
    {"cuCtxGetDevice", 13000, "cuCtxGetDevice_v2"},
    {"cuCtxSynchronize", 13000, "cuCtxSynchronize_v2"},
    {"cuCtxDestroy", 4000, "cuCtxDestroy_v2"},
    {"cuCtxPopCurrent", 4000, "cuCtxPopCurrent_v2"},
    {"cuCtxPushCurrent", 4000, "cuCtxPushCurrent_v2"},
    {"cuStreamDestroy", 4000, "cuStreamDestroy_v2"},
    {"cuEventDestroy", 4000, "cuEventDestroy_v2"},
    {"cuEventElapsedTime", 12080, "cuEventElapsedTime_v2"},
    {"cuDevicePrimaryCtxRelease", 11000, "cuDevicePrimaryCtxRelease_v2"},
    {"cuDevicePrimaryCtxReset", 11000, "cuDevicePrimaryCtxReset_v2"},
    {"cuDevicePrimaryCtxSetFlags", 11000, "cuDevicePrimaryCtxSetFlags_v2"},
    {"cuDeviceGetUuid", 11040, "cuDeviceGetUuid_v2"},
    {"cuDeviceTotalMem", 3020, "cuDeviceTotalMem_v2"},
    {"cuModuleGetGlobal", 3020, "cuModuleGetGlobal_v2"},
    {"cuMemGetInfo", 3020, "cuMemGetInfo_v2"},
    {"cuMemAlloc", 3020, "cuMemAlloc_v2"},
    {"cuMemFree", 3020, "cuMemFree_v2"},
    {"cuMemAllocHost", 3020, "cuMemAllocHost_v2"},
    {"cuMemcpyHtoD", 3020, "cuMemcpyHtoD_v2"},
    {"cuMemcpyDtoH", 3020, "cuMemcpyDtoH_v2"},
    {"cuMemcpyDtoD", 3020, "cuMemcpyDtoD_v2"},
    {"cuMemcpyHtoDAsync", 3020, "cuMemcpyHtoDAsync_v2"},
    {"cuMemcpyDtoHAsync", 3020, "cuMemcpyDtoHAsync_v2"},
    {"cuMemcpyDtoDAsync", 3020, "cuMemcpyDtoDAsync_v2"},
    {"cuMemsetD8", 3020, "cuMemsetD8_v2"},
    {"cuMemsetD16", 3020, "cuMemsetD16_v2"},
    {"cuMemsetD32", 3020, "cuMemsetD32_v2"},
    {"cuGetProcAddress", 12000, "cuGetProcAddress_v2"},
};

// This library, to look its own symbols up by name (stubs included).
void* own_handle() {
  static void* handle = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&own_handle), &info) == 0 || info.dli_fname == nullptr) return static_cast<void*>(nullptr);
    return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }();
  return handle;
}

}  // namespace

// The entry points of kVersioned by `cuda_version`; any other name as the CUDA 13 headers map
// it (README "cuGetProcAddress"). On the per-thread default stream: the headers' _ptds/_ptsz.
GPUVP_CU_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** function, int cuda_version, cuuint64_t flags,
                                             CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if ((flags & ~uint64_t{CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM}) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const char* name = symbol;
  bool versioned = false;
  for (const VersionedName& entry : kVersioned) {
    if (std::strcmp(entry.name, symbol) != 0) continue;
    versioned = true;
    if (entry.since <= cuda_version) name = entry.symbol;
  }
  for (const ProcName& entry : kProcNames) {
    if (std::strcmp(entry.name, symbol) == 0) {
      if (per_thread) {
        name = entry.per_thread;
      } else if (!versioned) {
        name = entry.legacy;
      }
      break;
    }
  }
  // Only the driver API's own names: dlsym on this library would also find its C++ internals.
  void* found = std::strncmp(name, "cu", 2) == 0 && own_handle() != nullptr ? dlsym(own_handle(), name) : nullptr;
  *function = found;
  if (status != nullptr) *status = found != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return found != nullptr ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// The CUDA 11.3 signature, without the query result.
#undef cuGetProcAddress
GPUVP_CU_EXPORT CUresult cuGetProcAddress(const char* symbol, void** function, int cuda_version, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, function, cuda_version, flags, nullptr);
}

// The driver's private tables, keyed by UUID, that NVIDIA's own libraries (the static runtime
// among them) use: those private_tables.cpp provides. A request for the integrity check is
// explained once on stderr, any other missing table with GPUVP_VERBOSE (README "Static runtime").
GPUVP_CU_EXPORT CUresult cuGetExportTable(const void** table, const CUuuid* id) {
  if (table == nullptr || id == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *table = gpuvp::cuda_driver::private_table(*id);
  if (*table != nullptr) return CUDA_SUCCESS;
  char text[64];
  int at = 0;
  for (int i = 0; i < 16; ++i) {
    at += std::snprintf(text + at, sizeof text - static_cast<std::size_t>(at), "%s%02x",
                        (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "", static_cast<unsigned char>(id->bytes[i]));
  }
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  std::set<std::string>& logged = DriverState::instance().unsupported_logged;
  if (gpuvp::cuda_driver::is_integrity_check(*id) && logged.insert("integrity check").second) {
    std::fprintf(stderr,
                 "gpuvp: NVIDIA's static CUDA runtime (nvcc's default) asked libcuda.so.1 to prove it is NVIDIA's "
                 "driver (cuGetExportTable(%s), an integrity check); gpuvp's libcuda.so.1 cannot, so that runtime "
                 "will fail every call (cudaErrorSymbolNotFound): build the program with `nvcc -cudart shared`\n",
                 text);
  } else if (std::getenv("GPUVP_VERBOSE") != nullptr && logged.insert(std::string("table ") + text).second) {
    std::fprintf(stderr, "gpuvp: cuGetExportTable(%s): no such table: CUDA_ERROR_NOT_FOUND\n", text);
  }
  return CUDA_ERROR_NOT_FOUND;
}

namespace gpuvp::cuda_driver {

int report_unimplemented(const char* name) {
  if (cudart::CallbackThread::on_callback_thread()) return CUDA_ERROR_NOT_PERMITTED;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  if (DriverState::instance().unsupported_logged.insert(name).second) {
    std::fprintf(stderr, "gpuvp: %s is not supported by gpuvp's libcuda.so.1; it returns CUDA_ERROR_NOT_SUPPORTED\n",
                 name);
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

}  // namespace gpuvp::cuda_driver
