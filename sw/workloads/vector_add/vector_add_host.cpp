#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_vector_add(Device& device) {
  // Not a multiple of the block size, so the last CTA has idle threads.
  constexpr int kElements = 50'000;
  constexpr std::uint32_t kBlock = 256;

  Rng rng(0x5eed0001);
  std::vector<float> a(kElements), b(kElements);
  for (int i = 0; i < kElements; ++i) {
    a[i] = rng.uniform_float(-100.0f, 100.0f);
    b[i] = rng.uniform_float(-100.0f, 100.0f);
  }

  DeviceBuffer<float> d_a(device, a), d_b(device, b), d_c(device, kElements);
  device.launch("vector_add", ceil_div(kElements, kBlock), kBlock, 0,
                KernelArgs().ptr(d_a.ptr()).ptr(d_b.ptr()).ptr(d_c.ptr()).i32(kElements));
  device.synchronize();

  std::vector<float> expected(kElements);
  for (int i = 0; i < kElements; ++i) expected[i] = a[i] + b[i];

  // One IEEE addition per element, same on both sides: exact.
  Check check;
  check.exact("c", d_c.download(), expected);
  return check.result("50000 floats, 196 CTAs x 256");
}

}  // namespace gpuvp::workloads
