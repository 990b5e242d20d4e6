// GpuCore end to end: the CTA scheduler and clusters of SMs sharing a port, a kernel from the
// PTX model with timing, correct results, requests of both SMs on each cluster's port.
#include <gtest/gtest.h>

#include <set>

#include "models/gpu/sm/sm_cluster.h"
#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

const char* kScale = R"(
.visible .entry scale(.param .u64 x, .param .u64 y, .param .u32 n) {
  .reg .pred %p<2>;
  .reg .f32 %f<3>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.s32 %p1, %r1, %r2;
  @%p1 bra END;
  mul.wide.s32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  mul.f32 %f2, %f1, 0f40000000;
  add.s64 %rd5, %rd2, %rd3;
  st.global.f32 [%rd5], %f2;
END:
  ret;
}
)";

// Atomics (serial-only in the parallel phase), global loads of what other CTAs stored in
// earlier cycles, shared memory and a barrier: tickets[i] = old value of bins[i % 8].
const char* kTickets = R"(
.shared .align 4 .b8 tile[512];
.visible .entry tickets(.param .u64 bins, .param .u64 out, .param .u32 n) {
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [bins];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  and.b32 %r6, %r1, 7;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd1, %rd3;
  atom.global.add.u32 %r7, [%rd4], 1;
  shl.b32 %r8, %r5, 2;
  mov.u32 %r9, tile;
  add.u32 %r10, %r9, %r8;
  st.shared.u32 [%r10], %r7;
  bar.sync 0;
  xor.b32 %r8, %r8, 4;
  add.u32 %r10, %r9, %r8;
  ld.shared.u32 %r11, [%r10];
  setp.ge.s32 %p1, %r1, %r2;
  @%p1 bra END;
  mul.wide.s32 %rd5, %r1, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r11;
END:
  ret;
}
)";

