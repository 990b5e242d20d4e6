#include "models/uvm/tlb/l1_tlb.h"

#include <algorithm>
#include <stdexcept>

#include "models/tlm/gpu_extension.h"

namespace gpuvp::uvm {

// The requests of one page waiting for a translation, and the translation request itself.
struct L1Tlb::Waiting {
  tlm::tlm_generic_payload request;
  UvmMessage message;
  std::vector<tlm::tlm_generic_payload*> requests;
  bool in_flight = false;  // a Translate is at the GMMU
  bool nacked = false;     // the GMMU answered Nack-replayable; a Replay will follow
  uint64_t nack_ps = 0;
  Waiting() { request.set_extension(&message); }
  ~Waiting() { request.clear_extension(&message); }
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;
};

L1Tlb::L1Tlb(sc_core::sc_module_name name, const UvmParams& params, const ClockDomain& clock,
             const PageTable& table, stats::Registry& stats, const std::string& path, AccessHook on_access)
    : sc_core::sc_module(name),
      in("in"),
      out("out"),
      gmmu("gmmu"),
      notify("notify"),
      params_(params),
      clock_(clock),
      table_(table),
      on_access_(std::move(on_access)),
      tlb_("uvm.l1_tlb", params.l1_tlb_entries, params.l1_tlb_associativity),
      accesses_(stats.group(path).counter("accesses", "lookup", "managed-memory requests looked up")),
      hits_(stats.group(path).counter("hits", "lookup", "lookups that hit")),
      misses_(stats.group(path).counter("misses", "lookup", "lookups that missed")),
      translations_(stats.group(path).counter("translations", "request", "translation requests sent to the GMMU")),
      nacks_(stats.group(path).counter("nacks", "message", "Nack-replayable answers (far faults)")),
      replays_(stats.group(path).counter("replays", "message", "replay notifications received")),
      flushes_(stats.group(path).counter("flushes", "event", "whole-TLB shootdowns")),
      invalidations_(stats.group(path).counter("invalidations", "event", "per-entry shootdowns")),
      fault_stall_cycles_(stats.group(path).counter("fault_stall_cycles", "cycle",
                                                    "core cycles pages waited from Nack to translation")),
      blocked_count_(stats.group(path).counter("blocked", "request", "requests held back because the TLB was full")) {
  stats.group(path).ratio("hit_rate", "L1 TLB lookups that hit", hits_, accesses_);
  if (params.l1_tlb_pending == 0) throw std::invalid_argument("uvm.l1_tlb.pending must be at least 1");
  in.register_nb_transport_fw(this, &L1Tlb::in_fw);
  out.register_nb_transport_bw(this, &L1Tlb::out_bw);
  gmmu.register_nb_transport_bw(this, &L1Tlb::gmmu_bw);
  notify.register_b_transport(this, &L1Tlb::notify_b);
  SC_HAS_PROCESS(L1Tlb);
  SC_METHOD(step);
  sensitive << wake_;
  dont_initialize();
}

L1Tlb::~L1Tlb() = default;

bool L1Tlb::is_write(tlm::tlm_generic_payload& gp) const {
  if (gp.is_write()) return true;
  const GpuExtension* ext = gpu_extension(gp);
  return ext != nullptr &&
         (ext->kind == AccessKind::Store || ext->kind == AccessKind::Atomic || ext->kind == AccessKind::Reduction);
}

tlm::tlm_sync_enum L1Tlb::in_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) return out->nb_transport_fw(gp, phase, delay);  // END_RESP
  const uint64_t page = gp.get_address() / kPageBytes;
  if (!table_.managed(page)) {
    // Transparent: the cluster sees the SM's own call, even while an earlier request awaits its
    // END_REQ (the cluster queues those itself), so unmanaged traffic times exactly as without
    // the TLB. Only translated requests waiting here go first (order).
    if (ready_.empty()) {
      const tlm::tlm_sync_enum status = out->nb_transport_fw(gp, phase, delay);
      if (status == tlm::TLM_ACCEPTED) {
        down_busy_ = true;
        down_gp_ = &gp;
        down_owes_sm_ = true;
      }
      return status;
    }
    owed_end_ = &gp;
    ready_.push_back(&gp);
    if (!down_busy_) wake_.notify(sc_core::SC_ZERO_TIME);
    return tlm::TLM_ACCEPTED;
  }
  if (held_ >= params_.l1_tlb_pending) {
    blocked_ = &gp;
    ++blocked_count_;
    return tlm::TLM_ACCEPTED;
  }
  accept(gp);
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void L1Tlb::accept(tlm::tlm_generic_payload& gp) {
  ++held_;
  ++accesses_;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time wait = clock_.delay_until(now, params_.l1_tlb_latency);
  lookups_.emplace_back(now.value() + wait.value(), &gp);
  wake_.notify(wait);
}

