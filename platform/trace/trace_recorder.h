// TraceRecorder: the TraceObserver of one run. It applies a TraceFilter, pairs the phases of
// each transaction on each link into one TransactionRecord, lays overlapping transactions and
// CTAs into lanes (so every track holds properly nested spans), samples counter tracks per
// window (bandwidth and requests in flight per link kind: "dram in flight" is the L2 slices'
// outstanding misses; and, with unified memory, the GMMU's far faults: "far faults outstanding",
// "far faults raised", "pages migrated"), writes to a TraceWriter (trace_format.h) and keeps a per-link summary.
//
//   TraceRecorder recorder(options);            // opens the file
//   GpuTiming timing("timing", params, clocks, stats, &recorder);
//   ... simulate ...
//   recorder.finish();                          // counters, metadata, close; then summary()
//
// VCD (TraceOptions::vcd_path, SystemC's sc_trace): the platform has no signal-level ports, so
// the recorder keeps the few level-like things as traced variables — gpu.kernel_running,
// gpu.ctas_resident, and per traced link `<kind>__<initiator>__<target>_busy` (a traced
// transaction in flight) and `_in_flight` — sampled by SystemC at each simulated time step.
//
// Deterministic: links are numbered in binding order, lanes are the lowest free, and nothing is
// written from an unordered container. SystemC writes the wall-clock date into a VCD file's
// $date section; finish() rewrites it to a fixed text, so identical runs give identical bytes.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/tlm/trace_observer.h"
#include "platform/trace/trace_filter.h"
#include "platform/trace/trace_format.h"

namespace gpuvp::trace {

struct TraceOptions {
  std::string path;           // ".json": trace-event JSON; anything else: compact binary; empty: none
  TraceFilter filter;
  uint64_t counter_window_ps = 1000000;  // counter tracks sample once per this much simulated time
  std::string vcd_path;       // ends in ".vcd"; empty: no VCD
};

class TraceRecorder : public TraceObserver {
 public:
  static constexpr size_t kHistogramBuckets = 24;  // latency: [0,1) ns, then [2^(i-1), 2^i) ns

  struct LinkSummary {
    std::string initiator;
    std::string target;
    std::string kind;
    uint64_t transactions = 0;  // completed and traced
    uint64_t reads = 0;
    uint64_t writes = 0;
    uint64_t bytes = 0;
    uint64_t latency_sum_ps = 0;  // BEGIN_REQ to BEGIN_RESP
    uint64_t latency_max_ps = 0;
    std::array<uint64_t, kHistogramBuckets> latency_histogram{};
    uint64_t unfinished = 0;  // still open at finish()
  };

  // Throws TraceError when the file cannot be opened or the VCD name does not end in ".vcd".
  explicit TraceRecorder(TraceOptions options);
  ~TraceRecorder() override;
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // Ends the trace: writes the counter tracks, closes the file (throws TraceError when it could
  // not be written). Further events are ignored.
  void finish();

  const std::vector<LinkSummary>& links() const { return links_; }
  uint64_t kernels() const { return kernels_traced_; }
  uint64_t ctas() const { return ctas_traced_; }
  // Per-link counts, bytes, mean/max latency and the latency histogram, as a text table.
  std::string summary() const;

  // TraceObserver
  uint32_t add_link(const std::string& initiator, const std::string& target, const std::string& kind) override;
  void phase(uint32_t link, tlm::tlm_generic_payload& gp, TracePhase phase, const sc_core::sc_time& at) override;
  void kernel_begin(uint64_t kernel_id, const std::string& name, const sc_core::sc_time& at) override;
  void kernel_end(uint64_t kernel_id, const sc_core::sc_time& at) override;
  void cta_begin(uint32_t sm, uint64_t kernel_id, uint64_t cta, const sc_core::sc_time& at) override;
  void cta_end(uint32_t sm, uint64_t kernel_id, uint64_t cta, const sc_core::sc_time& at) override;
  void far_faults(uint64_t outstanding, uint64_t raised, uint64_t migrated_pages, const sc_core::sc_time& at) override;

  // The text finish() puts in a VCD file's $date section in place of the wall-clock date.
  static constexpr const char* kVcdDate = "gpuvp simulated run (date fixed for reproducible traces)";

 private:
  struct Open {
    TransactionRecord record;
    bool end_req = false;
    bool begin_resp = false;
  };
  struct LinkState {
    uint32_t kind = 0;  // index into kinds_
    uint64_t seen = 0;  // transactions past the other filters (for every=N)
    std::unordered_map<const tlm::tlm_generic_payload*, Open> open;  // looked up only, never iterated
    std::vector<bool> lanes;
  };
  // Per link kind, per counter window: bytes completed, most requests in flight.
  struct Window {
    uint64_t bytes = 0;
    uint64_t max_in_flight = 0;
  };
  struct Kind {
    std::string name;
    uint64_t in_flight = 0;
    std::map<uint64_t, Window> windows;
  };

  // Far faults per counter window: most MSHR entries held, the count at the window's last
  // report, faults raised and pages migrated within it.
  struct FaultWindow {
    uint64_t max_outstanding = 0;
    uint64_t end_outstanding = 0;
    uint64_t raised = 0;
    uint64_t migrated_pages = 0;
  };

  void close(uint32_t link, LinkState& state, Open& open, uint64_t end_ps);
  static uint32_t take_lane(std::vector<bool>& lanes);
  Window& window(Kind& kind, uint64_t ps) { return kind.windows[ps / options_.counter_window_ps]; }
  bool kernel_traced(uint64_t kernel_id) const;
  void open_vcd();  // at the first add_link: inside the simulation's context, before it starts
  void set_in_flight(uint32_t link, uint32_t delta_up, uint32_t delta_down);

  TraceOptions options_;
  std::unique_ptr<TraceWriter> writer_;
  bool finished_ = false;
  std::vector<LinkSummary> links_;
  std::vector<LinkState> states_;
  std::vector<Kind> kinds_;
  std::map<uint64_t, bool> kernel_selected_;        // kernel id -> passes the kernel filter
  std::map<uint64_t, uint64_t> kernel_begin_ps_;    // kernels running
  std::map<std::pair<uint32_t, std::pair<uint64_t, uint64_t>>, std::pair<uint64_t, uint32_t>>
      cta_open_;                                    // (sm, (kernel, cta)) -> (begin, lane)
  std::vector<std::vector<bool>> sm_lanes_;
  sc_core::sc_trace_file* vcd_ = nullptr;
  uint32_t vcd_kernels_running_ = 0;
  uint32_t vcd_ctas_resident_ = 0;
  std::deque<uint32_t> vcd_in_flight_;  // per link; deque: stable addresses for sc_trace
  std::deque<bool> vcd_busy_;
  uint64_t kernels_traced_ = 0;
  uint64_t ctas_traced_ = 0;
  std::map<uint64_t, FaultWindow> fault_windows_;
  uint64_t faults_outstanding_ = 0;  // as last reported
  uint64_t faults_raised_ = 0;
  uint64_t pages_migrated_ = 0;
};

}  // namespace gpuvp::trace
