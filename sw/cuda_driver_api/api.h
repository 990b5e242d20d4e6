// Helpers for the exported C entry points of libcuda.so.1: the driver API's contexts over the
// runtime core (sw/cudart/runtime.h), and the translation of its errors to CUresult.
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "sw/cudart/runtime.h"

#define GPUVP_CU_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpuvp::cuda_driver {

using cudart::Runtime;

inline constexpr int kDriverVersion = CUDA_VERSION;  // the toolkit's headers: 13000 for CUDA 13.0

// A driver context. Every context of the process shares the one device channel of the runtime
// core: memory, modules and streams are visible from all of them (README "Contexts").
struct Context {
  bool primary = false;
  unsigned flags = 0;
  unsigned long long id = 0;
};

// What the driver API adds to the runtime core; guarded by the runtime's mutex.
class DriverState {
 public:
  static DriverState& instance();
  bool initialized = false;
  Context primary{true, 0, 1};
  int primary_retains = 0;
  std::map<Context*, std::unique_ptr<Context>> created;  // cuCtxCreate'd, not yet destroyed
  unsigned long long next_context_id = 2;
  std::set<std::string> unsupported_logged;

  bool is_context(const Context* context) const {
    return context == &primary || created.count(const_cast<Context*>(context)) != 0;
  }
  // The calling thread's context stack (cuCtxPush/Pop); its top is the current context.
  static std::vector<Context*>& stack();
  // The current context, or nullptr when there is none or it was destroyed.
  Context* current() const;
  // `context`, or the current context for nullptr; nullptr when that is no live context.
  Context* named_or_current(CUcontext context) const {
    Context* target = context != nullptr ? reinterpret_cast<Context*>(context) : current();
    return target != nullptr && is_context(target) ? target : nullptr;
  }
};

// The runtime core's error as the driver API names it.
CUresult to_result(cudaError_t error);

// Runs `body(runtime)` (returning CUresult) on the locked runtime once cuInit has succeeded.
template <typename Body>
CUresult with_driver(Body&& body) {
  if (cudart::CallbackThread::on_callback_thread()) return CUDA_ERROR_NOT_PERMITTED;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  if (!DriverState::instance().initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (const cudaError_t error = runtime.ensure_device(); error != cudaSuccess) return to_result(error);
  return body(runtime);
}

// Same, with a current context (CUDA_ERROR_INVALID_CONTEXT without one).
template <typename Body>
CUresult with_context(Body&& body) {
  return with_driver([&](Runtime& runtime) {
    if (DriverState::instance().current() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    return body(runtime);
  });
}

inline cudaStream_t stream_handle(CUstream stream) { return reinterpret_cast<cudaStream_t>(stream); }
inline void* device_pointer(CUdeviceptr pointer) { return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer)); }

}  // namespace gpuvp::cuda_driver
