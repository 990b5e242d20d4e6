// mma.sync and ldmatrix through inline PTX (tests/ptx/mma_test.cpp checks against a CPU GEMM).
// Each kernel is one warp: it builds its fragments element by element from row-major A (m x k),
// B (k x n) and C (m x n) with the PTX ISA's fragment layouts (written out here independently of
// the model), runs one mma, and writes D back by the same layout. The ldmatrix kernel loads A and
// B through shared memory instead.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

namespace {

__device__ unsigned lane_id() { return threadIdx.x & 31; }

// (row, col) of accumulator element i (m16n8 shapes: 4 per lane).
__device__ void acc_pos(unsigned i, unsigned& r, unsigned& c) {
  const unsigned g = lane_id() >> 2, t = lane_id() & 3;
  r = g + (i >= 2 ? 8 : 0);
  c = 2 * t + (i & 1);
}

__device__ unsigned pack_half(const __half* m, unsigned r0, unsigned c0, unsigned r1, unsigned c1, unsigned ld) {
  const unsigned lo = __half_as_ushort(m[r0 * ld + c0]), hi = __half_as_ushort(m[r1 * ld + c1]);
  return lo | (hi << 16);
}
__device__ unsigned pack_bf16(const __nv_bfloat16* m, unsigned r0, unsigned c0, unsigned r1, unsigned c1, unsigned ld) {
  const unsigned lo = __bfloat16_as_ushort(m[r0 * ld + c0]), hi = __bfloat16_as_ushort(m[r1 * ld + c1]);
  return lo | (hi << 16);
}

}  // namespace

// m16n8k16, f16 inputs, f32 accumulators. A fragment: a_i at row g + 8 * ((i / 2) % 2),
// col 2t + i % 2 + 8 * (i / 4); B fragment: b_i at row 2t + i % 2 + 8 * (i / 2), col g.
extern "C" __global__ void mma_f16_f32_m16n8k16(const __half* a, const __half* b, const float* c, float* d) {
  const unsigned g = lane_id() >> 2, t = lane_id() & 3;
  unsigned ar[4], br[2];
  for (unsigned reg = 0; reg < 4; ++reg) {
    const unsigned i = 2 * reg;
    const unsigned row = g + 8 * ((i / 2) % 2), col = 2 * t + 8 * (i / 4);
    ar[reg] = pack_half(a, row, col, row, col + 1, 16);
  }
  for (unsigned reg = 0; reg < 2; ++reg) {
    const unsigned row = 2 * t + 8 * reg;
    br[reg] = pack_half(b, row, g, row + 1, g, 8);
  }
  float acc[4];
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    acc[i] = c[r * 8 + col];
  }
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    d[r * 8 + col] = acc[i];
  }
}

// m16n8k8, f16 inputs, f16 accumulators (two f16x2 registers: c0c1, c2c3).
extern "C" __global__ void mma_f16_f16_m16n8k8(const __half* a, const __half* b, const __half* c, __half* d) {
  const unsigned g = lane_id() >> 2, t = lane_id() & 3;
  unsigned ar[2], br, cr[2];
  for (unsigned reg = 0; reg < 2; ++reg) ar[reg] = pack_half(a, g + 8 * reg, 2 * t, g + 8 * reg, 2 * t + 1, 8);
  br = pack_half(b, 2 * t, g, 2 * t + 1, g, 8);
  for (unsigned reg = 0; reg < 2; ++reg) cr[reg] = pack_half(c, g + 8 * reg, 2 * t, g + 8 * reg, 2 * t + 1, 8);
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};"
               : "+r"(cr[0]), "+r"(cr[1])
               : "r"(ar[0]), "r"(ar[1]), "r"(br));
  for (unsigned reg = 0; reg < 2; ++reg) {
    d[(g + 8 * reg) * 8 + 2 * t] = __ushort_as_half(static_cast<unsigned short>(cr[reg] & 0xffff));
    d[(g + 8 * reg) * 8 + 2 * t + 1] = __ushort_as_half(static_cast<unsigned short>(cr[reg] >> 16));
  }
}

// m16n8k16, bf16 inputs, f32 accumulators (the f16 layout).
extern "C" __global__ void mma_bf16_f32_m16n8k16(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c, float* d) {
  const unsigned g = lane_id() >> 2, t = lane_id() & 3;
  unsigned ar[4], br[2];
  for (unsigned reg = 0; reg < 4; ++reg) {
    const unsigned row = g + 8 * (reg % 2), col = 2 * t + 8 * (reg / 2);
    ar[reg] = pack_bf16(a, row, col, row, col + 1, 16);
  }
  for (unsigned reg = 0; reg < 2; ++reg) br[reg] = pack_bf16(b, 2 * t + 8 * reg, g, 2 * t + 8 * reg + 1, g, 8);
  float acc[4];
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    acc[i] = c[r * 8 + col];
  }
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    d[r * 8 + col] = acc[i];
  }
}

// m16n8k4 and m16n8k8 tf32 (the f32 bits; the instruction uses their upper 19).
extern "C" __global__ void mma_tf32_m16n8k4(const float* a, const float* b, const float* c, float* d) {
  const unsigned g = lane_id() >> 2, t = lane_id() & 3;
  const unsigned a0 = __float_as_uint(a[g * 4 + t]), a1 = __float_as_uint(a[(g + 8) * 4 + t]);
  const unsigned b0 = __float_as_uint(b[t * 8 + g]);
  float acc[4];
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    acc[i] = c[r * 8 + col];
  }
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(a0), "r"(a1), "r"(b0));
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    d[r * 8 + col] = acc[i];
  }
}

