// Other names of implemented entry points: the CUDA 3.x/4.x symbols whose arguments did not
// change when their _v2 came (cuGetProcAddress hands them to programs that ask with an older
// version), and the per-thread default stream variants (_ptsz/_ptds) that programs built with
// CUDA_API_PER_THREAD_DEFAULT_STREAM (or `nvcc --default-stream per-thread`) call.
#include "sw/cuda_driver_api/api.h"

namespace {
// The per-thread default stream for the default stream (0), as the _ptsz variants mean it.
CUstream per_thread(CUstream stream) { return stream == nullptr ? CU_STREAM_PER_THREAD : stream; }
}  // namespace

// ---- Older names with the same arguments.
#undef cuCtxDestroy
#undef cuCtxPopCurrent
#undef cuCtxPushCurrent
#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxSetFlags
#undef cuCtxCreate
GPUVP_CU_EXPORT CUresult cuCtxCreate_v2(CUcontext* context, unsigned int flags, CUdevice device);  // api_context.cpp
GPUVP_CU_EXPORT CUresult cuCtxCreate(CUcontext* context, unsigned int flags, CUdevice device) {
  return cuCtxCreate_v2(context, flags, device);
}
GPUVP_CU_EXPORT CUresult cuCtxDestroy(CUcontext context) { return cuCtxDestroy_v2(context); }
GPUVP_CU_EXPORT CUresult cuCtxPopCurrent(CUcontext* context) { return cuCtxPopCurrent_v2(context); }
GPUVP_CU_EXPORT CUresult cuCtxPushCurrent(CUcontext context) { return cuCtxPushCurrent_v2(context); }
GPUVP_CU_EXPORT CUresult cuStreamDestroy(CUstream stream) { return cuStreamDestroy_v2(stream); }
GPUVP_CU_EXPORT CUresult cuEventDestroy(CUevent event) { return cuEventDestroy_v2(event); }
GPUVP_CU_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice device) { return cuDevicePrimaryCtxRelease_v2(device); }
GPUVP_CU_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice device) { return cuDevicePrimaryCtxReset_v2(device); }
GPUVP_CU_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice device, unsigned int flags) {
  return cuDevicePrimaryCtxSetFlags_v2(device, flags);
}

// ---- On the per-thread default stream.
GPUVP_CU_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                             CUstream stream, void** params, void** extra) {
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, per_thread(stream), params, extra);
}
GPUVP_CU_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream stream) { return cuStreamSynchronize(per_thread(stream)); }
GPUVP_CU_EXPORT CUresult cuStreamQuery_ptsz(CUstream stream) { return cuStreamQuery(per_thread(stream)); }
GPUVP_CU_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream stream, CUevent event, unsigned int flags) {
  return cuStreamWaitEvent(per_thread(stream), event, flags);
}
GPUVP_CU_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream stream, unsigned int* flags) {
  return cuStreamGetFlags(per_thread(stream), flags);
}
GPUVP_CU_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream stream, int* priority) {
  return cuStreamGetPriority(per_thread(stream), priority);
}
GPUVP_CU_EXPORT CUresult cuStreamGetId_ptsz(CUstream stream, unsigned long long* id) {
  return cuStreamGetId(per_thread(stream), id);
}
GPUVP_CU_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream stream, CUhostFn function, void* user_data) {
  return cuLaunchHostFunc(per_thread(stream), function, user_data);
}
GPUVP_CU_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream stream, CUstreamCallback function, void* user_data,
                                                  unsigned int flags) {
  return cuStreamAddCallback(per_thread(stream), function, user_data, flags);
}
GPUVP_CU_EXPORT CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) {
  return cuEventRecord(event, per_thread(stream));
}
GPUVP_CU_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent event, CUstream stream, unsigned int flags) {
  return cuEventRecordWithFlags(event, per_thread(stream), flags);
}
GPUVP_CU_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  return cuMemcpyHtoDAsync_v2(dst, src, bytes, per_thread(stream));
}
GPUVP_CU_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return cuMemcpyDtoHAsync_v2(dst, src, bytes, per_thread(stream));
}
GPUVP_CU_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return cuMemcpyDtoDAsync_v2(dst, src, bytes, per_thread(stream));
}
GPUVP_CU_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return cuMemcpyAsync(dst, src, bytes, per_thread(stream));
}
GPUVP_CU_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) {
  return cuMemsetD8Async(dst, value, count, per_thread(stream));
}
GPUVP_CU_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream) {
  return cuMemsetD16Async(dst, value, count, per_thread(stream));
}
GPUVP_CU_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream) {
  return cuMemsetD32Async(dst, value, count, per_thread(stream));
}

// Synchronous calls on the per-thread default stream: queued there, then waited for.
namespace {
CUresult finish_on_per_thread_stream(CUresult queued) {
  return queued != CUDA_SUCCESS ? queued : cuStreamSynchronize(CU_STREAM_PER_THREAD);
}
}  // namespace
GPUVP_CU_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void* src, size_t bytes) {
  return finish_on_per_thread_stream(cuMemcpyHtoDAsync_v2(dst, src, bytes, CU_STREAM_PER_THREAD));
}
GPUVP_CU_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t bytes) {
  return finish_on_per_thread_stream(cuMemcpyDtoHAsync_v2(dst, src, bytes, CU_STREAM_PER_THREAD));
}
GPUVP_CU_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return finish_on_per_thread_stream(cuMemcpyDtoDAsync_v2(dst, src, bytes, CU_STREAM_PER_THREAD));
}
GPUVP_CU_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return finish_on_per_thread_stream(cuMemcpyAsync(dst, src, bytes, CU_STREAM_PER_THREAD));
}
GPUVP_CU_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr dst, unsigned char value, size_t count) {
  return finish_on_per_thread_stream(cuMemsetD8Async(dst, value, count, CU_STREAM_PER_THREAD));
}
GPUVP_CU_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr dst, unsigned short value, size_t count) {
  return finish_on_per_thread_stream(cuMemsetD16Async(dst, value, count, CU_STREAM_PER_THREAD));
}
GPUVP_CU_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr dst, unsigned int value, size_t count) {
  return finish_on_per_thread_stream(cuMemsetD32Async(dst, value, count, CU_STREAM_PER_THREAD));
}
