// Every libcuda symbol that gpuvp does not implement: names itself once on stderr and returns
// CUDA_ERROR_NOT_SUPPORTED, so that a program calling it keeps running. No CUDA headers here: the
// stubs take no parameters (callers' arguments are ignored, as the C calling convention allows)
// and are given the API's names as their symbol names.
namespace gpuvp::cuda_driver {
int report_unimplemented(const char* name);  // api_proc.cpp
}

#define GPUVP_CU_UNIMPLEMENTED(name)                                                        \
  extern "C" __attribute__((visibility("default"))) int gpuvp_stub_##name() __asm__(#name); \
  extern "C" int gpuvp_stub_##name() { return gpuvp::cuda_driver::report_unimplemented(#name); }
#include "sw/cuda_driver_api/unimplemented.inc"
#undef GPUVP_CU_UNIMPLEMENTED
