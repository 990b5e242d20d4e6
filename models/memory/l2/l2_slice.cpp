#include "models/memory/l2/l2_slice.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

#include "models/tlm/gpu_extension.h"

namespace gpuvp::memory {

using sc_core::sc_time;

namespace {
int popcount(uint8_t m) { return __builtin_popcount(m); }
bool is_atomic(AccessKind k) { return k == AccessKind::Atomic || k == AccessKind::Reduction; }
}  // namespace

L2Slice::L2Slice(sc_core::sc_module_name name, const L2Params& params, const AddressMap& map, uint32_t index,
                 stats::Registry& stats, const std::string& stats_path, L2SliceGroup* group)
    : sc_core::sc_module(name),
      in("in"),
      dram("dram"),
      params_(params),
      map_(map),
      index_(index),
      clock_("l2", static_cast<std::uint64_t>(params.clock_hz)),
      sets_(params.sets()),
      ways_per_set_(params.associativity),
      line_bytes_(params.line_bytes),
      queue_(params.queue_depth),
      responses_(std::size_t{params.queue_depth} + std::size_t{params.mshrs} * params.mshr_targets),
      dram_queue_(params.dram_queue_depth),
      pool_(params.line_bytes),
      accesses_(stats.group(stats_path).counter("accesses", "request", "requests handled")),
      loads_(stats.group(stats_path).counter("loads", "request", "load requests")),
      stores_(stats.group(stats_path).counter("stores", "request", "store requests")),
      atomics_(stats.group(stats_path).counter("atomics", "request", "atomics and reductions executed here")),
      sector_accesses_(stats.group(stats_path).counter("sector_accesses", "sector", "sectors requested")),
      sector_hits_(stats.group(stats_path).counter("sector_hits", "sector", "requested sectors found valid")),
      sector_misses_(stats.group(stats_path).counter("sector_misses", "sector", "requested sectors not valid")),
      mshr_allocations_(stats.group(stats_path).counter("mshr_allocations", "mshr", "MSHRs allocated (line misses)")),
      mshr_merges_(stats.group(stats_path).counter("mshr_merges", "request", "misses merged into a pending MSHR")),
      stalls_(stats.group(stats_path).counter("stalls", "event", "times the pipeline stalled on a full resource")),
      writebacks_(stats.group(stats_path).counter("writebacks", "line", "dirty lines written back on eviction")),
      writeback_sectors_(stats.group(stats_path).counter("writeback_sectors", "sector", "dirty sectors written back")),
      dram_reads_(stats.group(stats_path).counter("dram_reads", "request", "fill requests sent to DRAM")),
      mshr_occupancy_(stats.group(stats_path).histogram("mshr_occupancy", "mshr",
                                                        "busy MSHRs, sampled at each allocation",
                                                        stats::Buckets::log2(13))) {
  if (sets_ == 0 || params_.slice_bytes != sets_ * ways_per_set_ * line_bytes_)
    throw std::invalid_argument("L2Slice: slice size must be a whole number of sets of associativity lines");
  if (params_.sectors_per_line() > 8) throw std::invalid_argument("L2Slice: at most 8 sectors per line");
  stats.group(stats_path).ratio("sector_hit_rate", "requested sectors found valid", sector_hits_, sector_accesses_);
  ways_.resize(sets_ * ways_per_set_);
  mshrs_.resize(params_.mshrs);
  targets_.resize(std::size_t{params_.mshrs} * params_.mshr_targets);
  for (int32_t m = static_cast<int32_t>(params_.mshrs) - 1; m >= 0; --m) free_mshrs_.push_back(m);

  in.register_nb_transport_fw(this, &L2Slice::nb_transport_fw);
  dram.register_nb_transport_bw(this, &L2Slice::nb_transport_bw);
  if (group == nullptr) {
    own_group_ = std::make_unique<L2SliceGroup>(index_ + 1);
    group = own_group_.get();
  }
  if (index_ >= group->slices_.size() || group->slices_[index_] != nullptr)
    throw std::invalid_argument("L2Slice: slice index outside its group, or taken by another slice");
  group->slices_[index_] = this;
  group_ = group;
}

L2SliceGroup::L2SliceGroup(uint32_t slices, WakeDomain* wakes)
    : slices_(slices, nullptr),
      queue_("l2_wake", slices * kWakeKinds,
             [this](uint32_t key) {
               if (L2Slice* s = slices_[key / kWakeKinds]) s->on_wake(key % kWakeKinds);
             },
             wakes) {}

L2Slice::~L2Slice() {
  if (group_->slices_[index_] == this) group_->slices_[index_] = nullptr;
}

void L2Slice::on_wake(uint32_t kind) {
  if (kind == kWakeProcess) process();
  else if (kind == kWakeRespond) send_responses();
  else send_dram();
}

void L2Slice::wake_at(uint32_t kind, uint64_t time_ps) {
  group_->queue_.at(index_ * kWakeKinds + kind, std::max<uint64_t>(time_ps, current_time().value()));
}

tlm::tlm_sync_enum L2Slice::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time&) {
  if (phase == tlm::BEGIN_REQ) {
    if (queue_.full()) {
      waiting_ = &gp;
      return tlm::TLM_ACCEPTED;
    }
    queue_.push(&gp);
    schedule_process();
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
  if (phase == tlm::END_RESP) {
    responding_ = false;
    wake_at(kWakeRespond, 0);
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR("gpuvp/l2", "unexpected phase on the forward path");
  return tlm::TLM_COMPLETED;
}

void L2Slice::schedule_process() {
  if (stalled_ || queue_.empty()) return;
  const sc_time now = current_time();
  const uint64_t cycle = std::max(clock_.next_cycle(now), pipe_free_);
  wake_at(kWakeProcess, clock_.ticks_of_cycle(cycle));
}

void L2Slice::resume() {
  if (!stalled_) return;
  stalled_ = false;
  schedule_process();
}

uint8_t L2Slice::sector_mask(const tlm::tlm_generic_payload& gp, const GpuExtension* ext) const {
  if (ext != nullptr && ext->sector_mask != 0 && line_bytes_ == kLineBytes && params_.sector_bytes == kSectorBytes)
    return ext->sector_mask;
  const uint64_t offset = gp.get_address() % line_bytes_;
  const uint64_t end = std::min<uint64_t>(line_bytes_, offset + std::max(1u, gp.get_data_length()));
  uint8_t m = 0;
  for (uint64_t s = offset / params_.sector_bytes; s * params_.sector_bytes < end; ++s) m |= uint8_t(1u << s);
  return m;
}

void L2Slice::process() {
  if (stalled_ || queue_.empty()) return;
  const sc_time now_t = current_time();
  const uint64_t now = clock_.next_cycle(now_t);
  if (clock_.ticks_of_cycle(now) != now_t.value() || now < pipe_free_) {
    schedule_process();
    return;
  }
  uint64_t busy = 1;
  if (handle(*queue_.front(), now, busy) == Outcome::Stall) {
    stalled_ = true;
    ++stalls_;
    return;
  }
  queue_.pop();
  pipe_free_ = now + busy;
  if (waiting_ != nullptr) {
    tlm::tlm_generic_payload* gp = waiting_;
    waiting_ = nullptr;
    queue_.push(gp);
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_time delay = sc_core::SC_ZERO_TIME;
    in->nb_transport_bw(*gp, phase, delay);
  }
  schedule_process();
}

int32_t L2Slice::victim(uint64_t set) const {
  const Way* base = &ways_[set * ways_per_set_];
  int32_t best = -1;
  for (uint32_t w = 0; w < ways_per_set_; ++w) {
    if (!base[w].allocated) return static_cast<int32_t>(w);
    if (base[w].mshr >= 0) continue;
    if (best < 0 || base[w].lru < base[best].lru) best = static_cast<int32_t>(w);
  }
  return best;
}

void L2Slice::evict(uint64_t set, Way& w, uint64_t send_ps) {
  if (w.allocated && w.dirty != 0) {
    const uint64_t q = w.tag * sets_ + set;
    dram_request(tlm::TLM_WRITE_COMMAND, map_.line_address(index_, q), w.dirty, send_ps);
    ++writebacks_;
    writeback_sectors_ += static_cast<uint64_t>(popcount(w.dirty));
  }
  w = Way{};
}

void L2Slice::dram_request(tlm::tlm_command cmd, uint64_t line_addr, uint8_t mask, uint64_t send_ps) {
  tlm::tlm_generic_payload* gp = pool_.allocate(cmd, line_addr, static_cast<unsigned>(line_bytes_));
  GpuExtension* ext = gpu_extension(*gp);
  ext->sector_mask = mask;
  ext->kind = cmd == tlm::TLM_WRITE_COMMAND ? AccessKind::Store : AccessKind::Load;
  const bool idle = dram_queue_.empty();
  dram_queue_.push(DramItem{send_ps, gp});
  if (idle) wake_at(kWakeDram, send_ps);
}

L2Slice::Outcome L2Slice::handle(tlm::tlm_generic_payload& gp, uint64_t now, uint64_t& busy) {
  const GpuExtension* ext = gp.get_extension<GpuExtension>();
  const bool atomic = ext != nullptr && is_atomic(ext->kind);
  const bool store = !atomic && gp.is_write();
  const uint8_t mask = sector_mask(gp, ext);
  const uint64_t q = map_.slice_line(gp.get_address());
  const uint64_t set = q % sets_, tag = q / sets_;
  const uint64_t send_ps = clock_.ticks_of_cycle(now + params_.miss_latency);
  Way* base = &ways_[set * ways_per_set_];
  Way* way = nullptr;
  for (uint32_t w = 0; w < ways_per_set_; ++w) {
    if (base[w].allocated && base[w].tag == tag) {
      way = &base[w];
      break;
    }
  }
  const uint8_t missing = way != nullptr ? uint8_t(mask & ~way->valid) : mask;

  // Check every resource first, so that a stalled request changes nothing.
  const bool hit = missing == 0;
  const bool pending = way != nullptr && way->mshr >= 0;
  int32_t vict = -1;
  if (way == nullptr) {
    vict = victim(set);
    if (vict < 0) return Outcome::Stall;
    const std::size_t writeback = base[vict].allocated && base[vict].dirty != 0 ? 1 : 0;
    const std::size_t fills = store ? 0 : 1;
    if (dram_queue_.size() + writeback + fills > dram_queue_.capacity()) return Outcome::Stall;
    if (!store && free_mshrs_.empty()) return Outcome::Stall;
  } else if (!store && !hit) {
    if (pending) {
      const Mshr& m = mshrs_[static_cast<std::size_t>(way->mshr)];
      if (m.targets == params_.mshr_targets) return Outcome::Stall;
      if ((missing & ~m.requested) != 0 && dram_queue_.full()) return Outcome::Stall;
    } else if (free_mshrs_.empty() || dram_queue_.full()) {
      return Outcome::Stall;
    }
  }

  // The data array moves data_width bytes a cycle: a request of n sectors holds the pipeline
  // that long (hits read, stores write; a miss is charged here for the array write of its fill).
  busy = std::max<uint64_t>(busy, (static_cast<uint64_t>(popcount(mask)) * params_.sector_bytes + params_.data_width - 1) /
                                      params_.data_width);
  ++accesses_;
  if (atomic) ++atomics_;
  else if (store) ++stores_;
  else ++loads_;
  const auto requested = static_cast<uint64_t>(popcount(mask));
  const auto missed = static_cast<uint64_t>(popcount(missing));
  sector_accesses_ += requested;
  sector_hits_ += requested - missed;
  sector_misses_ += missed;

  if (way == nullptr) {
    way = &base[vict];
    evict(set, *way, send_ps);
    way->allocated = true;
    way->tag = tag;
  }
  way->lru = ++lru_clock_;

  if (store) {
    way->valid |= mask;
    way->dirty |= mask;
    respond_at(gp, clock_.ticks_of_cycle(now + params_.hit_latency));
    return Outcome::Done;
  }
  if (hit) {
    if (atomic) {
      way->dirty |= mask;
      busy = std::max<uint64_t>(busy, params_.atomic_cycles);
      respond_at(gp, clock_.ticks_of_cycle(now + params_.hit_latency + params_.atomic_cycles));
    } else {
      respond_at(gp, clock_.ticks_of_cycle(now + params_.hit_latency));
    }
    return Outcome::Done;
  }
  // A miss: join the line's MSHR or allocate one; fetch the sectors nobody fetches yet.
  if (way->mshr < 0) {
    way->mshr = free_mshrs_.back();
    free_mshrs_.pop_back();
    Mshr& m = mshrs_[static_cast<std::size_t>(way->mshr)];
    m = Mshr{};
    m.set = set;
    m.way = static_cast<uint32_t>(way - base);
    ++mshr_allocations_;
    mshr_occupancy_.sample(params_.mshrs - free_mshrs_.size());
  } else {
    ++mshr_merges_;
  }
  Mshr& m = mshrs_[static_cast<std::size_t>(way->mshr)];
  const uint8_t extra = missing & ~m.requested;
  if (extra != 0) {
    m.requested |= extra;
    ++m.outstanding;
    ++dram_reads_;
    dram_request(tlm::TLM_READ_COMMAND, map_.line_address(index_, q), extra, send_ps);
  }
  targets_[static_cast<std::size_t>(way->mshr) * params_.mshr_targets + m.targets++] = Target{&gp, mask, atomic};
  return Outcome::Done;
}

void L2Slice::respond_at(tlm::tlm_generic_payload& gp, uint64_t time_ps) {
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  responses_.push(time_ps, &gp);
  wake_at(kWakeRespond, time_ps);
}

void L2Slice::send_responses() {
  const uint64_t now = current_time().value();
  while (!responding_ && !responses_.empty() && responses_.top().time <= now) {
    tlm::tlm_generic_payload* gp = responses_.top().value;
    responses_.pop();
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum s = in->nb_transport_bw(*gp, phase, delay);
    if (!(s == tlm::TLM_COMPLETED || (s == tlm::TLM_UPDATED && phase == tlm::END_RESP))) responding_ = true;
  }
  if (!responding_ && !responses_.empty())
    wake_at(kWakeRespond, responses_.top().time);
}

void L2Slice::send_dram() {
  const uint64_t now = current_time().value();
  while (dram_in_flight_ == nullptr && !dram_queue_.empty() && dram_queue_.front().time_ps <= now) {
    tlm::tlm_generic_payload* gp = dram_queue_.front().gp;
    dram_queue_.pop();
    dram_in_flight_ = gp;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum s = dram->nb_transport_fw(*gp, phase, delay);
    if (s == tlm::TLM_UPDATED && phase == tlm::END_REQ) dram_in_flight_ = nullptr;
    else if (s == tlm::TLM_COMPLETED) {  // answered at once: nothing more will come
      dram_in_flight_ = nullptr;
      if (gp->is_read()) fill(*gp);
      gp->release();
    }
    resume();
  }
  if (dram_in_flight_ == nullptr && !dram_queue_.empty())
    wake_at(kWakeDram, dram_queue_.front().time_ps);
}

tlm::tlm_sync_enum L2Slice::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time&) {
  if (phase == tlm::END_REQ || (phase == tlm::BEGIN_RESP && dram_in_flight_ == &gp)) {
    dram_in_flight_ = nullptr;
    wake_at(kWakeDram, 0);
  }
  if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
  if (phase == tlm::BEGIN_RESP) {
    if (gp.is_read()) fill(gp);
    gp.release();
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR("gpuvp/l2", "unexpected phase on the backward path");
  return tlm::TLM_COMPLETED;
}

// A DRAM read returned: its sectors become valid; answer every target they complete.
void L2Slice::fill(tlm::tlm_generic_payload& gp) {
  const uint64_t q = map_.slice_line(gp.get_address());
  const uint64_t set = q % sets_, tag = q / sets_;
  Way* base = &ways_[set * ways_per_set_];
  Way* way = nullptr;
  for (uint32_t w = 0; w < ways_per_set_; ++w)
    if (base[w].allocated && base[w].tag == tag && base[w].mshr >= 0) way = &base[w];
  if (way == nullptr) SC_REPORT_ERROR("gpuvp/l2", "fill for a line without a pending MSHR");
  const auto mi = static_cast<std::size_t>(way->mshr);
  Mshr& m = mshrs_[mi];
  way->valid |= gpu_extension(gp)->sector_mask;
  --m.outstanding;
  const uint64_t edge = clock_.next_cycle(current_time());
  Target* t = &targets_[mi * params_.mshr_targets];
  uint32_t kept = 0;
  for (uint32_t k = 0; k < m.targets; ++k) {
    if ((t[k].mask & ~way->valid) != 0) {
      t[kept++] = t[k];  // still waiting for another fill
      continue;
    }
    if (t[k].atomic) way->dirty |= t[k].mask;
    respond_at(*t[k].gp,
               clock_.ticks_of_cycle(edge + params_.fill_latency + (t[k].atomic ? params_.atomic_cycles : 0)));
  }
  m.targets = kept;
  if (m.outstanding == 0) {
    way->mshr = -1;
    free_mshrs_.push_back(static_cast<int32_t>(mi));
  }
  resume();
}

}  // namespace gpuvp::memory
