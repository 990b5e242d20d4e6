#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/rng.h"
#include "common/workloads.h"

namespace gpuvp::workloads {
namespace {

constexpr int kPoints = 3000;
constexpr int kDims = 4;
constexpr int kClusters = 7;
constexpr int kMaxIterations = 30;

// New centres: mean of member points, summed in point order (the same host code for the device
// run and the CPU reference). An empty cluster keeps its centre.
std::vector<float> recompute_centres(const std::vector<float>& features, const std::vector<int>& membership,
                                     const std::vector<float>& old_centres) {
  std::vector<float> sums(kClusters * kDims, 0.0f), centres = old_centres;
  std::vector<int> counts(kClusters, 0);
  for (int p = 0; p < kPoints; ++p) {
    ++counts[membership[p]];
    for (int d = 0; d < kDims; ++d) sums[membership[p] * kDims + d] += features[d * kPoints + p];
  }
  for (int c = 0; c < kClusters; ++c) {
    if (counts[c] == 0) continue;
    for (int d = 0; d < kDims; ++d) centres[c * kDims + d] = sums[c * kDims + d] / static_cast<float>(counts[c]);
  }
  return centres;
}

struct Iteration {
  std::vector<int> membership;
  std::vector<int> sizes;
  int changed = 0;
};

Iteration cpu_assign(const std::vector<float>& features, const std::vector<float>& centres, std::vector<int> membership) {
  Iteration out;
  out.sizes.assign(kClusters, 0);
  for (int p = 0; p < kPoints; ++p) {
    int best = 0;
    float best_distance = 0.0f;
    for (int c = 0; c < kClusters; ++c) {
      float distance = 0.0f;
      for (int d = 0; d < kDims; ++d) {
        const float diff = features[d * kPoints + p] - centres[c * kDims + d];
        distance = std::fma(diff, diff, distance);
      }
      if (c == 0 || distance < best_distance) {
        best_distance = distance;
        best = c;
      }
    }
    if (membership[p] != best) ++out.changed;
    membership[p] = best;
    ++out.sizes[best];
  }
  out.membership = std::move(membership);
  return out;
}

}  // namespace

WorkloadResult run_kmeans(Device& device) {
  constexpr std::uint32_t kBlock = 128;
  // Points scattered around kClusters blobs, stored feature-major.
  Rng rng(0x5eed000c);
  std::vector<float> blob(kClusters * kDims);
  for (float& v : blob) v = rng.uniform_float(-10.0f, 10.0f);
  std::vector<float> features(kDims * kPoints);
  for (int p = 0; p < kPoints; ++p) {
    const int home = rng.uniform_int(0, kClusters - 1);
    for (int d = 0; d < kDims; ++d) features[d * kPoints + p] = blob[home * kDims + d] + rng.uniform_float(-4.0f, 4.0f);
  }
  // Initial centres: the first kClusters points.
  std::vector<float> initial(kClusters * kDims);
  for (int c = 0; c < kClusters; ++c) {
    for (int d = 0; d < kDims; ++d) initial[c * kDims + d] = features[d * kPoints + c];
  }

  DeviceBuffer<float> d_features(device, features), d_centres(device, initial);
  DeviceBuffer<int> d_membership(device, std::vector<int>(kPoints, -1)), d_changed(device, 1), d_sizes(device, kClusters);
  const std::uint32_t shared_bytes = kClusters * kDims * sizeof(float) + kClusters * sizeof(int);

  Check check;
  std::vector<float> centres = initial, want_centres = initial;
  std::vector<int> want_membership(kPoints, -1);
  int iterations = 0;
  for (; iterations < kMaxIterations; ++iterations) {
    d_changed.zero();
    d_sizes.zero();
    d_centres.upload(centres);
    device.launch("kmeans_assign", ceil_div(kPoints, kBlock), kBlock, shared_bytes,
                  KernelArgs().ptr(d_features.ptr()).i32(kPoints).i32(kDims).ptr(d_centres.ptr()).i32(kClusters)
                      .ptr(d_membership.ptr()).ptr(d_changed.ptr()).ptr(d_sizes.ptr()));
    device.synchronize();
    const std::vector<int> membership = d_membership.download();
    const int changed = d_changed.download()[0];

    const Iteration want = cpu_assign(features, want_centres, want_membership);
    const std::string at = " (iteration " + std::to_string(iterations) + ")";
    check.exact("membership" + at, membership, want.membership);
    check.exact("changed" + at, changed, want.changed);
    check.exact("cluster sizes" + at, d_sizes.download(), want.sizes);
    if (!check.passed()) break;
    want_membership = want.membership;
    centres = recompute_centres(features, membership, centres);
    want_centres = recompute_centres(features, want_membership, want_centres);
    if (changed == 0) break;
  }
  // Distances use the same fmaf sequence on both sides and the centre update is shared host
  // code: memberships, counts and centres match exactly.
  check.exact("centres", centres, want_centres);
  return check.result("3000 points x 4 features, 7 clusters, " + std::to_string(iterations + 1) + " iterations");
}

}  // namespace gpuvp::workloads
