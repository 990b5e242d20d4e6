// libFuzzer target: `gpuvp trace-convert`'s reader. A compact trace from raw bytes is replayed
// into the JSON writer; a malformed or cut-short file must end in TraceError.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "platform/trace/trace_format.h"

// libsystemc.so (linked for the TLM types the trace records name) calls sc_main from its own
// main(); libFuzzer's main runs instead.
extern "C" int sc_main(int, char**) { return 1; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path: the input goes into an anonymous in-memory file.
  static const int fd = ::memfd_create("trace-fuzz", 0);
  if (fd < 0) std::abort();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const auto writer = gpuvp::trace::make_json_writer("/dev/null");
    gpuvp::trace::convert_compact_trace(path, *writer);
  } catch (const gpuvp::trace::TraceError&) {
    // expected for malformed input
  }
  return 0;
}