void L1Tlb::step() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  while (!lookups_.empty() && lookups_.front().first <= now) {
    tlm::tlm_generic_payload* gp = lookups_.front().second;
    lookups_.pop_front();
    const uint64_t page = gp->get_address() / kPageBytes;
    if (tlb_.lookup(page)) {
      ++hits_;
      translated(page, *gp);
      continue;
    }
    ++misses_;
    std::unique_ptr<Waiting>& w = waiting_[page];
    if (!w) w = std::make_unique<Waiting>();
    w->requests.push_back(gp);
    if (!w->in_flight && !w->nacked) request_translation(page, is_write(*gp));
  }
  while (!remote_.empty() && remote_.front().first <= now) {
    ready_.push_back(remote_.front().second);
    remote_.pop_front();
  }
  forward();
  if (!lookups_.empty()) wake_.notify(sc_core::sc_time::from_value(lookups_.front().first - now));
  if (!remote_.empty()) wake_.notify(sc_core::sc_time::from_value(remote_.front().first - now));
}

void L1Tlb::translated(uint64_t page, tlm::tlm_generic_payload& gp) {
  const uint64_t extra = on_access_ ? on_access_(page, is_write(gp), gp.get_data_length()) : 0;
  if (extra == 0) {
    ready_.push_back(&gp);
    return;
  }
  // Crossing PCIe to host memory: in due order (ties keep arrival order).
  const uint64_t due = sc_core::sc_time_stamp().value() + extra;
  auto at = std::upper_bound(remote_.begin(), remote_.end(), due,
                             [](uint64_t d, const std::pair<uint64_t, tlm::tlm_generic_payload*>& e) { return d < e.first; });
  remote_.emplace(at, due, &gp);
  wake_.notify(sc_core::sc_time::from_value(extra));
}

void L1Tlb::request_translation(uint64_t page, bool write) {
  Waiting& w = *waiting_.at(page);
  w.in_flight = true;
  ++translations_;
  w.message.kind = UvmMessageKind::Translate;
  w.message.page = page;
  w.message.count = 1;
  w.message.write = write;
  w.request.set_command(tlm::TLM_IGNORE_COMMAND);
  w.request.set_address(page * kPageBytes);
  w.request.set_data_length(0);
  w.request.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum status = gmmu->nb_transport_fw(w.request, phase, delay);
  if (status != tlm::TLM_ACCEPTED && phase == tlm::BEGIN_RESP) gmmu_bw(w.request, phase, delay);
}

