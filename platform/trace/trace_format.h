// The records a trace is made of, and the two ways to store them:
//
//   JsonTraceWriter     Chrome/Perfetto trace-event JSON (open in ui.perfetto.dev or
//                       chrome://tracing): one process per traced link (threads = lanes of
//                       non-overlapping transactions), one per SM (CTA lanes), one "gpu" process
//                       with the kernels and the counter tracks. Timestamps in microseconds with
//                       picosecond digits.
//   CompactTraceWriter  the same records as a little-endian binary stream (magic "GPUVPTR1", then
//                       tagged records), several times smaller and cheaper to write;
//                       convert_compact_trace() replays one into any writer (`gpuvp trace-convert`),
//                       giving byte-for-byte the JSON a direct JSON trace would have.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuvp::trace {

// Bad trace options, unwritable or unreadable trace files.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr uint32_t kNoId = 0xffffffffu;

// One transaction on one link, from BEGIN_REQ to its end (END_RESP, or the call that completed
// it). Times in ps.
struct TransactionRecord {
  uint64_t begin_ps = 0;
  uint64_t end_req_ps = 0;     // request accepted (END_REQ)
  uint64_t begin_resp_ps = 0;  // response sent (BEGIN_RESP)
  uint64_t end_ps = 0;
  uint64_t address = 0;
  uint64_t kernel_id = 0;   // 0: none
  uint32_t link = 0;
  uint32_t lane = 0;
  uint32_t length = 0;
  uint32_t byte_enables = kNoId;  // enabled bytes when the payload has byte enables
  uint32_t sm = kNoId;
  uint32_t warp = kNoId;
  uint32_t cta = kNoId;
  uint8_t command = 0;      // tlm_command
  int8_t status = 0;        // tlm_response_status
  uint8_t sector_mask = 0;
  uint8_t kind = 0;         // AccessKind
  uint8_t has_extension = 0;
  uint8_t reserved[7] = {};
};
static_assert(sizeof(TransactionRecord) == 88, "TransactionRecord is stored as is in compact traces");

// A kernel (sm == kNoId) or a CTA on an SM, in ps.
struct SpanRecord {
  uint64_t begin_ps = 0;
  uint64_t end_ps = 0;
  uint64_t kernel_id = 0;
  uint64_t cta = 0;
  uint32_t sm = kNoId;
  uint32_t lane = 0;
};
static_assert(sizeof(SpanRecord) == 40, "SpanRecord is stored as is in compact traces");

struct CounterRecord {
  uint64_t ts_ps = 0;
  uint32_t track = 0;
  uint32_t reserved = 0;
  double value = 0;
};
static_assert(sizeof(CounterRecord) == 24, "CounterRecord is stored as is in compact traces");

class TraceWriter {
 public:
  virtual ~TraceWriter() = default;
  virtual void link(uint32_t id, const std::string& initiator, const std::string& target, const std::string& kind) = 0;
  virtual void kernel_name(uint64_t id, const std::string& name) = 0;
  virtual void counter_track(uint32_t id, const std::string& name, const std::string& unit) = 0;
  virtual void transaction(const TransactionRecord& r) = 0;
  virtual void span(const SpanRecord& r) = 0;
  virtual void counter(const CounterRecord& r) = 0;
  // Writes what remains and closes the file; throws TraceError when the file could not be written.
  virtual void finish() = 0;
};

// Opens `path` for writing; throws TraceError naming it when it cannot.
std::unique_ptr<TraceWriter> make_json_writer(const std::string& path);
std::unique_ptr<TraceWriter> make_compact_writer(const std::string& path);
// JSON for a path ending in ".json", compact otherwise.
std::unique_ptr<TraceWriter> make_writer(const std::string& path);

// Replays the compact trace at `path` into `out` (finish() included). Throws TraceError for a
// file that is not a compact trace or is cut short, naming the file and the byte offset.
void convert_compact_trace(const std::string& path, TraceWriter& out);

}  // namespace gpuvp::trace
