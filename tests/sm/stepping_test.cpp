// The warp-stepping API against Executor::launch, the SM timing model's functional results,
// occupancy limits and the CTA scheduler.
#include <gtest/gtest.h>

#include <cstring>

#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

using testing::ptx_header;

// Block reduction through shared memory with a divergent branch, a barrier loop and a
// global atomic: exercises reconvergence, barriers, shared and global memory.
std::string reduce_kernel() {
  return ptx_header() + R"(
.shared .align 4 .b8 buf[1024];
.visible .entry reduce(.param .u64 in, .param .u64 out, .param .u64 total) {
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u64 %rd3, [total];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd4, %r4, 4;
  add.u64 %rd5, %rd1, %rd4;
  ld.global.u32 %r5, [%rd5];
  and.b32 %r6, %r1, 1;
  setp.eq.u32 %p1, %r6, 0;
  @%p1 bra EVEN;
  mul.lo.u32 %r5, %r5, 3;
EVEN:
  mov.u32 %r7, buf;
  shl.b32 %r8, %r1, 2;
  add.u32 %r9, %r7, %r8;
  st.shared.u32 [%r9], %r5;
  bar.sync 0;
  shr.u32 %r10, %r3, 1;
LOOP:
  setp.eq.u32 %p2, %r10, 0;
  @%p2 bra DONE;
  setp.ge.u32 %p3, %r1, %r10;
  @%p3 bra SKIP;
  shl.b32 %r11, %r10, 2;
  add.u32 %r12, %r9, %r11;
  ld.shared.u32 %r13, [%r12];
  ld.shared.u32 %r14, [%r9];
  add.u32 %r14, %r14, %r13;
  st.shared.u32 [%r9], %r14;
SKIP:
  bar.sync 0;
  shr.u32 %r10, %r10, 1;
  bra LOOP;
DONE:
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra END;
  ld.shared.u32 %r15, [%r7];
  mul.wide.u32 %rd6, %r2, 4;
  add.u64 %rd7, %rd2, %rd6;
  st.global.u32 [%rd7], %r15;
  atom.global.add.u32 %r16, [%rd3], %r15;
END:
  ret;
}
)";
}

constexpr uint32_t kBlocks = 6;
constexpr uint32_t kThreads = 128;

struct Buffers {
  uint64_t in, out, total;
};

Buffers prepare(ptx::DeviceMemory& memory) {
  Buffers b{memory.allocate(kBlocks * kThreads * 4), memory.allocate(kBlocks * 4), memory.allocate(4)};
  std::vector<uint32_t> host(kBlocks * kThreads);
  for (uint32_t i = 0; i < host.size(); ++i) host[i] = i * 7 + 1;
  memory.copy_to_device(b.in, host.data(), host.size() * 4);
  const uint32_t zero = 0;
  memory.copy_to_device(b.total, &zero, 4);
  return b;
}

std::vector<uint32_t> results(ptx::DeviceMemory& memory, const Buffers& b) {
  std::vector<uint32_t> r(kBlocks + 1);
  memory.copy_from_device(r.data(), b.out, kBlocks * 4);
  memory.copy_from_device(&r[kBlocks], b.total, 4);
  return r;
}

std::vector<uint32_t> reference() {
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(reduce_kernel(), "r.ptx"), memory);
  const Buffers b = prepare(memory);
  ptx::Executor executor(memory);
  const auto& k = module.kernel("reduce");
  const ptx::LaunchResult r = executor.launch(module, k, {ptx::Dim3{kBlocks}, ptx::Dim3{kThreads}, 0},
                                              ptx::pack_params(k, b.in, b.out, b.total));
  EXPECT_TRUE(r.ok()) << r.message;
  return results(memory, b);
}

