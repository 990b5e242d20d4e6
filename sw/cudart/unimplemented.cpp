// Every runtime API function that gpuvp does not implement: logs its name once and returns
// cudaErrorNotSupported, so that a program calling it keeps running. No CUDA headers here: the
// stubs take no parameters (callers' arguments are ignored, as the C calling convention allows)
// and are given the API's names as their symbol names.
namespace gpuvp::cudart {
int report_unimplemented(const char* name);  // runtime.cpp
}

#define GPUVP_UNIMPLEMENTED(name)                                                           \
  extern "C" __attribute__((visibility("default"))) int gpuvp_stub_##name() __asm__(#name); \
  extern "C" int gpuvp_stub_##name() { return gpuvp::cudart::report_unimplemented(#name); }
#include "sw/cudart/unimplemented.inc"
#undef GPUVP_UNIMPLEMENTED
