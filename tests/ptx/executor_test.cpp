// Executor tests on nvcc-generated kernels: memory spaces, divergence and reconvergence,
// calls and recursion, barriers, warp-level operations, atomics, printf and faults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

using ::testing::HasSubstr;

TEST(PtxExecutor, VectorAddMatchesCpuAndCountsInstructions) {
  Harness h("basic");
  const int n = 1000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * static_cast<float>(i);
    b[i] = 1.0f / static_cast<float>(i + 1);
  }
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(std::vector<float>(n, -1.0f));
  LaunchResult r = h.launch("vector_add", Dim3((n + 127) / 128), Dim3(128), 0, da, db, dc, n);
  ASSERT_TRUE(r.ok()) << r.message;
  std::vector<float> c = h.download<float>(dc, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  EXPECT_GT(r.warp_instructions, 0u);
  EXPECT_GT(r.thread_instructions, r.warp_instructions);
  EXPECT_LE(r.thread_instructions, r.warp_instructions * 32);
}

TEST(PtxExecutor, ConstantAndInitialisedGlobalsAreAddressableByName) {
  Harness h("basic");
  auto table = h.loaded().symbol("scale_table");
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->size, 16u);
  EXPECT_EQ(table->space, ModuleVariable::Space::kConst);
  const float scales[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  h.memory().copy_to_device(table->address, scales, sizeof scales);  // cudaMemcpyToSymbol
  auto initialised = h.loaded().symbol("initialised_table");
  ASSERT_TRUE(initialised.has_value());
  EXPECT_EQ(h.memory().load<int>(initialised->address + 4), 8);
  const int n = 64;
  std::vector<float> in(n);
  std::iota(in.begin(), in.end(), 1.0f);
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<float>(n));
  LaunchResult r = h.launch("scale_by_constant", Dim3(2), Dim3(32), 0, din, dout, n);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<float>(dout, n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(out[i], in[i] * scales[i & 3] + static_cast<float>(7 + i % 3)) << i;
}

int divergence_reference(int v, std::vector<int>& out, int i) {
  int acc = 0;
  if (v % 3 == 0) {
    for (int k = 0; k < 100; ++k) {
      if (k == v % 17) break;
      if (k % 2) continue;
      acc += k * v;
    }
  } else if (v % 3 == 1) {
    if (v & 4) {
      out[i] = -v;
      return -1;
    }
    acc = v * v;
  } else {
    int x = v;
    while (x > 1) {
      x = (x & 1) ? 3 * x + 1 : x / 2;
      ++acc;
    }
  }
  return acc;
}

TEST(PtxExecutor, DivergentLoopsBreakContinueAndEarlyReturnReconverge) {
  Harness h("basic");
  const int n = 200;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 1000 + 1;
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<int>(n, 0));
  LaunchResult r = h.launch("divergence", Dim3(4), Dim3(64), 0, din, dout, n);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<int>(dout, n);
  // CPU reference, warp by warp: the ballot counts odd accumulators among lanes still active.
  std::vector<int> expected(n, 0);
  for (int warp = 0; warp * 32 < n; ++warp) {
    std::vector<int> acc(32, -2);
    for (int lane = 0; lane < 32 && warp * 32 + lane < n; ++lane) {
      const int i = warp * 32 + lane;
      acc[lane] = divergence_reference(in[i], expected, i);
    }
    int odd = 0;
    for (int lane = 0; lane < 32; ++lane) odd += acc[lane] >= 0 && (acc[lane] & 1);
    for (int lane = 0; lane < 32 && warp * 32 + lane < n; ++lane) {
      if (acc[lane] >= 0) expected[warp * 32 + lane] = acc[lane] + odd * 1000;
    }
  }
  EXPECT_EQ(out, expected);
}

TEST(PtxExecutor, RecursiveDeviceFunctionsAndParameterPassing) {
  Harness h("basic");
  const int n = 40;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i % 15;
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<int>(n)), dmix = h.upload(std::vector<double>(n));
  LaunchResult r = h.launch("recursion", Dim3(2), Dim3(32), 0, din, dout, dmix, n);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<int>(dout, n);
  auto mixed = h.download<double>(dmix, n);
  auto fib = [](int k) {
    int a = 0, b = 1;
    for (int j = 0; j < k; ++j) std::swap(a, b), b += a;
    return a;
  };
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(out[i], fib(in[i])) << i;
    EXPECT_EQ(mixed[i], 1.5 * in[i] + 0.25) << i;
  }
}

