// mbarrier objects on the functional model (hand-written PTX): phases, tokens and parities,
// counts and arrive_drop, transaction counts, cp.async.mbarrier.arrive, a spin-wait whose
// awaited lanes are in the same warp, and the faults of misuse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kMbarrierPtx = R"(
.version 8.0
.target sm_90
.address_size 64

// One thread walks an mbarrier through its phases; out[i] records what it saw.
.visible .entry phases(.param .u64 out)
{
  .shared .align 8 .b64 bar;
  .reg .pred %p<4>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd10, [out];
  mov.u32 %r1, bar;
  mbarrier.init.shared.b64 [%r1], 3;
  mbarrier.arrive.shared.b64 %rd1, [%r1];
  mbarrier.pending_count.b64 %r2, %rd1;                 // 2
  mbarrier.test_wait.shared.b64 %p1, [%r1], %rd1;       // phase 0 open: 0
  selp.u32 %r3, 1, 0, %p1;
  mbarrier.arrive.release.cta.shared::cta.b64 %rd2, [%r1], 2;  // completes phase 0
  mbarrier.pending_count.b64 %r4, %rd2;                 // 0
  mbarrier.test_wait.shared.b64 %p1, [%r1], %rd1;       // 1
  selp.u32 %r5, 1, 0, %p1;
  mbarrier.test_wait.parity.shared.b64 %p1, [%r1], 0;   // phase 0 done: 1
  selp.u32 %r6, 1, 0, %p1;
  mbarrier.try_wait.parity.shared.b64 %p1, [%r1], 1;    // phase 1 open: 0
  selp.u32 %r7, 1, 0, %p1;
  // Phase 1: arrivals complete, but 64 bytes of transactions are outstanding.
  mbarrier.arrive.expect_tx.shared.b64 %rd3, [%r1], 64;
  mbarrier.arrive.shared::cta.b64 _, [%r1], 2;
  mbarrier.test_wait.parity.shared.b64 %p1, [%r1], 1;   // 0
  selp.u32 %r8, 1, 0, %p1;
  mbarrier.complete_tx.shared::cta.b64 [%r1], 64;
  mbarrier.test_wait.shared.b64 %p1, [%r1], %rd3;       // 1
  selp.u32 %r9, 1, 0, %p1;
  // Phase 2: one arrival drops out, so phase 3 expects 2.
  mbarrier.arrive_drop.shared.b64 %rd4, [%r1];
  mbarrier.pending_count.b64 %r10, %rd4;                // 2
  mbarrier.arrive.shared::cta.b64 _, [%r1], 2;          // completes phase 2
  mbarrier.arrive.shared.b64 %rd5, [%r1];               // phase 3
  mbarrier.pending_count.b64 %r11, %rd5;                // 1
  cp.async.mbarrier.arrive.shared.b64 [%r1];            // no net change
  mbarrier.test_wait.shared.b64 %p1, [%r1], %rd5;       // 0
  selp.u32 %r12, 1, 0, %p1;
  cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];      // the last arrival of phase 3
  mbarrier.test_wait.shared.b64 %p1, [%r1], %rd5;       // 1
  selp.u32 %r13, 1, 0, %p1;
  // A generic address reaches the same object.
  mov.u64 %rd7, bar;
  cvta.shared.u64 %rd6, %rd7;
  mbarrier.arrive.b64 %rd8, [%rd6];                     // phase 4
  mbarrier.pending_count.b64 %r14, %rd8;                // 1
  mbarrier.inval.shared.b64 [%r1];
  st.global.v4.u32 [%rd10], {%r2, %r3, %r4, %r5};
  st.global.v4.u32 [%rd10+16], {%r6, %r7, %r8, %r9};
  st.global.v4.u32 [%rd10+32], {%r10, %r11, %r12, %r13};
  st.global.u32 [%rd10+48], %r14;
  ret;
}

// Lanes 0..15 spin until lanes 16..31 of the same warp (which branch to code placed after the
// spin loop) have written their slots and arrived.
.visible .entry same_warp_spin(.param .u64 out)
{
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 slots[16];
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, bar;
  mov.u32 %r2, slots;
  mov.u32 %r3, %tid.x;
  setp.ne.u32 %p3, %r3, 0;
  @%p3 bra READY;
  mbarrier.init.shared.b64 [%r1], 16;
READY:
  bar.sync 0;
  and.b32 %r4, %r3, 15;
  shl.b32 %r5, %r4, 2;
  add.u32 %r6, %r2, %r5;
  setp.ge.u32 %p1, %r3, 16;
  @%p1 bra PRODUCE;
SPIN:
  mbarrier.try_wait.parity.shared.b64 %p2, [%r1], 0;
  @!%p2 bra SPIN;
  ld.shared.u32 %r7, [%r6];
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
PRODUCE:
  mul.lo.u32 %r8, %r3, 10;
  st.shared.u32 [%r6], %r8;
  mbarrier.arrive.shared.b64 _, [%r1];
  ret;
}

