// Elastic traces of the GPU's SMs: what each SM sent past its L1 toward the crossbar, per CTA
// and warp, with the dependencies that let a replay stretch or shrink the timing with the memory
// system (docs/trace-replay.md has the model and the byte layout).
//
// In memory a trace is flat data: kernels in launch order, each with its CTAs in the order they
// began, each CTA with its warps (in the order of their first event), each warp with its
// requests in issue order. A request's dependencies are indices of earlier requests of the same
// warp whose responses it waited for (WarpTrace::deps[dep_first .. dep_first + dep_count)), and
// for a request the L1's MSHRs held back, how many responses of its SM freed an MSHR before it.
//
// On disk (DIR/elastic.gvet): a 24-byte file header (magic "GVETRACE", format version, flags,
// body size) and one zstd frame with a content checksum holding the body: the capture header
// (configuration YAML, program and arguments, gpuvp version, SM count, core clock) and the
// kernels, in LEB128 varints. read_trace() checks everything it reads and throws TraceFormatError
// naming the file and what is wrong: not a trace, another format version, truncated, a checksum
// mismatch, a record out of range.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/tlm/gpu_extension.h"
#include "models/tlm/trace_observer.h"

namespace gpuvp::elastic {

inline constexpr uint32_t kFormatVersion = 4;
inline constexpr const char* kTraceFileName = "elastic.gvet";
inline constexpr uint32_t kNone = 0xffffffffu;

class TraceFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Request {
  uint64_t address = 0;      // line address as the SM sent it (virtual)
  uint32_t length = 0;       // bytes of the request (128 for a line)
  uint8_t sector_mask = 0;   // 32 B sectors of the line it touches
  AccessKind kind = AccessKind::Load;
  bool write = false;        // TLM write command (stores, reductions)
  // Its response arrived before the CTA ended (the CTA's end waited for it; posted stores
  // answered later do not hold the CTA).
  bool holds_cta_end = false;
  // Issued after its CTA ended (a store the LSU still held when the CTA retired): the CTA's end
  // does not wait for it.
  bool after_cta_end = false;
  // Core cycles from the latest of its dependencies' responses (dep_count > 0), else from the
  // warp's previous request being ready (or the CTA's start for the first), to it being ready.
  uint32_t gap = 0;
  uint32_t dep_first = 0;    // into WarpTrace::deps
  uint32_t dep_count = 0;
  // Captured cycle it was ready to leave the SM (joined its outgoing queue), core cycles after
  // the kernel began: the warp's own timeline, without the wait for the port.
  uint64_t issue_cycle = 0;
  uint64_t order = 0;        // issue order on the captured SM (ties on one cycle keep it)
  // Held back by the L1's MSHRs (mshr_after != 0): the SM had no free MSHR for mshr_wait of the
  // cycles before it was ready, and `gap` leaves them out. It also waits for an MSHR to be
  // freed: it was ready mshr_gap cycles after the mshr_after-th response of the kernel to a
  // request that held an MSHR (holds_mshr) on its SM, whichever warp's. A replay on the
  // captured SMs takes the later of the two readinesses (at the captured configuration the
  // responses come in the captured order, so it is the same response); in task mode, where an
  // SM replays other requests, mshr_wait goes back into the gap.
  uint32_t mshr_wait = 0;
  uint32_t mshr_after = 0;
  uint32_t mshr_gap = 0;
  // Its warp passed a barrier since its previous request (barrier != false): `gap` leaves the
  // waits out, and the request is ready no sooner than barrier_gap cycles after the release of
  // the last of those barriers, CtaTrace::barriers[barrier_index] (when its last warp arrives).
  bool barrier = false;
  uint32_t barrier_index = 0;
  uint32_t barrier_gap = 0;
  // A load that looked up the L1 and missed: the sectors its warp wanted (sector_mask are those
  // it requested; the rest hit). 0 for other kinds and for loads that bypassed the L1.
  uint8_t l1_access = 0;
  // Replay only (not stored): no request of the trace writes this line (mark_shared_lines), so
  // replicas share it instead of offsetting it.
  bool shared = true;
  // Replay only: an L1 hit or merge at capture that interleave_l1_hits() made a request.
  bool captured_hit = false;
};

// Requests that take an L1 MSHR until their response (those whose responses free one).
inline bool holds_mshr(AccessKind kind) {
  return kind == AccessKind::Load || kind == AccessKind::Atomic || kind == AccessKind::ConstantLoad ||
         kind == AccessKind::InstructionFetch;
}

// An L1 load lookup of the warp that sent no request: all its sectors hit, or the missing ones
// merged into a pending miss. A replay that redoes the L1 (gpuvp replay --l1 redo) looks it up
// again; a replay on the captured L1 leaves it out (its wait is in the next request's gap).
struct L1Hit {
  uint32_t after = 0;   // the warp's requests ready at or before it (it comes after request after-1)
  uint32_t offset = 0;  // core cycles after request after-1 was ready (the CTA's start when after == 0)
  uint64_t address = 0; // line address (virtual)
  uint8_t mask = 0;     // sectors the warp wanted
  bool merged = false;  // some sectors waited for a pending miss
};

struct WarpTrace {
  uint32_t slot = 0;  // warp slot on the captured SM
  std::vector<Request> requests;
  std::vector<uint32_t> deps;  // request indices in this warp
  std::vector<L1Hit> l1_hits;  // in lookup order
};

// A warp's arrival at a barrier: `gap` core cycles after its last event before it — the
// release of an earlier barrier of the CTA it passed (`barrier`), the response to (on_response)
// or the readiness of request `request` of its warp `warp` — or after the CTA's start (neither).
struct BarrierArrival {
  uint32_t barrier = kNone;
  uint32_t warp = kNone;
  uint32_t request = 0;
  bool on_response = false;
  uint32_t gap = 0;
};

// A barrier of a CTA (one release): the warps that had to arrive. It releases when the last of
// them arrives, whichever that is on replay.
struct BarrierTrace {
  std::vector<BarrierArrival> arrivals;
};

struct CtaTrace {
  uint64_t cta = 0;         // linear CTA index in its grid
  uint32_t sm = 0;          // SM it ran on at capture
  // Its start waited for the end of CTA `begin_after` of the same kernel on the same SM (a slot
  // freed), or for the kernel's begin (kNone); begin_gap core cycles after that.
  uint32_t begin_after = kNone;
  uint32_t begin_gap = 0;
  // Core cycles from the latest of its requests' issues and held responses to its end.
  uint32_t end_gap = 0;
  uint64_t begin_cycle = 0;  // captured, after the kernel began
  uint64_t end_cycle = 0;
  std::vector<WarpTrace> warps;
  std::vector<BarrierTrace> barriers;  // in release order
};

struct CopyWrite {  // a launch's copy-engine write (parameters, code) through the crossbar
  uint64_t address = 0;
  uint32_t length = 0;
  uint8_t sector_mask = 0;
};

// A unified-memory operation of the host (a managed allocation mapped or freed, a prefetch, a
// host access, an advice) before a kernel: the replay performs it before_ps ahead of the
// kernel's begin (or at once, when that time has passed), so the GMMU holds the pages the
// capture's kernel found.
struct UvmRecord {
  UvmOperation operation;
  uint64_t before_ps = 0;  // captured: from the operation's start to the kernel's begin
};

struct KernelTrace {
  uint64_t id = 0;
  std::string name;
  uint64_t begin_ps = 0;       // captured simulated time of its begin and end
  uint64_t end_ps = 0;
  uint64_t cycles = 0;         // captured kernel cycles (gpu.cycles of the launch)
  uint32_t end_gap = 0;        // core cycles from its last CTA's end to its end
  // Shared-memory capacity its SMs were configured with (the carve-out; the L1 had the rest).
  uint64_t shared_capacity = 0;
  std::vector<CopyWrite> copies;
  std::vector<UvmRecord> uvm;  // since the previous kernel began, in order
  std::vector<CtaTrace> ctas;
};

struct CaptureHeader {
  uint32_t version = kFormatVersion;
  std::string gpuvp_version;
  std::vector<std::string> program;  // argv of the captured program
  std::string config_source;         // "v100", "my.yaml", ...
  std::string config_yaml;           // the resolved configuration, loadable as is
  uint32_t sm_count = 0;
  uint64_t core_clock_hz = 0;
  uint64_t far_faults = 0;           // unified-memory far faults during the capture
};

struct Trace {
  CaptureHeader header;
  std::vector<KernelTrace> kernels;
};

// Streams a trace to DIR/elastic.gvet (creating DIR): the header at open, each kernel as it
// ends, the body size at close. Throws TraceFormatError on I/O errors.
class TraceWriter {
 public:
  TraceWriter(const std::string& dir, const CaptureHeader& header);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void add_kernel(const KernelTrace& kernel);
  void close(uint64_t far_faults);
  const std::string& path() const { return path_; }
  uint64_t kernels() const { return kernels_; }
  uint64_t file_bytes() const { return file_bytes_; }

