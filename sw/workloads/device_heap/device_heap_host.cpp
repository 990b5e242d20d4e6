#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_device_heap(Device& device) {
  constexpr int kThreads = 1000;
  constexpr std::uint32_t kBlock = 128;
  Rng rng(0x5eed0031);
  std::vector<int> seeds(kThreads);
  for (int& s : seeds) s = rng.uniform_int(-50000, 50000);

  DeviceBuffer<int> d_seeds(device, seeds);
  DeviceBuffer<std::uint64_t> d_heads(device, kThreads);
  DeviceBuffer<long long> d_sums(device, kThreads);
  device.launch("heap_build_lists", ceil_div(kThreads, kBlock), kBlock, 0,
                KernelArgs().ptr(d_seeds.ptr()).ptr(d_heads.ptr()).i32(kThreads));
  device.synchronize();
  // The host follows the first list through device memory: blocks are ordinary device memory.
  const std::vector<std::uint64_t> heads = d_heads.download();
  std::vector<int> first_list;
  for (std::uint64_t node = heads[12]; node != 0 && first_list.size() < 64;) {
    struct {
      std::int32_t value;
      std::int32_t pad;
      std::uint64_t next;
    } copy{};
    device.copy_to_host(&copy, node, sizeof copy);
    first_list.push_back(copy.value);
    node = copy.next;
  }
  device.launch("heap_sum_lists", ceil_div(kThreads, kBlock), kBlock, 0,
                KernelArgs().ptr(d_heads.ptr()).ptr(d_sums.ptr()).i32(kThreads));

  // 4096 threads ask for 4 KiB each from the 8 MiB default heap, empty again after the lists
  // were deleted: exactly 2048 get a block, the others NULL.
  constexpr int kGrabbers = 4096;
  constexpr unsigned kGrabBytes = 4096;
  DeviceBuffer<std::uint64_t> d_blocks(device, kGrabbers);
  DeviceBuffer<int> d_marks(device, kGrabbers);
  device.launch("heap_grab", ceil_div(kGrabbers, kBlock), kBlock, 0,
                KernelArgs().ptr(d_blocks.ptr()).u32(kGrabBytes).i32(kGrabbers));
  device.launch("heap_release", ceil_div(kGrabbers, kBlock), kBlock, 0,
                KernelArgs().ptr(d_blocks.ptr()).ptr(d_marks.ptr()).i32(kGrabbers));
  device.synchronize();

  std::vector<long long> want_sums(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    long long sum = 0;
    const int length = t % 13 + 1;
    for (int i = 0; i < length; ++i) sum += static_cast<long long>(seeds[t]) * (i + 1) - i;
    want_sums[t] = sum * 100 + length;
  }
  std::vector<int> want_first_list;
  for (int i = 12 % 13; i >= 0; --i) want_first_list.push_back(seeds[12] * (i + 1) - i);

  const std::vector<int> marks = d_marks.download();
  int granted = 0;
  bool marks_ok = true;
  for (int t = 0; t < kGrabbers; ++t) {
    if (marks[t] == -1) continue;
    ++granted;
    marks_ok = marks_ok && marks[t] == ((t & 0xff) | (((t >> 8) & 0xff) << 8));
  }
  Check check;
  check.exact("list sums", d_sums.download(), want_sums);
  check.exact("list 12 read by the host", first_list, want_first_list);
  check.exact("4 KiB blocks granted of 8 MiB", granted, 2048);
  check.exact("blocks hold what their thread wrote", marks_ok ? 1 : 0, 1);
  return check.result("1000 threads: new/delete lists across launches; 4096 x 4 KiB malloc exhausts the 8 MiB heap");
}

}  // namespace gpuvp::workloads
