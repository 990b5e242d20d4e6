#include "models/memory/hbm/hbm_controller.h"

#include <cmath>

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>

#include "models/tlm/gpu_extension.h"

namespace gpuvp::memory {

using sc_core::sc_time;
namespace {
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kClosed = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();
}  // namespace

struct HbmController::Request {
  tlm::tlm_generic_payload* gp = nullptr;
  uint64_t seq = 0;  // admission order: smaller is older
  int source = 0;
  bool write = false;
  bool classified = false;  // row hit/miss/conflict counted
  uint32_t bank = 0;        // flat: bank_group * banks_per_group + bank
  uint32_t bank_group = 0;
  uint32_t row = 0;
  uint32_t bursts_left = 0;
  uint64_t eligible = 0;  // decode cycle
  uint64_t arrival_ps = 0;
  uint64_t bytes = 0;
};

struct HbmController::Bank {
  uint32_t open_row = kClosed;
  uint32_t hits = 0;        // queued requests whose row is open_row (0 while closed)
  uint32_t write_hits = 0;  // of which writes
  // The oldest queued read and the oldest queued write whose row is open_row (kNoSlot: none),
  // kept up to date so that a scheduling pass need not walk the queue to find them.
  uint32_t oldest_read_hit = kNoSlot, oldest_write_hit = kNoSlot;
  std::vector<uint32_t> queue[2];  // this bank's reads [0] and writes [1] (slots), oldest first
  uint64_t act_ok = 0, pre_ok = 0, rd_ok = 0, wr_ok = 0;

