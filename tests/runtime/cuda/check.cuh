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

// A condition the program checks against its CPU reference.
#define CHECK(condition)                                                \
  do {                                                                  \
    if (!(condition)) {                                                 \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition); \
      std::exit(1);                                                     \
    }                                                                   \
  } while (0)
