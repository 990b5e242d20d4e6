// Launch overheads (LaunchParams) on GpuCore through the CTA scheduler: the first CTA reaches
// its SM exactly the launch latency (plus the per-CTA dispatch latency) after the launch, a CTA
// refilling a freed slot reaches it the dispatch latency after the edge that freed it, the
// kernel completes exactly the completion latency after its last CTA ended, a kernel node of a
// CUDA graph waits the graph launch latency instead of the launch latency, and bad values of the
// knobs are refused with the knob's name.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/cta_scheduler/launch_params.h"
#include "models/gpu/sm/sm_cluster.h"
#include "models/tlm/trace_observer.h"
#include "platform/config/config.h"
#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

// CTA starts and ends as the scheduler reports them to a tracer.
class CtaTimes : public TraceObserver {
 public:
  std::vector<sc_core::sc_time> begins, ends;
  std::uint32_t add_link(const std::string&, const std::string&, const std::string&) override { return kNotTraced; }
  void phase(std::uint32_t, tlm::tlm_generic_payload&, TracePhase, const sc_core::sc_time&) override {}
  void kernel_begin(std::uint64_t, const std::string&, const sc_core::sc_time&) override {}
  void kernel_end(std::uint64_t, const sc_core::sc_time&) override {}
  void cta_begin(std::uint32_t, std::uint64_t, std::uint64_t, const sc_core::sc_time& at) override { begins.push_back(at); }
  void cta_end(std::uint32_t, std::uint64_t, std::uint64_t, const sc_core::sc_time& at) override { ends.push_back(at); }
};

// A few dependent instructions per thread and nothing else: no memory traffic.
const char* kBusy = R"(
.visible .entry busy() {
  .reg .b32 %r<3>;
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 1;
  add.u32 %r2, %r2, %r1;
  add.u32 %r2, %r2, %r1;
  ret;
}
)";

struct LaunchRun {
  std::vector<sc_core::sc_time> begins, ends;
  sc_core::sc_time submitted, completed;
  uint64_t period_ps = 0;
};

// `ctas` CTAs of 32 threads on one SM that holds `resident` of them at a time, launched 10 cycles
// after time zero (not on an edge: a launch arrives whenever the command processor takes it).
LaunchRun run_busy(uint64_t launch_cycles, uint64_t dispatch_cycles, uint64_t completion_cycles, uint32_t ctas,
             uint32_t resident, uint64_t graph_launch_cycles = 0, bool graph_node = false) {
  testbench::Simulation sim;
  stats::Registry stats;
  const SmParams p = testing::load_sm_params(
      {"gpu.sm.count=1", "gpu.sm.cluster_size=1", "gpu.sm.max_ctas=" + std::to_string(resident)});
  ClockDomain clock("core", static_cast<uint64_t>(p.clock_hz));
  CtaTimes times;
  GpuCore core("gpu", p, clock, stats, &times);
  core.scheduler().set_launch_latencies({launch_cycles, dispatch_cycles, completion_cycles, graph_launch_cycles});
  testbench::MemoryTarget port("port", sc_core::sc_time(100, sc_core::SC_NS));
  core.cluster(0).out.bind(port.socket);
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(testing::ptx_header() + kBusy, "busy.ptx"), memory);
  const auto& k = module.kernel("busy");
  ptx::KernelRun run(memory, {}, module, k, {ptx::Dim3{ctas}, ptx::Dim3{32}, 0}, ptx::pack_params(k));
  LaunchRun r;
  bool done = false;
  sc_core::sc_event finished;
  sim.run([&] {
    wait(clock.time_of_cycle(10) + sc_core::sc_time(100, sc_core::SC_PS));
    r.submitted = sc_core::sc_time_stamp();
    core.submit(run, 1, [&] {
      done = true;
      r.completed = sc_core::sc_time_stamp();
      finished.notify(sc_core::SC_ZERO_TIME);
    }, graph_node);
    while (!done) wait(finished);
  });
  EXPECT_TRUE(run.finish().ok());
  r.begins = times.begins;
  r.ends = times.ends;
  return r;
}

TEST(LaunchLatency, FirstCtaStartsExactlyTheLaunchLatencyAfterTheLaunch) {
  const ClockDomain clock("core", static_cast<uint64_t>(testing::load_sm_params().clock_hz));
  for (uint64_t launch : {0u, 1u, 7u, 1201u}) {
    const LaunchRun r = run_busy(launch, 0, 0, 1, 1);
    ASSERT_EQ(r.begins.size(), 1u);
    // The launch lands between edges 10 and 11: the front end counts from edge 11.
    EXPECT_EQ(r.begins[0], clock.time_of_cycle(11 + launch)) << launch;
  }
  // The per-CTA dispatch latency adds to the first CTA as to every other.
  const LaunchRun r = run_busy(100, 25, 0, 1, 1);
  ASSERT_EQ(r.begins.size(), 1u);
  EXPECT_EQ(r.begins[0], clock.time_of_cycle(11 + 100 + 25));
}

