#include "platform/trace/trace_recorder.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include <sysc/tracing/sc_tracing_ids.h>

#include "models/tlm/gpu_extension.h"

namespace gpuvp::trace {

TraceRecorder::TraceRecorder(TraceOptions options) : options_(std::move(options)) {
  if (options_.counter_window_ps == 0) throw TraceError("trace: the counter window must be above 0 ps");
  const std::string& vcd = options_.vcd_path;
  if (!vcd.empty() && (vcd.size() <= 4 || vcd.compare(vcd.size() - 4, 4, ".vcd") != 0)) {
    throw TraceError(vcd + ": the VCD file's name must end in .vcd");
  }
  if (!vcd.empty()) {
    // Fail now, not inside SystemC (which terminates the process when it cannot open the file).
    std::FILE* probe = std::fopen(vcd.c_str(), "w");
    if (probe == nullptr) throw TraceError(vcd + ": cannot open the VCD file for writing");
    std::fclose(probe);
  }
  if (!options_.path.empty()) writer_ = make_writer(options_.path);
}

// The VCD file belongs to the simulation context and is closed by finish(); one left open when
// the run failed is the context's to delete.
TraceRecorder::~TraceRecorder() = default;

namespace {
// A VCD identifier: letters, digits and '_' only.
std::string vcd_name(const std::string& text) {
  std::string out;
  for (const char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '_';
  return out;
}
}  // namespace

void TraceRecorder::open_vcd() {
  if (options_.vcd_path.empty() || vcd_ != nullptr) return;
  // SystemC reports the timescale as an information message on stdout, which is the program's.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ID_TRACING_TIMESCALE_DEFAULT_, sc_core::SC_INFO,
                                          sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_ID_TRACING_TIMESCALE_UNIT_, sc_core::SC_INFO,
                                          sc_core::SC_DO_NOTHING);
  const std::string base = options_.vcd_path.substr(0, options_.vcd_path.size() - 4);
  vcd_ = sc_core::sc_create_vcd_trace_file(base.c_str());
  vcd_->set_time_unit(1, sc_core::SC_PS);
  sc_core::sc_trace(vcd_, vcd_kernels_running_, "gpu.kernel_running", 8);
  sc_core::sc_trace(vcd_, vcd_ctas_resident_, "gpu.ctas_resident", 16);
}

void TraceRecorder::set_in_flight(uint32_t link, uint32_t up, uint32_t down) {
  if (vcd_ == nullptr) return;
  vcd_in_flight_[link] = vcd_in_flight_[link] + up - down;
  vcd_busy_[link] = vcd_in_flight_[link] != 0;
}

uint32_t TraceRecorder::add_link(const std::string& initiator, const std::string& target, const std::string& kind) {
  if (finished_) return kNotTraced;
  open_vcd();
  if (!options_.filter.link_matches(initiator, target)) return kNotTraced;
  const uint32_t id = static_cast<uint32_t>(links_.size());
  LinkSummary summary;
  summary.initiator = initiator;
  summary.target = target;
  summary.kind = kind;
  links_.push_back(summary);
  LinkState state;
  const auto known = std::find_if(kinds_.begin(), kinds_.end(), [&](const Kind& k) { return k.name == kind; });
  state.kind = static_cast<uint32_t>(known - kinds_.begin());
  if (known == kinds_.end()) kinds_.push_back(Kind{kind, 0, {}});
  states_.push_back(std::move(state));
  if (writer_) writer_->link(id, initiator, target, kind);
  if (vcd_ != nullptr) {
    vcd_in_flight_.push_back(0);
    vcd_busy_.push_back(false);
    auto tail = [](const std::string& path) {
      const size_t last = path.rfind('.');
      const size_t before = last == std::string::npos || last == 0 ? std::string::npos : path.rfind('.', last - 1);
      return before == std::string::npos ? path : path.substr(before + 1);
    };
    const std::string name = vcd_name(kind + "__" + tail(initiator) + "__" + tail(target));
    sc_core::sc_trace(vcd_, vcd_busy_.back(), name + "_busy");
    sc_core::sc_trace(vcd_, vcd_in_flight_.back(), name + "_in_flight", 16);
  }
  return id;
}

uint32_t TraceRecorder::take_lane(std::vector<bool>& lanes) {
  const auto free = std::find(lanes.begin(), lanes.end(), false);
  if (free != lanes.end()) {
    *free = true;
    return static_cast<uint32_t>(free - lanes.begin());
  }
  lanes.push_back(true);
  return static_cast<uint32_t>(lanes.size() - 1);
}

bool TraceRecorder::kernel_traced(uint64_t kernel_id) const {
  if (!options_.filter.has_kernel_filter()) return true;
  const auto it = kernel_selected_.find(kernel_id);
  if (it != kernel_selected_.end()) return it->second;
  // A kernel id seen before its kernel_begin (other kernel models): the id filter still applies.
  return options_.filter.kernel_matches(kernel_id, "");
}

void TraceRecorder::phase(uint32_t link, tlm::tlm_generic_payload& gp, TracePhase phase, const sc_core::sc_time& at) {
  if (finished_ || link >= states_.size()) return;
  LinkState& state = states_[link];
  const uint64_t ps = at.value();
  if (phase == TracePhase::kBeginReq) {
    const TraceFilter& f = options_.filter;
    const GpuExtension* ext = gp.get_extension<GpuExtension>();
    if (!f.time_matches(ps) || !f.address_matches(gp.get_address())) return;
    if (f.has_kernel_filter() && (ext == nullptr || !kernel_traced(ext->kernel_id))) return;
    if (state.seen++ % f.every != 0) return;
    Open open;
    TransactionRecord& r = open.record;
    r.begin_ps = ps;
    r.address = gp.get_address();
    r.link = link;
    r.length = gp.get_data_length();
    r.command = static_cast<uint8_t>(gp.get_command());
    if (gp.get_byte_enable_ptr() != nullptr) {
      uint32_t enabled = 0;
      const uint32_t n = gp.get_byte_enable_length();
      for (uint32_t i = 0; i < r.length; ++i) {
        if (n != 0 && gp.get_byte_enable_ptr()[i % n] == TLM_BYTE_ENABLED) ++enabled;
      }
      r.byte_enables = enabled;
    }
    if (ext != nullptr) {
      r.has_extension = 1;
      r.sm = ext->sm_id;
      r.warp = ext->warp_id;
      r.cta = ext->cta_id;
      r.kernel_id = ext->kernel_id;
      r.sector_mask = ext->sector_mask;
      r.kind = static_cast<uint8_t>(ext->kind);
    }
    r.lane = take_lane(state.lanes);
    // A payload reused while our record of it is open: the old one ended unseen.
    const auto stale = state.open.find(&gp);
    if (stale != state.open.end()) {
      state.lanes[stale->second.record.lane] = false;
      ++links_[link].unfinished;
      --kinds_[state.kind].in_flight;
      set_in_flight(link, 0, 1);
      state.open.erase(stale);
    }
    state.open.emplace(&gp, open);
    Kind& kind = kinds_[state.kind];
    ++kind.in_flight;
    set_in_flight(link, 1, 0);
    Window& w = window(kind, ps);
    w.max_in_flight = std::max(w.max_in_flight, kind.in_flight);
    return;
  }
  const auto it = state.open.find(&gp);
  if (it == state.open.end()) return;  // not traced (filtered, or began before tracing)
  Open& open = it->second;
  switch (phase) {
    case TracePhase::kEndReq:
      open.end_req = true;
      open.record.end_req_ps = ps;
      break;
    case TracePhase::kBeginResp:
      if (!open.end_req) open.record.end_req_ps = ps;  // BEGIN_RESP implies END_REQ
      open.end_req = true;
      open.begin_resp = true;
      open.record.begin_resp_ps = ps;
      open.record.status = static_cast<int8_t>(gp.get_response_status());
      break;
    case TracePhase::kEndResp:
    case TracePhase::kCompleted:
      if (!open.end_req) open.record.end_req_ps = ps;
      if (!open.begin_resp) {
        open.record.begin_resp_ps = ps;
        open.record.status = static_cast<int8_t>(gp.get_response_status());
      }
      close(link, state, open, ps);
      state.open.erase(it);
      break;
    case TracePhase::kBeginReq:
      break;
  }
}

void TraceRecorder::close(uint32_t link, LinkState& state, Open& open, uint64_t end_ps) {
  TransactionRecord& r = open.record;
  // Annotated delays can put a later phase's time before an earlier one's; keep them ordered.
  r.end_req_ps = std::max(r.end_req_ps, r.begin_ps);
  r.begin_resp_ps = std::max(r.begin_resp_ps, r.end_req_ps);
  r.end_ps = std::max(end_ps, r.begin_resp_ps);
  state.lanes[r.lane] = false;
  LinkSummary& s = links_[link];
  ++s.transactions;
  if (r.command == tlm::TLM_READ_COMMAND) ++s.reads;
  if (r.command == tlm::TLM_WRITE_COMMAND) ++s.writes;
  s.bytes += r.length;
  const uint64_t latency = r.begin_resp_ps - r.begin_ps;
  s.latency_sum_ps += latency;
  s.latency_max_ps = std::max(s.latency_max_ps, latency);
  size_t bucket = 0;
  for (uint64_t ns = latency / 1000; ns != 0 && bucket + 1 < kHistogramBuckets; ns >>= 1) ++bucket;
  ++s.latency_histogram[bucket];
  Kind& kind = kinds_[state.kind];
  --kind.in_flight;
  set_in_flight(link, 0, 1);
  window(kind, r.begin_resp_ps).bytes += r.length;
  if (writer_) writer_->transaction(r);
}

void TraceRecorder::kernel_begin(uint64_t kernel_id, const std::string& name, const sc_core::sc_time& at) {
  if (finished_) return;
  const bool selected = options_.filter.kernel_matches(kernel_id, name);
  kernel_selected_[kernel_id] = selected;
  if (!selected || !options_.filter.time_matches(at.value())) return;
  kernel_begin_ps_[kernel_id] = at.value();
  ++vcd_kernels_running_;
  if (writer_) writer_->kernel_name(kernel_id, name);
}

void TraceRecorder::kernel_end(uint64_t kernel_id, const sc_core::sc_time& at) {
  const auto it = kernel_begin_ps_.find(kernel_id);
  if (finished_ || it == kernel_begin_ps_.end()) return;
  SpanRecord r;
  r.begin_ps = it->second;
  r.end_ps = std::max<uint64_t>(at.value(), r.begin_ps);
  r.kernel_id = kernel_id;
  kernel_begin_ps_.erase(it);
  --vcd_kernels_running_;
  ++kernels_traced_;
  if (writer_) writer_->span(r);
}

void TraceRecorder::cta_begin(uint32_t sm, uint64_t kernel_id, uint64_t cta, const sc_core::sc_time& at) {
  if (finished_ || !kernel_traced(kernel_id) || !options_.filter.time_matches(at.value())) return;
  if (sm >= sm_lanes_.size()) sm_lanes_.resize(sm + 1);
  cta_open_[{sm, {kernel_id, cta}}] = {at.value(), take_lane(sm_lanes_[sm])};
  ++vcd_ctas_resident_;
}

void TraceRecorder::cta_end(uint32_t sm, uint64_t kernel_id, uint64_t cta, const sc_core::sc_time& at) {
  const auto it = cta_open_.find({sm, {kernel_id, cta}});
  if (finished_ || it == cta_open_.end()) return;
  SpanRecord r;
  r.begin_ps = it->second.first;
  r.end_ps = std::max<uint64_t>(at.value(), r.begin_ps);
  r.kernel_id = kernel_id;
  r.cta = cta;
  r.sm = sm;
  r.lane = it->second.second;
  sm_lanes_[sm][r.lane] = false;
  cta_open_.erase(it);
  --vcd_ctas_resident_;
  ++ctas_traced_;
  if (writer_) writer_->span(r);
}

void TraceRecorder::far_faults(uint64_t outstanding, uint64_t raised, uint64_t migrated_pages, const sc_core::sc_time& at) {
  if (finished_) return;
  const uint64_t index = at.value() / options_.counter_window_ps;
  auto [it, fresh] = fault_windows_.try_emplace(index);
  FaultWindow& w = it->second;
  if (fresh) w.max_outstanding = faults_outstanding_;  // what the MSHRs held as the window began
  w.max_outstanding = std::max(w.max_outstanding, outstanding);
  w.end_outstanding = outstanding;
  w.raised += raised - faults_raised_;
  w.migrated_pages += migrated_pages - pages_migrated_;
  faults_outstanding_ = outstanding;
  faults_raised_ = raised;
  pages_migrated_ = migrated_pages;
}

namespace {
// Replaces the body of the VCD file's $date section (SystemC writes the wall-clock date there).
void fix_vcd_date(const std::string& path, const std::string& text) {
  std::string content;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TraceError(path + ": cannot reopen the VCD file to fix its $date");
    content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t date = content.find("$date");
  const size_t end = date == std::string::npos ? std::string::npos : content.find("$end", date);
  if (end == std::string::npos) return;  // no $date section: nothing time-dependent to fix
  content.replace(date, end - date, "$date\n     " + text + "\n");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out.flush()) throw TraceError(path + ": cannot rewrite the VCD file");
}
}  // namespace

