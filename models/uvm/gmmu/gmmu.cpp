#include "models/uvm/gmmu/gmmu.h"

#include <algorithm>
#include <stdexcept>

namespace gpuvp::uvm {
namespace {

FaultServiceParams fault_params(const UvmParams& p, uint64_t device_pages, uint64_t seed) {
  FaultServiceParams f;
  f.fault_latency_ps = static_cast<uint64_t>(p.fault_latency_ps);
  f.mshr_entries = p.far_fault_mshrs;
  f.batch_size = p.fault_batch;
  f.device_pages = device_pages;
  f.prefetcher = p.prefetcher;
  f.eviction = p.eviction;
  f.seed = seed;
  return f;
}

UvmMessage& message(tlm::tlm_generic_payload& gp) {
  UvmMessage* m = gp.get_extension<UvmMessage>();
  if (m == nullptr) throw std::invalid_argument("gmmu: a translation request without a UvmMessage extension");
  return *m;
}

}  // namespace

Gmmu::Gmmu(sc_core::sc_module_name name, const UvmParams& params, uint64_t device_pages, uint64_t seed,
           const ClockDomain& clock, PageTable& table, stats::Registry& stats, const std::string& path,
           TraceObserver* tracer)
    : sc_core::sc_module(name),
      translate("translate"),
      notify("notify"),
      pcie("pcie"),
      params_(params),
      clock_(clock),
      table_(table),
      group_(stats.group(path)),
      l2_("uvm.l2_tlb", params.l2_tlb_entries, params.l2_tlb_associativity),
      faults_(fault_params(params, device_pages, seed), table, *this, group_),
      l2_accesses_(group_.counter("l2_tlb_accesses", "lookup", "translations looked up in the L2 TLB")),
      l2_hits_(group_.counter("l2_tlb_hits", "lookup", "L2 TLB lookups that hit")),
      walks_(group_.counter("page_walks", "walk", "page-table walks (L2 TLB misses)")),
      nacks_(group_.counter("nacks", "message", "Nack-replayable responses sent to L1 TLBs")),
      replays_(group_.counter("replays", "message", "replay notifications sent to L1 TLBs")),
      shootdowns_(group_.counter("shootdowns", "event", "TLB shootdowns (whole-TLB flushes or per-entry invalidations)")),
      tracer_(tracer) {
  if (tracer_ != nullptr) {
    far_faults_ = group_.find_counter("far_faults");
    migrated_bytes_ = group_.find_counter("migrated_bytes");
    if (far_faults_ == nullptr || migrated_bytes_ == nullptr)
      throw std::logic_error("gmmu: the fault engine's far_faults / migrated_bytes counters are missing in " + path);
  }
  group_.ratio("l2_tlb_hit_rate", "L2 TLB lookups that hit", l2_hits_, l2_accesses_);
  translate.register_nb_transport_fw(this, &Gmmu::nb_transport_fw);
  SC_HAS_PROCESS(Gmmu);
  SC_THREAD(thread);
}

void Gmmu::report_faults() {
  if (tracer_ == nullptr) return;
  const uint64_t now[3] = {faults_.mshrs().occupancy(), far_faults_->value(), migrated_bytes_->value() / kPageBytes};
  if (std::equal(now, now + 3, reported_)) return;
  std::copy(now, now + 3, reported_);
  tracer_->far_faults(now[0], now[1], now[2], sc_core::sc_time_stamp());
}

uint64_t Gmmu::cycles_ps(uint64_t cycles) const {
  return clock_.delay_until(sc_core::sc_time_stamp(), cycles).value();
}

void Gmmu::at(uint64_t time_ps, Job job) {
  jobs_.emplace(time_ps, job);
  wake_.notify(sc_core::SC_ZERO_TIME);
}

tlm::tlm_sync_enum Gmmu::nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                         sc_core::sc_time&) {
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;
  const UvmMessage& m = message(gp);
  ++l2_accesses_;
  if (l2_.lookup(m.page)) {
    ++l2_hits_;
    at(now_ps() + cycles_ps(params_.l2_tlb_latency), Job{Job::Kind::Respond, id, &gp});
  } else {
    ++walks_;
    at(now_ps() + cycles_ps(params_.l2_tlb_latency + params_.page_walk_latency), Job{Job::Kind::Walked, id, &gp});
  }
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void Gmmu::walked(int tlb, tlm::tlm_generic_payload& gp) {
  const UvmMessage& m = message(gp);
  if (!table_.managed(m.page)) {  // not unified memory: always mapped
    respond(tlb, gp, UvmMessageKind::Translated);
    return;
  }
  switch (faults_.fault(m.page, static_cast<uint64_t>(tlb))) {
    case FaultService::Admit::Resident:
      l2_.insert(m.page);
      respond(tlb, gp, UvmMessageKind::Translated);
      return;
    case FaultService::Admit::Allocated:
    case FaultService::Admit::Coalesced:
      ++nacks_;
      respond(tlb, gp, UvmMessageKind::NackReplayable);
      if (!batch_scheduled_) {
        batch_scheduled_ = true;
        batch_at_ps_ = std::max(now_ps(), driver_free_ps_);
      }
      return;
    case FaultService::Admit::Full:
      refused_.emplace_back(tlb, &gp);
      return;
  }
}

void Gmmu::respond(int tlb, tlm::tlm_generic_payload& gp, UvmMessageKind kind) {
  message(gp).kind = kind;
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  translate[tlb]->nb_transport_bw(gp, phase, delay);
}

void Gmmu::send(int tlb, UvmMessageKind kind, PageRange range) {
  tlm::tlm_generic_payload gp;
  UvmMessage m;
  m.kind = kind;
  m.page = range.first;
  m.count = range.count;
  gp.set_extension(&m);
  gp.set_command(tlm::TLM_IGNORE_COMMAND);
  gp.set_address(range.first * kPageBytes);
  gp.set_data_length(0);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  notify[tlb]->b_transport(gp, delay);
  gp.clear_extension(&m);
}

void Gmmu::land() {
  const uint64_t before = table_.device_pages();
  std::vector<FaultService::Replay> replays = faults_.advance(now_ps());
  if (table_.device_pages() != before && params_.shootdown == ShootdownKind::WholeTlb) {
    ++shootdowns_;
    l2_.flush();
    for (int t = 0; t < static_cast<int>(notify.size()); ++t) send(t, UvmMessageKind::FlushAll, {0, 0});
  }
  for (const auto& r : replays) {
    std::vector<uint64_t> tlbs = r.requesters;
    std::sort(tlbs.begin(), tlbs.end());
    tlbs.erase(std::unique(tlbs.begin(), tlbs.end()), tlbs.end());
    for (uint64_t t : tlbs) {
      ++replays_;
      send(static_cast<int>(t), UvmMessageKind::Replay, {r.page, 1});
    }
  }
  if (!replays.empty() && !refused_.empty()) {  // MSHR entries freed: admit the refused
    auto retry = std::move(refused_);
    refused_.clear();
    for (auto [tlb, gp] : retry) walked(tlb, *gp);
  }
}

void Gmmu::thread() {
  for (;;) {
    uint64_t next = faults_.next_landing_ps();
    if (!jobs_.empty()) next = std::min(next, jobs_.begin()->first);
    if (batch_scheduled_) next = std::min(next, batch_at_ps_);
    if (next == ~uint64_t{0}) {
      sc_core::wait(wake_);
    } else if (next > now_ps()) {
      sc_core::wait(sc_core::sc_time::from_value(next - now_ps()), wake_);
    }
    const uint64_t now = now_ps();
    if (faults_.next_landing_ps() <= now) land();
    if (batch_scheduled_ && batch_at_ps_ <= now) {
      batch_scheduled_ = false;
      faults_.service_batch(now);
      driver_free_ps_ = now + static_cast<uint64_t>(params_.fault_latency_ps);
      if (faults_.batch_pending()) {
        // Leftovers (batch limit, or no free frame until something lands) form the next batch.
        batch_scheduled_ = true;
        batch_at_ps_ = driver_free_ps_;
        if (faults_.next_landing_ps() != ~uint64_t{0})
          batch_at_ps_ = std::max(batch_at_ps_, faults_.next_landing_ps());
      }
    }
    while (!jobs_.empty() && jobs_.begin()->first <= now) {
      Job job = jobs_.begin()->second;
      jobs_.erase(jobs_.begin());
      if (job.kind == Job::Kind::Respond)
        respond(job.tlb, *job.gp, UvmMessageKind::Translated);
      else
        walked(job.tlb, *job.gp);
    }
    report_faults();
  }
}

uint64_t Gmmu::next_event_ps() const {
  uint64_t next = faults_.next_landing_ps();
  if (!jobs_.empty()) next = std::min(next, jobs_.begin()->first);
  if (batch_scheduled_) next = std::min(next, batch_at_ps_);
  return next;
}

uint64_t Gmmu::access(uint64_t page, bool write, uint32_t bytes) {
  const PageInfo* info = table_.find(page);
  if (info == nullptr) return 0;
  if (info->state == PageState::Device) {
    faults_.touch(page, ++access_clock_, write);
    return 0;
  }
  if (!info->remote()) return 0;
  // Zero copy: the request crosses the link to host memory (a read's data comes back; a write
  // is posted). Loosely timed: the link answers with the delay, nothing waits here.
  faults_.remote_access(bytes, write);
  const uint32_t length = std::max<uint32_t>(bytes, 1);
  if (remote_scratch_.size() < length) remote_scratch_.resize(length);
  tlm::tlm_generic_payload gp;
  gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(page * kPageBytes);
  gp.set_data_ptr(remote_scratch_.data());
  gp.set_data_length(length);
  gp.set_streaming_width(length);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  pcie->b_transport(gp, delay);
  return std::max<uint64_t>(delay.value(), 1);
}

void Gmmu::prefetch(PageRange range, bool to_device) {
  if (to_device) {
    const uint64_t done = faults_.prefetch_to_device(range, now_ps());
    wake_.notify(sc_core::SC_ZERO_TIME);
    if (done > now_ps()) sc_core::wait(sc_core::sc_time::from_value(done - now_ps()));
    return;
  }
  wait_landed(range);
  const uint64_t done = faults_.evict_to_host(range, now_ps());
  if (done > now_ps()) sc_core::wait(sc_core::sc_time::from_value(done - now_ps()));
}

void Gmmu::host_access(PageRange range, bool write) {
  wait_landed(range);
  const uint64_t done = faults_.host_access(range, write, now_ps());
  if (done > now_ps()) sc_core::wait(sc_core::sc_time::from_value(done - now_ps()));
}

void Gmmu::wait_landed(PageRange range) {
  // Pages on their way in must land before they can leave.
  for (;;) {
    bool migrating = false;
    for (uint64_t p = range.first; p < range.end() && !migrating; ++p)
      migrating = table_.managed(p) && table_.state(p) == PageState::Migrating;
    if (!migrating) break;
    const uint64_t next = faults_.next_landing_ps();
    sc_core::wait(sc_core::sc_time::from_value(next > now_ps() ? next - now_ps() : 0) + sc_core::sc_time::from_value(1));
  }
}

uint64_t Gmmu::dma(tlm::tlm_command command, PageRange range, uint64_t ready_ps) {
  tlm::tlm_generic_payload gp;
  scratch_.resize(range.bytes());
  gp.set_command(command);
  gp.set_address(range.first * kPageBytes);
  gp.set_data_ptr(scratch_.data());
  gp.set_data_length(static_cast<unsigned>(range.bytes()));
  gp.set_streaming_width(static_cast<unsigned>(range.bytes()));
  gp.set_byte_enable_ptr(nullptr);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const uint64_t now = now_ps();
  sc_core::sc_time delay = sc_core::sc_time::from_value(ready_ps > now ? ready_ps - now : 0);
  pcie->b_transport(gp, delay);
  if (gp.is_response_error())
    throw std::runtime_error("gmmu: PCIe " + std::string(command == tlm::TLM_READ_COMMAND ? "migration" : "write-back") +
                             " of " + std::to_string(range.bytes()) + " bytes at page " + std::to_string(range.first) +
                             " failed: " + gp.get_response_string());
  return now + delay.value();
}

uint64_t Gmmu::migrate_in(PageRange range, uint64_t ready_ps) { return dma(tlm::TLM_READ_COMMAND, range, ready_ps); }
uint64_t Gmmu::write_back(PageRange range, uint64_t ready_ps) { return dma(tlm::TLM_WRITE_COMMAND, range, ready_ps); }

void Gmmu::invalidated(PageRange range) {
  ++shootdowns_;
  if (params_.shootdown == ShootdownKind::WholeTlb) {
    l2_.flush();
    for (int t = 0; t < static_cast<int>(notify.size()); ++t) send(t, UvmMessageKind::FlushAll, {0, 0});
    return;
  }
  for (uint64_t p = range.first; p < range.end(); ++p) l2_.invalidate(p);
  for (int t = 0; t < static_cast<int>(notify.size()); ++t) send(t, UvmMessageKind::Invalidate, range);
}

}  // namespace gpuvp::uvm