TEST(PtxExecutor, PrintfFormatsArgumentsInThreadOrder) {
  Harness h("basic");
  LaunchResult r = h.launch("say_hello", Dim3(2), Dim3(32), 0, 42, 2.5);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(h.printed(),
            "hello from thread 0 of block 0: 42 2.500 str Z|   ff|\n"
            "hello from thread 1 of block 0: 42 2.500 str Z|   ff|\n"
            "hello from thread 0 of block 1: 42 2.500 str Z|   ff|\n"
            "hello from thread 1 of block 1: 42 2.500 str Z|   ff|\n");
}

TEST(PtxExecutor, OutOfRangeStoreIsAnIllegalAddressNamingKernelLineCtaAndThread) {
  Harness h("basic");
  const uint64_t buffer = h.upload(std::vector<int>(64));
  LaunchResult ok = h.launch("write_everywhere", Dim3(1), Dim3(32), 0, buffer, 0LL);
  ASSERT_TRUE(ok.ok()) << ok.message;
  LaunchResult bad = h.launch("write_everywhere", Dim3(1), Dim3(32), 0, buffer, 1LL << 32);
  EXPECT_EQ(bad.status, LaunchStatus::kIllegalAddress);
  EXPECT_THAT(bad.message, HasSubstr("illegal address"));
  EXPECT_THAT(bad.message, HasSubstr("write_everywhere"));
  EXPECT_THAT(bad.message, HasSubstr("basic.ptx:"));
  EXPECT_THAT(bad.message, HasSubstr("CTA (0,0,0)"));
  EXPECT_THAT(bad.message, HasSubstr("thread (0,0,0)"));
  LaunchResult null_store = h.launch("write_everywhere", Dim3(1), Dim3(32), 0, uint64_t{0}, 0LL);
  EXPECT_EQ(null_store.status, LaunchStatus::kIllegalAddress);
  LaunchResult misaligned = h.launch("write_everywhere", Dim3(1), Dim3(32), 0, buffer + 2, 0LL);
  EXPECT_EQ(misaligned.status, LaunchStatus::kMisalignedAddress) << misaligned.message;
}

TEST(PtxExecutor, TrapAndAssertAreKernelErrors) {
  Harness h("basic");
  LaunchResult trap = h.launch("trapping", Dim3(1), Dim3(64), 0, 37);
  EXPECT_EQ(trap.status, LaunchStatus::kTrap);
  EXPECT_THAT(trap.message, HasSubstr("thread (37,0,0)"));
  LaunchResult no_trap = h.launch("trapping", Dim3(1), Dim3(64), 0, 100);
  EXPECT_TRUE(no_trap.ok()) << no_trap.message;
  LaunchResult assertion = h.launch("asserting", Dim3(1), Dim3(64), 0, 5);
  EXPECT_EQ(assertion.status, LaunchStatus::kAssertFailed);
  EXPECT_THAT(assertion.message, HasSubstr("threadIdx.x != when"));
  EXPECT_THAT(assertion.message, HasSubstr("basic.cu"));
  EXPECT_THAT(assertion.message, HasSubstr("thread (5,0,0)"));
}

TEST(PtxExecutor, SharedMemoryTreeReductionWithBarriers) {
  Harness h("basic");
  const int blocks = 3, threads = 256;
  std::vector<int> in(blocks * threads);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i * 3 % 97) - 40;
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<int>(blocks));
  LaunchResult r = h.launch("block_sum", Dim3(blocks), Dim3(threads), threads * 4, din, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<int>(dout, blocks);
  for (int b = 0; b < blocks; ++b) {
    EXPECT_EQ(out[b], std::accumulate(in.begin() + b * threads, in.begin() + (b + 1) * threads, 0)) << b;
  }
  // Without the dynamic shared memory the kernel's shared accesses are out of range.
  LaunchResult missing = h.launch("block_sum", Dim3(1), Dim3(threads), 0, din, dout);
  EXPECT_EQ(missing.status, LaunchStatus::kIllegalAddress);
}

TEST(PtxExecutor, BarrierReductionsCountAndCombinePredicates) {
  Harness h("basic");
  std::vector<int> in(96);
  for (int i = 0; i < 96; ++i) in[i] = i % 5 == 0 ? 0 : i;
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<int>(3, -1));
  LaunchResult r = h.launch("barrier_reductions", Dim3(1), Dim3(96), 0, din, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<int>(dout, 3);
  EXPECT_EQ(out[0], 96 - 20);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 1);
  std::vector<int> positive(96, 1);
  const uint64_t dpos = h.upload(positive);
  ASSERT_TRUE(h.launch("barrier_reductions", Dim3(1), Dim3(96), 0, dpos, dout).ok());
  out = h.download<int>(dout, 3);
  EXPECT_EQ(out, (std::vector<int>{96, 1, 0}));
}

