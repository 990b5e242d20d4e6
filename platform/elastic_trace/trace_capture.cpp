#include "platform/elastic_trace/trace_capture.h"

#include <algorithm>

#include "models/tlm/gpu_extension.h"

namespace gpuvp::elastic {
namespace {

constexpr uint64_t kNoResponse = ~uint64_t{0};

uint32_t gap_of(uint64_t later, uint64_t earlier) {
  return static_cast<uint32_t>(std::min<uint64_t>(later > earlier ? later - earlier : 0, 0xffffffffu));
}

}  // namespace

TraceCapture::TraceCapture(const std::string& dir, const CaptureHeader& header, TraceObserver* inner)
    : core_clock_hz_(header.core_clock_hz), inner_(inner), writer_(dir, header) {
  warp_cache_.resize(header.sm_count);
  last_end_.resize(header.sm_count);
  answered_.assign(header.sm_count, std::vector<Answered>(kAnsweredRing));
  released_.assign(header.sm_count, std::vector<Released>(kAnsweredRing));
}

TraceCapture::~TraceCapture() = default;

uint64_t TraceCapture::cycle_at(const sc_core::sc_time& at) {
  if (!core_) core_ = std::make_unique<ClockDomain>("core", core_clock_hz_);
  return core_->cycle_at(at);
}

void TraceCapture::finish() {
  if (finished_) return;
  finished_ = true;
  writer_.close(far_faults_);
}

uint32_t TraceCapture::add_link(const std::string& initiator, const std::string& target, const std::string& kind) {
  if (!core_) core_ = std::make_unique<ClockDomain>("core", core_clock_hz_);
  Link link;
  if (inner_ != nullptr) link.inner = inner_->add_link(initiator, target, kind);
  if (kind == "sm") link.role = LinkRole::kSm;
  if (kind == "crossbar" && initiator.find("copy_engine") != std::string::npos) link.role = LinkRole::kCopy;
  if (link.role == LinkRole::kUnused && link.inner == kNotTraced) return kNotTraced;
  links_.push_back(link);
  return static_cast<uint32_t>(links_.size() - 1);
}

void TraceCapture::phase(uint32_t id, tlm::tlm_generic_payload& gp, TracePhase phase, const sc_core::sc_time& at) {
  const Link& link = links_[id];
  if (link.inner != kNotTraced) inner_->phase(link.inner, gp, phase, at);
  if (finished_ || link.role == LinkRole::kUnused) return;
  if (link.role == LinkRole::kCopy) {
    if (phase != TracePhase::kBeginReq) return;
    const GpuExtension* ext = gpu_extension(gp);
    KernelBuild* k = ext != nullptr ? kernel(ext->kernel_id) : nullptr;
    if (k == nullptr) return;
    CopyWrite w;
    w.address = gp.get_address();
    w.length = gp.get_data_length();
    w.sector_mask = ext->sector_mask;
    k->trace.copies.push_back(w);
    return;
  }
  if (phase == TracePhase::kBeginReq) {
    request(gp, cycle_at(at));
  } else if (phase == TracePhase::kBeginResp || phase == TracePhase::kCompleted) {
    response(gp, cycle_at(at));
  }
}

TraceCapture::KernelBuild* TraceCapture::kernel(uint64_t id) {
  for (auto& k : open_kernels_) {
    if (k->trace.id == id) return k.get();
  }
  return nullptr;
}

TraceCapture::KernelBuild* TraceCapture::kernel_by_serial(uint64_t serial) {
  for (auto& k : open_kernels_) {
    if (k->serial == serial) return k.get();
  }
  return nullptr;
}

TraceCapture::KernelBuild* TraceCapture::warp_of(uint32_t sm, uint32_t warp_slot, uint64_t kernel_id, uint64_t cta,
                                                 uint32_t& cta_index, uint32_t& warp_index) {
  std::vector<WarpCache>& slots = warp_cache_[sm];
  if (warp_slot >= slots.size()) slots.resize(size_t{warp_slot} + 1);
  WarpCache& cache = slots[warp_slot];
  KernelBuild* k = kernel_by_serial(cache.serial);
  if (k == nullptr || k->trace.id != kernel_id || cache.cta != cta) {
    // The slot holds a warp of another CTA now: find the CTA and give the warp its index.
    k = kernel(kernel_id);
    const auto found = k != nullptr ? k->cta_index.find(cta) : decltype(k->cta_index)::iterator{};
    if (k == nullptr || found == k->cta_index.end()) return nullptr;
    cache.serial = k->serial;
    cache.cta = cta;
    cache.cta_index = found->second;
    CtaTrace& t = k->trace.ctas[found->second];
    CtaBuild& build = k->builds[found->second];
    cache.warp_index = static_cast<uint32_t>(t.warps.size());
    t.warps.emplace_back();
    t.warps.back().slot = warp_slot;
    build.warps.emplace_back();
    build.warps.back().last_issue = build.begin;
  }
  cta_index = cache.cta_index;
  warp_index = cache.warp_index;
  return k;
}

void TraceCapture::l1_lookup(uint32_t sm, const L1Lookup& lookup) {
  if (inner_ != nullptr && inner_->wants_l1_lookups()) inner_->l1_lookup(sm, lookup);
  if (finished_ || sm >= warp_cache_.size()) return;
  uint32_t cta_index = 0, warp_index = 0;
  KernelBuild* k = warp_of(sm, lookup.warp_slot, lookup.kernel_id, lookup.cta, cta_index, warp_index);
  if (k == nullptr) return;
  L1Hit hit;
  hit.address = lookup.line;
  hit.mask = lookup.mask;
  hit.merged = lookup.merged;
  k->builds[cta_index].warps[warp_index].hits.emplace_back(lookup.cycle, hit);
}

void TraceCapture::kernel_shared_capacity(uint64_t kernel_id, uint64_t bytes) {
  if (inner_ != nullptr) inner_->kernel_shared_capacity(kernel_id, bytes);
  if (KernelBuild* k = kernel(kernel_id)) {
    k->trace.shared_capacity = bytes;
  } else {
    shared_capacity_.emplace_back(kernel_id, bytes);
  }
}

void TraceCapture::uvm_operation(const UvmOperation& operation, const sc_core::sc_time& at) {
  if (inner_ != nullptr) inner_->uvm_operation(operation, at);
  if (!finished_) uvm_pending_.emplace_back(operation, at.value());
}

uint32_t TraceCapture::requests_ready_by(const WarpTrace& warp, uint64_t at) {
  // Requests are in the order they were ready (the SM's queue is first in, first out).
  const auto after = std::upper_bound(warp.requests.begin(), warp.requests.end(), at,
                                      [](uint64_t t, const Request& q) { return t < q.issue_cycle; });
  return static_cast<uint32_t>(after - warp.requests.begin());
}

void TraceCapture::place_l1_hits(KernelBuild& k) {
  for (size_t c = 0; c < k.trace.ctas.size(); ++c) {
    CtaTrace& cta = k.trace.ctas[c];
    for (size_t w = 0; w < cta.warps.size(); ++w) {
      WarpTrace& warp = cta.warps[w];
      for (auto& [cycle, hit] : k.builds[c].warps[w].hits) {
        const uint64_t at = cycle - std::min(cycle, k.begin_cycle);
        hit.after = requests_ready_by(warp, at);
        hit.offset = gap_of(at, hit.after != 0 ? warp.requests[hit.after - 1].issue_cycle : cta.begin_cycle);
        warp.l1_hits.push_back(hit);
      }
    }
  }
}

void TraceCapture::request(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  const GpuExtension* ext = gpu_extension(gp);
  if (ext == nullptr || ext->sm_id >= warp_cache_.size() || ext->warp_id == GpuExtension::kNone) {
    ++unattributed_;
    return;
  }
  uint32_t cta_index = 0, warp_index = 0;
  KernelBuild* k = warp_of(ext->sm_id, ext->warp_id, ext->kernel_id, ext->cta_id, cta_index, warp_index);
  if (k == nullptr) {
    ++unattributed_;
    return;
  }
  CtaTrace& cta = k->trace.ctas[cta_index];
  WarpTrace& warp = cta.warps[warp_index];
  WarpBuild& wb = k->builds[cta_index].warps[warp_index];
  // The request's own time is when it joined the SM's outgoing queue: waiting there for the
  // port (back-pressure) is the memory side's doing and is redone by the replay.
  const uint64_t ready = ext->queued_cycle != 0 && ext->queued_cycle <= cycle ? ext->queued_cycle : cycle;
  Request r;
  r.address = gp.get_address();
  r.length = gp.get_data_length();
  r.sector_mask = ext->sector_mask;
  r.kind = ext->kind;
  r.l1_access = ext->kind == AccessKind::Load ? ext->l1_access : 0;
  r.write = gp.is_write();
  r.after_cta_end = k->builds[cta_index].ended;
  r.issue_cycle = ready - std::min(ready, k->begin_cycle);
  r.order = order_++;
  r.dep_first = static_cast<uint32_t>(warp.deps.size());
  uint64_t latest = 0;
  bool any = false;
  // Responses on an earlier cycle are the ones the warp could have waited for; later ones stay
  // for its next request.
  auto keep = wb.arrived.begin();
  for (auto it = wb.arrived.begin(); it != wb.arrived.end(); ++it) {
    if (it->second < ready) {
      warp.deps.push_back(it->first);
      latest = any ? std::max(latest, it->second) : it->second;
      any = true;
    } else {
      *keep++ = *it;
    }
  }
  wb.arrived.erase(keep, wb.arrived.end());
  r.dep_count = static_cast<uint32_t>(warp.deps.size()) - r.dep_first;
  std::sort(warp.deps.begin() + r.dep_first, warp.deps.end());
  const uint64_t gap_start = any ? latest : wb.last_issue;
  r.gap = gap_of(ready, gap_start);
  if (ext->barrier_seq != 0 && !r.after_cta_end && ext->barrier_release <= ready) {
    barrier_dependency(*ext, *k, cta_index, r, ready, gap_start);
  }
  if (ext->mshr_wait != 0 && ext->mshr_unblocked_by != 0) {
    const Answered& freed = answered_[ext->sm_id][ext->mshr_unblocked_by % kAnsweredRing];
    if (freed.seq == ext->mshr_unblocked_by && freed.serial == k->serial) {
      r.mshr_wait = std::min(r.gap, ext->mshr_wait);
      r.gap -= r.mshr_wait;
      r.mshr_after = freed.count;
      r.mshr_gap = gap_of(ready, freed.cycle);
    }
  }
  wb.last_issue = std::max(wb.last_issue, ready);
  const uint32_t index = static_cast<uint32_t>(warp.requests.size());
  warp.requests.push_back(r);
  wb.response_cycle.push_back(kNoResponse);
  open_[&gp] = OpenRequest{k->serial, cta_index, warp_index, index, ext->sm_id, ext->request_seq};
  ++requests_;
}

void TraceCapture::barrier_dependency(const GpuExtension& ext, KernelBuild& k, uint32_t cta_index, Request& r,
                                      uint64_t ready, uint64_t gap_start) {
  const Released& released = released_[ext.sm_id][ext.barrier_seq % kAnsweredRing];
  if (released.seq != ext.barrier_seq || released.serial != k.serial || released.cta_index != cta_index) return;
  // The barrier waits inside the gap come out of it: the last barrier's as far as it overlaps
  // the gap, the earlier ones' whole when the gap began before the last arrival.
  const uint64_t last_wait = ext.barrier_release - std::min(ext.barrier_release, ext.barrier_arrived);
  uint64_t waited = ext.barrier_release > std::max(ext.barrier_arrived, gap_start)
                        ? ext.barrier_release - std::max(ext.barrier_arrived, gap_start)
                        : 0;
  if (gap_start <= ext.barrier_arrived) waited += ext.barrier_wait - std::min<uint64_t>(ext.barrier_wait, last_wait);
  r.gap -= static_cast<uint32_t>(std::min<uint64_t>(r.gap, waited));
  r.barrier = true;
  r.barrier_index = released.barrier;
  r.barrier_gap = gap_of(ready, released.cycle);
}

BarrierArrival TraceCapture::arrival(const KernelBuild& k, uint32_t cta_index, uint32_t warp_index,
                                     uint64_t cycle) const {
  BarrierArrival a;
  uint64_t anchor = k.builds[cta_index].begin;
  const WarpTrace& w = k.trace.ctas[cta_index].warps[warp_index];
  const WarpBuild& wb = k.builds[cta_index].warps[warp_index];
  const uint64_t at = cycle - std::min(cycle, k.begin_cycle);
  if (const uint32_t ready = requests_ready_by(w, at); ready != 0) {
    a.warp = warp_index;
    a.request = ready - 1;
    anchor = k.begin_cycle + w.requests[a.request].issue_cycle;
  }
  const uint32_t n = std::min(wb.recent_count, WarpBuild::kRecent);
  for (uint32_t i = 0; i < n; ++i) {  // its latest response by then, if later
    const auto& [at_cycle, request] = wb.recent[(wb.recent_count - 1 - i) % WarpBuild::kRecent];
    if (at_cycle > cycle) continue;
    if (at_cycle > anchor || a.warp == kNone) {
      a.warp = warp_index;
      a.request = request;
      a.on_response = true;
      anchor = at_cycle;
    }
    break;
  }
  if (wb.barrier != kNone && wb.barrier_release <= cycle && wb.barrier_release >= anchor) {
    a.barrier = wb.barrier;  // its wait at that barrier is not part of this arrival's gap
    a.warp = kNone;
    a.on_response = false;
    anchor = wb.barrier_release;
  }
  a.gap = gap_of(cycle, anchor);
  return a;
}

void TraceCapture::barrier_release(uint32_t sm, const BarrierRelease& release) {
  if (inner_ != nullptr && inner_->wants_l1_lookups()) inner_->barrier_release(sm, release);
  if (finished_ || sm >= warp_cache_.size()) return;
  KernelBuild* k = nullptr;
  uint32_t cta_index = 0;
  BarrierTrace barrier;
  std::vector<uint32_t> warps;
  for (const auto& [slot, cycle] : release.arrivals) {
    uint32_t c = 0, warp_index = 0;
    KernelBuild* kb = warp_of(sm, slot, release.kernel_id, release.cta, c, warp_index);
    if (kb == nullptr) return;
    k = kb;
    cta_index = c;
    barrier.arrivals.push_back(arrival(*kb, c, warp_index, cycle));
    warps.push_back(warp_index);
  }
  if (k == nullptr) return;
  std::vector<BarrierTrace>& barriers = k->trace.ctas[cta_index].barriers;
  const auto index = static_cast<uint32_t>(barriers.size());
  released_[sm][release.seq % kAnsweredRing] = Released{release.seq, k->serial, cta_index, index, release.cycle};
  barriers.push_back(std::move(barrier));
  for (uint32_t w : warps) {
    WarpBuild& wb = k->builds[cta_index].warps[w];
    wb.barrier = index;
    wb.barrier_release = release.cycle;
  }
}

void TraceCapture::response(tlm::tlm_generic_payload& gp, uint64_t cycle) {
  const auto it = open_.find(&gp);
  if (it == open_.end()) return;
  const OpenRequest o = it->second;
  open_.erase(it);
  KernelBuild* k = kernel_by_serial(o.serial);
  if (k == nullptr) return;
  WarpBuild& wb = k->builds[o.cta_index].warps[o.warp_index];
  wb.response_cycle[o.request] = cycle;
  wb.arrived.emplace_back(o.request, cycle);
  wb.recent[wb.recent_count++ % WarpBuild::kRecent] = {cycle, o.request};
  if (holds_mshr(k->trace.ctas[o.cta_index].warps[o.warp_index].requests[o.request].kind)) {
    if (k->mshr_answers.size() <= o.sm) k->mshr_answers.resize(size_t{o.sm} + 1, 0);
    answered_[o.sm][o.seq % kAnsweredRing] = Answered{o.seq, o.serial, ++k->mshr_answers[o.sm], cycle};
  }
}

void TraceCapture::kernel_begin(uint64_t kernel_id, const std::string& name, const sc_core::sc_time& at) {
  if (inner_ != nullptr) inner_->kernel_begin(kernel_id, name, at);
  if (finished_) return;
  auto k = std::make_unique<KernelBuild>();
  k->serial = next_serial_++;
  k->begin_cycle = cycle_at(at);
  k->trace.id = kernel_id;
  k->trace.name = name;
  k->trace.begin_ps = at.value();
  for (auto it = shared_capacity_.begin(); it != shared_capacity_.end(); ++it) {
    if (it->first != kernel_id) continue;
    k->trace.shared_capacity = it->second;
    shared_capacity_.erase(it);
    break;
  }
  for (const auto& [operation, ps] : uvm_pending_) {
    k->trace.uvm.push_back(UvmRecord{operation, at.value() - std::min<uint64_t>(at.value(), ps)});
  }
  uvm_pending_.clear();
  open_kernels_.push_back(std::move(k));
}

void TraceCapture::kernel_end(uint64_t kernel_id, const sc_core::sc_time& at) {
  if (inner_ != nullptr) inner_->kernel_end(kernel_id, at);
  if (finished_) return;
  for (size_t i = 0; i < open_kernels_.size(); ++i) {
    KernelBuild& k = *open_kernels_[i];
    if (k.trace.id != kernel_id) continue;
    const uint64_t end = cycle_at(at);
    k.trace.end_ps = at.value();
    k.trace.cycles = end - k.begin_cycle;
    uint64_t last_cta = k.begin_cycle;
    for (const CtaTrace& cta : k.trace.ctas) last_cta = std::max(last_cta, k.begin_cycle + cta.end_cycle);
    k.trace.end_gap = gap_of(end, last_cta);
    place_l1_hits(k);
    writer_.add_kernel(k.trace);
    open_kernels_.erase(open_kernels_.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

void TraceCapture::cta_begin(uint32_t sm, uint64_t kernel_id, uint64_t cta, const sc_core::sc_time& at) {
  if (inner_ != nullptr) inner_->cta_begin(sm, kernel_id, cta, at);
  KernelBuild* k = finished_ ? nullptr : kernel(kernel_id);
  if (k == nullptr || sm >= last_end_.size()) return;
  const uint64_t begin = cycle_at(at);
  CtaTrace t;
  t.cta = cta;
  t.sm = sm;
  t.begin_cycle = begin - k->begin_cycle;
  const LastEnd& last = last_end_[sm];
  if (last.serial == k->serial) {
    t.begin_after = last.cta_index;
    t.begin_gap = gap_of(begin, last.cycle);
  } else {
    t.begin_gap = gap_of(begin, k->begin_cycle);
  }
  k->cta_index[cta] = static_cast<uint32_t>(k->trace.ctas.size());
  k->trace.ctas.push_back(std::move(t));
  k->builds.emplace_back();
  k->builds.back().begin = begin;
}

void TraceCapture::cta_end(uint32_t sm, uint64_t kernel_id, uint64_t cta, const sc_core::sc_time& at) {
  if (inner_ != nullptr) inner_->cta_end(sm, kernel_id, cta, at);
  KernelBuild* k = finished_ ? nullptr : kernel(kernel_id);
  if (k == nullptr) return;
  const auto found = k->cta_index.find(cta);
  if (found == k->cta_index.end()) return;
  const uint32_t index = found->second;
  CtaTrace& t = k->trace.ctas[index];
  CtaBuild& b = k->builds[index];
  const uint64_t end = cycle_at(at);
  uint64_t latest = b.begin;
  for (size_t w = 0; w < t.warps.size(); ++w) {
    WarpTrace& warp = t.warps[w];
    const WarpBuild& wb = b.warps[w];
    for (size_t i = 0; i < warp.requests.size(); ++i) {
      Request& r = warp.requests[i];
      if (r.after_cta_end) continue;
      latest = std::max(latest, k->begin_cycle + r.issue_cycle);
      r.holds_cta_end = wb.response_cycle[i] != kNoResponse && wb.response_cycle[i] <= end;
      if (r.holds_cta_end) latest = std::max(latest, wb.response_cycle[i]);
    }
  }
  t.end_cycle = end - k->begin_cycle;
  t.end_gap = gap_of(end, latest);
  b.ended = true;
  if (sm < last_end_.size()) last_end_[sm] = LastEnd{k->serial, index, end};
}

void TraceCapture::far_faults(uint64_t outstanding, uint64_t raised, uint64_t migrated_pages,
                              const sc_core::sc_time& at) {
  if (inner_ != nullptr) inner_->far_faults(outstanding, raised, migrated_pages, at);
  far_faults_ = raised;
}

}  // namespace gpuvp::elastic
