#include <algorithm>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_warp_match(Device& device) {
  constexpr int kElements = 64 * 32;  // whole warps
  constexpr std::uint32_t kBlock = 128;

  Rng rng(0x5eed0015);
  std::vector<int> keys(kElements);
  for (int& k : keys) k = rng.uniform_int(0, 3);
  for (int i = 0; i < 32; ++i) keys[5 * 32 + i] = 42;  // one warp where every key matches

  DeviceBuffer<int> d_keys(device, keys), d_groups(device, kElements), d_all_equal(device, kElements);
  device.launch("warp_match", kElements / kBlock, kBlock, 0,
                KernelArgs().ptr(d_keys.ptr()).ptr(d_groups.ptr()).ptr(d_all_equal.ptr()).i32(kElements));
  device.synchronize();

  std::vector<int> want_groups(kElements), want_all_equal(kElements);
  for (int i = 0; i < kElements; ++i) {
    const int base = i / 32 * 32;
    want_groups[i] = static_cast<int>(std::count(keys.begin() + base, keys.begin() + base + 32, keys[i]));
    want_all_equal[i] = want_groups[i] == 32 ? 1 : 0;
  }

  Check check;
  check.exact("match.any group sizes", d_groups.download(), want_groups);
  check.exact("match.all", d_all_equal.download(), want_all_equal);
  return check.result("64 warps, keys in 0..3 plus one uniform warp");
}

}  // namespace gpuvp::workloads