void TraceRecorder::finish() {
  if (finished_) return;
  finished_ = true;
  for (size_t i = 0; i < states_.size(); ++i) links_[i].unfinished += states_[i].open.size();
  if (vcd_ != nullptr) {
    sc_core::sc_close_vcd_trace_file(vcd_);
    vcd_ = nullptr;
    fix_vcd_date(options_.vcd_path, kVcdDate);
  }
  if (!writer_) return;
  // Counter tracks: per link kind, bandwidth and the most requests in flight in each window;
  // a window without activity after an active one reads zero, so graphs fall back.
  const double window_s = static_cast<double>(options_.counter_window_ps) * 1e-12;
  for (uint32_t k = 0; k < kinds_.size(); ++k) {
    writer_->counter_track(2 * k, kinds_[k].name + " bandwidth", "GB/s");
    writer_->counter_track(2 * k + 1, kinds_[k].name + " in flight", "requests");
  }
  for (uint32_t k = 0; k < kinds_.size(); ++k) {
    const auto& windows = kinds_[k].windows;
    for (auto it = windows.begin(); it != windows.end(); ++it) {
      const uint64_t ts = it->first * options_.counter_window_ps;
      writer_->counter({ts, 2 * k, 0, static_cast<double>(it->second.bytes) / window_s * 1e-9});
      writer_->counter({ts, 2 * k + 1, 0, static_cast<double>(it->second.max_in_flight)});
      const auto next = std::next(it);
      if (next == windows.end() || next->first != it->first + 1) {
        const uint64_t after = ts + options_.counter_window_ps;
        writer_->counter({after, 2 * k, 0, 0.0});
        writer_->counter({after, 2 * k + 1, 0, 0.0});
      }
    }
  }
  // Far faults (only when the GMMU reported any): MSHR entries held (a window's most), faults
  // raised and pages migrated per window; their sums equal uvm.gmmu far_faults and
  // migrated_bytes / page. After a gap the outstanding count holds, the per-window counts fall.
  if (!fault_windows_.empty()) {
    const uint32_t base = 2 * static_cast<uint32_t>(kinds_.size());
    writer_->counter_track(base, "far faults outstanding", "MSHR entries");
    writer_->counter_track(base + 1, "far faults raised", "faults");
    writer_->counter_track(base + 2, "pages migrated", "pages");
    for (auto it = fault_windows_.begin(); it != fault_windows_.end(); ++it) {
      const uint64_t ts = it->first * options_.counter_window_ps;
      writer_->counter({ts, base, 0, static_cast<double>(it->second.max_outstanding)});
      writer_->counter({ts, base + 1, 0, static_cast<double>(it->second.raised)});
      writer_->counter({ts, base + 2, 0, static_cast<double>(it->second.migrated_pages)});
      const auto next = std::next(it);
      if (next == fault_windows_.end() || next->first != it->first + 1) {
        const uint64_t after = ts + options_.counter_window_ps;
        writer_->counter({after, base, 0, static_cast<double>(it->second.end_outstanding)});
        writer_->counter({after, base + 1, 0, 0.0});
        writer_->counter({after, base + 2, 0, 0.0});
      }
    }
  }
  writer_->finish();
}

