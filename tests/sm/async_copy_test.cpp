// cp.async on the SM timing model: the copies travel as global reads through the LSU, the
// copy groups complete when their reads return, and cp.async.wait_group / wait_all hold the
// warp until the groups it names have landed. Values against a CPU sum; waits measured with
// %clock64 around the wait instruction.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

constexpr uint32_t kThreads = 32;
constexpr uint32_t kGroupBytes = kThreads * 16;

// `groups` groups of one 16-byte copy per thread (group g from in + g * 512 + 16 t), then the
// wait (`wait`: its text, between two %clock64 reads), then out[t] = the sum of the first words
// of its copies and cycles[t] = the clock difference across the wait.
std::string copies_kernel(int groups, const std::string& wait) {
  std::string text = ".version 8.0\n.target sm_80\n.address_size 64\n"
                     ".shared .align 16 .b8 buf[4096];\n"
                     ".visible .entry copies(.param .u64 in, .param .u64 out, .param .u64 cycles) {\n"
                     "  .reg .b32 %r<64>;\n  .reg .b64 %rd<16>;\n"
                     "  ld.param.u64 %rd1, [in];\n  ld.param.u64 %rd2, [out];\n  ld.param.u64 %rd12, [cycles];\n"
                     "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 16;\n  add.s64 %rd4, %rd1, %rd3;\n"
                     "  mov.u32 %r2, buf;\n  shl.b32 %r3, %r1, 4;\n  add.s32 %r4, %r2, %r3;\n";
  for (int g = 0; g < groups; ++g) {
    const std::string offset = std::to_string(g * kGroupBytes);
    text += "  cp.async.cg.shared.global [%r4+" + offset + "], [%rd4+" + offset + "], 16;\n";
    text += "  cp.async.commit_group;\n";
  }
  text += "  mov.u64 %rd8, %clock64;\n  " + wait + "\n  mov.u64 %rd9, %clock64;\n  mov.u32 %r10, 0;\n";
  for (int g = 0; g < groups; ++g) {
    text += "  ld.shared.u32 %r" + std::to_string(20 + g) + ", [%r4+" + std::to_string(g * kGroupBytes) + "];\n";
    text += "  add.u32 %r10, %r10, %r" + std::to_string(20 + g) + ";\n";
  }
  text += "  mul.wide.u32 %rd5, %r1, 4;\n  add.s64 %rd6, %rd2, %rd5;\n  st.global.u32 [%rd6], %r10;\n"
          "  sub.s64 %rd10, %rd9, %rd8;\n  mul.wide.u32 %rd13, %r1, 8;\n  add.s64 %rd14, %rd12, %rd13;\n"
          "  st.global.u64 [%rd14], %rd10;\n  ret;\n}\n";
  return text;
}

struct Outcome {
  std::vector<uint32_t> sums;
  uint64_t wait_cycles = 0;  // thread 0's
};

Outcome run_copies(int groups, const std::string& wait) {
  testing::SmBench bench;
  bench.load(copies_kernel(groups, wait));
  std::vector<uint32_t> in(groups * kGroupBytes / 4);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = i * 3 + 1;
  const uint64_t d_in = bench.memory.allocate(in.size() * 4), d_out = bench.memory.allocate(kThreads * 4);
  const uint64_t d_cycles = bench.memory.allocate(kThreads * 8);
  bench.memory.copy_to_device(d_in, in.data(), in.size() * 4);
  bench.run("copies", {ptx::Dim3{1}, ptx::Dim3{kThreads}, 0},
            ptx::pack_params(bench.module->kernel("copies"), d_in, d_out, d_cycles));
  Outcome o;
  o.sums.resize(kThreads);
  bench.memory.copy_from_device(o.sums.data(), d_out, kThreads * 4);
  std::vector<uint64_t> cycles(kThreads);
  bench.memory.copy_from_device(cycles.data(), d_cycles, kThreads * 8);
  o.wait_cycles = cycles[0];
  for (uint32_t t = 0; t < kThreads; ++t) {
    uint32_t expected = 0;
    for (int g = 0; g < groups; ++g) expected += in[(g * kGroupBytes + t * 16) / 4];
    EXPECT_EQ(o.sums[t], expected) << "thread " << t;
  }
  return o;
}

TEST(AsyncCopyTiming, WaitAllHoldsTheWarpUntilTheCopiesLand) {
  // The bench's memory answers after 100 ns: ~138 core cycles at the V100's 1.38 GHz.
  const Outcome waited = run_copies(1, "cp.async.wait_all;");
  EXPECT_GT(waited.wait_cycles, 100u);
  const Outcome same = run_copies(1, "cp.async.wait_group 0;");
  EXPECT_EQ(same.wait_cycles, waited.wait_cycles);
}

TEST(AsyncCopyTiming, WaitGroupNLetsTheNewestNGroupsStayInFlight) {
  // Four groups committed: wait_group 4 needs none of them, wait_group 3 the oldest.
  const Outcome none = run_copies(4, "cp.async.wait_group 4;");
  EXPECT_LT(none.wait_cycles, 10u);
  const Outcome oldest = run_copies(4, "cp.async.wait_group 3;");
  EXPECT_GT(oldest.wait_cycles, 100u);
}

TEST(AsyncCopyTiming, GroupsInFlightOverlap) {
  // Four groups in flight together cost about one memory latency, not four.
  const Outcome one = run_copies(1, "cp.async.wait_all;");
  const Outcome four = run_copies(4, "cp.async.wait_all;");
  EXPECT_GE(four.wait_cycles + 12, one.wait_cycles);  // issuing the later copies overlaps the first's flight
  EXPECT_LT(four.wait_cycles, one.wait_cycles + 60);
}

}  // namespace
}  // namespace gpuvp::gpu
