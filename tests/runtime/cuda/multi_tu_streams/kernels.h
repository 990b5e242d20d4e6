// Host wrappers of the kernels in saxpy.cu and reduce.cu (each its own translation unit and
// fatbin).
#pragma once
#include <cuda_runtime.h>

void launch_saxpy(float a, const float* x, float* y, int n, cudaStream_t stream);
void launch_block_sums(const float* in, float* sums, int n, cudaStream_t stream);
void set_offset(float offset);
