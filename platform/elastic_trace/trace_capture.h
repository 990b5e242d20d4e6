// TraceCapture: the TraceObserver behind `gpuvp run --capture DIR`. It asks for a monitor on
// every SM's memory link (Sm.mem toward the crossbar, kind "sm") and on the copy engine's
// crossbar link, and turns what crosses them, with the kernels and CTAs the CTA scheduler
// reports, into an elastic trace (elastic_trace.h) written kernel by kernel.
//
// Per request (BEGIN_REQ leaving the SM): its warp's dependencies are the responses that warp
// received since its previous request, on an earlier core cycle (the scoreboard can only have
// waited for those); the gap counts core cycles from the latest of them, or from the warp's
// previous request (the CTA's start for its first) when there are none. A CTA's start depends
// on the last CTA end on its SM in the same kernel (the slot it took), else on the kernel's
// begin; its end on the latest issue or response it held. A request the L1's MSHRs held back
// (GpuExtension::mshr_wait) leaves that wait out of its gap and depends on the response that
// an MSHR, when that response is of the same kernel and still in the SM's ring of recent
// responses (else the wait stays in the gap): it records how many such responses of the kernel
// its SM had then, and the cycles since. A request whose warp waited at a barrier
// (GpuExtension::barrier_*) leaves the waits out of its gap and depends on the last event before
// the release (a response or a request) of the warp whose arrival released it. Exact for the captured
// configuration; an approximation elsewhere (docs/trace-replay.md says which parts).
//
// Another observer (the transaction tracer) can ride along: every call is forwarded to it, and a
// link either wants gets a monitor. Monitors forward calls unchanged, so statistics are those
// of the run without capture.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/tlm/clock_domain.h"
#include "models/tlm/trace_observer.h"
#include "platform/elastic_trace/elastic_trace.h"

namespace gpuvp::elastic {

class TraceCapture final : public TraceObserver {
 public:
  // Opens DIR/elastic.gvet (throws TraceFormatError). `inner` outlives the capture. The core
  // clock (header.core_clock_hz) is built at the first link, once the platform set the time
  // resolution.
  TraceCapture(const std::string& dir, const CaptureHeader& header, TraceObserver* inner = nullptr);
  ~TraceCapture() override;
  TraceCapture(const TraceCapture&) = delete;
  TraceCapture& operator=(const TraceCapture&) = delete;

  // Writes the end record and closes the file (throws TraceFormatError). Later events are ignored.
  void finish();
  const std::string& path() const { return writer_.path(); }
  uint64_t kernels() const { return writer_.kernels(); }
  uint64_t requests() const { return requests_; }
  uint64_t file_bytes() const { return writer_.file_bytes(); }
  // Requests that belonged to no open kernel or CTA (left out of the trace).
  uint64_t unattributed() const { return unattributed_; }

  uint32_t add_link(const std::string& initiator, const std::string& target, const std::string& kind) override;
  void phase(uint32_t link, tlm::tlm_generic_payload& gp, TracePhase phase, const sc_core::sc_time& at) override;
  void kernel_begin(uint64_t kernel_id, const std::string& name, const sc_core::sc_time& at) override;
  void kernel_end(uint64_t kernel_id, const sc_core::sc_time& at) override;
  void cta_begin(uint32_t sm, uint64_t kernel_id, uint64_t cta, const sc_core::sc_time& at) override;
  void cta_end(uint32_t sm, uint64_t kernel_id, uint64_t cta, const sc_core::sc_time& at) override;
  void far_faults(uint64_t outstanding, uint64_t raised, uint64_t migrated_pages, const sc_core::sc_time& at) override;
  bool wants_l1_lookups() const override { return true; }
  void l1_lookup(uint32_t sm, const L1Lookup& lookup) override;
  void kernel_shared_capacity(uint64_t kernel_id, uint64_t bytes) override;
  void uvm_operation(const UvmOperation& operation, const sc_core::sc_time& at) override;
  void barrier_release(uint32_t sm, const BarrierRelease& release) override;

