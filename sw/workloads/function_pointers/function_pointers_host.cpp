#include <algorithm>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_function_pointers(Device& device) {
  constexpr int kElements = 5000;
  constexpr std::uint32_t kBlock = 128;

  Rng rng(0x5eed0016);
  std::vector<int> selector(kElements), a(kElements), b(kElements);
  for (int i = 0; i < kElements; ++i) {
    selector[i] = rng.uniform_int(0, 15);
    a[i] = rng.uniform_int(-1000, 1000);
    b[i] = rng.uniform_int(-1000, 1000);
  }
  DeviceBuffer<int> d_selector(device, selector), d_a(device, a), d_b(device, b), d_out(device, kElements);
  device.launch("apply_ops", ceil_div(kElements, kBlock), kBlock, 0,
                KernelArgs().ptr(d_selector.ptr()).ptr(d_a.ptr()).ptr(d_b.ptr()).ptr(d_out.ptr()).i32(kElements));
  device.synchronize();

  const auto apply = [](int op, int x, int y) {
    switch (op) {
      case 0: return x + y;
      case 1: return x - y;
      case 2: return x * y;
      default: return std::max(x, y);
    }
  };
  std::vector<int> want(kElements);
  for (int i = 0; i < kElements; ++i) want[i] = apply((selector[i] >> 2) & 3, apply(selector[i] & 3, a[i], b[i]), b[i]);

  Check check;
  check.exact("out", d_out.download(), want);
  return check.result("5000 threads, two chained indirect calls each, 4 targets");
}

}  // namespace gpuvp::workloads