TEST(Stepping, ReverseWarpOrderMatchesLaunch) {
  const std::vector<uint32_t> expected = reference();
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(reduce_kernel(), "r.ptx"), memory);
  const Buffers b = prepare(memory);
  const auto& k = module.kernel("reduce");
  ptx::KernelRun run(memory, {}, module, k, {ptx::Dim3{kBlocks}, ptx::Dim3{kThreads}, 0},
                     ptx::pack_params(k, b.in, b.out, b.total));
  ASSERT_TRUE(run.ok());
  // All CTAs resident at once, one instruction per warp per round, last warp first.
  std::vector<uint32_t> slots;
  for (uint64_t c = 0; c < run.cta_count(); ++c) slots.push_back(run.start_cta(run.cta_count() - 1 - c));
  uint64_t loads = 0, barriers = 0;
  bool any = true;
  while (any) {
    any = false;
    for (uint32_t slot : slots) {
      for (uint32_t w = run.warps_per_cta(); w-- > 0;) {
        if (!run.warp_ready(slot, w)) continue;
        const ptx::InstructionInfo& info = run.next(slot, w);
        ptx::StepResult r;
        ASSERT_TRUE(run.step(slot, w, &r)) << run.message();
        EXPECT_EQ(r.info, &info);
        if (info.access == ptx::AccessOp::kLoad && info.space == ptx::InstructionInfo::Space::kGlobal) {
          ++loads;
          EXPECT_EQ(r.access_mask, r.exec_mask);
          EXPECT_EQ(info.unit, ptx::UnitClass::kLdst);
          EXPECT_EQ(r.accesses[0].size, 4u);
        }
        barriers += r.barrier_wait;
        any = true;
      }
    }
  }
  for (uint32_t slot : slots) {
    EXPECT_TRUE(run.cta_done(slot));
    run.retire_cta(slot);
  }
  EXPECT_EQ(loads, kBlocks * (kThreads / 32));
  EXPECT_GT(barriers, 0u);
  EXPECT_TRUE(run.finish().ok());
  EXPECT_EQ(results(memory, b), expected);
}

