// Indirect calls: nvcc turns calls through a function pointer into `call` with a
// .callprototype. Lanes of one warp call different targets, so the warp diverges at the call.

__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_max(int a, int b) { return a > b ? a : b; }
typedef int (*BinaryOp)(int, int);

// Applies op[selector[i] % 4] to (a[i], b[i]), twice chained, so a callee's result feeds the
// next indirect call.
extern "C" __global__ void apply_ops(const int* selector, const int* a, const int* b, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const BinaryOp ops[4] = {op_add, op_sub, op_mul, op_max};
  const int first = ops[selector[i] & 3](a[i], b[i]);
  out[i] = ops[(selector[i] >> 2) & 3](first, b[i]);
}
