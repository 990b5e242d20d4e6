// Streams, events and host functions in streams (elapsed time is simulated time). Each _ptsz
// variant (programs built with --default-stream per-thread) is the same call with the null
// stream meaning the calling thread's per-thread default stream.
#include <utility>

#include "sw/cudart/api.h"
#include "sw/cudart/graph.h"

using gpuvp::cudart::HostCallback;
using gpuvp::cudart::Runtime;
using gpuvp::cudart::with_device;

GPUVP_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return with_device([&](Runtime& runtime) { return runtime.stream_create(stream, cudaStreamDefault); });
}

GPUVP_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  return with_device([&](Runtime& runtime) { return runtime.stream_create(stream, flags); });
}

GPUVP_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int) {
  return with_device([&](Runtime& runtime) { return runtime.stream_create(stream, flags); });
}

GPUVP_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.stream_destroy(stream); });
}

GPUVP_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.stream_synchronize(stream); });
}

GPUVP_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return cudaStreamSynchronize(Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.stream_query(stream); });
}

GPUVP_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) { return cudaStreamQuery(Runtime::per_thread(stream)); }

GPUVP_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return with_device([&](Runtime& runtime) {
    if ((flags & ~static_cast<unsigned>(cudaEventWaitExternal)) != 0) return cudaErrorInvalidValue;
    if (flags != 0) return gpuvp::cudart::GraphAccess::capture_external_event(runtime, stream, event, false);
    return runtime.stream_wait_event(stream, event);
  });
}

GPUVP_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return cudaStreamWaitEvent(Runtime::per_thread(stream), event, flags);
}

GPUVP_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags) {
  return with_device([&](Runtime& runtime) { return runtime.stream_flags(stream, flags); });
}

GPUVP_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t stream, unsigned int* flags) {
  return cudaStreamGetFlags(Runtime::per_thread(stream), flags);
}

GPUVP_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  return with_device([&](Runtime& runtime) { return runtime.stream_priority(stream, priority); });
}

GPUVP_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t stream, int* priority) {
  return cudaStreamGetPriority(Runtime::per_thread(stream), priority);
}

GPUVP_EXPORT cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long* id) {
  return with_device([&](Runtime& runtime) { return runtime.stream_id(stream, id); });
}

GPUVP_EXPORT cudaError_t cudaStreamGetId_ptsz(cudaStream_t stream, unsigned long long* id) {
  return cudaStreamGetId(Runtime::per_thread(stream), id);
}

GPUVP_EXPORT cudaError_t cudaStreamGetDevice(cudaStream_t stream, int* device) {
  return with_device([&](Runtime& runtime) {
    unsigned flags = 0;
    if (device == nullptr) return cudaErrorInvalidValue;
    if (const cudaError_t e = runtime.stream_flags(stream, &flags); e != cudaSuccess) return e;
    *device = 0;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t stream, int* device) {
  return cudaStreamGetDevice(Runtime::per_thread(stream), device);
}

GPUVP_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  return with_device([&](Runtime& runtime) {
    if (fn == nullptr) return cudaErrorInvalidValue;
    HostCallback callback;
    callback.host_fn = fn;
    callback.user_data = user_data;
    return runtime.launch_host_function(stream, callback);
  });
}

GPUVP_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  return cudaLaunchHostFunc(Runtime::per_thread(stream), fn, user_data);
}

GPUVP_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback_fn, void* user_data,
                                               unsigned int flags) {
  return with_device([&](Runtime& runtime) {
    if (callback_fn == nullptr || flags != 0) return cudaErrorInvalidValue;
    HostCallback callback;
    callback.callback = callback_fn;
    callback.stream = stream;
    callback.user_data = user_data;
    return runtime.launch_host_function(stream, callback);
  });
}

GPUVP_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback_fn,
                                                    void* user_data, unsigned int flags) {
  return cudaStreamAddCallback(Runtime::per_thread(stream), callback_fn, user_data, flags);
}

GPUVP_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return with_device([&](Runtime& runtime) { return runtime.event_create(event, cudaEventDefault); });
}

GPUVP_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return with_device([&](Runtime& runtime) { return runtime.event_create(event, flags); });
}

GPUVP_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return with_device([&](Runtime& runtime) { return runtime.event_destroy(event); });
}

GPUVP_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.event_record(event, stream); });
}

GPUVP_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return cudaEventRecord(event, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  return with_device([&](Runtime& runtime) {
    if ((flags & ~static_cast<unsigned>(cudaEventRecordExternal)) != 0) return cudaErrorInvalidValue;
    if (flags != 0) return gpuvp::cudart::GraphAccess::capture_external_event(runtime, stream, event, true);
    return runtime.event_record(event, stream);
  });
}

GPUVP_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  return cudaEventRecordWithFlags(event, Runtime::per_thread(stream), flags);
}

GPUVP_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return with_device([&](Runtime& runtime) { return runtime.event_synchronize(event); });
}

GPUVP_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) {
  return with_device([&](Runtime& runtime) { return runtime.event_query(event); });
}

GPUVP_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return with_device([&](Runtime& runtime) { return runtime.event_elapsed(ms, start, end); });
}
