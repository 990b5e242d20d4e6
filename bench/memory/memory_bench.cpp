// Simulation speed of the memory side: simulated requests per wall-clock second through
// cluster ports -> crossbar -> 32 L2 slices -> HBM on the V100 preset's values (the knobs'
// defaults). Each iteration builds a fresh simulation and runs a workload to completion;
// counters report requests/s (wall) and the bandwidth achieved in simulated time.
#include <benchmark/benchmark.h>

#include "tests/memory/memory_system.h"
#include "tests/support/testbench.h"

namespace gpuvp::memory {
namespace {

void run(benchmark::State& state, tlm::tlm_command command) {
  const auto ports = static_cast<uint32_t>(state.range(0));
  const auto per_port = static_cast<uint64_t>(state.range(1));
  uint64_t requests = 0;
  double simulated_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto sim = std::make_unique<testbench::Simulation>();
    auto params = testing::load_params();
    auto m = std::make_unique<testing::MemorySystem>(params, ports, per_port, 64, command);
    state.ResumeTiming();
    sim->run([&] {
      while (!m->done()) sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    }, sc_core::sc_time(1, sc_core::SC_SEC));
    state.PauseTiming();
    requests += m->completed();
    simulated_s += static_cast<double>(m->last_completion_ps() - m->first_issue_ps()) * 1e-12;
    m.reset();
    sim.reset();
    state.ResumeTiming();
  }
  state.counters["requests_per_s"] = benchmark::Counter(static_cast<double>(requests), benchmark::Counter::kIsRate);
  state.counters["sim_GBps"] = static_cast<double>(requests) * 128 / simulated_s / 1e9;
}

void StreamingReads(benchmark::State& state) { run(state, tlm::TLM_READ_COMMAND); }
void StreamingWrites(benchmark::State& state) { run(state, tlm::TLM_WRITE_COMMAND); }

BENCHMARK(StreamingReads)->Args({42, 2000})->Unit(benchmark::kMillisecond);
BENCHMARK(StreamingWrites)->Args({42, 2000})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuvp::memory

BENCHMARK_MAIN();
