// Streams and events of the driver API: the runtime core's, whose handles and flags the driver
// API numbers alike (CU_STREAM_NON_BLOCKING, CU_EVENT_DISABLE_TIMING, CU_STREAM_LEGACY, ...).
#include "sw/cuda_driver_api/api.h"

using gpuvp::cuda_driver::Runtime;
using gpuvp::cuda_driver::stream_handle;
using gpuvp::cuda_driver::to_result;
using gpuvp::cuda_driver::with_context;
using gpuvp::cudart::HostCallback;

namespace {
cudaEvent_t event_handle(CUevent event) { return reinterpret_cast<cudaEvent_t>(event); }
}  // namespace

GPUVP_CU_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  return with_context([&](Runtime& runtime) {
    if ((flags & ~CU_STREAM_NON_BLOCKING) != 0) return CUDA_ERROR_INVALID_VALUE;
    return to_result(runtime.stream_create(reinterpret_cast<cudaStream_t*>(stream), flags));
  });
}

GPUVP_CU_EXPORT CUresult cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int) {
  return cuStreamCreate(stream, flags);  // priorities are accepted and ignored, as the runtime does
}

GPUVP_CU_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.stream_destroy(stream_handle(stream))); });
}

GPUVP_CU_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.stream_synchronize(stream_handle(stream))); });
}

GPUVP_CU_EXPORT CUresult cuStreamQuery(CUstream stream) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.stream_query(stream_handle(stream))); });
}

GPUVP_CU_EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  return with_context([&](Runtime& runtime) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return to_result(runtime.stream_wait_event(stream_handle(stream), event_handle(event)));
  });
}

GPUVP_CU_EXPORT CUresult cuStreamGetFlags(CUstream stream, unsigned int* flags) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.stream_flags(stream_handle(stream), flags)); });
}

GPUVP_CU_EXPORT CUresult cuStreamGetPriority(CUstream stream, int* priority) {
  return with_context(
      [&](Runtime& runtime) { return to_result(runtime.stream_priority(stream_handle(stream), priority)); });
}

GPUVP_CU_EXPORT CUresult cuStreamGetId(CUstream stream, unsigned long long* id) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.stream_id(stream_handle(stream), id)); });
}

GPUVP_CU_EXPORT CUresult cuLaunchHostFunc(CUstream stream, CUhostFn function, void* user_data) {
  return with_context([&](Runtime& runtime) {
    if (function == nullptr) return CUDA_ERROR_INVALID_VALUE;
    HostCallback callback;
    callback.host_fn = function;
    callback.user_data = user_data;
    return to_result(runtime.launch_host_function(stream_handle(stream), callback));
  });
}

// The callback gets the stream as the program named it and the status of the stream's work.
// CUstreamCallback and cudaStreamCallback_t take the same arguments (handle, status, user data).
GPUVP_CU_EXPORT CUresult cuStreamAddCallback(CUstream stream, CUstreamCallback function, void* user_data,
                                             unsigned int flags) {
  return with_context([&](Runtime& runtime) {
    if (function == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    HostCallback callback;
    callback.callback = reinterpret_cast<cudaStreamCallback_t>(function);
    callback.stream = stream_handle(stream);
    callback.user_data = user_data;
    return to_result(runtime.launch_host_function(stream_handle(stream), callback));
  });
}

GPUVP_CU_EXPORT CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  return with_context([&](Runtime& runtime) {
    return to_result(runtime.event_create(reinterpret_cast<cudaEvent_t*>(event), flags));
  });
}

GPUVP_CU_EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.event_destroy(event_handle(event))); });
}

GPUVP_CU_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  return with_context(
      [&](Runtime& runtime) { return to_result(runtime.event_record(event_handle(event), stream_handle(stream))); });
}

GPUVP_CU_EXPORT CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags) {
  if ((flags & ~CU_EVENT_RECORD_EXTERNAL) != 0) return CUDA_ERROR_INVALID_VALUE;
  return cuEventRecord(event, stream);  // no graphs to capture an external event into
}

GPUVP_CU_EXPORT CUresult cuEventSynchronize(CUevent event) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.event_synchronize(event_handle(event))); });
}

GPUVP_CU_EXPORT CUresult cuEventQuery(CUevent event) {
  return with_context([&](Runtime& runtime) { return to_result(runtime.event_query(event_handle(event))); });
}

GPUVP_CU_EXPORT CUresult cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
  return with_context(
      [&](Runtime& runtime) { return to_result(runtime.event_elapsed(ms, event_handle(start), event_handle(end))); });
}

// The CUDA 12 name of the same call (same arguments); cuda.h maps the name to the _v2 one.
#undef cuEventElapsedTime
GPUVP_CU_EXPORT CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  return cuEventElapsedTime_v2(ms, start, end);
}
