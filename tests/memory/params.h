// Parameters for the memory-side tests: the knobs' declared defaults (the V100 preset's values)
// with overrides, loaded through the real knob machinery so ranges and units are checked.
#pragma once

#include <string>
#include <vector>

#include "models/gpu/crossbar/crossbar_params.h"
#include "models/memory/hbm/hbm_params.h"
#include "models/memory/l2/l2_params.h"
#include "platform/config/config.h"
#include "platform/config/params.h"

namespace gpuvp::memory::testing {

struct MemoryParams {
  L2Params l2;
  HbmParams hbm;
  gpu::CrossbarParams crossbar;
};

inline MemoryParams load_params(const std::vector<std::string>& overrides = {}) {
  config::KnobRegistry registry;
  config::declare_knobs<L2Params>(registry);
  config::declare_knobs<HbmParams>(registry);
  config::declare_knobs<gpu::CrossbarParams>(registry);
  const config::ConfigLoader loader(registry, {});
  const config::Config c = loader.load_defaults(overrides);
  return MemoryParams{config::load_params<L2Params>(c), config::load_params<HbmParams>(c),
                      config::load_params<gpu::CrossbarParams>(c)};
}

}  // namespace gpuvp::memory::testing
