#include <string>
#include <vector>

#include "common/check.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_device_fault(Device& device) {
  constexpr int kElements = 2048;
  constexpr std::uint32_t kBlock = 128;
  constexpr int kTrapCta = 5;
  constexpr int kTrapThread = 38;  // value 5*128+38 = 678, a multiple of 3: inside the branch
  constexpr int kNoTrap = -1;

  std::vector<int> in(kElements);
  for (int i = 0; i < kElements; ++i) in[i] = i;
  DeviceBuffer<int> d_in(device, in), d_out(device, kElements);

  Check check;
  // 1. No trap requested: the kernel's result must be right.
  device.launch("maybe_trap", ceil_div(kElements, kBlock), kBlock, 0,
                KernelArgs().ptr(d_in.ptr()).ptr(d_out.ptr()).i32(kElements).i32(kNoTrap).i32(kNoTrap));
  device.synchronize();
  std::vector<int> want(kElements);
  for (int i = 0; i < kElements; ++i) want[i] = i % 3 == 0 ? i * 7 + 1 : i;
  check.exact("out", d_out.download(), want);

  // 2. Thread 38 of CTA 5 traps: the launch or
  //    the synchronization must report an error. Nothing may follow on a real GPU: the context
  //    is unusable after a trap.
  std::string error;
  try {
    device.launch("maybe_trap", ceil_div(kElements, kBlock), kBlock, 0,
                  KernelArgs().ptr(d_in.ptr()).ptr(d_out.ptr()).i32(kElements).i32(kTrapCta).i32(kTrapThread));
    device.synchronize();
  } catch (const DeviceError& e) {
    error = e.what();
  }
  check.expect(!error.empty(), "trap in CTA 5 thread 38 was not reported");
  return check.result("2048 threads; trap in one divergent thread reported as: " + (error.empty() ? std::string("nothing") : error));
}

}  // namespace gpuvp::workloads