TEST(PtxExecutor, WarpShuffleVoteAndMatch) {
  Harness h("basic");
  const int threads = 64;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = (i * 13) % 29 - 3;
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<int>(threads * 10));
  LaunchResult r = h.launch("warp_ops", Dim3(1), Dim3(threads), 0, din, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  auto out = h.download<int>(dout, threads * 10);
  for (int t = 0; t < threads; ++t) {
    const int warp = t / 32 * 32, lane = t % 32;
    auto v = [&](int l) { return in[warp + l]; };
    const int* o = &out[t * 10];
    EXPECT_EQ(o[0], v((lane * 7) & 31)) << t;
    EXPECT_EQ(o[1], lane >= 3 ? v(lane - 3) : v(lane)) << t;
    EXPECT_EQ(o[2], lane + 5 < 32 ? v(lane + 5) : v(lane)) << t;
    EXPECT_EQ(o[3], v(lane ^ 6)) << t;
    EXPECT_EQ(o[4], v((lane & ~7) | ((lane + 2) & 7))) << t;
    unsigned ballot = 0, match = 0;
    for (int l = 0; l < 32; ++l) {
      ballot |= static_cast<unsigned>(v(l) & 1) << l;
      match |= static_cast<unsigned>((v(l) & 3) == (v(lane) & 3)) << l;
    }
    EXPECT_EQ(static_cast<unsigned>(o[5]), ballot) << t;
    EXPECT_EQ(o[6], std::all_of(in.begin() + warp, in.begin() + warp + 32, [](int x) { return x >= 0; }) ? 1 : 0);
    EXPECT_EQ(o[7], std::any_of(in.begin() + warp, in.begin() + warp + 32, [](int x) { return x == 5; }) ? 1 : 0);
    EXPECT_EQ(static_cast<unsigned>(o[8]), match) << t;
    EXPECT_EQ(o[9], static_cast<int>(0xffffffffu + 1u)) << t;  // all lanes match: mask + pred(1)
  }
}

// Warp collectives wait for every non-exited lane of their membermask (hand-written PTX, so the
// code layout is fixed): lanes reach the same collective from different call sites, after an
// out-of-line block placed behind it, or not at all because they exited.
constexpr const char* kDivergentCollectivesPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.func (.param .b32 result) exchange(.param .b32 x)
{
  .reg .b32 %r<4>;
  ld.param.b32 %r1, [x];
  mov.b32 %r3, -1;
  shfl.sync.bfly.b32 %r2, %r1, 16, 31, %r3;
  st.param.b32 [result], %r2;
  ret;
}

.visible .entry call_sites(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  setp.lt.u32 %p1, %r2, 16;
  @%p1 bra LOW;
  add.u32 %r3, %r2, 2000;
  {
  .param .b32 a;
  .param .b32 rv;
  st.param.b32 [a], %r3;
  call.uni (rv), exchange, (a);
  ld.param.b32 %r4, [rv];
  }
  bra.uni STORE;
LOW:
  add.u32 %r3, %r2, 1000;
  {
  .param .b32 a;
  .param .b32 rv;
  st.param.b32 [a], %r3;
  call.uni (rv), exchange, (a);
  ld.param.b32 %r4, [rv];
  }
STORE:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}

.visible .entry late_block(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  mov.u32 %r3, %r2;
  and.b32 %r4, %r2, 1;
  setp.ne.u32 %p1, %r4, 0;
  @%p1 bra LATE;
JOIN:
  shfl.sync.idx.b32 %r5, %r3, 1, 31, -1;
  setp.gt.u32 %p2, %r3, 100;
  vote.sync.ballot.b32 %r6, %p2, -1;
  redux.sync.add.u32 %r7, %r3, -1;
  selp.u32 %r8, 1, 0, %p2;
  match.any.sync.b32 %r9, %r8, -1;
  bar.warp.sync -1;
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r5, %r6, %r7, %r9};
  ret;
LATE:
  add.u32 %r3, %r3, 1000;
  bra.uni JOIN;
}

.visible .entry early_exit(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  setp.ge.u32 %p1, %r2, 24;
  @%p1 bra DONE;
  and.b32 %r3, %r2, 1;
  setp.ne.u32 %p2, %r3, 0;
  vote.sync.ballot.b32 %r4, %p2, -1;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
DONE:
  ret;
}

.visible .entry never_arrive(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  setp.lt.u32 %p1, %r2, 16;
  mov.u32 %r4, 7;
  @%p1 bra SKIP;
  shfl.sync.bfly.b32 %r4, %r2, 1, 31, -1;
SKIP:
  bar.sync 0;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
)";

