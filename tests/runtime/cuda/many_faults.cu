// One kernel, launched 20 times without a synchronization between, stores to an address nothing
// maps from thread 17 of CTA 3 of every launch: each launch faults on the device. The kernel's
// long (mangled template) name must not push the CTA and thread out of the reported message.
#include "check.cuh"

template <typename Element, int kUnroll>
__global__ void a_kernel_whose_mangled_template_name_is_long_enough_to_fill_a_completion_message(Element* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  Element* target = out + i * kUnroll;
  if (blockIdx.x == 3 && threadIdx.x == 17) target = reinterpret_cast<Element*>(0x7f0000001000ull);
  *target = static_cast<Element>(i);
}

int main() {
  constexpr int kLaunches = 20;
  float* device = nullptr;
  EXPECT_CUDA(cudaMalloc(&device, 8 * 64 * 2 * sizeof(float)), cudaSuccess);
  for (int launch = 0; launch < kLaunches; ++launch) {
    a_kernel_whose_mangled_template_name_is_long_enough_to_fill_a_completion_message<float, 2><<<8, 64>>>(device);
  }
  EXPECT_CUDA(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  std::printf("PASS many_faults: %d launches, the fault reported\n", kLaunches);
  return 0;
}