TEST(LaunchLatency, GraphKernelNodeStartsTheGraphLaunchLatencyAfterTheLaunch) {
  const ClockDomain clock("core", static_cast<uint64_t>(testing::load_sm_params().clock_hz));
  const LaunchRun graphed = run_busy(1201, 0, 0, 1, 1, 676, true);
  ASSERT_EQ(graphed.begins.size(), 1u);
  EXPECT_EQ(graphed.begins[0], clock.time_of_cycle(11 + 676));
  const LaunchRun streamed = run_busy(1201, 0, 0, 1, 1, 676, false);  // the same kernel launched in a stream
  ASSERT_EQ(streamed.begins.size(), 1u);
  EXPECT_EQ(streamed.begins[0], clock.time_of_cycle(11 + 1201));
}

TEST(LaunchLatency, EachCtaReachesItsSmTheDispatchLatencyAfterItsSlotFreed) {
  const ClockDomain clock("core", static_cast<uint64_t>(testing::load_sm_params().clock_hz));
  for (uint64_t dispatch : {0u, 3u, 40u}) {
    const LaunchRun r = run_busy(5, dispatch, 0, 4, 1);  // one slot: each CTA waits for the previous one
    ASSERT_EQ(r.begins.size(), 4u);
    ASSERT_EQ(r.ends.size(), 4u);
    EXPECT_EQ(r.begins[0], clock.time_of_cycle(11 + 5 + dispatch));
    for (size_t i = 1; i < 4; ++i) {
      EXPECT_EQ(r.begins[i], clock.time_of_cycle(clock.next_cycle(r.ends[i - 1]) + dispatch)) << dispatch << " " << i;
    }
  }
  // With room for all of them, one CTA per cycle leaves the scheduler and each arrives
  // `dispatch` cycles later: consecutive arrivals one cycle apart.
  const LaunchRun r = run_busy(0, 9, 0, 4, 4);
  ASSERT_EQ(r.begins.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(r.begins[i], clock.time_of_cycle(11 + i + 9)) << i;
}

TEST(LaunchLatency, KernelCompletesExactlyTheCompletionLatencyAfterItsLastCta) {
  const ClockDomain clock("core", static_cast<uint64_t>(testing::load_sm_params().clock_hz));
  for (uint64_t completion : {0u, 1u, 1201u}) {
    const LaunchRun r = run_busy(0, 0, completion, 3, 3);
    ASSERT_EQ(r.ends.size(), 3u);
    const sc_core::sc_time last = std::max(std::max(r.ends[0], r.ends[1]), r.ends[2]);
    if (completion == 0) {
      EXPECT_EQ(r.completed, last);  // as without the knob: the last CTA's end completes the kernel
    } else {
      EXPECT_EQ(r.completed, clock.time_of_cycle(clock.next_cycle(last) + completion)) << completion;
    }
  }
}

TEST(LaunchLatency, LatenciesBecomeWholeCyclesRoundedUp) {
  const ClockDomain clock("core", 1312000000);  // 762.2 ps per cycle
  LaunchParams p;
  p.launch_latency_ps = 915000;         // 1200.48 cycles
  p.cta_dispatch_latency_ps = 762;      // just under one cycle
  p.completion_latency_ps = 0;
  p.graph_launch_latency_ps = 515000;   // 675.68 cycles
  const LaunchLatencies l = LaunchLatencies::in_cycles(p, clock);
  EXPECT_EQ(l.launch, 1201u);
  EXPECT_EQ(l.graph_launch, 676u);
  EXPECT_EQ(l.cta_dispatch, 1u);
  EXPECT_EQ(l.completion, 0u);
  p.completion_latency_ps = 1'000'000'000;  // 1 ms, the knobs' top
  EXPECT_EQ(LaunchLatencies::in_cycles(p, clock).completion, 1312000u);
}

std::string knob_error(const std::string& override_text) {
  config::KnobRegistry registry;
  config::declare_knobs<LaunchParams>(registry);
  const config::ConfigLoader loader(registry, {});
  try {
    loader.load_defaults({override_text});
  } catch (const config::ConfigError& e) {
    return e.diagnostics().empty() ? std::string("?") : e.diagnostics().front().to_string();
  }
  return "";
}

TEST(LaunchLatency, BadValuesAreRefusedNamingTheKnob) {
  for (const char* bad : {"gpu.launch.latency=2 ms", "gpu.launch.latency=-1 ns", "gpu.launch.latency=900",
                          "gpu.launch.dispatch_latency=3 GHz", "gpu.launch.completion_latency=5 s"}) {
    const std::string message = knob_error(bad);
    const std::string knob = std::string(bad).substr(0, std::string(bad).find('='));
    EXPECT_NE(message.find(knob), std::string::npos) << bad << ": " << message;
  }
  EXPECT_EQ(knob_error("gpu.launch.latency=1 us"), "");
  // Defaults: half of the 1.83 us each for launch and completion, nothing per CTA.
  config::KnobRegistry registry;
  config::declare_knobs<LaunchParams>(registry);
  const auto p = config::load_params<LaunchParams>(config::ConfigLoader(registry, {}).load_defaults());
  EXPECT_EQ(p.launch_latency_ps + p.completion_latency_ps, 1830000u);
  EXPECT_EQ(p.cta_dispatch_latency_ps, 0u);
  // A graph's kernel node: 0.4 us less front-end latency.
  EXPECT_EQ(p.launch_latency_ps - p.graph_launch_latency_ps, 400000u);
  EXPECT_NE(knob_error("gpu.launch.graph_latency=2 ms").find("gpu.launch.graph_latency"), std::string::npos);
}

}  // namespace
}  // namespace gpuvp::gpu