  void close() {
    open_row = kClosed;
    hits = write_hits = 0;
    oldest_read_hit = oldest_write_hit = kNoSlot;
  }
  // The oldest queued read (write) that hits open_row, kNoSlot if none.
  uint32_t find_oldest_hit(const std::vector<Request>& slots, bool write) const {
    for (const uint32_t slot : queue[write]) {
      if (slots[slot].row == open_row) return slot;
    }
    return kNoSlot;
  }
  uint32_t read_hits() const { return hits - write_hits; }
};

struct HbmController::Channel {
  uint32_t index = 0;
  // The FR-FCFS queues: queue_depth read and write_queue_depth write slots, indexed per bank
  // and direction in age order (Bank::queue), so that a scheduling pass looks at a few requests
  // per bank instead of the whole queue.
  std::vector<Request> slots;
  std::vector<uint32_t> free_slots;
  uint32_t queued = 0;
  uint32_t queued_of[2] = {0, 0};  // reads, writes
  uint64_t next_seq = 0;
  std::vector<Bank> banks;
  // Per direction, bit b % 64 of word b / 64: banks[b].queue[direction] is not empty. A
  // scheduling pass visits only those banks, in the same (increasing) order as a walk over all.
  std::vector<uint64_t> queued_banks[2];
  bool draining = false;  // serving writes (write-drain mode), else reads
  std::vector<uint64_t> rrd_l_ok;  // per bank group
  uint64_t rrd_s_ok = 0;
  uint64_t faw[4] = {0, 0, 0, 0};  // the last four ACT cycles, ring
  uint32_t faw_next = 0, acts = 0;
  uint64_t next_cmd = 0;  // command bus: one command per cycle
  bool any_col = false;
  uint64_t last_col = 0;
  uint32_t last_col_bg = 0;
  bool last_col_write = false;
  uint64_t bus_free = 0;  // end of the last data window
  uint64_t wtr_ok = 0;    // earliest RD after the last write's data
  uint64_t refresh_due = 0;
};

struct HbmController::ChannelStats {
  stats::Counter *reads, *writes, *requests, *read_bytes, *write_bytes, *row_hits, *row_misses, *row_conflicts,
      *activates, *precharges, *refreshes, *bus_turnarounds, *write_batches, *watermark_drains,
      *full_queue_refusals;
  stats::Histogram* latency;
};

HbmController::HbmController(sc_core::sc_module_name name, const HbmParams& params, const AddressMap& map,
                             stats::Registry& stats, const std::string& stats_path, WakeDomain* wakes)
    : sc_core::sc_module(name),
      socket("socket"),
      params_(params),
      t_(params.timing()),
      map_(map),
      clock_("hbm", static_cast<std::uint64_t>(params.clock_hz)),
      controller_latency_ps_(static_cast<uint64_t>(std::llround(params.controller_latency_ps))),
      requests_(stats.group(stats_path).counter("requests", "request", "read and write requests served")),
      bytes_(stats.group(stats_path).counter("bytes", "B", "bytes read and written")),
      elapsed_ps_(stats.group(stats_path).counter("elapsed_ps", "ps", "time of the last completion")),
      latency_ps_(stats.group(stats_path).counter("latency_ps", "ps", "sum of request latencies (arrival to response)")) {
  socket.register_nb_transport_fw(this, &HbmController::nb_transport_fw);
  auto& g = stats.group(stats_path);
  g.ratio("bandwidth", "achieved bandwidth in B/s: bytes / elapsed time", bytes_, elapsed_ps_, 1e12);
  g.ratio("average_latency_ns", "mean request latency in ns", latency_ps_, requests_, 1e-3);

  if (params_.write_drain_high > params_.write_queue_depth) {
    throw std::invalid_argument("memory.hbm.write_drain_high (" + std::to_string(params_.write_drain_high) +
                                ") exceeds memory.hbm.write_queue_depth (" +
                                std::to_string(params_.write_queue_depth) + ")");
  }
  if (params_.write_drain_low >= params_.write_drain_high) {
    throw std::invalid_argument("memory.hbm.write_drain_low (" + std::to_string(params_.write_drain_low) +
                                ") must be below memory.hbm.write_drain_high (" +
                                std::to_string(params_.write_drain_high) + ")");
  }
  const uint32_t n = params_.total_channels();
  const uint32_t slots = params_.queue_depth + params_.write_queue_depth;
  for (uint32_t c = 0; c < n; ++c) {
    auto ch = std::make_unique<Channel>();
    ch->index = c;
    ch->slots.resize(slots);
    for (uint32_t k = slots; k-- > 0;) ch->free_slots.push_back(k);
    ch->banks.resize(params_.banks());
    for (Bank& b : ch->banks) {
      b.queue[0].reserve(params_.queue_depth);
      b.queue[1].reserve(params_.write_queue_depth);
    }
    for (auto& words : ch->queued_banks) words.assign((ch->banks.size() + 63) / 64, 0);
    ch->rrd_l_ok.assign(params_.bank_groups, 0);
    ch->refresh_due = t_.refi;
    channels_.push_back(std::move(ch));

    auto& cg = stats.group(stats_path + ".channel[" + std::to_string(c) + "]");
    auto s = std::make_unique<ChannelStats>();
    s->reads = &cg.counter("reads", "request", "read requests");
    s->writes = &cg.counter("writes", "request", "write requests");
    s->requests = &cg.counter("requests", "request", "read and write requests");
    s->read_bytes = &cg.counter("read_bytes", "B", "bytes read");
    s->write_bytes = &cg.counter("write_bytes", "B", "bytes written");
    s->row_hits = &cg.counter("row_hits", "request", "requests whose row was open");
    s->row_misses = &cg.counter("row_misses", "request", "requests that found their bank closed");
    s->row_conflicts = &cg.counter("row_conflicts", "request", "requests that found another row open");
    s->activates = &cg.counter("activates", "command", "ACT commands");
    s->precharges = &cg.counter("precharges", "command", "PRE commands (refresh precharges excluded)");
    s->refreshes = &cg.counter("refreshes", "command", "all-bank refreshes");
    s->bus_turnarounds = &cg.counter("bus_turnarounds", "command",
                                     "column commands whose direction (read/write) differs from the previous one's");
    s->write_batches = &cg.counter("write_batches", "episode",
                                   "switches to serving writes: write queue at the high watermark, or no read queued");
    s->watermark_drains = &cg.counter("watermark_drains", "episode",
                                      "write batches started because the write queue reached the high watermark");
    s->full_queue_refusals = &cg.counter("full_queue_refusals", "request",
                                         "requests whose BEGIN_REQ found their direction's queue full (END_REQ withheld)");
    s->latency = &cg.histogram("latency", "cycle", "decode edge to last data beat, DRAM cycles",
                               stats::Buckets::log2(16));
    cg.ratio("row_buffer_hit_rate", "row hits per request", *s->row_hits, *s->requests);
    channel_stats_.push_back(std::move(s));

  }
  // One wake queue for every pseudo-channel and the responses (keys 0 .. n-1: channels, n:
  // responses; same-time wakes run in that order).
  wakes_ = std::make_unique<WakeQueue>("wake", n + 1, [this, n](uint32_t key) {
    if (key < n) run_channel(key);
    else respond();
  }, wakes);
  if (params_.partition) {
    // The pseudo-channels wake in the partition's own time; responses still go out from wakes_.
    partition_domain_ = std::make_unique<WakeDomain>(WakeDomain::kOffSystemC);
    partition_wakes_ = std::make_unique<WakeQueue>("partition_wake", n, [this](uint32_t key) { run_channel(key); },
                                                   partition_domain_.get());
    backlog_.resize(2 * std::size_t{n});
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&drive_event_);
    sc_core::sc_spawn([this] { drive(); }, "drive", &opts);
  }
}

