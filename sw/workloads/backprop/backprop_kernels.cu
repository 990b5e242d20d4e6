// One fully connected layer of a back-propagation network (float):
//   bp_layer_partial: 16 inputs x 16 hidden units per CTA, products reduced over the inputs by a
//                     shared-memory tree; one partial sum per CTA and hidden unit.
//   bp_activate:      sigmoid of the summed inputs (expf: not correctly rounded on the GPU).
//   bp_adjust_weights: w += eta*delta*x + momentum*previous_change, remembering the change.

#define BP_TILE 16

extern "C" __global__ void bp_layer_partial(const float* input, const float* weights, float* partial, int hidden) {
  __shared__ float x[BP_TILE];
  __shared__ float product[BP_TILE][BP_TILE];
  const int tx = threadIdx.x;  // hidden unit
  const int ty = threadIdx.y;  // input within this CTA's chunk
  const int row = blockIdx.x * BP_TILE + ty;
  if (tx == 0) x[ty] = input[row];
  __syncthreads();
  product[ty][tx] = __fmul_rn(weights[row * hidden + tx], x[ty]);
  __syncthreads();
  for (int stride = BP_TILE / 2; stride > 0; stride >>= 1) {
    if (ty < stride) product[ty][tx] = __fadd_rn(product[ty][tx], product[ty + stride][tx]);
    __syncthreads();
  }
  if (ty == 0) partial[blockIdx.x * hidden + tx] = product[0][tx];
}

extern "C" __global__ void bp_activate(const float* sums, float* outputs, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) outputs[i] = 1.0f / (1.0f + expf(-sums[i]));
}

extern "C" __global__ void bp_adjust_weights(const float* delta, const float* input, float* weights, float* previous_change,
                                             int hidden, float eta, float momentum) {
  const int tx = threadIdx.x;
  const int row = blockIdx.x * BP_TILE + threadIdx.y;
  const int index = row * hidden + tx;
  const float change = __fadd_rn(__fmul_rn(__fmul_rn(eta, delta[tx]), input[row]), __fmul_rn(momentum, previous_change[index]));
  weights[index] = __fadd_rn(weights[index], change);
  previous_change[index] = change;
}
