// Helpers for the exported C entry points of libcudart.so.13.
#pragma once

#include <mutex>

#include "sw/cudart/runtime.h"

#define GPUVP_EXPORT extern "C" __attribute__((visibility("default")))

namespace gpuvp::cudart {

// Runs `body` on the locked runtime after connecting to the device; records the last error.
template <typename Body>
cudaError_t with_device(Body&& body) {
  // A host function in a stream must not call CUDA (CUDA's rule): it would wait for itself.
  if (CallbackThread::on_callback_thread()) return cudaErrorNotPermitted;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  if (const cudaError_t error = runtime.ensure_device(); error != cudaSuccess) return runtime.record(error);
  return runtime.record(body(runtime));
}

// Same, for calls that need no device.
template <typename Body>
cudaError_t with_runtime(Body&& body) {
  if (CallbackThread::on_callback_thread()) return cudaErrorNotPermitted;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  return runtime.record(body(runtime));
}

inline cudaError_t not_supported(const char* name) {
  if (CallbackThread::on_callback_thread()) return cudaErrorNotPermitted;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  runtime.log_unsupported(name);
  return runtime.record(cudaErrorNotSupported);
}

}  // namespace gpuvp::cudart
