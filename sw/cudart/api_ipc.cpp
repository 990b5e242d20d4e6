// Inter-process memory and event handles: cudaIpcGetMemHandle / OpenMemHandle / CloseMemHandle and
// cudaIpcGetEventHandle / OpenEventHandle between
// programs on one platform (`gpuvp serve`, or the children of a `gpuvp run` program).
#include <cstring>

#include "sw/cudart/api.h"

using gpuvp::cudart::Runtime;
using gpuvp::cudart::with_device;

GPUVP_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* device) {
  return with_device([&](Runtime& runtime) { return runtime.ipc_get_mem_handle(handle, device); });
}

GPUVP_EXPORT cudaError_t cudaIpcOpenMemHandle(void** device, cudaIpcMemHandle_t handle, unsigned int flags) {
  return with_device([&](Runtime& runtime) { return runtime.ipc_open_mem_handle(device, handle, flags); });
}

GPUVP_EXPORT cudaError_t cudaIpcCloseMemHandle(void* device) {
  return with_device([&](Runtime& runtime) { return runtime.ipc_close_mem_handle(device); });
}

GPUVP_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
  return with_device([&](Runtime& runtime) { return runtime.ipc_get_event_handle(handle, event); });
}

GPUVP_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
  return with_device([&](Runtime& runtime) { return runtime.ipc_open_event_handle(event, handle); });
}
