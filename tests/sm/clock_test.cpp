// Time-true special registers on the SM timing model, through the SM's socket: %clock64 reads
// the SM's core cycle at issue and %globaltimer the simulated time in ns, so a dependent chain
// timed with clock64 reads back exactly the configured latencies (the pointer-chase method of
// the microbenchmark papers); the functional model keeps counting instructions.
#include <gtest/gtest.h>

#include <sstream>

#include "models/gpu/ptx/executor.h"
#include "models/gpu/sm/sm_cluster.h"
#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

using testing::ptx_header;
using testing::SmBench;

// out[0] = t1 - t0 (%clock64), out[1] = the %globaltimer difference, out[2] = t0, out[3] = t1.
// `prologue` runs before the first read (and ends with a store that waits for its value),
// then `n` copies of `link`, a store of the chain's value, and the second reads.
std::string timed_kernel(const std::string& declare, const std::string& prologue, const std::string& link,
                         const std::string& store, int n) {
  std::ostringstream s;
  s << ptx_header() << ".visible .entry timed(.param .u64 out, .param .u64 p) {\n"
    << "  .reg .b64 %t<8>;\n  .reg .b64 %rd<4>;\n" << declare << "  ld.param.u64 %rd1, [out];\n"
    << "  ld.param.u64 %rd2, [p];\n" << prologue << "  mov.u64 %t1, %clock64;\n  mov.u64 %t2, %globaltimer;\n";
  for (int i = 0; i < n; ++i) s << "  " << link << "\n";
  s << "  " << store << "\n  mov.u64 %t3, %clock64;\n  mov.u64 %t4, %globaltimer;\n"
    << "  sub.u64 %t5, %t3, %t1;\n  st.global.u64 [%rd1], %t5;\n  sub.u64 %t6, %t4, %t2;\n"
    << "  st.global.u64 [%rd1+8], %t6;\n  st.global.u64 [%rd1+16], %t1;\n  st.global.u64 [%rd1+24], %t3;\n"
    << "  ret;\n}\n";
  return s.str();
}

std::string fp32_chain(int n) {
  return timed_kernel("  .reg .f32 %x<2>;\n", "  mov.f32 %x1, 0f3F800000;\n", "add.f32 %x1, %x1, 0f3F800000;",
                      "st.global.f32 [%rd1+32], %x1;", n);
}

// The ring's one cell holds its own address: every link hits the line the warm-up load filled.
std::string chase_chain(int n) {
  return timed_kernel("", "  ld.global.u64 %rd2, [%rd2];\n  st.global.u64 [%rd1+40], %rd2;\n",
                      "ld.global.u64 %rd2, [%rd2];", "st.global.u64 [%rd1+32], %rd2;", n);
}

struct Timed {
  uint64_t clock = 0, ns = 0, t0 = 0, t1 = 0, done_cycle = 0;
};

