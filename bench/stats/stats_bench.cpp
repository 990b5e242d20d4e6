// Writing the statistics (Registry::json, what `gpuvp run --stats` and every sweep point write)
// for a registry shaped like the V100 preset's (about 270 groups: 84 SMs and their L1 TLBs, 32 L2
// slices, 64 HBM pseudo-channels, each with its counters, histograms and ratios; two kernel
// scopes). The reference measured in the same run is nlohmann-json printing the same document,
// already built: writing (building the document and printing it) should cost a small multiple of
// that, not grow with the square of the groups.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "platform/stats/registry.h"

namespace gpuvp::stats {
namespace {

void add_group(Registry& r, const std::string& path, int counters, int histograms, uint64_t seed) {
  Group& g = r.group(path);
  Counter* first = nullptr;
  for (int c = 0; c < counters; ++c) {
    Counter& k = g.counter("counter_" + std::to_string(c), "event", "what counter " + std::to_string(c) + " counts");
    k += seed * 7919 + static_cast<uint64_t>(c) * 104729;
    if (first == nullptr) first = &k;
    else if (c < 4) g.ratio("ratio_" + std::to_string(c), "counter over the first", k, *first);
  }
  for (int h = 0; h < histograms; ++h) {
    Histogram& hist = g.histogram("histogram_" + std::to_string(h), "cycle", "a latency", Buckets::log2(16));
    for (uint64_t v = 1; v < 4000; v = v * 3 + seed) hist.sample(v);
  }
}

std::unique_ptr<Registry> v100_shaped() {
  auto r = std::make_unique<Registry>();
  for (int k = 0; k < 2; ++k) {
    r->begin_kernel(static_cast<uint64_t>(k), "kernel_" + std::to_string(k));
    if (k == 0) {
      for (int i = 0; i < 84; ++i) add_group(*r, "gpu.sm[" + std::to_string(i) + "]", 35, 1, i);
      for (int i = 0; i < 84; ++i) add_group(*r, "uvm.l1_tlb[" + std::to_string(i) + "]", 10, 0, i);
      for (int i = 0; i < 32; ++i) add_group(*r, "memory.l2[" + std::to_string(i) + "]", 14, 1, i);
      for (int i = 0; i < 64; ++i) add_group(*r, "memory.hbm.channel[" + std::to_string(i) + "]", 12, 1, i);
      for (const char* path : {"gpu", "gpu.crossbar", "gpu.command_processor", "gpu.cta_scheduler", "gpu.dma"})
        add_group(*r, path, 20, 1, 1);
    }
    r->end_kernel(static_cast<uint64_t>(k));
  }
  return r;
}

void WriteStatistics(benchmark::State& state) {
  const auto registry = v100_shaped();
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = registry->json();
    bytes += text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void PrintTheSameDocument(benchmark::State& state) {
  const nlohmann::ordered_json document = nlohmann::ordered_json::parse(v100_shaped()->json());
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = document.dump(2) + "\n";
    bytes += text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

BENCHMARK(WriteStatistics)->Unit(benchmark::kMillisecond);
BENCHMARK(PrintTheSameDocument)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuvp::stats

BENCHMARK_MAIN();
