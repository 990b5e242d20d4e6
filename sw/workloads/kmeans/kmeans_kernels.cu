// k-means assignment step: each thread takes one point (features stored feature-major, so a
// warp's loads coalesce), finds the nearest centre (squared Euclidean distance accumulated with
// fmaf in feature order, ties to the lower index), records membership changes with atomicAdd,
// and counts cluster sizes with shared-memory atomics merged into global ones. The host
// recomputes the centres from the memberships, as in the classic GPU k-means.

extern "C" __global__ void kmeans_assign(const float* features, int points, int dims, const float* centres,
                                         int clusters, int* membership, int* changed, int* cluster_sizes) {
  extern __shared__ float shared[];  // clusters*dims centres, then clusters counters
  float* centre = shared;
  int* sizes = reinterpret_cast<int*>(shared + clusters * dims);
  for (int i = threadIdx.x; i < clusters * dims; i += blockDim.x) centre[i] = centres[i];
  for (int i = threadIdx.x; i < clusters; i += blockDim.x) sizes[i] = 0;
  __syncthreads();

  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < points) {
    int best = 0;
    float best_distance = 0.0f;
    for (int c = 0; c < clusters; ++c) {
      float distance = 0.0f;
      for (int d = 0; d < dims; ++d) {
        const float diff = features[d * points + p] - centre[c * dims + d];
        distance = fmaf(diff, diff, distance);
      }
      if (c == 0 || distance < best_distance) {
        best_distance = distance;
        best = c;
      }
    }
    if (membership[p] != best) {
      atomicAdd(changed, 1);
      membership[p] = best;
    }
    atomicAdd(&sizes[best], 1);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < clusters; i += blockDim.x) {
    if (sizes[i] != 0) atomicAdd(&cluster_sizes[i], sizes[i]);
  }
}
