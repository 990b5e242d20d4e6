#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

int fibonacci(int n) { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }

}  // namespace

WorkloadResult run_recursion(Device& device) {
  constexpr int kThreads = 300;
  constexpr int kSortLength = 24;
  constexpr std::uint32_t kBlock = 64;

  Rng rng(0x5eed0014);
  std::vector<int> sort_input(kThreads * kSortLength);
  for (int& v : sort_input) v = rng.uniform_int(-1000, 1000);
  std::vector<std::uint32_t> gcd_input(2 * kThreads);
  for (int t = 0; t < kThreads; ++t) {
    const std::uint32_t common = static_cast<std::uint32_t>(rng.uniform_int(1, 500));
    gcd_input[2 * t] = common * static_cast<std::uint32_t>(rng.uniform_int(1, 100000));
    gcd_input[2 * t + 1] = common * static_cast<std::uint32_t>(rng.uniform_int(1, 100000));
  }

  DeviceBuffer<int> d_sort_input(device, sort_input), d_sorted(device, sort_input.size()), d_results(device, kThreads * 6);
  DeviceBuffer<std::uint32_t> d_gcd_input(device, gcd_input);
  device.launch("recursion_kernel", ceil_div(kThreads, kBlock), kBlock, 0,
                KernelArgs().ptr(d_sort_input.ptr()).ptr(d_gcd_input.ptr()).ptr(d_sorted.ptr()).ptr(d_results.ptr()).i32(kThreads));
  device.synchronize();

  std::vector<int> want_sorted = sort_input, want_results(kThreads * 6);
  for (int t = 0; t < kThreads; ++t) {
    const auto begin = want_sorted.begin() + t * kSortLength;
    const int length = kSortLength - (t % 7);
    std::sort(begin, begin + length);
    const int smallest = *std::min_element(begin, begin + length);
    const int largest = *std::max_element(begin, begin + length);
    const long long total = std::accumulate(begin, begin + length, 0LL);
    int* out = &want_results[static_cast<std::size_t>(t) * 6];
    out[0] = fibonacci(t % 16);
    out[1] = static_cast<int>(std::gcd(gcd_input[2 * t], gcd_input[2 * t + 1]));
    out[2] = smallest;
    out[3] = largest;
    out[4] = static_cast<int>(total);
    const int op[4] = {largest + smallest, largest - smallest, largest * smallest, largest ^ smallest};
    out[5] = op[t % 4];
  }

  Check check;
  check.exact("sorted", d_sorted.download(), want_sorted);
  check.exact("results", d_results.download(), want_results);
  return check.result("300 threads: recursive fibonacci/gcd/merge sort, struct return, divergent calls");
}

}  // namespace gpuvp::workloads
