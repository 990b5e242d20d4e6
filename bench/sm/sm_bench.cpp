// Simulation speed of the timing model: vectorAdd on the V100 preset's defaults, GpuCore (84
// SMs in clusters of 2, CTA scheduler) on the memory side (crossbar, L2 slices, HBM). Prints
// simulated cycles, warp-instructions, wall seconds and warp-instructions per wall second.
//
//   [GPUVP_THREADS=N] [GPUVP_SM_SET="knob=value;..."] build-*/bench/sm/gpuvp_sm_bench [elements = 1048576] [stats.json]
//
// With a second argument the run's statistics JSON is written there (plus the last core cycle
// under "bench"): speed work on the timing model must leave it byte-identical
// (bench/sm/check_stats.sh compares against bench/sm/vector_add_*.json).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "models/gpu/crossbar/crossbar.h"
#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/sm/sm_cluster.h"
#include "models/memory/hbm/hbm_controller.h"
#include "models/memory/l2/l2_slice.h"
#include "tests/memory/params.h"
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
  // GPUVP_THREADS=N: SMs stepped by N host threads (sim.threads; never changes the statistics).
  std::vector<std::string> overrides;
  if (const char* threads = std::getenv("GPUVP_THREADS")) overrides.push_back(std::string("sim.threads=") + threads);
  // GPUVP_SM_SET="knob=value;knob=value": more overrides (e.g. a perfect instruction cache).
  if (const char* set = std::getenv("GPUVP_SM_SET")) {
    std::string item;
    for (const char* p = set;; ++p) {
      if (*p == ';' || *p == '\0') {
        if (!item.empty()) overrides.push_back(item);
        item.clear();
        if (*p == '\0') break;
      } else {
        item += *p;
      }
    }
  }
  return config::load_params<gpu::SmParams>(loader.load_defaults(overrides));
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? static_cast<uint32_t>(std::atol(argv[1])) : (1u << 20);
  testbench::Simulation sim;
  stats::Registry stats;
  const gpu::SmParams p = v100_sm();
  const memory::testing::MemoryParams mp = memory::testing::load_params();
  ClockDomain clock("core", static_cast<uint64_t>(p.clock_hz));
  gpu::GpuCore core("gpu", p, clock, stats);
  memory::AddressMap map(mp.l2, mp.hbm);
  gpu::Crossbar crossbar("crossbar", mp.crossbar, map, core.cluster_count(), stats, "gpu.crossbar");
  memory::HbmController hbm("hbm", mp.hbm, map, stats, "memory.hbm");
  memory::L2SliceGroup l2_group(map.slices());
  std::vector<std::unique_ptr<memory::L2Slice>> slices;
  for (uint32_t s = 0; s < map.slices(); ++s) {
    slices.push_back(std::make_unique<memory::L2Slice>(("l2_" + std::to_string(s)).c_str(), mp.l2, map, s, stats,
                                                       "memory.l2[" + std::to_string(s) + "]", &l2_group));
    crossbar.slice.bind(slices.back()->in);
    slices.back()->dram.bind(hbm.socket);
  }
  for (uint32_t i = 0; i < core.cluster_count(); ++i) core.cluster(i).out.bind(crossbar.cluster);
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
    core.submit(run, 1, [&] { done = true; finished.notify(sc_core::SC_ZERO_TIME); });
    while (!done) wait(finished);
  }, sc_core::sc_time(10, sc_core::SC_SEC));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ptx::LaunchResult result = run.finish();
  memory.copy_from_device(host.data(), c, n * 4ull);
  const bool correct = result.ok() && host[0] == 3.0f && host[n - 1] == 3.0f;
  std::printf("vectorAdd n=%u: %s, %llu core cycles, %llu warp-instructions, %.3f s wall, %.0f warp-instructions/s\n",
              n, correct ? "correct" : "WRONG", static_cast<unsigned long long>(core.last_cycle()),
              static_cast<unsigned long long>(result.warp_instructions), wall,
              static_cast<double>(result.warp_instructions) / wall);
  if (argc > 2) {
    std::ofstream out(argv[2]);
    out << "{\"bench\": {\"core_cycles\": " << core.last_cycle() << ", \"warp_instructions\": "
        << result.warp_instructions << "},\n\"stats\": " << stats.json() << "}\n";
  }
  return correct ? 0 : 1;
}
