// The registration and launch ABI that nvcc-generated host code calls.
#include "sw/cudart/api.h"

using gpuvp::cudart::Runtime;

GPUVP_EXPORT void** __cudaRegisterFatBinary(void* fat_cubin) {
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  return runtime.register_fatbin(fat_cubin);
}

GPUVP_EXPORT void __cudaRegisterFatBinaryEnd(void** handle) { (void)handle; }

GPUVP_EXPORT void __cudaUnregisterFatBinary(void** handle) {
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  runtime.unregister_fatbin(handle);
}

GPUVP_EXPORT void __cudaRegisterFunction(void** handle, const char* host_function, char* device_function,
                                         const char* device_name, int thread_limit, uint3* tid, uint3* bid,
                                         dim3* block, dim3* grid, int* warp_size) {
  (void)device_function;
  (void)thread_limit;
  (void)tid;
  (void)bid;
  (void)block;
  (void)grid;
  (void)warp_size;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  runtime.register_function(handle, host_function, device_name);
}

GPUVP_EXPORT void __cudaRegisterVar(void** handle, char* host_variable, char* device_address, const char* device_name,
                                    int ext, size_t size, int constant, int global) {
  (void)device_address;
  (void)ext;
  (void)constant;
  (void)global;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  runtime.register_variable(handle, host_variable, device_name, size);
}

GPUVP_EXPORT void __cudaRegisterManagedVar(void** handle, void** host_variable_address, char* device_address,
                                           const char* device_name, int ext, size_t size, int constant, int global) {
  (void)device_address;
  (void)ext;
  (void)constant;
  (void)global;
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  runtime.register_managed_variable(handle, host_variable_address, device_name, size);
}

// nvcc's host code calls this before the first host access to a module's __managed__ variables;
// it returns whether they are usable.
GPUVP_EXPORT char __cudaInitModule(void** handle) {
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  if (runtime.ensure_device() != cudaSuccess) return 0;
  return runtime.init_managed_variables(handle) == cudaSuccess ? 1 : 0;
}

GPUVP_EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st* stream) {
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  runtime.push_configuration(grid, block, shared, stream);
  return 0;
}

GPUVP_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) {
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  return runtime.pop_configuration(grid, block, shared, stream);
}

GPUVP_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_function) {
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  gpuvp::cudart::Function* function = runtime.function_of(host_function);
  if (kernel == nullptr || function == nullptr) return runtime.record(cudaErrorInvalidDeviceFunction);
  *kernel = reinterpret_cast<cudaKernel_t>(function);
  return cudaSuccess;
}

GPUVP_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                            cudaStream_t stream) {
  return gpuvp::cudart::with_device([&](Runtime& runtime) {
    gpuvp::cudart::Function* function = runtime.function_of(reinterpret_cast<const void*>(kernel));
    if (function == nullptr) return cudaErrorInvalidDeviceFunction;
    return runtime.launch_kernel(function, grid, block, args, shared, stream);
  });
}

GPUVP_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                                 size_t shared, cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, grid, block, args, shared, Runtime::per_thread(stream));
}

// Host variables that device code names (registered by some relocatable-device-code builds):
// device code cannot reach host memory here, so the registration is refused, once, on stderr.
GPUVP_EXPORT void __cudaRegisterHostVar(void** handle, const char* device_name, char* host_variable, size_t size) {
  (void)handle;
  (void)device_name;
  (void)host_variable;
  (void)size;
  gpuvp::cudart::not_supported("__cudaRegisterHostVar");
}

// Internal entry points of the toolkit's runtime without a public declaration.
GPUVP_EXPORT int __cudaRegisterUnifiedTable() { return gpuvp::cudart::not_supported("__cudaRegisterUnifiedTable"); }

GPUVP_EXPORT int __cudaGetProcAddress() { return gpuvp::cudart::not_supported("__cudaGetProcAddress"); }
