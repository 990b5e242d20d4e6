// Instructions that need sm_80: redux.sync.
extern "C" __global__ void redux_ops(const unsigned* in, unsigned* out) {
  unsigned v = in[threadIdx.x];
  unsigned* o = out + threadIdx.x * 4;
  o[0] = __reduce_add_sync(0xffffffff, v);
  o[1] = __reduce_min_sync(0xffffffff, (int)v);
  o[2] = __reduce_max_sync(0xffffffff, v);
  o[3] = __reduce_xor_sync(0xffffffff, v);
}