// Vector loads of every element size up to 16 bytes, from global and shared memory, with sign
// extension, a sink element, and a lane whose address lies in another page window (the lanes
// then go one by one): the values must be the bytes a CPU reads.
constexpr const char* kVectorLoadsPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry vector_loads(.param .u64 in, .param .u64 far, .param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  .shared .align 16 .b8 tile[512];
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [far];
  ld.param.u64 %rd3, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd4, %r1, 16;
  add.u64 %rd5, %rd1, %rd4;
  setp.eq.u32 %p1, %r1, 31;
  @%p1 mov.u64 %rd5, %rd2;
  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd5];
  ld.global.v2.s16 {%r6, %r7}, [%rd5+4];
  ld.global.v4.u8 {%r8, %r9, %r10, %r11}, [%rd5+8];
  ld.global.v2.u64 {%rd6, _}, [%rd5];
  ld.global.v2.u8 {%r12, %r13}, [%rd5+14];
  ld.global.v4.s16 {%r14, %r15, %r16, %r17}, [%rd5+8];
  mov.u32 %r18, tile;
  mul.lo.u32 %r19, %r1, 16;
  add.u32 %r20, %r18, %r19;
  st.shared.v4.u32 [%r20], {%r2, %r3, %r4, %r5};
  bar.sync 0;
  add.u32 %r21, %r1, 1;
  and.b32 %r21, %r21, 31;
  mul.lo.u32 %r21, %r21, 16;
  add.u32 %r21, %r18, %r21;
  ld.shared.v2.u32 {%r22, %r23}, [%r21+8];
  mul.wide.u32 %rd7, %r1, 64;
  add.u64 %rd8, %rd3, %rd7;
  st.global.v4.u32 [%rd8], {%r2, %r3, %r4, %r5};
  st.global.v4.u32 [%rd8+16], {%r6, %r7, %r8, %r9};
  st.global.v4.u32 [%rd8+32], {%r10, %r11, %r12, %r13};
  st.global.v4.u32 [%rd8+48], {%r14, %r15, %r16, %r17};
  mul.wide.u32 %rd9, %r1, 16;
  add.u64 %rd10, %rd3, 2048;
  add.u64 %rd10, %rd10, %rd9;
  st.global.u64 [%rd10], %rd6;
  st.global.v2.u32 [%rd10+8], {%r22, %r23};
  ret;
}
)";

TEST(PtxExecutor, VectorLoadsReadWhatACpuReads) {
  Harness h(kVectorLoadsPtx, "vector_loads.ptx", ExecutorOptions{});
  std::vector<uint8_t> in(32 * 16), far_bytes(16);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 37 + 11);  // high bits set too
  for (size_t i = 0; i < far_bytes.size(); ++i) far_bytes[i] = static_cast<uint8_t>(0xf0 + i);
  const uint64_t din = h.upload(in);
  const uint64_t dfar = h.upload(far_bytes);
  const uint64_t dout = h.upload(std::vector<uint32_t>(512 + 128, 0));
  LaunchResult r = h.launch("vector_loads", Dim3(1), Dim3(32), 0, din, dfar, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  const std::vector<uint32_t> out = h.download<uint32_t>(dout, 512 + 128);
  auto source = [&](int t) { return t == 31 ? far_bytes.data() : in.data() + 16 * t; };
  auto u32_at = [](const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; };
  auto s16_at = [](const uint8_t* p) { int16_t v; std::memcpy(&v, p, 2); return static_cast<uint32_t>(static_cast<int32_t>(v)); };
  for (int t = 0; t < 32; ++t) {
    const uint8_t* b = source(t);
    const uint32_t want[16] = {u32_at(b), u32_at(b + 4), u32_at(b + 8), u32_at(b + 12),
                               s16_at(b + 4), s16_at(b + 6), b[8], b[9],
                               b[10], b[11], b[14], b[15],
                               s16_at(b + 8), s16_at(b + 10), s16_at(b + 12), s16_at(b + 14)};
    for (int i = 0; i < 16; ++i) EXPECT_EQ(out[16 * t + i], want[i]) << "thread " << t << " value " << i;
    uint64_t first = 0;
    std::memcpy(&first, b, 8);
    EXPECT_EQ(out[512 + 4 * t] | (uint64_t{out[512 + 4 * t + 1]} << 32), first) << t;
    const uint8_t* next = source((t + 1) % 32);
    EXPECT_EQ(out[512 + 4 * t + 2], u32_at(next + 8)) << t;  // from shared memory
    EXPECT_EQ(out[512 + 4 * t + 3], u32_at(next + 12)) << t;
  }
}

