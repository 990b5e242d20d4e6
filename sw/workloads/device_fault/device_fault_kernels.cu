// A kernel fault must reach the host as an error, not as silent garbage: one thread, deep in a
// divergent branch of one CTA, executes trap when asked to. Without the request the same kernel
// runs normally, which the host checks first.

extern "C" __global__ void maybe_trap(const int* in, int* out, int n, int trap_cta, int trap_thread) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  if (v % 3 == 0) {
    v = v * 7 + 1;
    if (static_cast<int>(blockIdx.x) == trap_cta && static_cast<int>(threadIdx.x) == trap_thread) __trap();
  }
  out[i] = v;
}
