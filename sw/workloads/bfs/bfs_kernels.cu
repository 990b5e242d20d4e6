// Level-synchronous breadth-first search over a CSR graph. One thread per frontier vertex; a
// neighbour is claimed with atomicCAS on its level, and the winner appends it to the next
// frontier with atomicAdd. The order of the next frontier varies, the levels do not.

extern "C" __global__ void bfs_expand(const int* row_start, const int* adjacency, int* level, const int* frontier,
                                      int frontier_size, int* next_frontier, int* next_size, int next_level) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= frontier_size) return;
  const int vertex = frontier[i];
  for (int e = row_start[vertex]; e < row_start[vertex + 1]; ++e) {
    const int neighbour = adjacency[e];
    // Cheap read first: most neighbours are already visited.
    if (level[neighbour] != -1) continue;
    if (atomicCAS(&level[neighbour], -1, next_level) == -1) next_frontier[atomicAdd(next_size, 1)] = neighbour;
  }
}
