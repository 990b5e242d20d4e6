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

uint64_t run_core(const std::vector<std::string>& overrides, std::string* json) {
  testbench::Simulation sim;
  stats::Registry stats;
  const SmParams p = testing::load_sm_params(overrides);
  ClockDomain clock("core", static_cast<uint64_t>(p.clock_hz));
  GpuCore core("gpu", p, clock, stats);
  std::vector<std::unique_ptr<testbench::MemoryTarget>> ports;
  for (uint32_t i = 0; i < core.cluster_count(); ++i) {
    ports.push_back(std::make_unique<testbench::MemoryTarget>(("port" + std::to_string(i)).c_str(),
                                                              sc_core::sc_time(200, sc_core::SC_NS)));
    core.cluster(i).out.bind(ports.back()->socket);
  }
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(testing::ptx_header() + kScale, "s.ptx"), memory);
  const uint32_t n = 5000;
  const uint64_t x = memory.allocate(n * 4), y = memory.allocate(n * 4);
  std::vector<float> host(n);
  for (uint32_t i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  memory.copy_to_device(x, host.data(), n * 4);
  const auto& k = module.kernel("scale");
  ptx::KernelRun run(memory, {}, module, k, {ptx::Dim3{(n + 127) / 128}, ptx::Dim3{128}, 0}, ptx::pack_params(k, x, y, n));
  bool done = false;
  sc_core::sc_event finished;
  sim.run([&] {
    core.submit(run, 7, [&] { done = true; finished.notify(sc_core::SC_ZERO_TIME); });
    while (!done) wait(finished);
  });
  EXPECT_TRUE(run.finish().ok());
  memory.copy_from_device(host.data(), y, n * 4);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(host[i], 2.0f * static_cast<float>(i)) << i;
  for (uint32_t i = 0; i < core.cluster_count(); ++i) {
    std::set<uint32_t> sms;
    for (const auto& t : ports[i]->transactions()) {
      sms.insert(t.extension.sm_id);
      EXPECT_EQ(t.extension.kernel_id, 7u);
    }
    EXPECT_EQ(sms.size(), 2u) << "cluster " << i;
  }
  if (json) *json = stats.json();
  return core.last_cycle();
}

TEST(GpuCore, ClustersShareAPortAndRunAKernelEndToEnd) {
  std::string a, b;
  const uint64_t c1 = run_core({"gpu.sm.count=4", "gpu.sm.cluster_size=2"}, &a);
  const uint64_t c2 = run_core({"gpu.sm.count=4", "gpu.sm.cluster_size=2", "gpu.sm.idle_skip=false"}, &b);
  EXPECT_GT(c1, 0u);
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace gpuvp::gpu
