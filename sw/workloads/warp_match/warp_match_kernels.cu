// Warp match (sm_70+): match.any groups lanes by key; match.all also sets a predicate.

// match.any: how many lanes of the warp share my key; match.all: whether all lanes agree.
extern "C" __global__ void warp_match(const int* keys, int* group_sizes, int* all_equal, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // n is a multiple of 32
  if (i >= n) return;
  const int key = keys[i];
  group_sizes[i] = __popc(__match_any_sync(0xffffffffu, key));
  int predicate = 0;
  __match_all_sync(0xffffffffu, key, &predicate);
  all_equal[i] = predicate;
}