std::string TraceRecorder::summary() const {
  std::ostringstream out;
  uint64_t total = 0;
  for (const LinkSummary& l : links_) total += l.transactions;
  out << "trace summary: " << links_.size() << " link(s), " << total << " transaction(s), " << kernels_traced_
      << " kernel(s), " << ctas_traced_ << " CTA(s)\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-8s %-44s %12s %10s %10s %14s %10s %10s %s\n", "kind", "link (initiator -> target)",
                "transactions", "reads", "writes", "bytes", "mean_ns", "max_ns", "unfinished");
  out << line;
  for (const LinkSummary& l : links_) {
    auto tail = [](const std::string& path) {
      const size_t last = path.rfind('.');
      const size_t before = last == std::string::npos || last == 0 ? std::string::npos : path.rfind('.', last - 1);
      return before == std::string::npos ? path : path.substr(before + 1);
    };
    const std::string name = tail(l.initiator) + " -> " + tail(l.target);
    const double mean = l.transactions != 0 ? static_cast<double>(l.latency_sum_ps) / 1000.0 / static_cast<double>(l.transactions) : 0.0;
    std::snprintf(line, sizeof line, "%-8s %-44s %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %14" PRIu64 " %10.3f %10.3f %" PRIu64 "\n",
                  l.kind.c_str(), name.c_str(), l.transactions, l.reads, l.writes, l.bytes, mean,
                  static_cast<double>(l.latency_max_ps) / 1000.0, l.unfinished);
    out << line;
    if (l.transactions == 0) continue;
    out << "         latency ns:";
    for (size_t b = 0; b < kHistogramBuckets; ++b) {
      if (l.latency_histogram[b] == 0) continue;
      const uint64_t hi = uint64_t{1} << b;
      out << " [" << (b == 0 ? 0 : hi / 2) << "," << hi << ")=" << l.latency_histogram[b];
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace gpuvp::trace
