// Thermal simulation on a 2-D grid (hotspot-style): each step, a cell's temperature moves
// toward its four neighbours, the ambient temperature and its power input. 16x16 tiles are
// staged in shared memory with a one-cell halo; edges reuse the cell's own value (insulated
// boundary). The update is written with __fmul_rn/__fadd_rn/__fsub_rn so nvcc cannot fuse it,
// and the CPU reference evaluates the same expression in the same order.

#define HOT_TILE 16


__device__ float hotspot_cell(float center, float north, float south, float east, float west, float power,
                              float step_over_capacitance, float rx_inverse, float ry_inverse, float rz_inverse,
                              float ambient) {
  const float two_center = __fmul_rn(2.0f, center);
  const float vertical = __fmul_rn(__fsub_rn(__fadd_rn(north, south), two_center), ry_inverse);
  const float horizontal = __fmul_rn(__fsub_rn(__fadd_rn(east, west), two_center), rx_inverse);
  const float to_ambient = __fmul_rn(__fsub_rn(ambient, center), rz_inverse);
  const float delta = __fadd_rn(__fadd_rn(__fadd_rn(power, vertical), horizontal), to_ambient);
  return __fadd_rn(center, __fmul_rn(step_over_capacitance, delta));
}

extern "C" __global__ void hotspot_step(int rows, int cols, const float* power, const float* temp_in, float* temp_out,
                                        float step_over_capacitance, float rx_inverse, float ry_inverse,
                                        float rz_inverse, float ambient) {
  __shared__ float tile[HOT_TILE + 2][HOT_TILE + 2];
  const int col = blockIdx.x * HOT_TILE + threadIdx.x;
  const int row = blockIdx.y * HOT_TILE + threadIdx.y;
  // Clamp so out-of-grid threads still load something and every thread reaches the barrier.
  const int r = min(row, rows - 1);
  const int c = min(col, cols - 1);
  const int tx = threadIdx.x + 1;
  const int ty = threadIdx.y + 1;
  tile[ty][tx] = temp_in[r * cols + c];
  if (threadIdx.x == 0) tile[ty][0] = temp_in[r * cols + max(c - 1, 0)];
  if (threadIdx.x == HOT_TILE - 1 || col == cols - 1) tile[ty][tx + 1] = temp_in[r * cols + min(c + 1, cols - 1)];
  if (threadIdx.y == 0) tile[0][tx] = temp_in[max(r - 1, 0) * cols + c];
  if (threadIdx.y == HOT_TILE - 1 || row == rows - 1) tile[ty + 1][tx] = temp_in[min(r + 1, rows - 1) * cols + c];
  __syncthreads();
  if (row >= rows || col >= cols) return;
  const float center = tile[ty][tx];
  // At the grid edge the missing neighbour is the cell itself.
  const float north = row > 0 ? tile[ty - 1][tx] : center;
  const float south = row < rows - 1 ? tile[ty + 1][tx] : center;
  const float west = col > 0 ? tile[ty][tx - 1] : center;
  const float east = col < cols - 1 ? tile[ty][tx + 1] : center;
  temp_out[row * cols + col] = hotspot_cell(center, north, south, east, west, power[row * cols + col],
                                            step_over_capacitance, rx_inverse, ry_inverse, rz_inverse, ambient);
}
