// libFuzzer target: a configuration file (YAML) against the platform's real knob catalogue.
// Loading must give a Config or a ConfigError listing the problems; a loaded Config then goes
// through PlatformParams::load, whose rules between knobs must also end in ConfigError at worst.
// `extends:` names are resolved in an empty preset list, so the fuzzer never reads other files.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "platform/config/config.h"
#include "platform/platform_params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gpuvp::config::KnobRegistry registry = gpuvp::build_knob_registry();
  static const gpuvp::config::ConfigLoader loader(registry, {});
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuvp::config::Config config = loader.load_text(text, "fuzz.yaml");
    (void)gpuvp::PlatformParams::load(config);
  } catch (const gpuvp::config::ConfigError&) {
    // expected for malformed input; anything else escapes and is reported by libFuzzer
  }
  return 0;
}
