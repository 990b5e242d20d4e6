#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {

WorkloadResult run_bfs(Device& device) {
  constexpr int kVertices = 30'000;
  constexpr std::uint32_t kBlock = 128;

  // Random directed graph, 0..7 out-edges per vertex, mostly local (so levels are many) with
  // some long jumps; vertices with no in-edges stay unreached (level -1).
  Rng rng(0x5eed000b);
  std::vector<int> row_start{0}, adjacency;
  for (int v = 0; v < kVertices; ++v) {
    const int degree = rng.uniform_int(0, 7);
    for (int e = 0; e < degree; ++e) {
      const bool local = rng.uniform_int(0, 9) < 8;
      const int target = local ? (v + rng.uniform_int(-40, 300) + kVertices) % kVertices : rng.uniform_int(0, kVertices - 1);
      adjacency.push_back(target);
    }
    row_start.push_back(static_cast<int>(adjacency.size()));
  }
  constexpr int kSource = 0;

  std::vector<int> level(kVertices, -1);
  level[kSource] = 0;
  DeviceBuffer<int> d_start(device, row_start), d_adjacency(device, adjacency), d_level(device, level);
  DeviceBuffer<int> d_frontier_a(device, kVertices), d_frontier_b(device, kVertices), d_next_size(device, 1);
  d_frontier_a.upload(std::vector<int>(kVertices, kSource));
  DevicePtr frontier = d_frontier_a.ptr();
  DevicePtr next = d_frontier_b.ptr();
  std::vector<int> frontier_sizes;
  int frontier_size = 1;
  for (int depth = 1; frontier_size > 0; ++depth) {
    frontier_sizes.push_back(frontier_size);
    d_next_size.zero();
    device.launch("bfs_expand", ceil_div(static_cast<std::uint64_t>(frontier_size), kBlock), kBlock, 0,
                  KernelArgs().ptr(d_start.ptr()).ptr(d_adjacency.ptr()).ptr(d_level.ptr()).ptr(frontier)
                      .i32(frontier_size).ptr(next).ptr(d_next_size.ptr()).i32(depth));
    device.synchronize();
    frontier_size = d_next_size.download()[0];
    std::swap(frontier, next);
  }

  std::vector<int> want_sizes;
  std::deque<int> queue{kSource};
  std::vector<int> want = level;
  std::size_t level_end = 1;
  std::size_t visited = 0;
  while (!queue.empty()) {
    // Level by level, to record the frontier sizes the device saw.
    want_sizes.push_back(static_cast<int>(level_end - visited));
    const std::size_t end = level_end;
    for (; visited < end; ++visited) {
      const int v = queue.front();
      queue.pop_front();
      for (int e = row_start[v]; e < row_start[v + 1]; ++e) {
        if (want[adjacency[e]] == -1) {
          want[adjacency[e]] = want[v] + 1;
          queue.push_back(adjacency[e]);
          ++level_end;
        }
      }
    }
  }

  Check check;
  check.exact("level", d_level.download(), want);
  check.exact("frontier sizes", frontier_sizes, want_sizes);
  return check.result("30000 vertices, " + std::to_string(adjacency.size()) + " edges, " +
                      std::to_string(want_sizes.size()) + " levels");
}

}  // namespace gpuvp::workloads