// Integer conversions between widths and signedness: extended from the source's width as its
// signedness says, cut to the destination's (and .sat clamps), as a CPU's casts do.
constexpr const char* kIntegerCvtPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry integer_cvt(.param .u64 in, .param .u64 out)
{
  .reg .b16 %h<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u64 %rd5, [%rd4];
  mul.wide.u32 %rd6, %r1, 64;
  add.u64 %rd7, %rd2, %rd6;
  cvt.u16.u64 %h1, %rd5;
  cvt.s64.s16 %rd8, %h1;
  st.global.u64 [%rd7], %rd8;
  cvt.u64.u16 %rd9, %h1;
  st.global.u64 [%rd7+8], %rd9;
  cvt.u32.u64 %r2, %rd5;
  cvt.s64.s32 %rd10, %r2;
  st.global.u64 [%rd7+16], %rd10;
  cvt.u64.u32 %rd11, %r2;
  st.global.u64 [%rd7+24], %rd11;
  cvt.s32.s16 %r3, %h1;
  st.global.u32 [%rd7+32], %r3;
  cvt.u32.u16 %r4, %h1;
  st.global.u32 [%rd7+36], %r4;
  cvt.sat.s32.s64 %r5, %rd5;
  st.global.u32 [%rd7+40], %r5;
  cvt.s32.s64 %r6, %rd5;
  st.global.u32 [%rd7+44], %r6;
  cvt.s64.s8 %rd12, %rd5;
  st.global.u64 [%rd7+48], %rd12;
  cvt.u64.u8 %rd13, %rd5;
  st.global.u64 [%rd7+56], %rd13;
  ret;
}
)";

TEST(PtxExecutor, IntegerConversionsExtendAndCutAsACpuDoes) {
  Harness h(kIntegerCvtPtx, "integer_cvt.ptx", ExecutorOptions{});
  const std::vector<uint64_t> in = {0,         1,           0x7f,        0x80,       0xff,
                                    0x7fff,    0x8000,      0xffff,      0x1234'5678, 0x8765'4321,
                                    ~0ULL,     0x8000'0000'0000'0000ULL, 0x7fff'ffff'ffff'ffffULL,
                                    0xffff'ffff'8000'0000ULL, 0x1'0000'0000ULL, 0xdead'beef'cafe'f00dULL};
  const int n = static_cast<int>(in.size());
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<uint64_t>(8 * n, 0));
  LaunchResult r = h.launch("integer_cvt", Dim3(1), Dim3(n), 0, din, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  const std::vector<uint64_t> out = h.download<uint64_t>(dout, 8 * n);
  for (int t = 0; t < n; ++t) {
    const uint64_t v = in[t];
    const int64_t sv = static_cast<int64_t>(v);
    const int32_t sat = sv > INT32_MAX ? INT32_MAX : sv < INT32_MIN ? INT32_MIN : static_cast<int32_t>(sv);
    EXPECT_EQ(out[8 * t + 0], static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(v)))) << "s64.s16 " << t;
    EXPECT_EQ(out[8 * t + 1], static_cast<uint64_t>(static_cast<uint16_t>(v))) << "u64.u16 " << t;
    EXPECT_EQ(out[8 * t + 2], static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)))) << "s64.s32 " << t;
    EXPECT_EQ(out[8 * t + 3], static_cast<uint64_t>(static_cast<uint32_t>(v))) << "u64.u32 " << t;
    EXPECT_EQ(out[8 * t + 4] & 0xffff'ffffULL, static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(v))))
        << "s32.s16 " << t;
    EXPECT_EQ(out[8 * t + 4] >> 32, static_cast<uint32_t>(static_cast<uint16_t>(v))) << "u32.u16 " << t;
    EXPECT_EQ(out[8 * t + 5] & 0xffff'ffffULL, static_cast<uint32_t>(sat)) << "sat.s32.s64 " << t;
    EXPECT_EQ(out[8 * t + 5] >> 32, static_cast<uint32_t>(v)) << "s32.s64 " << t;
    EXPECT_EQ(out[8 * t + 6], static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(v)))) << "s64.s8 " << t;
    EXPECT_EQ(out[8 * t + 7], static_cast<uint64_t>(static_cast<uint8_t>(v))) << "u64.u8 " << t;
  }
}