tlm::tlm_sync_enum L1Tlb::gmmu_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time&) {
  if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;
  const UvmMessage* m = gp.get_extension<UvmMessage>();
  auto it = m != nullptr ? waiting_.find(m->page) : waiting_.end();
  if (it == waiting_.end()) throw std::logic_error("l1 tlb: a translation response for a page nobody waits for");
  Waiting& w = *it->second;
  w.in_flight = false;
  if (m->kind == UvmMessageKind::NackReplayable) {
    ++nacks_;
    if (!w.nacked) w.nack_ps = sc_core::sc_time_stamp().value();
    w.nacked = true;
    return tlm::TLM_COMPLETED;
  }
  const uint64_t page = m->page;
  tlb_.insert(page);
  if (w.nacked) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    fault_stall_cycles_ += clock_.cycle_at(now) - clock_.cycle_at(sc_core::sc_time::from_value(w.nack_ps));
  }
  std::vector<tlm::tlm_generic_payload*> requests = std::move(w.requests);
  waiting_.erase(it);  // `gp` is the entry's own payload: not used past this point
  for (tlm::tlm_generic_payload* r : requests) translated(page, *r);
  wake_.notify(sc_core::SC_ZERO_TIME);
  phase = tlm::END_RESP;
  return tlm::TLM_COMPLETED;
}

void L1Tlb::notify_b(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
  const UvmMessage* m = gp.get_extension<UvmMessage>();
  if (m == nullptr) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  switch (m->kind) {
    case UvmMessageKind::Replay: {
      ++replays_;
      auto it = waiting_.find(m->page);
      if (it != waiting_.end() && !it->second->in_flight) {
        request_translation(m->page, it->second->message.write);
      }
      break;
    }
    case UvmMessageKind::Invalidate:
      ++invalidations_;
      for (uint64_t p = m->page; p < m->page + m->count; ++p) tlb_.invalidate(p);
      break;
    case UvmMessageKind::FlushAll:
      ++flushes_;
      tlb_.flush();
      break;
    default:
      gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void L1Tlb::forward() {
  while (!down_busy_ && !ready_.empty()) {
    tlm::tlm_generic_payload* gp = ready_.front();
    ready_.pop_front();
    const bool pass_through = gp == owed_end_;
    if (pass_through) {  // the SM's request leaves its port now
      owed_end_ = nullptr;
      tlm::tlm_phase end = tlm::END_REQ;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      in->nb_transport_bw(*gp, end, d);
    }
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum status = out->nb_transport_fw(*gp, phase, delay);
    if (status == tlm::TLM_ACCEPTED) {
      down_busy_ = true;
      down_gp_ = gp;
      down_owes_sm_ = false;
    } else if (status == tlm::TLM_COMPLETED || phase == tlm::BEGIN_RESP) {
      tlm::tlm_phase resp = tlm::BEGIN_RESP;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      in->nb_transport_bw(*gp, resp, d);
    }
    if (!pass_through) left(*gp);
  }
}

void L1Tlb::left(tlm::tlm_generic_payload&) {
  --held_;
  if (held_ == 0 && drained_ != nullptr) drained_->notify(sc_core::SC_ZERO_TIME);
  if (blocked_ != nullptr && held_ < params_.l1_tlb_pending) {
    tlm::tlm_generic_payload* gp = blocked_;
    blocked_ = nullptr;
    tlm::tlm_phase end = tlm::END_REQ;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    in->nb_transport_bw(*gp, end, d);
    accept(*gp);
  }
}

tlm::tlm_sync_enum L1Tlb::out_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (down_busy_ && &gp == down_gp_ && (phase == tlm::END_REQ || phase == tlm::BEGIN_RESP)) {
    down_busy_ = false;
    const bool owes = down_owes_sm_;
    down_owes_sm_ = false;
    if (!ready_.empty()) wake_.notify(sc_core::SC_ZERO_TIME);
    if (phase == tlm::END_REQ) {
      if (!owes) return tlm::TLM_ACCEPTED;
      return in->nb_transport_bw(gp, phase, delay);
    }
  } else if (phase == tlm::END_REQ && (blocked_ != nullptr || owed_end_ != nullptr)) {
    // An END_REQ for a request that already left (the cluster repeats it when the crossbar
    // accepts a request it had queued). The SM now waits for the TLB's own END_REQ: passing this
    // one on would release it early. (Without managed memory both are null: the SM sees what it
    // would see without the TLB.)
    return tlm::TLM_ACCEPTED;
  }
  return in->nb_transport_bw(gp, phase, delay);
}

}  // namespace gpuvp::uvm
