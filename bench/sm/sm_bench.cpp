// Simulation speed of the SM timing model: vectorAdd and a shared-memory reduction on the
// V100 preset's SM knobs (84 SMs, CTA scheduler), each SM's port on a fixed-latency memory
// target (the memory side is benchmarked separately). Prints simulated cycles,
// warp-instructions, wall seconds and warp-instructions per wall second.
//
//   build-*/bench/sm/gpuvp_sm_bench [log2 elements = 20]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/kernel_run.h"
#include "models/gpu/sm/sm.h"
#include "platform/config/config.h"
#include "platform/config/params.h"
#include "tests/support/testbench.h"

namespace {

using namespace gpuvp;

const char* kVecAdd = R"(.version 8.0
.target sm_75
.address_size 64
.visible .entry vecadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n) {
  .reg .pred %p<2>;
  .reg .f32 %f<4>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [c];
  ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.s32 %p1, %r1, %r2;
  @%p1 bra END;
  cvta.to.global.u64 %rd4, %rd1;
  mul.wide.s32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  cvta.to.global.u64 %rd7, %rd2;
  add.s64 %rd8, %rd7, %rd5;
  ld.global.f32 %f1, [%rd8];
  ld.global.f32 %f2, [%rd6];
  add.f32 %f3, %f2, %f1;
  cvta.to.global.u64 %rd9, %rd3;
  add.s64 %rd10, %rd9, %rd5;
  st.global.f32 [%rd10], %f3;
END:
  ret;
}
)";

gpu::SmParams v100_sm() {
  config::KnobRegistry registry;
  config::declare_knobs<gpu::SmParams>(registry);
  const config::ConfigLoader loader(registry, {});
  return config::load_params<gpu::SmParams>(loader.load_defaults({}));
}

}  // namespace

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 20;
  const uint32_t n = 1u << log2n;
  testbench::Simulation sim;
  stats::Registry stats;
  const gpu::SmParams p = v100_sm();
  ClockDomain clock("core", static_cast<uint64_t>(p.clock_hz));
  std::vector<std::unique_ptr<gpu::Sm>> sms;
  std::vector<std::unique_ptr<testbench::MemoryTarget>> memories;
  std::vector<gpu::Sm*> pointers;
  for (uint32_t i = 0; i < p.count; ++i) {
    sms.push_back(std::make_unique<gpu::Sm>(("sm" + std::to_string(i)).c_str(), p, i, clock, stats));
    memories.push_back(std::make_unique<testbench::MemoryTarget>(("mem" + std::to_string(i)).c_str(),
                                                                 sc_core::sc_time(300, sc_core::SC_NS)));
    sms.back()->mem.bind(memories.back()->socket);
    pointers.push_back(sms.back().get());
  }
  gpu::CtaScheduler scheduler("cta", p, clock, pointers, stats);
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(kVecAdd, "vecadd.ptx"), memory);
  const uint64_t a = memory.allocate(n * 4ull), b = memory.allocate(n * 4ull), c = memory.allocate(n * 4ull);
  std::vector<float> host(n, 1.5f);
  memory.copy_to_device(a, host.data(), n * 4ull);
  memory.copy_to_device(b, host.data(), n * 4ull);
  const auto& kernel = module.kernel("vecadd");
  ptx::KernelRun run(memory, {}, module, kernel, {ptx::Dim3{(n + 255) / 256}, ptx::Dim3{256}, 0},
                     ptx::pack_params(kernel, a, b, c, n));
  bool done = false;
  sc_core::sc_event finished;
  const auto start = std::chrono::steady_clock::now();
  sim.run([&] {
    scheduler.submit(run, 1, [&] { done = true; finished.notify(sc_core::SC_ZERO_TIME); });
    while (!done) wait(finished);
  }, sc_core::sc_time(10, sc_core::SC_SEC));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ptx::LaunchResult result = run.finish();
  memory.copy_from_device(host.data(), c, n * 4ull);
  const bool correct = result.ok() && host[0] == 3.0f && host[n - 1] == 3.0f;
  uint64_t cycles = 0;
  for (const auto& sm : sms) cycles = std::max(cycles, sm->last_cycle());
  std::printf("vectorAdd 2^%d: %s, %llu cycles (SMs on a %.0f ns fixed-latency memory), %llu warp-instructions, "
              "%.3f s wall, %.0f warp-instructions/s\n",
              log2n, correct ? "correct" : "WRONG", static_cast<unsigned long long>(cycles), 300.0,
              static_cast<unsigned long long>(result.warp_instructions), wall,
              static_cast<double>(result.warp_instructions) / wall);
  return correct ? 0 : 1;
}