 private:
  enum class LinkRole : uint8_t { kUnused, kSm, kCopy };
  struct Link {
    uint32_t inner = kNotTraced;
    LinkRole role = LinkRole::kUnused;
  };
  struct WarpBuild {
    uint64_t last_issue = 0;                               // absolute core cycle
    std::vector<std::pair<uint32_t, uint64_t>> arrived;    // (request, cycle) not yet depended on
    std::vector<uint64_t> response_cycle;                  // per request; ~0 = none yet
    // Its last responses (cycle, request), oldest first in ring order: a barrier it released
    // depends on the latest of them before the release.
    static constexpr uint32_t kRecent = 16;
    std::array<std::pair<uint64_t, uint32_t>, kRecent> recent{};
    uint32_t recent_count = 0;
    std::vector<std::pair<uint64_t, L1Hit>> hits;  // (absolute lookup cycle, hit): placed at the kernel's end
    uint32_t barrier = kNone;     // the last barrier of its CTA it passed, and when that released
    uint64_t barrier_release = 0;
  };
  struct CtaBuild {
    uint64_t begin = 0;  // absolute core cycle
    bool ended = false;
    std::vector<WarpBuild> warps;
  };
  struct KernelBuild {
    uint64_t serial = 0;
    uint64_t begin_cycle = 0;
    KernelTrace trace;
    std::vector<CtaBuild> builds;                   // parallel to trace.ctas
    std::unordered_map<uint64_t, uint32_t> cta_index;  // linear CTA -> index (membership only)
    std::vector<uint32_t> mshr_answers;             // per SM: responses that freed an MSHR so far
  };
  struct WarpCache {  // per SM warp slot: the CTA its last request belonged to
    uint64_t serial = ~uint64_t{0};
    uint64_t cta = 0;
    uint32_t cta_index = 0;
    uint32_t warp_index = 0;
  };
  struct OpenRequest {
    uint64_t serial;
    uint32_t cta_index, warp_index, request;
    uint32_t sm;
    uint64_t seq;  // GpuExtension::request_seq
  };
  // The last responses per SM that freed an MSHR, by request_seq modulo the ring's size: a
  // request the MSHRs held back finds the one that let it go (GpuExtension::mshr_unblocked_by)
  // and how many such responses of the kernel on that SM came up to it.
  static constexpr uint32_t kAnsweredRing = 1024;
  struct Answered {
    uint64_t seq = 0;
    uint64_t serial = 0;
    uint32_t count = 0;  // Request::mshr_after
    uint64_t cycle = 0;
  };
  // The last barrier releases per SM, by BarrierRelease::seq modulo the ring's size: a request
  // past a barrier finds its record.
  struct Released {
    uint64_t seq = 0;
    uint64_t serial = ~uint64_t{0};
    uint32_t cta_index = 0;
    uint32_t barrier = 0;
    uint64_t cycle = 0;
  };
  struct LastEnd {
    uint64_t serial = ~uint64_t{0};
    uint32_t cta_index = 0;
    uint64_t cycle = 0;
  };

  uint64_t cycle_at(const sc_core::sc_time& at);
  KernelBuild* kernel(uint64_t id);
  // The warp in slot `warp_slot` of SM `sm`, of CTA `cta` of kernel `kernel_id`: its kernel, and
  // its CTA's and its own index there (added to the CTA at its first event); null when no open
  // kernel has that CTA.
  KernelBuild* warp_of(uint32_t sm, uint32_t warp_slot, uint64_t kernel_id, uint64_t cta, uint32_t& cta_index,
                       uint32_t& warp_index);
  // Gives each L1 hit of the kernel its place among its warp's requests.
  void place_l1_hits(KernelBuild& k);
  // How many of the warp's requests were ready by kernel-relative cycle `at`.
  static uint32_t requests_ready_by(const WarpTrace& warp, uint64_t at);
  KernelBuild* kernel_by_serial(uint64_t serial);
  void request(tlm::tlm_generic_payload& gp, uint64_t cycle);
  // The barrier dependency of request `r` (ready at `ready`, its gap counted from `gap_start`)
  // of CTA `cta_index`, from the SM's stamp.
  void barrier_dependency(const GpuExtension& ext, KernelBuild& k, uint32_t cta_index, Request& r, uint64_t ready,
                          uint64_t gap_start);
  // Warp `warp_index` of CTA `cta_index` arrived at a barrier at `cycle`: its arrival, anchored
  // to its last response or request by then (the CTA's start if it had neither).
  BarrierArrival arrival(const KernelBuild& k, uint32_t cta_index, uint32_t warp_index, uint64_t cycle) const;
  void response(tlm::tlm_generic_payload& gp, uint64_t cycle);

  uint64_t core_clock_hz_;
  std::unique_ptr<ClockDomain> core_;
  TraceObserver* inner_;
  TraceWriter writer_;
  bool finished_ = false;
  std::vector<Link> links_;
  std::vector<std::unique_ptr<KernelBuild>> open_kernels_;  // launch order
  uint64_t next_serial_ = 0;
  std::vector<std::vector<WarpCache>> warp_cache_;  // [sm][warp slot]
  std::vector<LastEnd> last_end_;                   // per SM
  std::vector<std::pair<uint64_t, uint64_t>> shared_capacity_;  // (kernel id, bytes) told before its begin
  std::vector<std::pair<UvmOperation, uint64_t>> uvm_pending_;  // (operation, ps) for the next kernel
  std::vector<std::vector<Answered>> answered_;     // [sm][seq % kAnsweredRing]
  std::vector<std::vector<Released>> released_;     // [sm][seq % kAnsweredRing]
  std::unordered_map<const tlm::tlm_generic_payload*, OpenRequest> open_;  // requests awaiting a response
  uint64_t order_ = 0;
  uint64_t requests_ = 0;
  uint64_t unattributed_ = 0;
  uint64_t far_faults_ = 0;
};

}  // namespace gpuvp::elastic
