// libFuzzer target: `gpuvp trace-convert`'s reader. A compact trace from raw bytes is replayed
// into the JSON writer; a malformed or cut-short file must end in TraceError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "bench/fuzz/input_file.h"
#include "platform/trace/trace_format.h"

// libsystemc.so (linked for the TLM types the trace records name) calls sc_main from its own
// main(); libFuzzer's main runs instead.
extern "C" int sc_main(int, char**) { return 1; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = input_file_path("trace-fuzz", data, size);
  try {
    const auto writer = gpuvp::trace::make_json_writer("/dev/null");
    gpuvp::trace::convert_compact_trace(path, *writer);
  } catch (const gpuvp::trace::TraceError&) {
    // expected for malformed input
  }
  return 0;
}
