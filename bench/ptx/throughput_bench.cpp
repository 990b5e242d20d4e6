// Functional-only throughput of the PTX executor, in thread-instructions per second
// (reported as the "thread_inst/s" counter), single-threaded.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "models/gpu/ptx/executor.h"

namespace {

using namespace gpuvp::ptx;

std::string read_ptx() {
  std::ifstream in(std::string(GPUVP_PTX_BENCH_DIR) + "/bench_kernels.ptx");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Fixture {
  DeviceMemory memory;
  LoadedModule loaded{Module::parse(read_ptx(), "bench_kernels.ptx"), memory};
  Executor executor{memory};

  template <typename T>
  uint64_t upload(const std::vector<T>& values) {
    const uint64_t address = memory.allocate(values.size() * sizeof(T));
    memory.copy_to_device(address, values.data(), values.size() * sizeof(T));
    return address;
  }
};

void report(benchmark::State& state, uint64_t thread_instructions, uint64_t warp_instructions) {
  state.counters["thread_inst/s"] = benchmark::Counter(static_cast<double>(thread_instructions), benchmark::Counter::kIsRate);
  state.counters["warp_inst/s"] = benchmark::Counter(static_cast<double>(warp_instructions), benchmark::Counter::kIsRate);
}

template <typename... Args>
void run(benchmark::State& state, Fixture& f, const char* name, Dim3 grid, Dim3 block, const Args&... args) {
  const Kernel& kernel = f.loaded.kernel(name);
  const std::vector<uint8_t> params = pack_params(kernel, args...);
  uint64_t thread_instructions = 0, warp_instructions = 0;
  for (auto _ : state) {
    LaunchResult r = f.executor.launch(f.loaded, kernel, LaunchConfig{grid, block, 0}, params);
    if (!r.ok()) {
      state.SkipWithError(r.message.c_str());
      return;
    }
    thread_instructions += r.thread_instructions;
    warp_instructions += r.warp_instructions;
  }
  report(state, thread_instructions, warp_instructions);
}

void BM_Saxpy(benchmark::State& state) {
  Fixture f;
  const int n = 1 << 16;
  const uint64_t x = f.upload(std::vector<float>(n, 1.0f)), y = f.upload(std::vector<float>(n, 2.0f));
  run(state, f, "saxpy", Dim3(n / 256), Dim3(256), n, 2.0f, x, y);
}

void BM_FmaChain(benchmark::State& state) {
  Fixture f;
  const uint64_t out = f.upload(std::vector<float>(64 * 256));
  run(state, f, "fma_chain", Dim3(64), Dim3(256), out, 200);
}

void BM_DivergentCollatz(benchmark::State& state) {
  Fixture f;
  const int n = 1 << 14;
  std::vector<unsigned> start(n);
  for (int i = 0; i < n; ++i) start[i] = static_cast<unsigned>(i * 2654435761u % 100000 + 1);
  const uint64_t s = f.upload(start), steps = f.upload(std::vector<unsigned>(n));
  run(state, f, "collatz", Dim3(n / 128), Dim3(128), s, steps, n);
}

void BM_SharedReduce(benchmark::State& state) {
  Fixture f;
  const int blocks = 256;
  const uint64_t in = f.upload(std::vector<float>(blocks * 256, 1.0f)), out = f.upload(std::vector<float>(blocks));
  run(state, f, "shared_reduce", Dim3(blocks), Dim3(256), in, out);
}

BENCHMARK(BM_Saxpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FmaChain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DivergentCollatz)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SharedReduce)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