HbmController::~HbmController() = default;

void HbmController::end_of_elaboration() {
  const std::size_t n = socket.size();
  waiting_.assign(n, nullptr);
  responding_.assign(n, false);
  responses_.clear();
  for (std::size_t i = 0; i < n; ++i)
    responses_.emplace_back(std::size_t{params_.queue_depth + params_.write_queue_depth} * params_.total_channels());
}

tlm::tlm_sync_enum HbmController::nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                                  sc_time& delay) {
  const auto s = static_cast<std::size_t>(id);
  if (phase == tlm::BEGIN_REQ) {
    if (delay != sc_core::SC_ZERO_TIME) {
      // Keep the model exact without a PEQ: an annotated request is an error of the caller.
      SC_REPORT_ERROR("gpuvp/hbm", "BEGIN_REQ with a non-zero annotated delay is not supported");
    }
    if (params_.partition) {  // into the front end, for the partition's next exchange
      inbox_.push_back(Stamped{current_time().value(), id, &gp});
      if (!attached_) arm_drive();
      phase = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    if (admit(id, gp)) {
      phase = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    waiting_[s] = &gp;  // END_REQ follows when the channel has room
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::END_RESP) {
    responding_[s] = false;
    wakes_->at(respond_key(), current_time().value());
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR("gpuvp/hbm", "unexpected phase on the forward path");
  return tlm::TLM_COMPLETED;
}

bool HbmController::admit(int id, tlm::tlm_generic_payload& gp) {
  const DramCoord coord = map_.decode(gp.get_address());
  Channel& ch = *channels_[coord.channel];
  const bool write = gp.is_write();
  if (ch.queued_of[write] >= (write ? params_.write_queue_depth : params_.queue_depth)) {
    ++*channel_stats_[coord.channel]->full_queue_refusals;
    return false;
  }
  Request r;
  r.gp = &gp;
  r.source = id;
  r.write = write;
  r.bank_group = coord.bank_group;
  r.bank = coord.bank_group * params_.banks_per_group + coord.bank;
  r.row = coord.row;
  const GpuExtension* ext = gp.get_extension<GpuExtension>();
  const uint32_t burst = params_.burst_bytes();
  if (ext != nullptr && ext->sector_mask != 0) {
    r.bursts_left = static_cast<uint32_t>(__builtin_popcount(ext->sector_mask));
  } else {
    r.bursts_left = std::max<uint32_t>(1, (gp.get_data_length() + burst - 1) / burst);
  }
  r.bytes = uint64_t{r.bursts_left} * burst;
  const uint64_t now = now_ps();
  r.arrival_ps = now;
  r.eligible = clock_.cycle_at(sc_time::from_value(now)) + 1;
  Bank& b = ch.banks[r.bank];
  r.seq = ch.next_seq++;
  const uint32_t slot = ch.free_slots.back();
  ch.free_slots.pop_back();
  if (b.open_row == r.row) {
    ++b.hits;
    if (r.write) ++b.write_hits;
    uint32_t& oldest = r.write ? b.oldest_write_hit : b.oldest_read_hit;
    if (oldest == kNoSlot) oldest = slot;  // the youngest request: the oldest hit only if alone
  }
  ch.slots[slot] = r;
  b.queue[write].push_back(slot);
  ch.queued_banks[write][r.bank / 64] |= uint64_t{1} << (r.bank % 64);
  ++ch.queued;
  ++ch.queued_of[write];
  wake(ch, r.eligible);
  return true;
}

void HbmController::wake(Channel& ch, uint64_t cycle) {
  channel_wakes().at(ch.index, std::max<uint64_t>(clock_.ticks_of_cycle(cycle), now_ps()));
}

void HbmController::run_channel(uint32_t c) {
  Channel& ch = *channels_[c];
  if (ch.queued == 0) return;  // idle: sleep until a request arrives
  const sc_time now_t = sc_time::from_value(now_ps());
  const uint64_t now = clock_.next_cycle(now_t);
  if (clock_.ticks_of_cycle(now) != now_t.value()) {
    wake(ch, now);
    return;
  }
  refresh(ch, now);
  choose_direction(ch);
  uint64_t next = kNever;
  if (try_issue(ch, now, next, true)) {
    // Sleep until the first cycle some command can go, not just to the next cycle: a request
    // arriving meanwhile wakes the channel itself at its decode edge.
    next = kNever;
    choose_direction(ch);
    try_issue(ch, now + 1, next, false);
  }
  next = std::min(next, std::max(ch.refresh_due, now + 1));
  if (ch.queued != 0) wake(ch, next);
}

// Write draining (see the header): reads until the write queue reaches the high watermark or no
// read is queued; then writes until at most the low watermark remain and a read is queued, or
// none remain.
void HbmController::choose_direction(Channel& ch) {
  const uint32_t reads = ch.queued_of[0], writes = ch.queued_of[1];
  if (!ch.draining) {
    if (writes == 0 || (reads != 0 && writes < params_.write_drain_high)) return;
    ch.draining = true;
    ChannelStats& st = *channel_stats_[ch.index];
    ++*st.write_batches;
    if (writes >= params_.write_drain_high) ++*st.watermark_drains;
  } else if (writes == 0 || (reads != 0 && writes <= params_.write_drain_low)) {
    ch.draining = false;
  }
}

// Every refresh due at or before `now` (see the header: lazily, but with eager timing).
void HbmController::refresh(Channel& ch, uint64_t now) {
  while (ch.refresh_due <= now) {
    uint64_t start = std::max(ch.refresh_due, ch.next_cmd);
    bool open = false;
    for (const Bank& b : ch.banks) {
      if (b.open_row != kClosed) {
        open = true;
        start = std::max(start, b.pre_ok);
      }
    }
    const uint64_t refresh_at = open ? start + t_.rp : start;
    const uint64_t blocked_until = refresh_at + t_.rfc;
    for (Bank& b : ch.banks) {
      b.close();
      b.act_ok = std::max(b.act_ok, blocked_until);
    }
    ch.next_cmd = std::max(ch.next_cmd, blocked_until);
    ++*channel_stats_[ch.index]->refreshes;
    ch.refresh_due += t_.refi;
  }
}

bool HbmController::try_issue(Channel& ch, uint64_t now, uint64_t& next, bool issue) {
  ChannelStats& st = *channel_stats_[ch.index];
  auto classify = [](Request& r, stats::Counter* kind) {
    if (r.classified) return;
    r.classified = true;
    ++*kind;
  };
  // Per-call floors of the constraints that do not depend on the request (the channel changes
  // only when a command issues, and then this returns). Same maxima as taking each constraint
  // in turn.
  const uint64_t col_l = ch.any_col ? ch.last_col + t_.ccd_l : 0;
  const uint64_t col_s = ch.any_col ? ch.last_col + t_.ccd_s : 0;
  const uint64_t wr_floor = std::max(ch.next_cmd, ch.bus_free > t_.wl ? ch.bus_free - t_.wl : 0);
  const uint64_t rd_floor = std::max({ch.next_cmd, ch.bus_free > t_.cl ? ch.bus_free - t_.cl : 0, ch.wtr_ok});
  const uint64_t act_floor =
      std::max({ch.next_cmd, ch.rrd_s_ok, ch.acts >= 4 ? ch.faw[ch.faw_next] + t_.faw : uint64_t{0}});
  // FR-FCFS among the requests of the direction being served (choose_direction): the oldest
  // whose row is open and whose column command may go now wins (first ready); failing that,
  // the oldest whose ACT (bank closed) or PRE (other row open, and no queued request of this
  // direction hits that row) may go.
  // Per bank and direction, requests are in age order and their decode cycles (`eligible`)
  // never decrease with age; every other term of a command's earliest cycle is the same for all
  // of them. So the bank's oldest request of the direction that hits the open row (kept in
  // Bank, so no queue walk here) is its only row-hit candidate that can be ready first, and when
  // none hits, its oldest request of the direction is the only ACT/PRE candidate: the same
  // choice, and the same earliest cycle `next`, as a scan of that direction's queue in age order.
  const bool write = ch.draining;
  const uint64_t col_floor = write ? wr_floor : rd_floor;
  uint32_t hit_slot = kNoSlot, row_slot = kNoSlot;
  uint64_t hit_seq = kNever, row_seq = kNever;
  // A row-hit candidate whose column command may go from `floor` on (its bank's and kind's
  // terms); false when a dry pass may stop (a command can go at `now`).
  auto hit_candidate = [&](uint32_t slot, uint64_t floor) {
    const Request& r = ch.slots[slot];
    const uint64_t t = std::max({r.eligible, floor, ch.last_col_bg == r.bank_group ? col_l : col_s});
    if (issue && t <= now) {
      if (r.seq < hit_seq) {
        hit_seq = r.seq;
        hit_slot = slot;
      }
      return true;
    }
    next = std::min(next, std::max(t, now));
    return issue || next != now;
  };
  const std::vector<uint64_t>& queued_banks = ch.queued_banks[write];
  for (uint32_t word = 0; word < queued_banks.size(); ++word) {
    for (uint64_t bits = queued_banks[word]; bits != 0; bits &= bits - 1) {
      Bank& b = ch.banks[word * 64 + static_cast<uint32_t>(__builtin_ctzll(bits))];
      if ((write ? b.write_hits : b.read_hits()) != 0) {
        const uint32_t slot = write ? b.oldest_write_hit : b.oldest_read_hit;
        if (!hit_candidate(slot, std::max(col_floor, write ? b.wr_ok : b.rd_ok))) return false;
        continue;
      }
      const uint32_t slot = b.queue[write].front();
      const Request& r = ch.slots[slot];
      const uint64_t t = b.open_row == kClosed ? std::max({r.eligible, act_floor, b.act_ok, ch.rrd_l_ok[r.bank_group]})
                                               : std::max({r.eligible, ch.next_cmd, b.pre_ok});
      if (issue && t <= now) {
        if (r.seq < row_seq) {
          row_seq = r.seq;
          row_slot = slot;
        }
      } else {
        next = std::min(next, std::max(t, now));
        if (!issue && next == now) return false;
      }
    }
  }
  if (hit_slot != kNoSlot) {
    Request& r = ch.slots[hit_slot];
    Bank& b = ch.banks[r.bank];
    const uint64_t lat = r.write ? t_.wl : t_.cl;
    classify(r, st.row_hits);
    if (ch.any_col && ch.last_col_write != r.write) ++*st.bus_turnarounds;
    ch.last_col_write = r.write;
    ch.any_col = true;
    ch.last_col = now;
    ch.last_col_bg = r.bank_group;
    ch.bus_free = now + lat + t_.burst;
    if (r.write) {
      b.pre_ok = std::max(b.pre_ok, now + t_.wl + t_.burst + t_.wr);
      ch.wtr_ok = now + t_.wl + t_.burst + t_.wtr;
    } else {
      b.pre_ok = std::max(b.pre_ok, now + t_.rtp);
    }
    ch.next_cmd = now + 1;
    if (--r.bursts_left == 0) complete(ch, hit_slot, now + lat + t_.burst);
    return true;
  }
  if (row_slot == kNoSlot) return false;
  Request& r = ch.slots[row_slot];
  Bank& b = ch.banks[r.bank];
  if (b.open_row == kClosed) {
    classify(r, st.row_misses);
    b.open_row = r.row;
    b.hits = b.write_hits = 0;
    for (const bool kind : {false, true}) {
      for (const uint32_t slot : b.queue[kind]) {
        if (ch.slots[slot].row != r.row) continue;
        ++b.hits;
        if (kind) ++b.write_hits;
        uint32_t& oldest = kind ? b.oldest_write_hit : b.oldest_read_hit;
        if (oldest == kNoSlot) oldest = slot;
      }
    }
    b.rd_ok = b.wr_ok = now + t_.rcd;
    b.pre_ok = std::max(b.pre_ok, now + t_.ras);
    ch.rrd_s_ok = now + t_.rrd_s;
    ch.rrd_l_ok[r.bank_group] = now + t_.rrd_l;
    ch.faw[ch.faw_next] = now;
    ch.faw_next = (ch.faw_next + 1) % 4;
    ++ch.acts;
    ++*st.activates;
  } else {
    classify(r, st.row_conflicts);
    b.close();
    b.act_ok = std::max(b.act_ok, now + t_.rp);
    ++*st.precharges;
  }
  ch.next_cmd = now + 1;
  return true;
}

void HbmController::complete(Channel& ch, uint32_t slot, uint64_t done_cycle) {
  const Request r = ch.slots[slot];
  Bank& bank = ch.banks[r.bank];
  std::vector<uint32_t>& queue = bank.queue[r.write];
  queue.erase(std::find(queue.begin(), queue.end(), slot));
  if (queue.empty()) ch.queued_banks[r.write][r.bank / 64] &= ~(uint64_t{1} << (r.bank % 64));
  --bank.hits;  // its last column command went: it hit the open row, the oldest of its kind
  if (r.write) --bank.write_hits;
  const bool more_of_kind = r.write ? bank.write_hits != 0 : bank.hits != bank.write_hits;
  (r.write ? bank.oldest_write_hit : bank.oldest_read_hit) = more_of_kind ? bank.find_oldest_hit(ch.slots, r.write) : kNoSlot;
  ch.free_slots.push_back(slot);
  --ch.queued;
  --ch.queued_of[r.write];
  ChannelStats& st = *channel_stats_[ch.index];
  // The data left the bus at bus_done_ps; the response reaches the requester after the
  // controller's fixed pipeline latency.
  const uint64_t bus_done_ps = clock_.ticks_of_cycle(done_cycle);
  const uint64_t done_ps = bus_done_ps + controller_latency_ps_;
  ++*st.requests;
  ++requests_;
  if (r.write) {
    ++*st.writes;
    *st.write_bytes += r.bytes;
  } else {
    ++*st.reads;
    *st.read_bytes += r.bytes;
  }
  bytes_ += r.bytes;
  st.latency->sample(done_cycle - r.eligible);
  latency_ps_ += done_ps - r.arrival_ps;
  if (bus_done_ps > elapsed_ps_.value()) elapsed_ps_ += bus_done_ps - elapsed_ps_.value();
  r.gp->set_response_status(tlm::TLM_OK_RESPONSE);
  respond_at(r.source, r.gp, done_ps);

  if (params_.partition) {  // an entry freed: the front end's oldest request waiting for it
    std::deque<Stamped>& backlog = backlog_[2 * std::size_t{ch.index} + (r.write ? 1 : 0)];
    if (!backlog.empty()) {
      const Stamped waiting = backlog.front();
      backlog.pop_front();
      admit(waiting.source, *waiting.gp);
    }
    return;
  }
  // An entry freed: admit a request of its direction that waits for this channel (lowest socket
  // first).
  for (std::size_t w = 0; w < waiting_.size(); ++w) {
    tlm::tlm_generic_payload* gp = waiting_[w];
    if (gp == nullptr || gp->is_write() != r.write || map_.channel(gp->get_address()) != ch.index) continue;
    waiting_[w] = nullptr;
    admit(static_cast<int>(w), *gp);
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_time delay = sc_core::SC_ZERO_TIME;
    socket[static_cast<int>(w)]->nb_transport_bw(*gp, phase, delay);
    break;
  }
}

void HbmController::respond() {
  const uint64_t now = current_time().value();
  uint64_t next = kNever;
  for (std::size_t s = 0; s < responses_.size(); ++s) {
    auto& heap = responses_[s];
    while (!responding_[s] && !heap.empty() && heap.top().time <= now) {
      tlm::tlm_generic_payload* gp = heap.top().value;
      heap.pop();
      tlm::tlm_phase phase = tlm::BEGIN_RESP;
      sc_time delay = sc_core::SC_ZERO_TIME;
      const tlm::tlm_sync_enum st = socket[static_cast<int>(s)]->nb_transport_bw(*gp, phase, delay);
      if (!(st == tlm::TLM_COMPLETED || (st == tlm::TLM_UPDATED && phase == tlm::END_RESP)))
        responding_[s] = true;
    }
    if (!responding_[s] && !heap.empty()) next = std::min(next, heap.top().time);
  }
  if (next != kNever) wakes_->at(respond_key(), next);
}

void HbmController::respond_at(int source, tlm::tlm_generic_payload* gp, uint64_t time_ps) {
  if (params_.partition) {
    outbox_.push_back(Stamped{time_ps, source, gp});
    return;
  }
  queue_response(source, gp, time_ps);
}

void HbmController::queue_response(int source, tlm::tlm_generic_payload* gp, uint64_t time_ps) {
  responses_[static_cast<std::size_t>(source)].push(time_ps, gp);
  wakes_->at(respond_key(), time_ps);
}

// --- Partition (memory.hbm.partition) ---

void HbmController::exchange() {
  // Requests: the partition's unread ones first (their stamps are earlier), then the new ones.
  if (arrivals_next_ != 0) {
    arrivals_.erase(arrivals_.begin(), arrivals_.begin() + static_cast<std::ptrdiff_t>(arrivals_next_));
    arrivals_next_ = 0;
  }
  arrivals_.insert(arrivals_.end(), inbox_.begin(), inbox_.end());
  inbox_.clear();
  // Responses, in the order the partition made them (the heap keeps that order among equal times).
  const uint64_t now = current_time().value();
  for (const Stamped& done : outbox_) {
    if (done.time_ps <= now) {
      throw std::logic_error("memory.hbm.partition: a response due at " + std::to_string(done.time_ps) +
                             " ps reached SystemC at " + std::to_string(now) +
                             " ps: the controller's lookahead is shorter than what its driver needs");
    }
    queue_response(done.source, done.gp, done.time_ps);
  }
  outbox_.clear();
}

void HbmController::advance(uint64_t until_ps) {
  // Stamped requests and the pseudo-channels' wakes, in time order; at one time requests first.
  for (;;) {
    const uint64_t arrival = arrivals_next_ < arrivals_.size() ? arrivals_[arrivals_next_].time_ps : kNever;
    const uint64_t wake = partition_domain_->next_time();
    const uint64_t t = std::min(arrival, wake);
    if (t >= until_ps) break;
    partition_now_ps_ = t;
    if (arrival <= wake) {
      const Stamped a = arrivals_[arrivals_next_++];
      if (!admit(a.source, *a.gp)) {
        const DramCoord coord = map_.decode(a.gp->get_address());
        backlog_[2 * std::size_t{coord.channel} + (a.gp->is_write() ? 1 : 0)].push_back(a);
      }
    } else {
      partition_domain_->run_next();
    }
  }
}

void HbmController::attach() { attached_ = true; }

void HbmController::detach() {
  attached_ = false;
  exchange();
  arm_drive();
}

void HbmController::catch_up() {
  if (!params_.partition) return;
  exchange();
  advance(current_time().value());
  exchange();
  if (!attached_) arm_drive();
}

void HbmController::drive() {
  drive_armed_ = kNever;
  if (attached_) return;  // SmStepper drives; detach() arms again
  catch_up();
}

void HbmController::arm_drive() {
  // One tick after the earliest pending stamp: every request stamped then has arrived.
  uint64_t pending = partition_domain_->next_time();
  if (arrivals_next_ < arrivals_.size()) pending = std::min(pending, arrivals_[arrivals_next_].time_ps);
  if (!inbox_.empty()) pending = std::min(pending, inbox_.front().time_ps);
  if (pending == kNever) return;
  const uint64_t now = current_time().value();
  const uint64_t at = std::max(pending + 1, now);
  if (at >= drive_armed_) return;
  drive_armed_ = at;
  drive_event_.notify(sc_time::from_value(at - now));
}

}  // namespace gpuvp::memory