// 8 SMs in clusters of 2 on `tickets`; returns the tickets and the statistics JSON.
std::vector<uint32_t> run_tickets(const std::vector<std::string>& overrides, std::string* json, uint64_t* phases) {
  std::vector<std::string> all = {"gpu.sm.count=8", "gpu.sm.cluster_size=2"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  testing::GpuCoreBench b(all);
  const auto& k = b.load(testing::ptx_header() + kTickets, "tickets");
  const uint32_t n = 3000;
  const uint64_t bins = b.memory.allocate(8 * 4), out = b.memory.allocate(n * 4);
  b.memory.fill(bins, 0, 8 * 4);
  ptx::KernelRun run(b.memory, {}, *b.module, k, {ptx::Dim3{(n + 127) / 128}, ptx::Dim3{128}, 0},
                     ptx::pack_params(k, bins, out, n));
  b.run(run);
  std::vector<uint32_t> result(8 + n);
  b.memory.copy_from_device(result.data(), bins, 8 * 4);
  b.memory.copy_from_device(result.data() + 8, out, n * 4);
  *json = b.stats.json();
  *phases = b.core.stepper().parallel_phases();
  return result;
}

// Issue 6: the statistics (every SM's, the memory side's) and the results are byte-identical
// for any number of stepping threads and either distribution; 2+ threads really ran phases on
// the pool.
TEST(GpuCore, ThreadCountsGiveIdenticalStatisticsAndResults) {
  std::string reference_json;
  uint64_t phases = 0;
  const std::vector<uint32_t> reference = run_tickets({}, &reference_json, &phases);
  EXPECT_EQ(phases, 0u);
  uint64_t total = 0;
  for (int b = 0; b < 8; ++b) total += reference[b];
  EXPECT_EQ(total, (3000u + 127) / 128 * 128);  // every thread of every CTA took a ticket
  for (const char* threads : {"2", "3", "4", "8"}) {
    for (const char* distribution : {"static", "dynamic"}) {
      std::string json;
      const std::vector<uint32_t> result =
          run_tickets({std::string("sim.threads=") + threads, std::string("sim.sm_distribution=") + distribution,
                       "sim.parallel_min_work=0"},
                      &json, &phases);
      EXPECT_TRUE(result == reference) << threads << " threads, " << distribution;
      EXPECT_TRUE(json == reference_json) << threads << " threads, " << distribution;
      EXPECT_GT(phases, 0u);
    }
  }
}

// Phases too small to pay for the pool's wake-up run on one thread: with a threshold no phase
// reaches, the pool never wakes; with the default, this small kernel's cycles mostly stay on one
// thread. Either way the results and statistics are those of one thread.
TEST(GpuCore, SmallPhasesRunOnOneThreadWithTheSameResults) {
  std::string reference_json, json;
  uint64_t phases = 0;
  const std::vector<uint32_t> reference = run_tickets({}, &reference_json, &phases);
  const std::vector<uint32_t> never = run_tickets({"sim.threads=4", "sim.parallel_min_work=100000000"}, &json, &phases);
  EXPECT_EQ(phases, 0u);
  EXPECT_TRUE(never == reference);
  EXPECT_TRUE(json == reference_json);
  uint64_t always_phases = 0;
  run_tickets({"sim.threads=4", "sim.parallel_min_work=0"}, &json, &always_phases);
  const std::vector<uint32_t> adaptive = run_tickets({"sim.threads=4"}, &json, &phases);
  EXPECT_TRUE(adaptive == reference);
  EXPECT_TRUE(json == reference_json);
  EXPECT_LT(phases, always_phases);
}

TEST(GpuCore, ThreadedIdleSkippingMatchesTicking) {
  std::string skip, tick;
  uint64_t phases = 0;
  const auto a = run_tickets({"sim.threads=2"}, &skip, &phases);
  const auto b = run_tickets({"sim.threads=2", "gpu.sm.idle_skip=false"}, &tick, &phases);
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(skip == tick);
}

uint64_t run_core(const std::vector<std::string>& overrides, std::string* json) {
  testing::GpuCoreBench b(overrides, 200);
  const auto& k = b.load(testing::ptx_header() + kScale, "scale");
  const uint32_t n = 5000;
  const uint64_t x = b.memory.allocate(n * 4), y = b.memory.allocate(n * 4);
  std::vector<float> host(n);
  for (uint32_t i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  b.memory.copy_to_device(x, host.data(), n * 4);
  ptx::KernelRun run(b.memory, {}, *b.module, k, {ptx::Dim3{(n + 127) / 128}, ptx::Dim3{128}, 0},
                     ptx::pack_params(k, x, y, n));
  b.run(run, 7);
  b.memory.copy_from_device(host.data(), y, n * 4);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(host[i], 2.0f * static_cast<float>(i)) << i;
  for (uint32_t i = 0; i < b.core.cluster_count(); ++i) {
    std::set<uint32_t> sms;
    for (const auto& t : b.ports[i]->transactions()) {
      sms.insert(t.extension.sm_id);
      EXPECT_EQ(t.extension.kernel_id, 7u);
    }
    EXPECT_EQ(sms.size(), 2u) << "cluster " << i;
  }
  if (json) *json = b.stats.json();
  return b.core.last_cycle();
}

TEST(GpuCore, ClustersShareAPortAndRunAKernelEndToEnd) {
  std::string a, b;
  const uint64_t c1 = run_core({"gpu.sm.count=4", "gpu.sm.cluster_size=2"}, &a);
  const uint64_t c2 = run_core({"gpu.sm.count=4", "gpu.sm.cluster_size=2", "gpu.sm.idle_skip=false"}, &b);
  EXPECT_GT(c1, 0u);
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(a, b);
}

// out[0] = %clock64 as the CTA's first instruction issues; then `spins` turns of a loop.
const char* kStamp = R"(
.visible .entry stamp(.param .u64 out, .param .u32 spins) {
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<3>;
  mov.u64 %rd2, %clock64;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [spins];
  st.global.u64 [%rd1], %rd2;
  mov.u32 %r2, 0;
LOOP:
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra END;
  add.u32 %r2, %r2, 1;
  bra LOOP;
END:
  ret;
}
)";

// Windowed, a CTA launched at cycle c onto an SM busy with another kernel's CTA starts at the
// start of the window after next, (c / W + 2) W, as any event from outside the SMs takes effect
// there (SmStepper::arrival_cycle): also when c is a window boundary, where the SM's next window
// may already be under way or not yet begun depending on the order of processes at that instant.
TEST(GpuCore, WindowedLaunchOntoABusySmStartsAtTheWindowAfterNext) {
  const uint64_t window = 8;
  for (const char* threads : {"sim.threads=1", "sim.threads=2"}) {
    for (uint64_t launch = 400; launch < 400 + 2 * window; ++launch) {
      testing::GpuCoreBench b({"gpu.sm.count=1", "gpu.sm.cluster_size=1", "sim.window=8", threads});
      const auto& k = b.load(testing::ptx_header() + kStamp, "stamp");
      const uint64_t out_busy = b.memory.allocate(8), out_late = b.memory.allocate(8);
      ptx::KernelRun busy(b.memory, {}, *b.module, k, {ptx::Dim3{1}, ptx::Dim3{32}, 0},
                          ptx::pack_params(k, out_busy, 2000u));
      ptx::KernelRun late(b.memory, {}, *b.module, k, {ptx::Dim3{1}, ptx::Dim3{32}, 0},
                          ptx::pack_params(k, out_late, 0u));
      int done = 0;
      sc_core::sc_event finished;
      const auto count = [&] {
        ++done;
        finished.notify(sc_core::SC_ZERO_TIME);
      };
      b.sim.run([&] {
        b.core.submit(busy, 1, count);
        wait(b.clock.time_of_cycle(launch) - sc_core::sc_time_stamp());
        EXPECT_FALSE(b.core.sm(0).idle());
        b.core.submit(late, 2, count);
        while (done < 2) wait(finished);
      });
      uint64_t started = 0;
      b.memory.copy_from_device(&started, out_late, 8);
      const uint64_t window_after_next = (launch / window + 2) * window;
      EXPECT_GE(started, window_after_next) << "launched at cycle " << launch << ", " << threads;
      EXPECT_LE(started, window_after_next + 2) << "launched at cycle " << launch << ", " << threads;
    }
  }
}

// Windowed with 2 threads, CTAs launching and retiring in many phases (100 short CTAs on 4
// SMs) leave the SMs' window running beside the phase: a launch goes to the SM's inbox (its warps
// are set up by the SM's own thread at its next window) and a retirement touches only the run's
// slot and the scheduler, so neither joins the window early. Only a launch that grows the run's
// slot table (a handful per kernel) does. Same results and statistics as one thread.
TEST(GpuCore, WindowedLaunchesAndRetirementsLeaveTheWindowRunning) {
  std::string json[2];
  std::vector<float> result[2];
  for (int t = 0; t < 2; ++t) {
    testing::GpuCoreBench b({"gpu.sm.count=4", "gpu.sm.cluster_size=2", "sim.window=8",
                             t == 0 ? "sim.threads=1" : "sim.threads=2"});
    const auto& k = b.load(testing::ptx_header() + kScale, "scale");
    const uint32_t n = 100 * 512;
    const uint64_t x = b.memory.allocate(n * 4), y = b.memory.allocate(n * 4);
    std::vector<float> input(n);
    for (uint32_t i = 0; i < n; ++i) input[i] = static_cast<float>(i % 1000) * 0.5f;
    b.memory.copy_to_device(x, input.data(), n * 4);
    ptx::KernelRun run(b.memory, {}, *b.module, k, {ptx::Dim3{n / 512}, ptx::Dim3{512}, 0}, ptx::pack_params(k, x, y, n));
    b.run(run);
    result[t].resize(n);
    b.memory.copy_from_device(result[t].data(), y, n * 4);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(result[t][i], 2 * input[i]) << i;
    json[t] = b.stats.json();
    const SmStepper& stepper = b.core.stepper();
    if (t == 0) {
      EXPECT_EQ(stepper.windows_joined_early(), 0u);  // one thread: no window runs beside a phase
      continue;
    }
    EXPECT_GT(stepper.windows(), 100u);
    EXPECT_LE(stepper.windows_joined_early(), 8u) << "of " << stepper.windows() << " windows";
  }
  EXPECT_TRUE(json[0] == json[1]);
}

}  // namespace
}  // namespace gpuvp::gpu
