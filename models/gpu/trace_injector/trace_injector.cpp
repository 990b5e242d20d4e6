#include "models/gpu/trace_injector/trace_injector.h"

#include <algorithm>
#include <stdexcept>

namespace gpuvp::gpu {
namespace {
constexpr uint64_t kNever = ~uint64_t{0};
}

struct TraceInjector::Warp {
  const elastic::WarpTrace* trace = nullptr;
  uint32_t cta = 0;           // index into ctas_
  uint32_t next = 0;          // next request to issue
  bool queued = false;        // its next request is in ready_
  bool orphan = false;        // its CTA ended; it still has requests to issue or answers to receive
  bool mshr_anchored = false; // its CTA replays on the captured SM (start_cta's captured_sm)
  uint64_t kernel_id = 0;     // of its CTA (also after the CTA ended)
  uint32_t cta_id = 0;
  uint64_t offset = 0;
  uint64_t last_ready = 0;    // ready cycle of its previous request (CTA start before the first)
  std::vector<uint64_t> response_cycle;  // per request; kNever until it arrives
  std::vector<uint64_t> ready_cycle;     // per request; kNever until it is queued
  std::vector<uint32_t> barrier_waiters;  // warps of its CTA whose next request waits for its events
  std::vector<std::pair<const tlm::tlm_generic_payload*, uint32_t>> in_flight;  // (payload, request)
};

struct TraceInjector::Cta {
  const elastic::CtaTrace* trace = nullptr;
  uint64_t kernel_id = 0;
  uint64_t tag = 0;
  uint64_t offset = 0;
  uint64_t begin = 0;
  uint64_t latest = 0;        // latest issue or held response so far
  uint32_t issues_left = 0;   // requests that precede its end still to issue
  uint32_t holds_left = 0;    // responses it still waits for
  std::vector<uint32_t> warps;  // handles
  std::vector<uint64_t> releases;  // per barrier of its trace: replayed release, kNever until known
};

TraceInjector::TraceInjector(sc_core::sc_module_name name, uint32_t sm_index, const ClockDomain& clock,
                             stats::Registry& stats, const std::string& stats_path, uint32_t mshrs)
    : sc_module(name),
      mem("mem"),
      index_(sm_index),
      clock_(clock),
      mshrs_(mshrs),
      requests_(stats.group(stats_path).counter("requests", "request", "requests sent (one per captured request)")),
      sector_requests_(stats.group(stats_path).counter("sector_requests", "sector", "32 B sectors requested")),
      write_requests_(stats.group(stats_path).counter("write_requests", "request", "write requests sent")),
      ctas_started_(stats.group(stats_path).counter("ctas", "CTA", "CTAs replayed")),
      mshr_full_(stats.group(stats_path).counter("mshr_full", "event",
                                                 "times the next request waited for a free L1 MSHR")),
      stats_(stats),
      stats_path_(stats_path),
      delayed_("delayed_responses", this, &TraceInjector::nb_transport_bw) {
  mem.register_nb_transport_bw(this, &TraceInjector::nb_transport_bw);
  SC_HAS_PROCESS(TraceInjector);
  SC_METHOD(tick);
  sensitive << wake_;
  dont_initialize();
}

TraceInjector::~TraceInjector() = default;

void TraceInjector::enable_l1(uint32_t ways, uint32_t hit_latency, uint32_t merges) {
  l1_on_ = true;
  l1_ways_ = ways;
  l1_hit_latency_ = hit_latency;
  l1_merges_ = std::max<uint32_t>(merges, 1);
  stats::Group& g = stats_.group(stats_path_);
  l1_hits_ = &g.counter("l1_hits", "lookup", "L1 lookups (redone) that found every wanted sector");
  l1_merge_count_ = &g.counter("l1_merges", "lookup", "L1 lookups (redone) that waited for a pending miss");
  l1_misses_ = &g.counter("l1_misses", "lookup", "L1 lookups (redone) that sent a request");
}

void TraceInjector::configure_l1(uint64_t bytes) {
  if (l1_on_ && bytes != l1_.bytes()) l1_.resize(bytes, l1_ways_);
}

uint64_t TraceInjector::address_of(const Warp& w, const elastic::Request& r) const {
  return r.shared ? r.address : r.address + w.offset;
}

void TraceInjector::start_cta(const elastic::CtaTrace& trace, uint64_t kernel_id, uint64_t begin, uint64_t offset,
                              uint64_t tag, bool captured_sm) {
  uint32_t c;
  if (!free_ctas_.empty()) {
    c = free_ctas_.back();
    free_ctas_.pop_back();
  } else {
    c = static_cast<uint32_t>(ctas_.size());
    ctas_.emplace_back();
  }
  Cta& cta = ctas_[c];
  cta.trace = &trace;
  cta.kernel_id = kernel_id;
  cta.tag = tag;
  cta.offset = offset;
  cta.begin = begin;
  cta.latest = begin;
  cta.issues_left = 0;
  cta.holds_left = 0;
  cta.warps.clear();
  cta.releases.clear();
  if (kernel_id != kernel_of_) {
    kernel_of_ = kernel_id;
    mshr_freed_.clear();
    mshr_waiters_ = {};
  }
  ++resident_;
  ++ctas_started_;
  for (const elastic::WarpTrace& wt : trace.warps) {
    uint32_t h;
    if (!free_warps_.empty()) {
      h = free_warps_.back();
      free_warps_.pop_back();
    } else {
      h = static_cast<uint32_t>(warps_.size());
      warps_.emplace_back();
    }
    Warp& w = warps_[h];
    w.trace = &wt;
    w.cta = c;
    w.next = 0;
    w.queued = false;
    w.orphan = false;
    w.kernel_id = kernel_id;
    w.cta_id = static_cast<uint32_t>(trace.cta);
    w.offset = offset;
    w.last_ready = begin;
    w.response_cycle.assign(wt.requests.size(), kNever);
    w.ready_cycle.assign(wt.requests.size(), kNever);
    w.barrier_waiters.clear();
    w.in_flight.clear();
    w.mshr_anchored = captured_sm;
    cta.warps.push_back(h);
    for (const elastic::Request& r : wt.requests) {
      cta.holds_left += r.holds_cta_end ? 1 : 0;
      cta.issues_left += r.after_cta_end ? 0 : 1;
    }
  }
  for (uint32_t h : cta.warps) evaluate(h);
  check_cta_end(c);
}

void TraceInjector::evaluate(uint32_t h) {
  Warp& w = warps_[h];
  if (w.trace == nullptr || w.queued || w.next >= w.trace->requests.size()) return;
  const elastic::Request& r = w.trace->requests[w.next];
  uint64_t gap = r.gap;
  uint64_t floor = 0;
  if (r.mshr_after != 0) {
    if (!w.mshr_anchored) {
      gap += r.mshr_wait;  // other requests replay on this SM: the captured wait stands
    } else if (r.mshr_after > mshr_freed_.size()) {
      mshr_waiters_.emplace(r.mshr_after, h);  // waits for an MSHR to be freed
      return;
    } else {
      floor = mshr_freed_[r.mshr_after - 1] + r.mshr_gap;
    }
  }
  if (r.barrier && !w.orphan) {  // no sooner than barrier_gap after the barrier's last arrival
    const uint64_t release = barrier_release(w.cta, r.barrier_index, h);
    if (release == kNever) return;  // a warp has not got there yet
    floor = std::max(floor, release + r.barrier_gap);
  }
  uint64_t ready;
  if (r.dep_count == 0) {
    ready = w.last_ready + gap;
  } else {
    uint64_t latest = 0;
    for (uint32_t d = 0; d < r.dep_count; ++d) {
      const uint64_t at = w.response_cycle[w.trace->deps[r.dep_first + d]];
      if (at == kNever) return;  // waits for that response
      latest = std::max(latest, at);
    }
    ready = std::max(latest + gap, w.last_ready);
  }
  ready = std::max(ready, floor);
  w.last_ready = ready;
  w.ready_cycle[w.next] = ready;
  w.queued = true;
  ready_.push(Ready{ready, r.order, h});
  wake_at(std::max(ready, send_allowed_));
  wake_barrier_waiters(h);
}

uint64_t TraceInjector::barrier_release(uint32_t c, uint32_t index, uint32_t waiter) {
  Cta& cta = ctas_[c];
  if (cta.releases.size() <= index) cta.releases.resize(cta.trace->barriers.size(), kNever);
  if (cta.releases[index] != kNever) return cta.releases[index];
  uint64_t release = 0;
  for (const elastic::BarrierArrival& a : cta.trace->barriers[index].arrivals) {
    uint64_t anchor = cta.begin;
    if (a.barrier != elastic::kNone) {
      anchor = barrier_release(c, a.barrier, waiter);  // an earlier barrier: no cycle
    } else if (a.warp != elastic::kNone) {
      Warp& arriving = warps_[cta.warps[a.warp]];
      anchor = a.on_response ? arriving.response_cycle[a.request] : arriving.ready_cycle[a.request];
      if (anchor == kNever) arriving.barrier_waiters.push_back(waiter);
    }
    if (anchor == kNever) return kNever;
    release = std::max(release, anchor + a.gap);
  }
  cta.releases[index] = release;
  return release;
}

void TraceInjector::wake_barrier_waiters(uint32_t h) {
  if (warps_[h].barrier_waiters.empty()) return;
  std::vector<uint32_t> waiters;
  waiters.swap(warps_[h].barrier_waiters);
  for (uint32_t waiter : waiters) evaluate(waiter);
}

void TraceInjector::wake_at(uint64_t cycle) {
  const uint64_t now = clock_.cycle_at(current_time());
  const sc_core::sc_time now_time = current_time();
  // The edge of `cycle` if it is still ahead, else the next edge.
  uint64_t target = std::max(cycle, now);
  if (clock_.time_of_cycle(target) < now_time || (target == now && clock_.time_of_cycle(now) != now_time)) {
    target = now + 1;
  }
  if (target >= wake_cycle_) return;  // an earlier wake is pending (it re-plans)
  wake_cycle_ = target;
  if (schedule_) {
    schedule_(index_, target);
  } else {
    wake_.notify(clock_.time_of_cycle(target) - now_time);
  }
}

void TraceInjector::tick() { step(); }

void TraceInjector::step() {
  const uint64_t c = clock_.cycle_at(current_time());
  wake_cycle_ = kNever;
  // Lookups the L1 answers need no port (those behind a miss wait for it, as behind the SM's queue head).
  uint8_t head_missing = 0;  // the sectors the L1 lacks for the lookup at the head, once it missed
  while (l1_on_ && !ready_.empty() && ready_.top().cycle <= c && answer_from_l1(c, head_missing)) {
  }
  if (in_flight_) return;  // END_REQ re-plans
  if (ready_.empty()) return;
  if (c < send_allowed_ || ready_.top().cycle > c) {
    wake_at(std::max(send_allowed_, ready_.top().cycle));
    return;
  }
  const Ready top = ready_.top();
  const bool takes_mshr = elastic::holds_mshr(warps_[top.warp].trace->requests[warps_[top.warp].next].kind);
  if (takes_mshr && mshrs_ != 0 && mshrs_busy_ >= mshrs_) {
    ++mshr_full_;
    return;  // a response frees one and wakes this
  }
  const uint32_t h = take_ready();
  Warp& w = warps_[h];
  const uint32_t index = w.next - 1;
  const elastic::Request& r = w.trace->requests[index];
  if (takes_mshr) ++mshrs_busy_;

  const uint64_t address = address_of(w, r);
  uint8_t sectors = r.sector_mask;
  tlm::tlm_generic_payload* gp =
      pool_.allocate(r.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, address, r.length);
  if (l1_on_ && r.kind == AccessKind::Load && r.l1_access != 0) {  // a miss: the sectors not valid
    sectors = head_missing;
    fills_.push_back(Fill{gp, address, sectors, {}});
    ++*l1_misses_;
  } else if (l1_on_ && r.kind == AccessKind::Store) {
    l1_.write(address, r.sector_mask);
  }
  GpuExtension* ext = gpu_extension(*gp);
  ext->sm_id = index_;
  ext->warp_id = h;
  ext->cta_id = w.cta_id;
  ext->kernel_id = w.kernel_id;
  ext->sector_mask = sectors;
  ext->kind = r.kind;
  w.in_flight.emplace_back(gp, index);
  ++requests_;
  sector_requests_.add(static_cast<uint64_t>(__builtin_popcount(sectors)));
  if (r.write) ++write_requests_;

  in_flight_ = true;
  in_flight_gp_ = gp;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum status = mem->nb_transport_fw(*gp, phase, delay);
  if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
    in_flight_ = false;
    send_allowed_ = c + 1;
    response(*gp, c);
  } else if (status == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
    in_flight_ = false;
    send_allowed_ = c + 1;
  }
  evaluate(h);
  if (warps_[h].orphan) {
    release_if_done(h);
  } else {
    check_cta_end(warps_[h].cta);
  }
  if (!in_flight_ && !ready_.empty()) wake_at(std::max(send_allowed_, ready_.top().cycle));
}

