// A CUDA driver-API program, as a user writes one: loads kernels.cu as PTX text and as a fatbin,
// launches them with kernelParams and with a packed parameter buffer, and checks every result
// against the CPU. Modes:
//   driver_api run KERNELS.ptx KERNELS.fatbin   contexts, devices, modules, memory, launches, streams, events
//   driver_api bad KERNELS.ptx                  bad inputs get the documented errors; the device keeps serving
//   driver_api attributes                       prints every CUdevice_attribute (device_attributes.inc)
// Prints PASS <mode> and exits 0 when every check held.
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

const char* name_of(CUresult r) {
  const char* name = nullptr;
  return cuGetErrorName(r, &name) == CUDA_SUCCESS ? name : "(unnamed)";
}

#define EXPECT_CU(call, expected)                                                                                  \
  do {                                                                                                             \
    const CUresult result_ = (call);                                                                               \
    if (result_ != (expected)) {                                                                                   \
      std::printf("FAIL %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call, name_of(result_),       \
                  name_of(expected));                                                                              \
      std::exit(1);                                                                                                \
    }                                                                                                              \
  } while (0)
#define CHECK_CU(call) EXPECT_CU(call, CUDA_SUCCESS)
#define CHECK(condition)                                                                \
  do {                                                                                  \
    if (!(condition)) {                                                                 \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition);                  \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::printf("FAIL cannot read %s\n", path);
    std::exit(1);
  }
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

constexpr int kN = 1000;

// saxpy over kN elements with kernelParams, checked against the CPU.
void run_saxpy(CUmodule module, CUstream stream, float a) {
  CUfunction saxpy;
  CHECK_CU(cuModuleGetFunction(&saxpy, module, "saxpy"));
  std::vector<float> x(kN), y(kN), expected(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = 0.5f * static_cast<float>(i);
    y[i] = static_cast<float>(kN - i);
    expected[i] = a * x[i] + y[i];
  }
  CUdeviceptr dx, dy;
  CHECK_CU(cuMemAlloc(&dx, kN * sizeof(float)));
  CHECK_CU(cuMemAlloc(&dy, kN * sizeof(float)));
  CHECK_CU(cuMemcpyHtoD(dx, x.data(), kN * sizeof(float)));
  CHECK_CU(cuMemcpyHtoDAsync(dy, y.data(), kN * sizeof(float), stream));
  int n = kN;
  void* params[] = {&a, &dx, &dy, &n};
  CHECK_CU(cuLaunchKernel(saxpy, (kN + 127) / 128, 1, 1, 128, 1, 1, 0, stream, params, nullptr));
  std::vector<float> got(kN);
  CHECK_CU(cuMemcpyDtoHAsync(got.data(), dy, kN * sizeof(float), stream));
  CHECK_CU(cuStreamSynchronize(stream));
  for (int i = 0; i < kN; ++i) {
    if (got[i] != expected[i]) {
      std::printf("FAIL saxpy y[%d] = %g, expected %g\n", i, got[i], expected[i]);
      std::exit(1);
    }
  }
  CHECK_CU(cuMemFree(dx));
  CHECK_CU(cuMemFree(dy));
}

// affine with the packed-buffer form of cuLaunchKernel (`extra`), offsets laid out by hand as
// the C ABI places the parameters.
void run_affine_packed(CUmodule module) {
  CUfunction affine;
  CHECK_CU(cuModuleGetFunction(&affine, module, "affine"));
  std::vector<int> in(kN);
  for (int i = 0; i < kN; ++i) in[i] = i * 7 - 3000;
  CUdeviceptr din, dout;
  CHECK_CU(cuMemAlloc(&din, kN * sizeof(int)));
  CHECK_CU(cuMemAlloc(&dout, kN * sizeof(long long)));
  CHECK_CU(cuMemcpyHtoD(din, in.data(), kN * sizeof(int)));
  CHECK_CU(cuMemsetD32(dout, 0xdeadbeefu, kN * 2));  // a non-uniform pattern the kernel overwrites
  struct alignas(8) Packed {
    char bias_sign;       // offset 0
    double scale;         // offset 8
    CUdeviceptr in, out;  // 16, 24
    short offset;         // 32
    int n;                // 36
  } packed{-1, 2.5, din, dout, 11, kN};
  static_assert(offsetof(Packed, n) == 36, "layout of affine's parameters");
  size_t bytes = sizeof packed;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes, CU_LAUNCH_PARAM_END};
  CHECK_CU(cuLaunchKernel(affine, (kN + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra));
  std::vector<long long> out(kN);
  CHECK_CU(cuMemcpyDtoH(out.data(), dout, kN * sizeof(long long)));
  for (int i = 0; i < kN; ++i) {
    const long long expected = static_cast<long long>(2.5 * in[i]) - 11;
    if (out[i] != expected) {
      std::printf("FAIL affine out[%d] = %lld, expected %lld\n", i, out[i], expected);
      std::exit(1);
    }
  }
  CHECK_CU(cuMemFree(din));
  CHECK_CU(cuMemFree(dout));
}

int run(const char* ptx_path, const char* fatbin_path) {
  int version = 0;
  CHECK_CU(cuDriverGetVersion(&version));
  CHECK(version >= 13000);
  CHECK_CU(cuInit(0));
  int count = 0;
  CHECK_CU(cuDeviceGetCount(&count));
  CHECK(count == 1);
  CUdevice device;
  CHECK_CU(cuDeviceGet(&device, 0));
  EXPECT_CU(cuDeviceGet(&device, 1), CUDA_ERROR_INVALID_DEVICE);
  char name[256];
  CHECK_CU(cuDeviceGetName(name, sizeof name, device));
  int major = 0, minor = 0, sms = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // deprecated, still exported and used
  CHECK_CU(cuDeviceComputeCapability(&major, &minor, device));
#pragma GCC diagnostic pop
  CHECK_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  size_t total = 0;
  CHECK_CU(cuDeviceTotalMem(&total, device));
  CUuuid uuid;
  CHECK_CU(cuDeviceGetUuid(&uuid, device));
  std::printf("device %s cc %d.%d sms %d memory %zu\n", name, major, minor, sms, total);

  // The primary context, then a created one pushed over it.
  CUcontext primary, created, current;
  CHECK_CU(cuDevicePrimaryCtxRetain(&primary, device));
  unsigned flags = 0;
  int active = 0;
  CHECK_CU(cuDevicePrimaryCtxGetState(device, &flags, &active));
  CHECK(active == 1);
  CHECK_CU(cuCtxSetCurrent(primary));
  CHECK_CU(cuCtxGetCurrent(&current));
  CHECK(current == primary);
  CHECK_CU(cuCtxCreate(&created, nullptr, 0, device));
  CHECK_CU(cuCtxGetCurrent(&current));
  CHECK(current == created);
  CUdevice context_device = -1;
  CHECK_CU(cuCtxGetDevice(&context_device));
  CHECK(context_device == device);

  // PTX text, kernelParams, a created stream.
  const std::string ptx = read_file(ptx_path);
  CUmodule from_ptx;
  CHECK_CU(cuModuleLoadData(&from_ptx, ptx.c_str()));
  CUstream stream;
  CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  run_saxpy(from_ptx, stream, 3.0f);
  int callbacks = 0;
  CHECK_CU(cuStreamAddCallback(
      stream, [](CUstream, CUresult status, void* count) { *static_cast<int*>(count) += status == CUDA_SUCCESS; },
      &callbacks, 0));
  run_saxpy(from_ptx, stream, -1.5f);  // synchronizes the stream: the callback has run
  CHECK(callbacks == 1);
  CUdeviceptr counter;
  size_t counter_bytes = 0;
  CHECK_CU(cuModuleGetGlobal(&counter, &counter_bytes, from_ptx, "launches_seen"));
  CHECK(counter_bytes == sizeof(unsigned));
  unsigned launches = 0;
  CHECK_CU(cuMemcpyDtoH(&launches, counter, sizeof launches));
  CHECK(launches == 2);
  int registers = -1, max_threads = 0;
  CUfunction saxpy;
  CHECK_CU(cuModuleGetFunction(&saxpy, from_ptx, "saxpy"));
  CHECK_CU(cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, saxpy));
  CHECK_CU(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, saxpy));
  CHECK(max_threads > 0);
  CHECK_CU(cuModuleUnload(from_ptx));

  // Back on the primary context: a fatbin (with its cubin's register counts), the packed form,
  // events and device-to-device copies.
  CHECK_CU(cuCtxPopCurrent(&current));
  CHECK(current == created);
  CHECK_CU(cuCtxGetCurrent(&current));
  CHECK(current == primary);
  const std::string fatbin = read_file(fatbin_path);
  CUmodule from_fatbin;
  CHECK_CU(cuModuleLoadFatBinary(&from_fatbin, fatbin.data()));
  CHECK_CU(cuModuleGetFunction(&saxpy, from_fatbin, "saxpy"));
  CHECK_CU(cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, saxpy));
  CHECK(registers > 0);  // from the sm_75 cubin, as ptxas counted them
  CUevent start, stop;
  CHECK_CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CHECK_CU(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  CHECK_CU(cuEventRecord(start, nullptr));
  run_affine_packed(from_fatbin);
  run_saxpy(from_fatbin, nullptr, 0.25f);
  CHECK_CU(cuEventRecord(stop, nullptr));
  CHECK_CU(cuEventSynchronize(stop));
  CHECK_CU(cuEventQuery(stop));
  float ms = 0;
  CHECK_CU(cuEventElapsedTime(&ms, start, stop));
  CHECK(ms > 0);
  CHECK_CU(cuEventDestroy(start));
  CHECK_CU(cuEventDestroy(stop));

  CUdeviceptr a, b;
  CHECK_CU(cuMemAlloc(&a, 4096));
  CHECK_CU(cuMemAlloc(&b, 4096));
  CHECK_CU(cuMemsetD8(a, 0x5a, 4096));
  CHECK_CU(cuMemsetD16(a + 1024, 0x1234, 8));
  CHECK_CU(cuMemcpyDtoD(b, a, 4096));
  std::vector<unsigned char> bytes(4096);
  CHECK_CU(cuMemcpyDtoH(bytes.data(), b, 4096));
  for (int i = 0; i < 4096; ++i) {
    const unsigned char expected = (i >= 1024 && i < 1040) ? (i % 2 == 0 ? 0x34 : 0x12) : 0x5a;
    if (bytes[i] != expected) {
      std::printf("FAIL byte %d = %#x, expected %#x\n", i, bytes[i], expected);
      return 1;
    }
  }
  size_t free_bytes = 0, total_bytes = 0;
  CHECK_CU(cuMemGetInfo(&free_bytes, &total_bytes));
  CHECK(total_bytes == total && free_bytes < total_bytes);
  void* pinned = nullptr;
  CHECK_CU(cuMemAllocHost(&pinned, 1 << 16));
  CHECK_CU(cuMemcpyDtoH(pinned, a, 4096));
  CHECK(static_cast<unsigned char*>(pinned)[0] == 0x5a);
  CHECK_CU(cuMemFreeHost(pinned));
  CHECK_CU(cuMemFree(a));
  CHECK_CU(cuMemFree(b));
  CHECK_CU(cuStreamDestroy(stream));
  CHECK_CU(cuModuleUnload(from_fatbin));
  CHECK_CU(cuCtxSynchronize());
  CHECK_CU(cuCtxDestroy(created));
  CHECK_CU(cuDevicePrimaryCtxRelease(device));

  // cuGetProcAddress answers the symbol of the headers' ABI.
  void* function = nullptr;
  CUdriverProcAddressQueryResult status;
  CHECK_CU(cuGetProcAddress("cuMemAlloc", &function, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS && function == reinterpret_cast<void*>(&cuMemAlloc));
  EXPECT_CU(cuGetProcAddress("cuNoSuchFunction", &function, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && function == nullptr);
  // By version: a program written for CUDA 3.2 gets cuCtxCreate's three-argument form.
  void* create_v2 = nullptr;
  CHECK_CU(cuGetProcAddress("cuCtxCreate", &create_v2, 3020, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  CHECK_CU(cuGetProcAddress("cuCtxCreate", &function, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  CHECK(function == reinterpret_cast<void*>(&cuCtxCreate) && create_v2 != function);
  CUcontext old_style;
  CHECK_CU(reinterpret_cast<CUresult (*)(CUcontext*, unsigned, CUdevice)>(create_v2)(&old_style, 0, device));
  CHECK_CU(cuCtxGetCurrent(&current));
  CHECK(current == old_style);
  // The per-thread default stream form of cuLaunchKernel, launching saxpy on that stream.
  void* launch_per_thread = nullptr;
  CHECK_CU(cuGetProcAddress("cuLaunchKernel", &launch_per_thread, CUDA_VERSION,
                            CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status));
  CHECK(launch_per_thread != nullptr && launch_per_thread != reinterpret_cast<void*>(&cuLaunchKernel));
  {
    const std::string ptx_again = read_file(ptx_path);
    CUmodule module;
    CHECK_CU(cuModuleLoadData(&module, ptx_again.c_str()));
    CHECK_CU(cuModuleGetFunction(&saxpy, module, "saxpy"));
    std::vector<float> x(kN, 2.0f), y(kN, 1.0f);
    CUdeviceptr dx, dy;
    CHECK_CU(cuMemAlloc(&dx, kN * sizeof(float)));
    CHECK_CU(cuMemAlloc(&dy, kN * sizeof(float)));
    CHECK_CU(cuMemcpyHtoD(dx, x.data(), kN * sizeof(float)));
    CHECK_CU(cuMemcpyHtoD(dy, y.data(), kN * sizeof(float)));
    float a = 4.0f;
    int n = kN;
    void* params[] = {&a, &dx, &dy, &n};
    using LaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      CUstream, void**, void**);
    CHECK_CU(reinterpret_cast<LaunchKernel>(launch_per_thread)(saxpy, (kN + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr,
                                                               params, nullptr));
    CHECK_CU(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    CHECK_CU(cuMemcpyDtoH(y.data(), dy, kN * sizeof(float)));
    for (int i = 0; i < kN; ++i) CHECK(y[i] == 9.0f);
    CHECK_CU(cuMemFree(dx));
    CHECK_CU(cuMemFree(dy));
    CHECK_CU(cuModuleUnload(module));
  }
  CHECK_CU(cuCtxDestroy(old_style));
  std::printf("PASS run\n");
  return 0;
}

// Malformed PTX: line 5 names an instruction PTX does not have.
const char kBadPtx[] =
    ".version 8.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry broken() {\n"
    "  frobnicate.u32 %r1, 7;\n"
    "  ret;\n"
    "}\n";

int bad(const char* ptx_path) {
  // Before cuInit: CUDA_ERROR_NOT_INITIALIZED (cuDriverGetVersion and error names work).
  CUdeviceptr pointer;
  EXPECT_CU(cuMemAlloc(&pointer, 256), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_CU(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_NOT_INITIALIZED);
  CUdevice device;
  EXPECT_CU(cuDeviceGet(&device, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_CU(cuInit(1), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuInit(0));
  CHECK_CU(cuDeviceGet(&device, 0));

  // No current context: CUDA_ERROR_INVALID_CONTEXT.
  CUcontext current = reinterpret_cast<CUcontext>(1);
  CHECK_CU(cuCtxGetCurrent(&current));
  CHECK(current == nullptr);
  EXPECT_CU(cuMemAlloc(&pointer, 256), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CU(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_CONTEXT);
  CUmodule module;
  const std::string ptx = read_file(ptx_path);
  EXPECT_CU(cuModuleLoadData(&module, ptx.c_str()), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CU(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
  CUcontext context;
  CHECK_CU(cuCtxCreate(&context, nullptr, 0, device));
  EXPECT_CU(cuCtxDestroy(reinterpret_cast<CUcontext>(&current)), CUDA_ERROR_INVALID_CONTEXT);

  // Malformed PTX: CUDA_ERROR_INVALID_PTX, the error log naming the line.
  char error_log[1024] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(sizeof error_log)};
  EXPECT_CU(cuModuleLoadDataEx(&module, kBadPtx, 2, options, values), CUDA_ERROR_INVALID_PTX);
  std::printf("error log: %s\n", error_log);
  CHECK(std::strstr(error_log, ":5:") != nullptr || std::strstr(error_log, "line 5") != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(values[1]) == std::strlen(error_log) + 1);
  // A cubin is no PTX, garbage is no image.
  EXPECT_CU(cuModuleLoadData(&module, "\x7f" "ELF\2\1\1"), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_CU(cuModuleLoadData(&module, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuModuleLoad(&module, "/nonexistent/kernels.ptx"), CUDA_ERROR_FILE_NOT_FOUND);

  // A good module: bad names, bad handles, bad launch configurations.
  CHECK_CU(cuModuleLoadData(&module, ptx.c_str()));
  CUfunction function;
  EXPECT_CU(cuModuleGetFunction(&function, module, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
  CUdeviceptr global;
  EXPECT_CU(cuModuleGetGlobal(&global, nullptr, module, "no_such_variable"), CUDA_ERROR_NOT_FOUND);
  EXPECT_CU(cuModuleGetFunction(&function, reinterpret_cast<CUmodule>(&context), "saxpy"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_CU(cuLaunchKernel(reinterpret_cast<CUfunction>(&context), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
            CUDA_ERROR_INVALID_HANDLE);
  CHECK_CU(cuModuleGetFunction(&function, module, "saxpy"));
  float a = 2;
  CUdeviceptr x, y;
  CHECK_CU(cuMemAlloc(&x, 64 * sizeof(float)));
  CHECK_CU(cuMemAlloc(&y, 64 * sizeof(float)));
  int n = 64;
  void* params[] = {&a, &x, &y, &n};
  EXPECT_CU(cuLaunchKernel(function, 1, 1, 1, 2048, 1, 1, 0, nullptr, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuLaunchKernel(function, 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  size_t too_small = 8;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params, CU_LAUNCH_PARAM_BUFFER_SIZE, &too_small, CU_LAUNCH_PARAM_END};
  EXPECT_CU(cuLaunchKernel(function, 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr, extra), CUDA_ERROR_INVALID_VALUE);
  // An unimplemented entry point answers, and names itself once on stderr.
  EXPECT_CU(cuArrayDestroy(nullptr), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_CU(cuArrayDestroy(nullptr), CUDA_ERROR_NOT_SUPPORTED);

  // After all that the device still serves: saxpy on 64 elements.
  std::vector<float> hx(64), hy(64);
  for (int i = 0; i < 64; ++i) {
    hx[i] = static_cast<float>(i);
    hy[i] = 1.0f;
  }
  CHECK_CU(cuMemcpyHtoD(x, hx.data(), sizeof(float) * 64));
  CHECK_CU(cuMemcpyHtoD(y, hy.data(), sizeof(float) * 64));
  CHECK_CU(cuLaunchKernel(function, 1, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  CHECK_CU(cuMemcpyDtoH(hy.data(), y, sizeof(float) * 64));
  for (int i = 0; i < 64; ++i) CHECK(hy[i] == 2.0f * static_cast<float>(i) + 1.0f);
  CHECK_CU(cuCtxDestroy(context));
  EXPECT_CU(cuMemAlloc(&pointer, 256), CUDA_ERROR_INVALID_CONTEXT);  // the destroyed context was current
  const char* text = nullptr;
  CHECK_CU(cuGetErrorString(CUDA_ERROR_INVALID_PTX, &text));
  CHECK(text != nullptr && std::strstr(text, "PTX") != nullptr);
  EXPECT_CU(cuGetErrorName(static_cast<CUresult>(123456), &text), CUDA_ERROR_INVALID_VALUE);
  std::printf("PASS bad\n");
  return 0;
}

int attributes() {
  CHECK_CU(cuInit(0));
  CUdevice device;
  CHECK_CU(cuDeviceGet(&device, 0));
  int failures = 0;
#define X(name)                                                                            \
  {                                                                                        \
    int value = 0;                                                                         \
    const CUresult r = cuDeviceGetAttribute(&value, name, device);                         \
    if (r == CUDA_SUCCESS) {                                                               \
      std::printf("attribute %s %d\n", #name, value);                                      \
    } else {                                                                               \
      std::printf("attribute %s error %s\n", #name, name_of(r));                           \
      ++failures;                                                                          \
    }                                                                                      \
  }
#include "device_attributes.inc"
#undef X
  if (failures != 0) return 1;
  std::printf("PASS attributes\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "run" && argc == 4) return run(argv[2], argv[3]);
  if (mode == "bad" && argc == 3) return bad(argv[2]);
  if (mode == "attributes") return attributes();
  std::fprintf(stderr, "usage: driver_api run KERNELS.ptx KERNELS.fatbin | bad KERNELS.ptx | attributes\n");
  return 2;
}