TEST(Stepping, InstructionInfoNamesUnitsAndRegisters) {
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(ptx_header() + R"(
.visible .entry k(.param .u64 p) {
  .reg .f32 %f<4>;
  .reg .f64 %fd<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  ld.global.f32 %f1, [%rd1];
  fma.rn.f32 %f2, %f1, %f1, %f1;
  sin.approx.f32 %f3, %f2;
  cvt.f64.f32 %fd1, %f3;
  st.global.f64 [%rd1], %fd1;
  ret;
}
)", "i.ptx"), memory);
  const auto& k = module.kernel("k");
  const uint64_t p = memory.allocate(16);
  ptx::KernelRun run(memory, {}, module, k, {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(k, p));
  const uint32_t slot = run.start_cta(0);
  std::vector<ptx::UnitClass> units;
  std::vector<ptx::InstructionInfo> infos;
  while (run.warp_ready(slot, 0)) {
    infos.push_back(run.next(slot, 0));
    ASSERT_TRUE(run.step(slot, 0, nullptr));
  }
  ASSERT_EQ(infos.size(), 7u);
  EXPECT_EQ(infos[0].space, ptx::InstructionInfo::Space::kParam);
  EXPECT_EQ(infos[1].access, ptx::AccessOp::kLoad);
  EXPECT_EQ(infos[1].src_count, 1u);
  EXPECT_EQ(infos[1].src[0], infos[0].dst[0]);  // address register = ld.param's result
  EXPECT_EQ(infos[2].unit, ptx::UnitClass::kFp32);
  EXPECT_EQ(infos[2].src_count, 1u);             // %f1 three times: one entry
  EXPECT_EQ(infos[3].unit, ptx::UnitClass::kSfu);
  EXPECT_EQ(infos[4].unit, ptx::UnitClass::kFp64);
  EXPECT_EQ(infos[5].access, ptx::AccessOp::kStore);
  EXPECT_EQ(infos[5].dst_count, 0u);
  EXPECT_EQ(infos[5].src_count, 2u);
  EXPECT_EQ(infos[6].unit, ptx::UnitClass::kBranch);
  EXPECT_TRUE(run.cta_done(slot));
}

TEST(SmFunctional, TimedRunGivesLaunchResults) {
  const std::vector<uint32_t> expected = reference();
  for (const char* policy : {"gto", "lrr"}) {
    testing::SmBench b({std::string("gpu.sm.scheduler=") + policy});
    b.load(reduce_kernel());
    const Buffers buffers = prepare(b.memory);
    const auto& k = b.module->kernel("reduce");
    b.run("reduce", {ptx::Dim3{kBlocks}, ptx::Dim3{kThreads}, 0}, ptx::pack_params(k, buffers.in, buffers.out, buffers.total));
    EXPECT_EQ(results(b.memory, buffers), expected) << policy;
    EXPECT_EQ(b.counter("ctas_completed"), kBlocks);
    EXPECT_GT(b.counter("atomic_requests"), 0u);
    EXPECT_GT(b.counter("stall_barrier"), 0u);
  }
}

TEST(Occupancy, EachResourceLimits) {
  const SmParams p = testing::load_sm_params();  // V100: 2048 threads, 32 CTAs, 64K registers, 96 KiB
  EXPECT_EQ(occupancy(p, {32, 16, 0}).ctas_per_sm, 32u);
  EXPECT_EQ(occupancy(p, {32, 16, 0}).limit, OccupancyLimit::kCtas);
  EXPECT_EQ(occupancy(p, {512, 16, 0}).ctas_per_sm, 4u);
  EXPECT_EQ(occupancy(p, {512, 16, 0}).limit, OccupancyLimit::kThreads);
  EXPECT_EQ(occupancy(p, {256, 64, 0}).ctas_per_sm, 4u);  // 256 x 64 = 16K registers per CTA
  EXPECT_EQ(occupancy(p, {256, 64, 0}).limit, OccupancyLimit::kRegisters);
  EXPECT_EQ(occupancy(p, {256, 33, 0}).ctas_per_sm, 6u);  // 33 regs -> 1280 per warp (256-unit granularity)
  EXPECT_EQ(occupancy(p, {128, 16, 40 * 1024}).ctas_per_sm, 2u);
  EXPECT_EQ(occupancy(p, {128, 16, 40 * 1024}).limit, OccupancyLimit::kSharedMemory);
  EXPECT_EQ(occupancy(p, {1024, 255, 0}).ctas_per_sm, 0u);
}

TEST(CtaScheduler, TwoSmsRunConcurrentKernels) {
  const std::vector<uint32_t> expected = reference();
  testbench::Simulation sim;
  stats::Registry stats;
  const SmParams p = testing::load_sm_params();
  ClockDomain clock("core", static_cast<uint64_t>(p.clock_hz));
  Sm sm0("sm0", p, 0, clock, stats), sm1("sm1", p, 1, clock, stats);
  testbench::MemoryTarget m0("m0", sc_core::sc_time(100, sc_core::SC_NS)), m1("m1", sc_core::sc_time(100, sc_core::SC_NS));
  sm0.mem.bind(m0.socket);
  sm1.mem.bind(m1.socket);
  CtaScheduler scheduler("cta", p, clock, {&sm0, &sm1}, stats);
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(reduce_kernel(), "r.ptx"), memory);
  const Buffers b1 = prepare(memory), b2 = prepare(memory);
  const auto& k = module.kernel("reduce");
  ptx::KernelRun r1(memory, {}, module, k, {ptx::Dim3{kBlocks}, ptx::Dim3{kThreads}, 0}, ptx::pack_params(k, b1.in, b1.out, b1.total));
  ptx::KernelRun r2(memory, {}, module, k, {ptx::Dim3{kBlocks}, ptx::Dim3{kThreads}, 0}, ptx::pack_params(k, b2.in, b2.out, b2.total));
  int done = 0;
  sc_core::sc_event finished;
  sim.run([&] {
    scheduler.submit(r1, 1, [&] { ++done; finished.notify(sc_core::SC_ZERO_TIME); });
    scheduler.submit(r2, 2, [&] { ++done; finished.notify(sc_core::SC_ZERO_TIME); });
    while (done < 2) wait(finished);
  });
  EXPECT_TRUE(r1.finish().ok());
  EXPECT_TRUE(r2.finish().ok());
  EXPECT_EQ(results(memory, b1), expected);
  EXPECT_EQ(results(memory, b2), expected);
  EXPECT_EQ(stats.find_group("gpu.cta_scheduler")->find_counter("ctas_issued")->value(), 2u * kBlocks);
  EXPECT_EQ(stats.find_group("gpu.sm[0]")->find_counter("ctas_completed")->value() +
                stats.find_group("gpu.sm[1]")->find_counter("ctas_completed")->value(),
            2u * kBlocks);
  EXPECT_GT(stats.find_group("gpu.sm[1]")->find_counter("ctas_completed")->value(), 0u);
}

}  // namespace
}  // namespace gpuvp::gpu