uint32_t TraceInjector::take_ready() {
  const Ready top = ready_.top();
  ready_.pop();
  Warp& w = warps_[top.warp];
  const elastic::Request& r = w.trace->requests[w.next];
  w.queued = false;
  ++w.next;
  if (!w.orphan && !r.after_cta_end) {
    Cta& cta = ctas_[w.cta];
    cta.latest = std::max(cta.latest, top.cycle);
    --cta.issues_left;
  }
  return top.warp;
}

bool TraceInjector::answer_from_l1(uint64_t c, uint8_t& missing_sectors) {
  const Warp& w = warps_[ready_.top().warp];
  const elastic::Request& r = w.trace->requests[w.next];
  if (r.kind != AccessKind::Load || r.l1_access == 0) return false;
  const uint64_t line = address_of(w, r);
  L1Tags::Line* cached = l1_.find(line);
  const uint8_t missing = static_cast<uint8_t>(r.l1_access & ~(cached != nullptr ? cached->valid : 0));
  Fill* pending = nullptr;
  if (missing != 0) {
    for (Fill& f : fills_) {
      if (f.line == line && (missing & ~f.mask) == 0 && f.waiters.size() < l1_merges_) {
        pending = &f;
        break;
      }
    }
    if (pending == nullptr) {  // a miss: it needs the port
      missing_sectors = missing;
      return false;
    }
  }
  if (cached != nullptr && missing != r.l1_access) l1_.touch(*cached);
  const uint32_t h = take_ready();
  const uint32_t index = warps_[h].next - 1;
  if (pending != nullptr) {
    pending->waiters.emplace_back(h, index);
    ++*l1_merge_count_;
    evaluate(h);  // its next request may not need this one's data
  } else {
    ++*l1_hits_;
    complete(h, index, c + l1_hit_latency_);
  }
  return true;
}

