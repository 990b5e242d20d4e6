// SM test bench: one Sm bound to a MemoryTarget (fixed latency, AT), PTX kernels written by
// hand, knobs loaded through the real knob machinery (defaults = the V100 preset's values).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/kernel_run.h"
#include "models/gpu/sm/sm.h"
#include "models/gpu/sm/sm_cluster.h"
#include "platform/config/config.h"
#include "platform/config/params.h"
#include "tests/support/testbench.h"

namespace gpuvp::gpu::testing {

inline SmParams load_sm_params(const std::vector<std::string>& overrides = {}) {
  config::KnobRegistry registry;
  config::declare_knobs<SmParams>(registry);
  const config::ConfigLoader loader(registry, {});
  return config::load_params<SmParams>(loader.load_defaults(overrides));
}

inline std::string ptx_header() { return ".version 8.0\n.target sm_75\n.address_size 64\n"; }

// Runs one kernel's CTAs on one SM (launched as warp slots allow) and returns the cycle at
// which the last CTA completed.
struct SmBench {
  testbench::Simulation sim;
  stats::Registry stats;
  SmParams params;
  ClockDomain clock;
  ptx::DeviceMemory memory;
  std::unique_ptr<ptx::LoadedModule> module;
  std::unique_ptr<Sm> sm;
  std::unique_ptr<testbench::MemoryTarget> target;
  uint64_t done_cycle = 0;

  explicit SmBench(const std::vector<std::string>& overrides = {}, double memory_ns = 100)
      : params(load_sm_params(overrides)), clock("core", static_cast<uint64_t>(params.clock_hz)) {
    sm = std::make_unique<Sm>("sm", params, 0, clock, stats);
    target = std::make_unique<testbench::MemoryTarget>("mem", sc_core::sc_time(memory_ns, sc_core::SC_NS));
    sm->mem.bind(target->socket);
  }

  void load(const std::string& ptx) {
    module = std::make_unique<ptx::LoadedModule>(ptx::Module::parse(ptx, "test.ptx"), memory);
  }

  // Returns the SM cycle at which the kernel's last CTA retired.
  uint64_t run(const std::string& kernel, ptx::LaunchConfig config, std::vector<uint8_t> params_buffer) {
    const ptx::Kernel& k = module->kernel(kernel);
    ptx::KernelRun run(memory, {}, *module, k, config, std::move(params_buffer));
    EXPECT_TRUE(run.ok()) << run.message();
    uint64_t next = 0;
    uint64_t completed = 0;
    sc_core::sc_event done;
    sm->on_cta_done([&](uint32_t, ptx::KernelRun&, uint64_t, uint64_t) {
      ++completed;
      done.notify(sc_core::SC_ZERO_TIME);
    });
    sim.run([&] {
      while (completed < run.cta_count()) {
        while (next < run.cta_count() && sm->free_warp_slots() >= run.warps_per_cta()) sm->launch_cta(run, 1, next++);
        wait(done);
      }
    });
    EXPECT_TRUE(run.ok()) << run.message();
    const ptx::LaunchResult result = run.finish();
    EXPECT_TRUE(result.ok()) << result.message;
    done_cycle = sm->last_cycle();
    return done_cycle;
  }

  // The target's requests for data (loads, stores, atomics, reductions): without constant
  // cache fills and instruction fetches.
  std::vector<testbench::MemoryTarget::Record> data_transactions() const {
    std::vector<testbench::MemoryTarget::Record> out;
    for (const auto& t : target->transactions()) {
      if (t.has_extension && (t.extension.kind == AccessKind::ConstantLoad || t.extension.kind == AccessKind::InstructionFetch))
        continue;
      out.push_back(t);
    }
    return out;
  }

  uint64_t counter(const std::string& name) const {
    const auto* g = stats.find_group("gpu.sm[0]");
    const auto* c = g ? g->find_counter(name) : nullptr;
    return c ? c->value() : ~0ULL;
  }
};

// A GpuCore (SM clusters and their CTA scheduler) whose cluster ports are MemoryTargets of one
// fixed latency; a hand-written kernel runs to completion through GpuCore::submit.
struct GpuCoreBench {
  testbench::Simulation sim;
  stats::Registry stats;
  SmParams params;
  ClockDomain clock;
  GpuCore core;
  std::vector<std::unique_ptr<testbench::MemoryTarget>> ports;
  ptx::DeviceMemory memory;
  std::unique_ptr<ptx::LoadedModule> module;

  explicit GpuCoreBench(const std::vector<std::string>& overrides, double memory_ns = 150)
      : params(load_sm_params(overrides)), clock("core", static_cast<uint64_t>(params.clock_hz)),
        core("gpu", params, clock, stats) {
    for (uint32_t i = 0; i < core.cluster_count(); ++i) {
      ports.push_back(std::make_unique<testbench::MemoryTarget>(("port" + std::to_string(i)).c_str(),
                                                                sc_core::sc_time(memory_ns, sc_core::SC_NS)));
      core.cluster(i).out.bind(ports.back()->socket);
    }
  }

  const ptx::Kernel& load(const std::string& ptx, const std::string& kernel) {
    module = std::make_unique<ptx::LoadedModule>(ptx::Module::parse(ptx, "test.ptx"), memory);
    return module->kernel(kernel);
  }

  // Submits `run` as kernel `kernel_id` and simulates until the CTA scheduler says it is done.
  void run(ptx::KernelRun& run, uint64_t kernel_id = 1) {
    bool done = false;
    sc_core::sc_event finished;
    sim.run([&] {
      core.submit(run, kernel_id, [&] {
        done = true;
        finished.notify(sc_core::SC_ZERO_TIME);
      });
      while (!done) wait(finished);
    });
    EXPECT_TRUE(run.finish().ok());
  }
};

}  // namespace gpuvp::gpu::testing
