#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_dynamic_parallelism(Device& device) {
  Rng rng(0x5eed0032);
  constexpr int kSumLength = 8192;  // 64 leaves of 128: 126 child grids
  std::vector<int> values(kSumLength);
  for (int& v : values) v = rng.uniform_int(-100000, 100000);
  DeviceBuffer<int> d_values(device, values);
  DeviceBuffer<std::uint64_t> d_total(device, 1);
  device.memset(d_total.ptr(), 0, sizeof(std::uint64_t));
  device.launch("dp_tree_sum", 1, 128, 0, KernelArgs().ptr(d_values.ptr()).i32(0).i32(kSumLength).ptr(d_total.ptr()));

  constexpr int kSortLength = 3000;
  std::vector<int> keys(kSortLength);
  for (int& k : keys) k = rng.uniform_int(-1000000, 1000000);
  DeviceBuffer<int> d_keys(device, keys);
  device.launch("dp_quicksort", 1, 1, 0, KernelArgs().ptr(d_keys.ptr()).i32(0).i32(kSortLength - 1).i32(0));

  constexpr int kMarkBlocks = 6, kMarkThreads = 96;
  DeviceBuffer<int> d_marks(device, kMarkBlocks * kMarkThreads), d_verdict(device, 1);
  device.memset(d_verdict.ptr(), 0, sizeof(int));
  device.launch("dp_mark_then_tail", kMarkBlocks, kMarkThreads, 0, KernelArgs().ptr(d_marks.ptr()).ptr(d_verdict.ptr()));
  device.synchronize();

  long long sum = 0;
  for (int v : values) sum += v;
  std::sort(keys.begin(), keys.end());
  Check check;
  check.exact("tree sum", static_cast<std::int64_t>(d_total.download()[0]), static_cast<std::int64_t>(sum));
  check.exact("sorted", d_keys.download(), keys);
  check.exact("tail launch saw every block's marks", d_verdict.download()[0], kMarkBlocks * kMarkThreads);
  return check.result("child grids: 8192-element tree sum, 3000-key quicksort in device streams, tail launch");
}

}  // namespace gpuvp::workloads