.visible .entry zero_count()
{
  .shared .align 8 .b64 bar;
  .reg .b32 %r<2>;
  mov.u32 %r1, bar;
  mbarrier.init.shared.b64 [%r1], 0;
  ret;
}

.visible .entry global_object(.param .u64 object)
{
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [object];
  mbarrier.init.b64 [%rd1], 1;
  ret;
}

.visible .entry too_many_arrivals()
{
  .shared .align 8 .b64 bar;
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, bar;
  mbarrier.init.shared.b64 [%r1], 1;
  mbarrier.arrive.shared::cta.b64 %rd1, [%r1], 2;
  ret;
}
)";

TEST(PtxMbarrier, PhasesTokensCountsAndTransactions) {
  Harness h(kMbarrierPtx, "mbarrier.ptx", ExecutorOptions{});
  const uint64_t out = h.upload(std::vector<uint32_t>(13, 0xdeadu));
  LaunchResult r = h.launch("phases", Dim3(1), Dim3(1), 0, out);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(h.download<uint32_t>(out, 13), (std::vector<uint32_t>{2, 0, 0, 1, 1, 0, 0, 1, 2, 1, 0, 1, 1}));
}

TEST(PtxMbarrier, LanesSpinningOnABarrierLetTheirOwnWarpArrive) {
  ExecutorOptions options;
  options.instruction_limit = 100000;  // a spin that starves its producers ends as a fault
  Harness h(kMbarrierPtx, "mbarrier.ptx", options);
  const uint64_t out = h.upload(std::vector<uint32_t>(32, 0xdeadu));
  LaunchResult r = h.launch("same_warp_spin", Dim3(1), Dim3(32), 0, out);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto o = h.download<uint32_t>(out, 32);
  for (uint32_t t = 0; t < 16; ++t) EXPECT_EQ(o[t], (t + 16) * 10) << t;
  for (uint32_t t = 16; t < 32; ++t) EXPECT_EQ(o[t], 0xdeadu) << t;
}

TEST(PtxMbarrier, MisuseFaultsNamingTheObject) {
  Harness h(kMbarrierPtx, "mbarrier.ptx", ExecutorOptions{});
  LaunchResult r = h.launch("zero_count", Dim3(1), Dim3(1), 0);
  EXPECT_EQ(r.status, LaunchStatus::kInvalidInstruction);
  EXPECT_THAT(r.message, HasSubstr("init count 0 is outside 1..2^20-1"));
  EXPECT_THAT(r.message, HasSubstr("mbarrier.ptx:"));
  const uint64_t object = h.upload(std::vector<uint64_t>(1));
  r = h.launch("global_object", Dim3(1), Dim3(1), 0, object);
  EXPECT_EQ(r.status, LaunchStatus::kIllegalAddress);
  EXPECT_THAT(r.message, HasSubstr("is not in shared memory"));
  r = h.launch("too_many_arrivals", Dim3(1), Dim3(1), 0);
  EXPECT_EQ(r.status, LaunchStatus::kInvalidInstruction);
  EXPECT_THAT(r.message, HasSubstr("arrival count 2 exceeds the pending count 1"));
}

TEST(PtxMbarrier, BadFormsAreRejectedWithAReason) {
  auto parse_error = [](const std::string& body) {
    const std::string text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\n.reg .pred %p<2>;\n"
                             ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n" + body + "\nret;\n}\n";
    try {
      Module::parse(text, "bad.ptx");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(parse_error("mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%r1], %r2, 1000;"), "");
  EXPECT_THAT(parse_error("mbarrier.arrive.shared::cluster.b64 _, [%r1];"), HasSubstr("another CTA of the cluster"));
  EXPECT_THAT(parse_error("mbarrier.init.shared [%r1], 1;"), HasSubstr("needs .b64"));
  EXPECT_THAT(parse_error("mbarrier.expect_tx.shared.b64 [%r1];"), HasSubstr("expects 2 operands"));
  EXPECT_THAT(parse_error("mbarrier.frobnicate.shared.b64 [%r1];"), HasSubstr("unknown mbarrier operation"));
}

}  // namespace
}  // namespace gpuvp::ptx::testing