TEST(PtxExecutor, WarpCollectivesWaitForEveryMemberLane) {
  Harness h(kDivergentCollectivesPtx, "collectives.ptx", ExecutorOptions{});
  const int threads = 64;
  {
    const uint64_t out = h.upload(std::vector<uint32_t>(threads));
    LaunchResult r = h.launch("call_sites", Dim3(1), Dim3(threads), 0, out);
    ASSERT_TRUE(r.ok()) << r.message;
    auto o = h.download<uint32_t>(out, threads);
    for (int t = 0; t < threads; ++t) {
      const uint32_t partner = static_cast<uint32_t>((t % 32) ^ 16);
      EXPECT_EQ(o[t], partner + (partner < 16 ? 1000u : 2000u)) << t;
    }
  }
  {
    const uint64_t out = h.upload(std::vector<uint32_t>(threads * 4));
    LaunchResult r = h.launch("late_block", Dim3(1), Dim3(threads), 0, out);
    ASSERT_TRUE(r.ok()) << r.message;
    auto o = h.download<uint32_t>(out, threads * 4);
    uint32_t sum = 0;
    for (uint32_t l = 0; l < 32; ++l) sum += l + ((l & 1) ? 1000u : 0u);
    for (int t = 0; t < threads; ++t) {
      EXPECT_EQ(o[4 * t], 1001u) << t;            // lane 1's value after its late block
      EXPECT_EQ(o[4 * t + 1], 0xaaaaaaaau) << t;  // odd lanes are > 100
      EXPECT_EQ(o[4 * t + 2], sum) << t;
      EXPECT_EQ(o[4 * t + 3], (t & 1) ? 0xaaaaaaaau : 0x55555555u) << t;
    }
  }
  {
    const uint64_t out = h.upload(std::vector<uint32_t>(threads, 0xdeadu));
    LaunchResult r = h.launch("early_exit", Dim3(1), Dim3(threads), 0, out);
    ASSERT_TRUE(r.ok()) << r.message;
    auto o = h.download<uint32_t>(out, threads);
    for (int t = 0; t < threads; ++t) EXPECT_EQ(o[t], t % 32 < 24 ? 0x00aaaaaau : 0xdeadu) << t;
  }
  {
    // Lanes 16..31 shuffle with a full mask that lanes 0..15 never reach (they wait at the CTA
    // barrier): undefined in the PTX ISA; the model issues it with the lanes present, no hang.
    const uint64_t out = h.upload(std::vector<uint32_t>(threads));
    LaunchResult r = h.launch("never_arrive", Dim3(1), Dim3(threads), 0, out);
    ASSERT_TRUE(r.ok()) << r.message;
    auto o = h.download<uint32_t>(out, threads);
    for (int t = 0; t < threads; ++t) EXPECT_EQ(o[t], t % 32 < 16 ? 7u : static_cast<uint32_t>((t % 32) ^ 1)) << t;
  }
}

TEST(PtxExecutor, AtomicsOnGlobalAndSharedMemory) {
  Harness h("basic");
  const int threads = 64;
  const uint64_t ints = h.upload(std::vector<int>{0, 1000, -1000, 0, 0, 0});
  const uint64_t uints = h.upload(std::vector<unsigned>{0, 3, 0xffffffffu, 0, 0, 0});
  const uint64_t floats = h.upload(std::vector<float>{1.0f});
  const uint64_t doubles = h.upload(std::vector<double>{-2.0});
  const uint64_t u64 = h.upload(std::vector<unsigned long long>{5});
  LaunchResult r = h.launch("atomics", Dim3(1), Dim3(threads), 0, ints, uints, floats, doubles, u64);
  ASSERT_TRUE(r.ok()) << r.message;
  auto i = h.download<int>(ints, 6);
  auto u = h.download<unsigned>(uints, 6);
  EXPECT_EQ(i[0], threads);
  EXPECT_EQ(i[1], -(threads - 1));
  EXPECT_EQ(i[2], threads - 1);
  EXPECT_EQ(i[3], 42);
  EXPECT_EQ(i[4], threads);  // cas chain: thread t waits until it sees t, then writes t + 1
  EXPECT_EQ(i[5], threads * (threads - 1) / 2);
  unsigned inc = 0, dec = 3, x = 0, max37 = 0;
  for (int t = 0; t < threads; ++t) {
    inc = inc >= 9 ? 0 : inc + 1;
    dec = (dec == 0 || dec > 5) ? 5 : dec - 1;
    x ^= static_cast<unsigned>(t);
    max37 = std::max(max37, static_cast<unsigned>(t * 37 % 101));
  }
  EXPECT_EQ(u[0], inc);
  EXPECT_EQ(u[1], dec);
  EXPECT_EQ(u[2], 0u);
  EXPECT_EQ(u[3], 0xffffffffu);
  EXPECT_EQ(u[4], x);
  EXPECT_EQ(u[5], max37);
  EXPECT_EQ(h.download<float>(floats, 1)[0], 1.0f + 0.5f * threads);
  EXPECT_EQ(h.download<double>(doubles, 1)[0], -2.0 + 0.25 * threads);
  EXPECT_EQ(h.download<unsigned long long>(u64, 1)[0], 5ull + (static_cast<unsigned long long>(threads) << 33));
}

