#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

// Same layout as the kernel's struct.
struct GlobalCounters {
  float float_sum;
  int int_sub;
  double double_sum;
  std::uint64_t and64;
  std::uint64_t or64;
  std::uint64_t xor64;
  std::uint32_t wrap_inc;
  std::uint32_t wrap_dec;
  std::int32_t min32;
  std::int32_t max32;
  std::int64_t min64;
  std::int64_t max64;
  double cas_max;
  std::uint32_t ticket;
  std::int32_t exchange_slot;
  std::int32_t block_scope_sum;
};

}  // namespace

WorkloadResult run_atomics(Device& device) {
  constexpr int kElements = 5000;
  constexpr std::uint32_t kBlock = 128;
  const std::uint32_t grid = ceil_div(kElements, kBlock);

  // Floats are multiples of 1/4 below 8 and doubles multiples of 2^-20 below 1, so every
  // partial sum is exactly representable and the totals do not depend on the order.
  Rng rng(0x5eed0018);
  std::vector<float> quarters(kElements);
  std::vector<double> fine(kElements);
  std::vector<int> ints(kElements);
  std::vector<std::uint64_t> masks(kElements);
  for (int i = 0; i < kElements; ++i) {
    quarters[i] = static_cast<float>(rng.uniform_int(0, 31)) * 0.25f;
    fine[i] = static_cast<double>(rng.uniform_int(0, (1 << 20) - 1)) * 0x1.0p-20;
    ints[i] = rng.uniform_int(-1000, 1000);
    masks[i] = rng.next_u64() | rng.next_u64();
  }
  GlobalCounters initial{};
  initial.and64 = ~0ULL;
  initial.min32 = 1 << 30;
  initial.max32 = -(1 << 30);
  initial.min64 = INT64_MAX;
  initial.max64 = INT64_MIN;
  initial.cas_max = -1.0;
  initial.exchange_slot = -1;

  DeviceBuffer<float> d_quarters(device, quarters);
  DeviceBuffer<double> d_fine(device, fine);
  DeviceBuffer<int> d_ints(device, ints), d_exchanged(device, kElements), d_block_out(device, grid * 5);
  DeviceBuffer<std::uint64_t> d_masks(device, masks);
  DeviceBuffer<GlobalCounters> d_counters(device, std::vector<GlobalCounters>{initial});
  DeviceBuffer<std::uint32_t> d_tickets(device, kElements);
  device.launch("atomics_global", grid, kBlock, 0,
                KernelArgs().ptr(d_quarters.ptr()).ptr(d_fine.ptr()).ptr(d_ints.ptr()).ptr(d_masks.ptr())
                    .ptr(d_counters.ptr()).ptr(d_tickets.ptr()).ptr(d_exchanged.ptr()).i32(kElements));
  device.launch("atomics_shared", grid, kBlock, 0, KernelArgs().ptr(d_ints.ptr()).ptr(d_block_out.ptr()).i32(kElements));
  device.synchronize();
  const GlobalCounters got = d_counters.download()[0];

  GlobalCounters want = initial;
  for (int i = 0; i < kElements; ++i) {
    want.float_sum += quarters[i];
    want.int_sub -= ints[i];
    want.double_sum += fine[i];
    want.and64 &= masks[i] | (masks[i] >> 3);
    want.or64 |= masks[i] & (masks[i] << 5);
    want.xor64 ^= masks[i];
    want.wrap_inc = want.wrap_inc >= 9 ? 0 : want.wrap_inc + 1;
    want.wrap_dec = (want.wrap_dec == 0 || want.wrap_dec > 9) ? 9 : want.wrap_dec - 1;
    want.min32 = std::min(want.min32, ints[i]);
    want.max32 = std::max(want.max32, ints[i]);
    want.min64 = std::min(want.min64, std::int64_t{ints[i]} * std::int64_t{1000003});
    want.max64 = std::max(want.max64, std::int64_t{ints[i]} * std::int64_t{1000003});
    want.cas_max = std::max(want.cas_max, fine[i]);
  }
  want.ticket = kElements;
  want.block_scope_sum = kElements;

  Check check;
  check.exact("float atomicAdd", got.float_sum, want.float_sum);
  check.exact("int atomicSub", got.int_sub, want.int_sub);
  check.exact("double atomicAdd", got.double_sum, want.double_sum);
  check.exact("atomicAnd 64", got.and64, want.and64);
  check.exact("atomicOr 64", got.or64, want.or64);
  check.exact("atomicXor 64", got.xor64, want.xor64);
  check.exact("atomicInc wrap", got.wrap_inc, want.wrap_inc);
  check.exact("atomicDec wrap", got.wrap_dec, want.wrap_dec);
  check.exact("atomicMin 32", got.min32, want.min32);
  check.exact("atomicMax 32", got.max32, want.max32);
  check.exact("atomicMin 64", got.min64, want.min64);
  check.exact("atomicMax 64", got.max64, want.max64);
  check.exact("atomicCAS max", got.cas_max, want.cas_max);
  check.exact("ticket counter", got.ticket, want.ticket);
  check.exact("atomicAdd_block", got.block_scope_sum, want.block_scope_sum);

  // Tickets are a permutation of 0..n-1; the exchanged values plus the final slot are
  // {-1, 0, ..., n-1}, each exactly once.
  std::vector<std::uint32_t> tickets = d_tickets.download(), want_tickets(kElements);
  std::sort(tickets.begin(), tickets.end());
  std::iota(want_tickets.begin(), want_tickets.end(), 0u);
  check.exact("tickets (sorted)", tickets, want_tickets);
  std::vector<int> chain = d_exchanged.download(), want_chain(kElements + 1);
  chain.push_back(got.exchange_slot);
  std::sort(chain.begin(), chain.end());
  std::iota(want_chain.begin(), want_chain.end(), -1);
  check.exact("exchange chain (sorted)", chain, want_chain);

  std::vector<int> want_blocks(grid * 5);
  for (std::uint32_t b = 0; b < grid; ++b) {
    int sum = 0, count = 0, all = 1, any = 0;
    for (std::uint32_t t = 0; t < kBlock; ++t) {
      const std::size_t i = b * kBlock + t;
      const int value = i < kElements ? ints[i] : 0;
      sum += value;
      count += value > 0;
      all = all && value > -900;
      any = any || value > 990;
    }
    int* out = &want_blocks[b * 5];
    out[0] = sum;
    out[1] = static_cast<int>(kBlock);
    out[2] = count;
    out[3] = all;
    out[4] = any;
  }
  check.exact("shared atomics and barrier reductions", d_block_out.download(), want_blocks);
  return check.result("5000 threads, 16 global atomic kinds, shared atomics, bar.red");
}

}  // namespace gpuvp::workloads
