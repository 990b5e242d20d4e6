// libFuzzer target: the statistics readers of `gpuvp sweep`. The first input byte picks one:
// even, the rest is a statistics JSON (what `gpuvp run --stats` writes and the sweep reads back
// for every point), from which every metric form is extracted (whole-run counters, wildcards over
// SMs, histogram fields, per-kernel entries, summed over kernels); odd, the rest is a point record
// (points/ID/point.json, read again by `gpuvp sweep --resume`). Malformed input must come out as
// "no value" or "no record", never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "platform/config/config.h"
#include "platform/platform_params.h"
#include "platform/sweep/sweep_results.h"
#include "platform/sweep/sweep_spec.h"

namespace {

const gpuvp::sweep::SweepSpec& spec() {
  static const gpuvp::config::KnobRegistry registry = gpuvp::build_knob_registry();
  static const gpuvp::config::ConfigLoader loader(registry, gpuvp::config::default_preset_dirs());
  static const gpuvp::sweep::SweepSpec s = gpuvp::sweep::load_spec_text(R"(name: fuzz
base: v100
knobs:
  gpu.sm.clock: [1000 MHz, 1312 MHz]
programs:
  - {name: sh, path: /bin/sh}
metrics:
  - gpu.cycles
  - gpu.l2_hit_rate
  - {stat: kernels.time_ps, as: kernel_time}
  - {stat: kernels.launches, kernel: "*", as: launches}
  - {stat: "gpu.sm[*].warp_instructions", kernel: vector_add}
  - {stat: "memory.hbm.latency.mean", as: hbm_latency}
  - {stat: "memory.l2[0].hits", as: l2_hits}
)", "fuzz.yaml", "/", loader, {});
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const gpuvp::sweep::SweepSpec& s = spec();
  const nlohmann::json parsed = nlohmann::json::parse(data + 1, data + size, nullptr, false);
  if (parsed.is_discarded()) return 0;
  if ((data[0] & 1) == 0) {
    for (const gpuvp::sweep::Metric& metric : s.metrics) {
      std::string unit, problem;
      (void)gpuvp::sweep::extract_metric(parsed, metric, unit, problem);
    }
  } else if (const auto record = gpuvp::sweep::record_from_json(parsed, s)) {
    (void)gpuvp::sweep::record_to_json(*record, s);  // what write_results does with it
  }
  return 0;
}
