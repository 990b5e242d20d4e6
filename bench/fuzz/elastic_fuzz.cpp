// libFuzzer target: the elastic-trace reader of `gpuvp trace inspect` and `gpuvp replay`
// (read_trace), then the inspect views of what it accepted. The first input byte picks the layer:
// even, the rest is the file as it is (header, zstd frame, checksum); odd, the rest is the body
// that the fuzzer wraps in a valid header and zstd frame, so the varint records themselves get
// fuzzed past the container's checks. A malformed trace must end in TraceFormatError.
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/fuzz/input_file.h"
#include "platform/elastic_trace/elastic_trace.h"
#include "platform/elastic_trace/trace_inspect.h"

// libsystemc.so (linked for the TLM types the records name) calls sc_main from its own main();
// libFuzzer's main runs instead.
extern "C" int sc_main(int, char**) { return 1; }

namespace {

// The 24-byte file header (docs/trace-replay.md) and one zstd frame with a content checksum.
std::string wrap(const uint8_t* body, size_t size) {
  std::string file("GVETRACE", 8);
  auto put = [&file](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) file.push_back(static_cast<char>(value >> (8 * i)));
  };
  put(gpuvp::elastic::kFormatVersion, 4);
  put(0, 4);
  put(size, 8);
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1);
  std::string frame(ZSTD_compressBound(size), '\0');
  const size_t written = ZSTD_compress2(context, frame.data(), frame.size(), body, size);
  ZSTD_freeCCtx(context);
  if (ZSTD_isError(written)) std::abort();
  file.append(frame.data(), written);
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string file = (data[0] & 1) != 0 ? wrap(data + 1, size - 1)
                                               : std::string(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string path = input_file_path("elastic-fuzz", file.data(), file.size());
  try {
    const gpuvp::elastic::Trace trace = gpuvp::elastic::read_trace(path);
    (void)gpuvp::elastic::trace_summary(trace, file.size());
    (void)gpuvp::elastic::trace_records(trace, gpuvp::elastic::kNone, 2000);
  } catch (const gpuvp::elastic::TraceFormatError&) {
    // expected for malformed input
  }
  return 0;
}
