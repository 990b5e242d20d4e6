// libFuzzer target: the PTX parser must turn any input into a Module or a ParseError.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/gpu/ptx/module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    gpuvp::ptx::Module module = gpuvp::ptx::Module::parse(text, "fuzz.ptx");
    (void)module.kernels().size();
  } catch (const gpuvp::ptx::ParseError&) {
    // Expected for malformed input; anything else escapes and is reported by libFuzzer.
  }
  return 0;
}
