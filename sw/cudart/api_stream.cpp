// Streams and events (elapsed time is simulated time).
#include "sw/cudart/api.h"

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

GPUVP_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return with_device([&](Runtime& runtime) { return runtime.stream_query(stream); });
}

GPUVP_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  return with_device([&](Runtime& runtime) { return runtime.stream_wait_event(stream, event); });
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

GPUVP_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int) {
  return with_device([&](Runtime& runtime) { return runtime.event_record(event, stream); });
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
