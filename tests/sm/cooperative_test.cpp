// Cooperative kernels on GpuCore through the CTA scheduler: while a cooperative kernel has CTAs
// left to issue, no younger kernel's CTA starts (its grid becomes resident first, so grid-wide
// barriers cannot wait on CTAs that never start), even where the younger kernel would fit.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/sm/sm_cluster.h"
#include "models/tlm/trace_observer.h"
#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

class CtaStarts : public TraceObserver {
 public:
  std::map<std::uint64_t, std::vector<sc_core::sc_time>> begins;  // kernel id -> CTA starts
  std::uint32_t add_link(const std::string&, const std::string&, const std::string&) override { return kNotTraced; }
  void phase(std::uint32_t, tlm::tlm_generic_payload&, TracePhase, const sc_core::sc_time&) override {}
  void kernel_begin(std::uint64_t, const std::string&, const sc_core::sc_time&) override {}
  void kernel_end(std::uint64_t, const sc_core::sc_time&) override {}
  void cta_begin(std::uint32_t, std::uint64_t kernel, std::uint64_t, const sc_core::sc_time& at) override {
    begins[kernel].push_back(at);
  }
  void cta_end(std::uint32_t, std::uint64_t, std::uint64_t, const sc_core::sc_time&) override {}
};

// `long_loop` runs a while; `wide` uses 60 KiB of shared memory (one CTA of it fits beside
// anything else on a 96 KiB SM, two do not); `small` fits anywhere.
const char* kKernels = R"(
.visible .entry long_loop() {
  .reg .b32 %r<3>;
  .reg .pred %p<2>;
  mov.u32 %r1, 0;
LOOP:
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, 3000;
  @%p1 bra LOOP;
  ret;
}
.visible .entry wide() {
  .shared .align 4 .b8 buffer[61440];
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  st.shared.u32 [buffer], %r1;
  ret;
}
.visible .entry small() {
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  ret;
}
)";

// Kernels 1 (long_loop, 1 CTA), 2 (wide, 2 CTAs, cooperative or not) and 3 (small, 1 CTA),
// submitted together on one SM; returns the CTA start times per kernel.
std::map<std::uint64_t, std::vector<sc_core::sc_time>> run_three(bool cooperative) {
  testbench::Simulation sim;
  stats::Registry stats;
  const SmParams p = testing::load_sm_params({"gpu.sm.count=1", "gpu.sm.cluster_size=1"});
  ClockDomain clock("core", static_cast<uint64_t>(p.clock_hz));
  CtaStarts starts;
  GpuCore core("gpu", p, clock, stats, &starts);
  testbench::MemoryTarget port("port", sc_core::sc_time(100, sc_core::SC_NS));
  core.cluster(0).out.bind(port.socket);
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(testing::ptx_header() + kKernels, "coop.ptx"), memory);
  ptx::LaunchConfig first{ptx::Dim3{1}, ptx::Dim3{512}, 0};
  ptx::LaunchConfig second{ptx::Dim3{2}, ptx::Dim3{512}, 0};
  second.cooperative = cooperative;
  ptx::LaunchConfig third{ptx::Dim3{1}, ptx::Dim3{32}, 0};
  const auto& k1 = module.kernel("long_loop");
  const auto& k2 = module.kernel("wide");
  const auto& k3 = module.kernel("small");
  ptx::KernelRun r1(memory, {}, module, k1, first, ptx::pack_params(k1));
  ptx::KernelRun r2(memory, {}, module, k2, second, ptx::pack_params(k2));
  ptx::KernelRun r3(memory, {}, module, k3, third, ptx::pack_params(k3));
  int done = 0;
  sc_core::sc_event finished;
  sim.run([&] {
    auto count = [&] {
      ++done;
      finished.notify(sc_core::SC_ZERO_TIME);
    };
    core.submit(r1, 1, count);
    core.submit(r2, 2, count);
    core.submit(r3, 3, count);
    while (done < 3) wait(finished);
  });
  EXPECT_TRUE(r1.finish().ok());
  EXPECT_TRUE(r2.finish().ok());
  EXPECT_TRUE(r3.finish().ok());
  return starts.begins;
}

TEST(CooperativeKernels, YoungerKernelsWaitUntilTheGridIsResident) {
  auto plain = run_three(false);
  ASSERT_EQ(plain[2].size(), 2u);
  ASSERT_EQ(plain[3].size(), 1u);
  // Not cooperative: the small kernel takes the room the wide one's second CTA cannot use.
  EXPECT_LT(plain[3][0], plain[2][1]);
  auto coop = run_three(true);
  ASSERT_EQ(coop[2].size(), 2u);
  ASSERT_EQ(coop[3].size(), 1u);
  // Cooperative: the younger kernel waits for its second CTA (which starts once the first has
  // left: this kernel does not sync, so its grid need not be resident at once to finish).
  EXPECT_GE(coop[3][0], coop[2][1]);
  EXPECT_GT(coop[2][1], plain[3][0]);
}

}  // namespace
}  // namespace gpuvp::gpu