void TraceInjector::release_if_done(uint32_t h) {
  Warp& w = warps_[h];
  if (w.orphan && w.next == w.trace->requests.size() && w.in_flight.empty()) {
    w.orphan = false;
    w.trace = nullptr;
    free_warps_.push_back(h);
  }
}

tlm::tlm_sync_enum TraceInjector::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                  sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_RESP && delayed_.defer(gp, delay)) return tlm::TLM_COMPLETED;
  const uint64_t c = clock_.cycle_at(current_time());
  if (phase == tlm::END_REQ) {
    if (in_flight_ && in_flight_gp_ == &gp) {
      in_flight_ = false;
      send_allowed_ = c + 1;
      if (!ready_.empty()) wake_at(std::max(send_allowed_, ready_.top().cycle));
    }
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    if (in_flight_ && in_flight_gp_ == &gp) {  // BEGIN_RESP implies END_REQ
      in_flight_ = false;
      send_allowed_ = c + 1;
    }
    response(gp, c);
    if (!in_flight_ && !ready_.empty()) wake_at(std::max(send_allowed_, ready_.top().cycle));
    return tlm::TLM_COMPLETED;
  }
  return tlm::TLM_ACCEPTED;
}

void TraceInjector::response(tlm::tlm_generic_payload& gp, uint64_t c) {
  const GpuExtension* ext = gpu_extension(gp);
  if (ext == nullptr || ext->warp_id >= warps_.size()) throw std::logic_error("TraceInjector: a response it did not ask for");
  const uint32_t h = ext->warp_id;
  Warp& w = warps_[h];
  uint32_t index = 0;
  bool found = false;
  for (size_t i = 0; i < w.in_flight.size(); ++i) {
    if (w.in_flight[i].first == &gp) {
      index = w.in_flight[i].second;
      w.in_flight[i] = w.in_flight.back();
      w.in_flight.pop_back();
      found = true;
      break;
    }
  }
  if (!found) {
    gp.release();
    throw std::logic_error("TraceInjector: a response it did not ask for");
  }
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  if (l1_on_) {
    for (size_t i = 0; i < fills_.size(); ++i) {
      if (fills_[i].gp != &gp) continue;
      l1_.fill(fills_[i].line, fills_[i].mask);
      merged.swap(fills_[i].waiters);
      fills_.erase(fills_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  gp.release();
  if (elastic::holds_mshr(w.trace->requests[index].kind)) {
    --mshrs_busy_;
    count_mshr_response(w.kernel_id, c);
  }
  complete(h, index, c);
  for (const auto& [waiter, request] : merged) complete(waiter, request, c);
}

void TraceInjector::complete(uint32_t h, uint32_t index, uint64_t c) {
  Warp& w = warps_[h];
  w.response_cycle[index] = c;
  wake_barrier_waiters(h);
  if (w.orphan) {  // its CTA is gone: it issues what is left, then its handle is free
    evaluate(h);
    release_if_done(h);
    return;
  }
  Cta& cta = ctas_[w.cta];
  if (w.trace->requests[index].holds_cta_end) {
    --cta.holds_left;
    cta.latest = std::max(cta.latest, c);
  }
  evaluate(h);
  check_cta_end(w.cta);
}

void TraceInjector::count_mshr_response(uint64_t kernel_id, uint64_t cycle) {
  if (kernel_id != kernel_of_) return;
  mshr_freed_.push_back(cycle);
  while (!mshr_waiters_.empty() && mshr_waiters_.top().first <= mshr_freed_.size()) {
    const uint32_t waiter = mshr_waiters_.top().second;
    mshr_waiters_.pop();
    evaluate(waiter);
  }
}

void TraceInjector::check_cta_end(uint32_t c) {
  Cta& cta = ctas_[c];
  if (cta.trace == nullptr || cta.issues_left != 0 || cta.holds_left != 0) return;
  const uint64_t end = cta.latest + cta.trace->end_gap;
  const uint64_t tag = cta.tag;
  // Warps whose stores are still unanswered keep their handle until the responses come back.
  for (uint32_t h : cta.warps) {
    warps_[h].orphan = true;
    release_if_done(h);
  }
  cta.trace = nullptr;
  free_ctas_.push_back(c);
  --resident_;
  if (done_) done_(tag, end);
}

}  // namespace gpuvp::gpu