TEST(PtxExecutor, GenericPointersReachSharedLocalAndGlobal) {
  Harness h("basic");
  const int threads = 64;
  const uint64_t out = h.upload(std::vector<int>(threads));
  LaunchResult r = h.launch("generic_addressing", Dim3(1), Dim3(threads), 0, out);
  ASSERT_TRUE(r.ok()) << r.message;
  auto o = h.download<int>(out, threads);
  for (int t = 0; t < threads; ++t) EXPECT_EQ(o[t], ((t + 1) % threads) * 2 + t * 3) << t;
}

TEST(PtxExecutor, SpecialRegistersFor3dBlocksAndGrids) {
  Harness h("basic");
  const Dim3 grid(2, 3, 1), block(8, 4, 2);
  const size_t threads = grid.count() * block.count();
  const uint64_t out = h.upload(std::vector<unsigned>(threads * 8));
  LaunchResult r = h.launch("special_registers", grid, block, 0, out);
  ASSERT_TRUE(r.ok()) << r.message;
  auto o = h.download<unsigned>(out, threads * 8);
  for (unsigned by = 0; by < 3; ++by) {
    for (unsigned bx = 0; bx < 2; ++bx) {
      for (unsigned t = 0; t < 64; ++t) {
        const unsigned block_linear = bx + 2 * by;
        const unsigned* e = &o[(block_linear * 64 + t) * 8];
        EXPECT_EQ(e[0], t % 8);
        EXPECT_EQ(e[1], (t / 8) % 4);
        EXPECT_EQ(e[2], t / 32);
        EXPECT_EQ(e[3], bx);
        EXPECT_EQ(e[4], by);
        EXPECT_EQ(e[5], t % 32);
        EXPECT_EQ(e[6], t / 32);
        EXPECT_EQ(e[7], (1u << (t % 32)) - 1);
      }
    }
  }
}

TEST(PtxExecutor, RunawayKernelStopsAtTheInstructionLimit) {
  ExecutorOptions options;
  options.instruction_limit = 100000;
  Harness h("basic", options);
  const uint64_t flag = h.upload(std::vector<int>{0});
  LaunchResult r = h.launch("spin_forever", Dim3(1), Dim3(32), 0, flag);
  EXPECT_EQ(r.status, LaunchStatus::kInstructionLimit);
  h.memory().store<int>(flag, 1);
  EXPECT_TRUE(h.launch("spin_forever", Dim3(1), Dim3(32), 0, flag).ok());
}

TEST(PtxExecutor, BarrierThatHalfTheBlockNeverReachesIsADeadlock) {
  Harness h("basic");
  LaunchResult r = h.launch("divergent_barrier_deadlock", Dim3(1), Dim3(64), 0);
  EXPECT_EQ(r.status, LaunchStatus::kBarrierDeadlock) << r.message;
  EXPECT_THAT(r.message, HasSubstr("warp 0 waits"));
  EXPECT_THAT(r.message, HasSubstr("warp 1 waits"));
}

TEST(PtxExecutor, ThreadsThatExitedDoNotHoldUpABarrier) {
  Harness h("basic");
  const uint64_t out = h.upload(std::vector<int>(64, -1));
  LaunchResult r = h.launch("barrier_after_exit", Dim3(1), Dim3(64), 0, out);
  ASSERT_TRUE(r.ok()) << r.message;
  auto o = h.download<int>(out, 64);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(o[t], t < 40 ? t : -1);
}

TEST(PtxExecutor, IndirectCallsWithDivergentTargetsAndRecursion) {
  Harness h("basic");
  const int threads = 64;
  std::vector<int> selector(threads);
  for (int t = 0; t < threads; ++t) selector[t] = (t * 5 + t / 3) % 4;
  const uint64_t sel = h.upload(selector), out = h.upload(std::vector<int>(threads));
  LaunchResult r = h.launch("indirect_calls", Dim3(1), Dim3(threads), 0, sel, out);
  ASSERT_TRUE(r.ok()) << r.message;
  auto o = h.download<int>(out, threads);
  for (int t = 0; t < threads; ++t) {
    const int a = t % 7;
    int expected = 0;
    switch (selector[t]) {
      case 0: expected = a + 3; break;
      case 1: expected = a - 3; break;
      case 2: expected = a * 3; break;
      default: {
        expected = 3;
        for (int k = a; k > 1; --k) expected *= k;
      }
    }
    EXPECT_EQ(o[t], expected) << t;
  }
}