namespace gpuvp::gpu {
namespace {

// Two SMs, the CTA scheduler, a kernel with barriers and atomics: statistics JSON and the
// final cycle with idle skipping on and off, and twice the same.
std::string scheduled_run(bool skip, uint64_t* last_cycle) {
  testbench::Simulation sim;
  stats::Registry stats;
  const SmParams p = testing::load_sm_params({std::string("gpu.sm.idle_skip=") + (skip ? "true" : "false")});
  ClockDomain clock("core", static_cast<uint64_t>(p.clock_hz));
  Sm sm0("sm0", p, 0, clock, stats), sm1("sm1", p, 1, clock, stats);
  testbench::MemoryTarget m0("m0", sc_core::sc_time(250, sc_core::SC_NS)), m1("m1", sc_core::sc_time(250, sc_core::SC_NS));
  sm0.mem.bind(m0.socket);
  sm1.mem.bind(m1.socket);
  CtaScheduler scheduler("cta", p, clock, {&sm0, &sm1}, stats);
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(reduce_kernel(), "r.ptx"), memory);
  const Buffers b = prepare(memory);
  const auto& k = module.kernel("reduce");
  ptx::KernelRun run(memory, {}, module, k, {ptx::Dim3{kBlocks * 3}, ptx::Dim3{kThreads}, 0},
                     ptx::pack_params(k, b.in, b.out, b.total));
  bool done = false;
  sc_core::sc_event finished;
  sim.run([&] {
    scheduler.submit(run, 1, [&] { done = true; finished.notify(sc_core::SC_ZERO_TIME); });
    while (!done) wait(finished);
  });
  EXPECT_TRUE(run.finish().ok());
  *last_cycle = std::max(sm0.last_cycle(), sm1.last_cycle());
  return stats.json();
}

TEST(CtaScheduler, IdleSkippingAndRepeatRunsGiveIdenticalStatistics) {
  uint64_t c1 = 0, c2 = 0, c3 = 0;
  const std::string skip = scheduled_run(true, &c1);
  const std::string tick = scheduled_run(false, &c2);
  const std::string again = scheduled_run(true, &c3);
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(c1, c3);
  EXPECT_EQ(skip, tick);
  EXPECT_EQ(skip, again);
}

// LSU back-pressure: with a one-entry LSU queue, 32-line scattered loads stall issue.
TEST(SmTiming, FullLsuQueueStallsIssue) {
  auto stalls = [](const char* queue) {
    // A perfect instruction cache: instruction prefetches would take MSHRs the loads compete for.
    testing::SmBench b({std::string("gpu.sm.lsu_queue=") + queue, "gpu.sm.icache.size=0 B"});
    b.load(ptx_header() + R"(
.visible .entry g(.param .u64 in) {
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 128;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  ld.global.u32 %r3, [%rd3+4];
  ld.global.u32 %r4, [%rd3+8];
  ld.global.u32 %r5, [%rd3+12];
  ret;
}
)");
    const uint64_t in = b.memory.allocate(32 * 128 + 128);
    const uint64_t cycles = b.run("g", {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(b.module->kernel("g"), in));
    return std::make_pair(b.counter("stall_memory"), cycles);
  };
  const auto deep = stalls("8");
  const auto shallow = stalls("1");
  EXPECT_GT(shallow.first, deep.first);
  EXPECT_GE(shallow.second, deep.second);
}

}  // namespace
}  // namespace gpuvp::gpu