Timed run_timed(const std::string& ptx, const std::vector<std::string>& overrides = {}) {
  SmBench b(overrides);
  b.load(ptx);
  const uint64_t out = b.memory.allocate(4096);  // lines apart: the stores never touch the ring's line
  const uint64_t cell = b.memory.allocate(4096);
  b.memory.copy_to_device(cell, &cell, sizeof cell);
  Timed t;
  t.done_cycle = b.run("timed", {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(b.module->kernel("timed"), out, cell));
  uint64_t v[4];
  b.memory.copy_from_device(v, out, sizeof v);
  t.clock = v[0];
  t.ns = v[1];
  t.t0 = v[2];
  t.t1 = v[3];
  return t;
}

TEST(SmClock, Clock64AroundADependentChainReadsTheConfiguredLatency) {
  const SmParams p = testing::load_sm_params();
  const Timed a = run_timed(fp32_chain(10)), b = run_timed(fp32_chain(30));
  EXPECT_EQ(b.clock - a.clock, 20u * p.fp32_latency);
  // Per link the latency, plus the store and the second read issuing behind the last link.
  EXPECT_GE(a.clock, 10u * p.fp32_latency);
  EXPECT_LE(a.clock, 10u * p.fp32_latency + 4);
  // The knob drives what the kernel reads.
  const Timed c = run_timed(fp32_chain(10), {"gpu.sm.fp32_latency=9"});
  const Timed d = run_timed(fp32_chain(30), {"gpu.sm.fp32_latency=9"});
  EXPECT_EQ(d.clock - c.clock, 20u * 9);
}

TEST(SmClock, PointerChaseTimedInsideTheKernelReadsTheL1HitLatency) {
  const SmParams p = testing::load_sm_params();
  const Timed a = run_timed(chase_chain(4)), b = run_timed(chase_chain(12));
  EXPECT_EQ(b.clock - a.clock, 8u * p.l1_hit_latency);
  EXPECT_GE(a.clock, 4u * p.l1_hit_latency);
  EXPECT_LE(a.clock, 4u * p.l1_hit_latency + 4);
  const Timed c = run_timed(chase_chain(4), {"gpu.sm.l1.hit_latency=50"});
  const Timed d = run_timed(chase_chain(12), {"gpu.sm.l1.hit_latency=50"});
  EXPECT_EQ(d.clock - c.clock, 8u * 50);
}

TEST(SmClock, ReadsAreTheSmCycleAndTheSimulatedNanoseconds) {
  const SmParams p = testing::load_sm_params();
  const Timed t = run_timed(chase_chain(12));
  // The first read follows the warm-up miss (100 ns at the bench's memory), the second lies
  // within the kernel, which ends after both.
  EXPECT_GT(t.t0, static_cast<uint64_t>(100e-9 * p.clock_hz));
  EXPECT_EQ(t.t1 - t.t0, t.clock);
  EXPECT_LT(t.t1, t.done_cycle);
  // %globaltimer counts simulated ns: the same span as the cycles, within the ns rounding.
  const double expected_ns = static_cast<double>(t.clock) * 1e9 / p.clock_hz;
  EXPECT_NEAR(static_cast<double>(t.ns), expected_ns, 1.0);
}

TEST(SmClock, FunctionalModelCountsInstructions) {
  // Without a timing model %clock64 advances 4 per issued instruction, whatever the latencies.
  auto functional_clock = [](int n) {
    ptx::DeviceMemory memory;
    ptx::LoadedModule module(ptx::Module::parse(fp32_chain(n), "f.ptx"), memory);
    const uint64_t out = memory.allocate(64), cell = memory.allocate(64);
    ptx::Executor executor(memory);
    const auto& k = module.kernel("timed");
    const ptx::LaunchResult r =
        executor.launch(module, k, {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(k, out, cell));
    EXPECT_TRUE(r.ok()) << r.message;
    uint64_t clock = 0;
    memory.copy_from_device(&clock, out, sizeof clock);
    return clock;
  };
  EXPECT_EQ(functional_clock(30) - functional_clock(10), 4u * 20);
}

// Every thread of 64 CTAs stores %clock64 and %globaltimer after a load: the values read on 8
// SMs stepped by 1, 2 or 4 host threads are identical (they are the SMs' cycles, not a count of
// host work), and they differ between CTAs (they are times, not constants).
const char* kStamps = R"(
.visible .entry stamps(.param .u64 in, .param .u64 out) {
  .reg .b32 %r<4>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r1, %r1, %r2, %r3;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  add.u32 %r2, %r2, 1;
  st.global.u32 [%rd4], %r2;
  mov.u64 %rd5, %clock64;
  mov.u64 %rd6, %globaltimer;
  mul.wide.u32 %rd7, %r1, 16;
  add.u64 %rd8, %rd2, %rd7;
  st.global.u64 [%rd8], %rd5;
  st.global.u64 [%rd8+8], %rd6;
  ret;
}
)";

std::vector<uint64_t> run_stamps(const std::string& threads) {
  testing::GpuCoreBench b({"gpu.sm.count=8", "gpu.sm.cluster_size=2", "sim.threads=" + threads, "sim.parallel_min_work=0"});
  const auto& k = b.load(testing::ptx_header() + kStamps, "stamps");
  const uint32_t n = 64 * 64;
  const uint64_t in = b.memory.allocate(4 * n), out = b.memory.allocate(16 * n);
  b.memory.fill(in, 0, 4 * n);
  ptx::KernelRun run(b.memory, {}, *b.module, k, {ptx::Dim3{64}, ptx::Dim3{64}, 0}, ptx::pack_params(k, in, out));
  b.run(run);
  std::vector<uint64_t> stamps(2 * n);
  b.memory.copy_from_device(stamps.data(), out, 16 * n);
  return stamps;
}

TEST(SmClock, ReadsAreIdenticalForAnyThreadCount) {
  const std::vector<uint64_t> one = run_stamps("1");
  EXPECT_NE(one[0], one[2 * 64 * 63]);  // the last CTA ran later than the first
  EXPECT_GT(one[2 * 64 * 63], 0u);
  for (const char* threads : {"2", "4"}) EXPECT_TRUE(run_stamps(threads) == one) << threads << " threads";
}

}  // namespace
}  // namespace gpuvp::gpu
