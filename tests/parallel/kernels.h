// PTX kernels for the parallel-stepping tests: global loads and stores across CTAs, shared
// memory with barriers, and a global atomic (serial-only).
#pragma once

#include <string>

namespace gpuvp::test {

// out[i] = 3 * in[i] + in[i ^ 1] (neighbours within a warp), block sums via shared memory and
// bar.sync into sums[cta], and every thread adds its value to *total atomically.
inline std::string parallel_kernel() {
  return R"(.version 8.0
.target sm_75
.address_size 64
.shared .align 4 .b8 buf[1024];
.visible .entry mix(.param .u64 in, .param .u64 out, .param .u64 sums, .param .u64 total) {
  .reg .pred %p<4>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u64 %rd3, [sums];
  ld.param.u64 %rd4, [total];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd5, %r4, 4;
  add.u64 %rd6, %rd1, %rd5;
  ld.global.u32 %r5, [%rd6];
  xor.b32 %r6, %r4, 1;
  mul.wide.u32 %rd7, %r6, 4;
  add.u64 %rd8, %rd1, %rd7;
  ld.global.u32 %r7, [%rd8];
  mad.lo.u32 %r8, %r5, 3, %r7;
  add.u64 %rd9, %rd2, %rd5;
  st.global.u32 [%rd9], %r8;
  mov.u32 %r9, buf;
  shl.b32 %r10, %r1, 2;
  add.u32 %r11, %r9, %r10;
  st.shared.u32 [%r11], %r8;
  bar.sync 0;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SKIP;
  mov.u32 %r12, 0;
  mov.u32 %r13, 0;
LOOP:
  shl.b32 %r14, %r13, 2;
  add.u32 %r15, %r9, %r14;
  ld.shared.u32 %r16, [%r15];
  add.u32 %r12, %r12, %r16;
  add.u32 %r13, %r13, 1;
  setp.lt.u32 %p2, %r13, %r3;
  @%p2 bra LOOP;
  mul.wide.u32 %rd10, %r2, 4;
  add.u64 %rd11, %rd3, %rd10;
  st.global.u32 [%rd11], %r12;
SKIP:
  atom.global.add.u32 %r17, [%rd4], %r8;
  ret;
}
)";
}

// Read-own-writes: every thread stores tid + 7 to buf[tid], then loads buf[tid ^ 1] (its
// neighbour's word, written by the same warp) with a scalar load and buf[tid & ~1] pair with a
// vector load, and writes out[tid] = neighbour + pair.x + pair.y.
inline std::string own_writes_kernel() {
  return R"(.version 8.0
.target sm_75
.address_size 64
.visible .entry own(.param .u64 buf, .param .u64 out) {
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [buf];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 7;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r2;
  xor.b32 %r3, %r1, 1;
  mul.wide.u32 %rd5, %r3, 4;
  add.u64 %rd6, %rd1, %rd5;
  ld.global.u32 %r4, [%rd6];
  and.b32 %r5, %r1, -2;
  mul.wide.u32 %rd7, %r5, 4;
  add.u64 %rd8, %rd1, %rd7;
  ld.global.v2.u32 {%r6, %r7}, [%rd8];
  add.u32 %r8, %r4, %r6;
  add.u32 %r9, %r8, %r7;
  add.u64 %rd9, %rd2, %rd3;
  st.global.u32 [%rd9], %r9;
  ret;
}
)";
}

}  // namespace gpuvp::test
