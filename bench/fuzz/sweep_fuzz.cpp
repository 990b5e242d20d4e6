// libFuzzer target: a sweep spec (`gpuvp sweep SPEC`) against the platform's real knob catalogue
// and presets. Loading must give an expanded SweepSpec or a SpecError listing the problems; the
// points of an accepted spec then yield their --set overrides, as the sweep runner asks for them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "platform/config/config.h"
#include "platform/platform_params.h"
#include "platform/sweep/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gpuvp::config::KnobRegistry registry = gpuvp::build_knob_registry();
  static const gpuvp::config::ConfigLoader loader(registry, gpuvp::config::default_preset_dirs());
  static const gpuvp::sweep::Variables variables = {{"build", "/nonexistent/build"}, {"spec_dir", "/nonexistent"}};
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuvp::sweep::SweepSpec spec = gpuvp::sweep::load_spec_text(text, "fuzz.yaml", "/nonexistent", loader, variables);
    for (const gpuvp::sweep::Point& point : spec.points) (void)spec.overrides(point);
  } catch (const gpuvp::sweep::SpecError&) {
    // expected for malformed input
  } catch (const gpuvp::config::ConfigError&) {
    // a base configuration the loader refuses
  }
  return 0;
}
