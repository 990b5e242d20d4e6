// Shared by the runtime test programs: report a CUDA result and exit with a code the tests check.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define EXPECT_CUDA(call, expected)                                                                    \
  do {                                                                                                 \
    const cudaError_t result_ = (call);                                                                \
    if (result_ != (expected)) {                                                                       \
      std::printf("FAIL %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call,             \
                  cudaGetErrorName(result_), cudaGetErrorName(expected));                              \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)