extern "C" __global__ void mma_tf32_m16n8k8(const float* a, const float* b, const float* c, float* d) {
  const unsigned g = lane_id() >> 2, t = lane_id() & 3;
  // a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); b0 (t, g), b1 (t + 4, g).
  const unsigned a0 = __float_as_uint(a[g * 8 + t]), a1 = __float_as_uint(a[(g + 8) * 8 + t]);
  const unsigned a2 = __float_as_uint(a[g * 8 + t + 4]), a3 = __float_as_uint(a[(g + 8) * 8 + t + 4]);
  const unsigned b0 = __float_as_uint(b[t * 8 + g]), b1 = __float_as_uint(b[(t + 4) * 8 + g]);
  float acc[4];
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    acc[i] = c[r * 8 + col];
  }
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    d[r * 8 + col] = acc[i];
  }
}

// m8n8k16 s8 x s8 -> s32: a_i (g, 4t + i), b_i (4t + i, g), c_i (g, 2t + i).
extern "C" __global__ void mma_s8_m8n8k16(const int8_t* a, const int8_t* b, const int* c, int* d) {
  const unsigned g = lane_id() >> 2, t = lane_id() & 3;
  unsigned ar = 0, br = 0;
  for (unsigned i = 0; i < 4; ++i) {
    ar |= static_cast<unsigned>(static_cast<uint8_t>(a[g * 16 + 4 * t + i])) << (8 * i);
    br |= static_cast<unsigned>(static_cast<uint8_t>(b[(4 * t + i) * 8 + g])) << (8 * i);
  }
  int c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1];
  asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+r"(c0), "+r"(c1)
               : "r"(ar), "r"(br));
  d[g * 8 + 2 * t] = c0;
  d[g * 8 + 2 * t + 1] = c1;
}

// m16n8k32 s8 x u8 -> s32, saturating: a_i (g + 8 * ((i / 4) % 2), 4t + i % 4 + 16 * (i / 8)),
// b_i (4t + i % 4 + 16 * (i / 4), g).
extern "C" __global__ void mma_s8u8_m16n8k32_satfinite(const int8_t* a, const uint8_t* b, const int* c, int* d) {
  const unsigned g = lane_id() >> 2, t = lane_id() & 3;
  unsigned ar[4] = {0, 0, 0, 0}, br[2] = {0, 0};
  for (unsigned i = 0; i < 16; ++i) {
    const unsigned row = g + 8 * ((i / 4) % 2), col = 4 * t + i % 4 + 16 * (i / 8);
    ar[i / 4] |= static_cast<unsigned>(static_cast<uint8_t>(a[row * 32 + col])) << (8 * (i % 4));
  }
  for (unsigned i = 0; i < 8; ++i) br[i / 4] |= static_cast<unsigned>(b[(4 * t + i % 4 + 16 * (i / 4)) * 8 + g]) << (8 * (i % 4));
  int acc[4];
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    acc[i] = c[r * 8 + col];
  }
  asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
               : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
  for (unsigned i = 0; i < 4; ++i) {
    unsigned r, col;
    acc_pos(i, r, col);
    d[r * 8 + col] = acc[i];
  }
}

// ldmatrix: A (16 x 16, row-major) with .x4 and B (16 x 8, row-major, so each 8 x 8 block is
// loaded .trans to get the column fragment) with .x2, then the f16 m16n8k16 mma. Also writes
// every lane's raw ldmatrix registers to `raw` (4 + 2 per lane) for a layout check.
extern "C" __global__ void ldmatrix_mma(const __half* a, const __half* b, const float* c, float* d, unsigned* raw) {
  __shared__ __align__(16) __half as[16 * 16];
  __shared__ __align__(16) __half bs[16 * 8];
  const unsigned lane = lane_id();
  for (unsigned i = lane; i < 256; i += 32) as[i] = a[i];
  for (unsigned i = lane; i < 128; i += 32) bs[i] = b[i];
  __syncwarp();
  // .x4 for A: matrices (rows 0-7, cols 0-7), (rows 8-15, cols 0-7), (rows 0-7, cols 8-15),
  // (rows 8-15, cols 8-15): lane l gives the row address of matrix l / 8, row l % 8.
  const unsigned m = lane / 8, r = lane % 8;
  const unsigned a_address = static_cast<unsigned>(__cvta_generic_to_shared(&as[((m % 2) * 8 + r) * 16 + (m / 2) * 8]));
  // .x2.trans for B: matrices k rows 0-7 and 8-15 (lanes 0-15 give their addresses).
  const unsigned b_address = static_cast<unsigned>(__cvta_generic_to_shared(&bs[((lane / 8) % 2 * 8 + r) * 8]));
  unsigned ar[4], br[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(ar[0]), "=r"(ar[1]), "=r"(ar[2]), "=r"(ar[3])
               : "r"(a_address));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(br[0]), "=r"(br[1]) : "r"(b_address));
  for (unsigned i = 0; i < 4; ++i) raw[lane * 6 + i] = ar[i];
  for (unsigned i = 0; i < 2; ++i) raw[lane * 6 + 4 + i] = br[i];
  float acc[4];
  for (unsigned i = 0; i < 4; ++i) {
    unsigned row, col;
    acc_pos(i, row, col);
    acc[i] = c[row * 8 + col];
  }
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
  for (unsigned i = 0; i < 4; ++i) {
    unsigned row, col;
    acc_pos(i, row, col);
    d[row * 8 + col] = acc[i];
  }
}