 private:
  struct Impl;
  void put(const std::string& raw);
  std::string path_;
  uint64_t kernels_ = 0;
  uint64_t body_bytes_ = 0;
  uint64_t file_bytes_ = 0;
  Impl* impl_;
};

// Reads DIR/elastic.gvet (or DIR itself when it is a file); throws TraceFormatError.
Trace read_trace(const std::string& dir_or_file);

// Sets Request::shared: false for every request to a line that some request of `trace` writes
// (stores, atomics, reductions).
void mark_shared_lines(Trace& trace);

// For a replay that redoes the L1 (gpuvp replay --l1 redo): every warp's L1 hits and merges
// become load requests of their own (Request::captured_hit), in their place among its requests,
// each ready its captured offset after the record before it; a request after them that was
// ready more than `captured_hit_latency` cycles after one of them depends on it (as on a
// response), with its gap shortened to match, so a lookup that misses on replay delays it.
// Dependencies, barrier anchors and capture orders are renumbered; MSHR dependencies go back
// into the gaps (the count of MSHR-freeing responses changes when the L1 does).
void interleave_l1_hits(Trace& trace, uint32_t captured_hit_latency);

// Counts over a trace (for inspect and the replay's report).
struct TraceTotals {
  uint64_t ctas = 0, warps = 0, requests = 0, loads = 0, stores = 0, atomics = 0, other = 0, deps = 0;
  uint64_t mshr_deps = 0, barrier_deps = 0, barriers = 0;
  uint64_t l1_hits = 0, l1_merges = 0;  // lookups without a request of their own
  uint64_t uvm_operations = 0;
};
TraceTotals totals(const Trace& trace);

}  // namespace gpuvp::elastic
