// NVRTC, as a user writes it: a kernel compiled from a string at run time, its PTX loaded with
// cuModuleLoadDataEx and launched with cuLaunchKernel, the result checked against the CPU.
// Prints PASS nvrtc and exits 0 when it matched.
#include <cuda.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define CHECK_CU(call)                                                                   \
  do {                                                                                   \
    const CUresult result_ = (call);                                                     \
    if (result_ != CUDA_SUCCESS) {                                                       \
      const char* name_ = nullptr;                                                       \
      cuGetErrorName(result_, &name_);                                                   \
      std::printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #call, name_);     \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)
#define CHECK_NVRTC(call)                                                                                  \
  do {                                                                                                     \
    const nvrtcResult result_ = (call);                                                                    \
    if (result_ != NVRTC_SUCCESS) {                                                                        \
      std::printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #call, nvrtcGetErrorString(result_)); \
      std::exit(1);                                                                                        \
    }                                                                                                      \
  } while (0)

// A prefix sum per block of 256 in shared memory, with a template the program instantiates by
// name: compiled by NVRTC, never by nvcc.
const char kSource[] = R"(
template <typename T>
__global__ void block_scan(const T* in, T* out, int n) {
  __shared__ T partial[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int offset = 1; offset < blockDim.x; offset *= 2) {
    const T add = threadIdx.x >= offset ? partial[threadIdx.x - offset] : T(0);
    __syncthreads();
    partial[threadIdx.x] += add;
    __syncthreads();
  }
  if (i < n) out[i] = partial[threadIdx.x];
}
)";

}  // namespace

int main() {
  nvrtcProgram program;
  CHECK_NVRTC(nvrtcCreateProgram(&program, kSource, "block_scan.cu", 0, nullptr, nullptr));
  CHECK_NVRTC(nvrtcAddNameExpression(program, "block_scan<int>"));
  const char* options[] = {"--gpu-architecture=compute_75"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 1, options);
  size_t log_bytes = 0;
  CHECK_NVRTC(nvrtcGetProgramLogSize(program, &log_bytes));
  std::string log(log_bytes, '\0');
  CHECK_NVRTC(nvrtcGetProgramLog(program, log.data()));
  if (compiled != NVRTC_SUCCESS) {
    std::printf("FAIL nvrtcCompileProgram: %s\n%s\n", nvrtcGetErrorString(compiled), log.c_str());
    return 1;
  }
  size_t ptx_bytes = 0;
  CHECK_NVRTC(nvrtcGetPTXSize(program, &ptx_bytes));
  std::string ptx(ptx_bytes, '\0');
  CHECK_NVRTC(nvrtcGetPTX(program, ptx.data()));
  const char* lowered = nullptr;
  CHECK_NVRTC(nvrtcGetLoweredName(program, "block_scan<int>", &lowered));
  const std::string kernel_name = lowered;
  CHECK_NVRTC(nvrtcDestroyProgram(&program));

  CHECK_CU(cuInit(0));
  CUdevice device;
  CHECK_CU(cuDeviceGet(&device, 0));
  CUcontext context;
  CHECK_CU(cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(cuCtxSetCurrent(context));
  char error_log[4096] = {}, info_log[4096] = {};
  CUjit_option jit_options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                                CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* jit_values[] = {error_log, reinterpret_cast<void*>(sizeof error_log), info_log,
                        reinterpret_cast<void*>(sizeof info_log)};
  CUmodule module;
  const CUresult loaded = cuModuleLoadDataEx(&module, ptx.c_str(), 4, jit_options, jit_values);
  if (loaded != CUDA_SUCCESS) {
    std::printf("FAIL cuModuleLoadDataEx: %d\n%s\n", static_cast<int>(loaded), error_log);
    return 1;
  }
  CUfunction scan;
  CHECK_CU(cuModuleGetFunction(&scan, module, kernel_name.c_str()));

  constexpr int kN = 1000, kBlock = 256;
  std::vector<int> in(kN), out(kN, 0), expected(kN);
  for (int i = 0; i < kN; ++i) in[i] = (i * 37) % 101 - 50;
  for (int i = 0; i < kN; ++i) expected[i] = in[i] + (i % kBlock == 0 ? 0 : expected[i - 1]);
  CUdeviceptr din, dout;
  CHECK_CU(cuMemAlloc(&din, kN * sizeof(int)));
  CHECK_CU(cuMemAlloc(&dout, kN * sizeof(int)));
  CHECK_CU(cuMemcpyHtoD(din, in.data(), kN * sizeof(int)));
  int n = kN;
  void* params[] = {&din, &dout, &n};
  CHECK_CU(cuLaunchKernel(scan, (kN + kBlock - 1) / kBlock, 1, 1, kBlock, 1, 1, 0, nullptr, params, nullptr));
  CHECK_CU(cuMemcpyDtoH(out.data(), dout, kN * sizeof(int)));
  for (int i = 0; i < kN; ++i) {
    if (out[i] != expected[i]) {
      std::printf("FAIL out[%d] = %d, expected %d\n", i, out[i], expected[i]);
      return 1;
    }
  }
  CHECK_CU(cuMemFree(din));
  CHECK_CU(cuMemFree(dout));
  CHECK_CU(cuModuleUnload(module));
  CHECK_CU(cuDevicePrimaryCtxRelease(device));
  std::printf("PASS nvrtc %s\n", kernel_name.c_str());
  return 0;
}