TEST(PtxExecutor, ShuffleFromLanesNotTakingPartReadsZero) {
  Harness h("basic");
  std::vector<int> in(32);
  for (int i = 0; i < 32; ++i) in[i] = i + 1;
  const uint64_t din = h.upload(in), out = h.upload(std::vector<int>(32));
  ASSERT_TRUE(h.launch("partial_warp_shuffle_sum", Dim3(1), Dim3(32), 0, din, out).ok());
  const auto o = h.download<int>(out, 32);
  // CPU reference: lane l < 8 sums in[l + k] over the offsets' tree, counting lanes >= 8 as 0.
  std::vector<int> sum(in.begin(), in.begin() + 8);
  for (int offset = 16; offset > 0; offset /= 2) {
    std::vector<int> next = sum;
    for (int l = 0; l < 8; ++l) next[l] += l + offset < 8 ? sum[l + offset] : 0;
    sum = next;
  }
  EXPECT_EQ(o[0], 36);  // 1 + 2 + ... + 8
  for (int l = 0; l < 8; ++l) EXPECT_EQ(o[l], sum[l]) << l;
  for (int l = 8; l < 32; ++l) EXPECT_EQ(o[l], (l + 1) * 1000) << l;
}

TEST(PtxExecutor, MemoryObserverSeesEveryAccessInItsSpace) {
  std::vector<MemoryAccess> accesses;
  ExecutorOptions options;
  options.memory_observer = [&accesses](const MemoryAccess& access) { accesses.push_back(access); };
  Harness h("basic", options);
  const int threads = 64;
  std::vector<int> in(threads, 1);
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<int>(1));
  ASSERT_TRUE(h.launch("block_sum", Dim3(1), Dim3(threads), threads * 4, din, dout).ok());
  size_t global_reads = 0, global_writes = 0, shared_writes = 0, param_reads = 0;
  const uint64_t shared_base = 0;  // block_sum has no static shared: dynamic starts at 0
  for (const auto& a : accesses) {
    if (a.space == MemoryAccess::Space::kGlobal && !a.is_write) {
      ++global_reads;
      EXPECT_EQ(a.address, din + 4 * (a.warp * 32 + a.lane));
      EXPECT_EQ(a.size, 4u);
      EXPECT_GT(a.ptx_line, 0u);
    }
    if (a.space == MemoryAccess::Space::kGlobal && a.is_write) {
      ++global_writes;
      EXPECT_EQ(a.address, dout);
    }
    if (a.space == MemoryAccess::Space::kShared && a.is_write) {
      ++shared_writes;
      EXPECT_LT(a.address, shared_base + threads * 4u);
      EXPECT_EQ(a.address % 4, 0u);
    }
    if (a.space == MemoryAccess::Space::kParam) ++param_reads;
  }
  EXPECT_EQ(global_reads, static_cast<size_t>(threads));
  EXPECT_EQ(global_writes, 1u);
  // One initial store per thread, then one per active thread at each of log2(64) levels.
  EXPECT_EQ(shared_writes, static_cast<size_t>(threads + 32 + 16 + 8 + 4 + 2 + 1));
  EXPECT_GE(param_reads, static_cast<size_t>(threads));
}

TEST(PtxExecutor, InvalidLaunchConfigurationsAreRejected) {
  Harness h("basic");
  const uint64_t buffer = h.upload(std::vector<float>(4));
  EXPECT_EQ(h.launch("vector_add", Dim3(1), Dim3(2048), 0, buffer, buffer, buffer, 4).status, LaunchStatus::kInvalidLaunch);
  EXPECT_EQ(h.launch("vector_add", Dim3(0), Dim3(32), 0, buffer, buffer, buffer, 4).status, LaunchStatus::kInvalidLaunch);
  EXPECT_THROW(h.launch("vector_add", Dim3(1), Dim3(32), 0, buffer, buffer, buffer), std::invalid_argument);
  EXPECT_THROW(h.launch("vector_add", Dim3(1), Dim3(32), 0, buffer, buffer, buffer, 4.0), std::invalid_argument);
  EXPECT_THROW(h.loaded().kernel("no_such_kernel"), std::out_of_range);
  // A kernel of another module cannot be launched through this one.
  LoadedModule other(Module::parse(generated_ptx("arith"), "arith.ptx"), h.memory());
  Executor executor(h.memory());
  const Kernel& foreign = other.kernel("float_approx");
  LaunchResult r = executor.launch(h.loaded(), foreign, LaunchConfig{Dim3(1), Dim3(32), 0}, std::vector<uint8_t>(foreign.param_bytes));
  EXPECT_EQ(r.status, LaunchStatus::kInvalidLaunch);
  EXPECT_THAT(r.message, HasSubstr("does not belong"));
}

}  // namespace
}  // namespace gpuvp::ptx::testing
