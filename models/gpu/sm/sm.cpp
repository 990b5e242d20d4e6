#include "models/gpu/sm/sm.h"

#include "models/gpu/sm/l1_tags.h"
#include "models/gpu/sm/sm_stepper.h"

#include "models/gpu/device_regions.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace gpuvp::gpu {

using ptx::AccessOp;
using ptx::InstructionInfo;
using ptx::UnitClass;

namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kNone = 0xffffffffu;
// Lines one warp instruction may touch: 32 lanes x one line for aligned global accesses; 32
// lanes x 4 words of a 16-byte local access with lane-dependent offsets (each word of the
// interleaved local layout is its own line).
constexpr uint32_t kMaxLines = 128;

// Bit count without a libgcc call (the build targets generic x86-64, where __builtin_popcount
// becomes __popcountdi2).
inline uint32_t popcount32(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

enum Stall { kStallScoreboard, kStallMemory, kStallBarrier, kStallFuBusy, kStallIdle, kStallFetch, kStallCount };

// The barriers a warp passed between two of its global/local access instructions (capture only).
struct BarrierStamp {
  uint32_t wait = 0;
  uint64_t arrived = 0, release = 0;
  uint64_t seq = 0;  // Impl::barrier_releases at the last one's release
};

struct WarpSlot {
  bool used = false;
  uint32_t cta = 0;       // index into Impl::ctas
  uint32_t warp = 0;      // warp index within the CTA
  uint64_t age = 0;       // launch order (GTO)
  uint64_t start_cycle = 0;  // its CTA's (CtaRecord::start_cycle), read first by every check()
  bool exited = false;
  uint32_t outstanding = 0;  // loads/atomics in flight
  // Cached scoreboard verdicts for the next instruction (it cannot change until it issues):
  bool memory_wait = false;  // a register waits on a load: cleared when one of its loads completes
  uint64_t scoreboard_until = 0;  // registers pending on ALU results until this cycle
  // The next instruction's registers were looked at and none waits on a load: from
  // scoreboard_until on they are all ready (only this warp's own issue changes them then).
  bool operands_known = false;
  // The next instruction, once known; a ready warp stays ready with the same instruction
  // until it issues (only its own steps block it at a barrier).
  const InstructionInfo* next = nullptr;
  uint64_t code_base = 0;        // its kernel's code: offset in the code region (device_regions.h)
  uint64_t fetched_line = kNever;  // instruction cache line of its last fetched instruction
  uint64_t missed_line = kNever;   // the line it last stalled on (counts a miss once)
  // The line it last missed on with every line it prefetches present or pending, and the
  // instruction cache's epoch then: until the cache changes, a retry would send nothing.
  uint64_t settled_line = kNever;
  uint64_t settled_epoch = 0;
  std::vector<uint64_t> ready_at;  // scoreboard: cycle each register is written
  // cp.async groups: copies in flight per group, in a ring indexed by the number of groups
  // committed before it (the open group is async_committed's). A warp with more than
  // kAsyncGroupRing groups in flight shares counters between groups kAsyncGroupRing apart,
  // which only makes a wait wait longer.
  static constexpr uint32_t kAsyncGroupRing = 16;
  uint64_t async_committed = 0;
  std::array<uint32_t, kAsyncGroupRing> async_in_flight{};
  // Impl::mshr_blocked_at when its next instruction first found the LSU queue full (kNever:
  // not stalled so): the start of its MSHR wait (GpuExtension::mshr_wait).
  uint64_t lsu_full_mark = kNever;
  // Barriers, for capture (GpuExtension::barrier_*): the cycle it arrived at the barrier it waits
  // at (kNever: none); since its last global/local access instruction, the cycles it waited at
  // barriers and the last barrier it passed (arrival, release, the slot whose arrival released it).
  uint64_t barrier_arrived = kNever;
  BarrierStamp barrier;
};

struct CtaRecord {
  bool used = false;
  uint64_t start_cycle = 0;  // first cycle its warps may issue
  ptx::KernelRun* run = nullptr;
  uint64_t kernel_id = 0;
  uint64_t linear = 0;
  uint32_t slot = 0;  // KernelRun's CTA slot
  uint32_t first_warp_slot = 0;
  std::vector<uint32_t> warp_slots;
};

// A memory instruction queued at the L1: its lines and sector masks.
struct LsuOp {
  uint32_t warp_slot = 0;
  AccessOp op = AccessOp::kLoad;
  uint32_t line_count = 0;
  uint32_t next_line = 0;
  uint32_t record = kNone;  // load record (loads/atomics)
  bool l1_bypass = false;   // a load that neither hits nor allocates in L1 (ld.cg/.cv/.volatile)
  uint32_t local_from = 0;  // lines[local_from..line_count) are local memory (after the global ones)
  uint64_t mshr_mark = 0;   // Impl::mshr_blocked_at when its warp first tried to issue it
  BarrierStamp barrier;     // its warp's barriers since its previous access instruction
  uint64_t lines[kMaxLines];
  uint8_t masks[kMaxLines];
};

// A constant-space load (ld.const, kernel parameters) queued at the constant cache: its
// distinct addresses, one lookup each per cycle (a warp whose lanes read different addresses
// serializes, as the constant cache serves one address per access).
struct ConstOp {
  uint32_t warp_slot = 0;
  uint32_t record = kNone;
  uint32_t count = 0;
  uint32_t next = 0;
  uint64_t addresses[32];
};

struct ConstLine {  // also the instruction cache's lines
  uint64_t tag = kNever;
  uint64_t last_use = 0;
};

// A load or atomic waiting for its sectors.
struct LoadRecord {  // in use: its bit in Impl::record_busy
  uint32_t warp_slot = 0;
  uint32_t pending = 0;        // lines not yet returned (+1 while the LSU still walks it)
  uint64_t ready_floor = 0;    // earliest completion (hit latency after the last lookup)
  uint8_t dst_count = 0;
  uint32_t dst[InstructionInfo::kMaxDst];
  static constexpr uint8_t kNoAsyncGroup = 0xff;
  uint8_t async_group = kNoAsyncGroup;  // cp.async: its group's slot in WarpSlot::async_in_flight
};

struct Mshr {  // in use: its bit in Impl::mshr_busy
  tlm::tlm_generic_payload* gp = nullptr;
  uint64_t request_seq = 0;  // of the request it sent (GpuExtension::request_seq)
  bool atomic = false;
  bool fill_l1 = false;  // the returning sectors allocate in L1 (a load without .cg/.cv)
  bool fill_const = false;  // a constant cache miss: the returning sectors fill the constant cache
  bool fill_icache = false;  // an instruction fetch: the returning sectors fill the instruction cache
  uint64_t line = 0;
  uint8_t mask = 0;
  uint32_t waiter_count = 0;
  std::vector<uint32_t> waiters;  // load records (capacity l1_mshr_merges)
};

struct Outgoing {
  uint64_t line = 0;
  uint8_t mask = 0;
  AccessKind kind = AccessKind::Load;
  uint32_t mshr = kNone;
  uint32_t warp_slot = 0;
  uint32_t cta = 0;
  uint64_t kernel_id = 0;
  uint64_t queued_cycle = 0;  // when it joined the queue (GpuExtension::queued_cycle)
  uint8_t l1_access = 0;      // GpuExtension::l1_access
  uint32_t mshr_wait = 0;             // GpuExtension::mshr_wait
  uint64_t mshr_unblocked_by = 0;     // GpuExtension::mshr_unblocked_by
  BarrierStamp barrier;               // GpuExtension::barrier_*
};

struct Response {
  uint64_t ready_cycle = 0;
  uint32_t mshr = kNone;
};

// Fixed-capacity FIFO (no allocation after construction).
template <typename T>
class Ring {
 public:
  explicit Ring(size_t capacity) : items_(capacity) {}
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == items_.size(); }
  size_t size() const { return count_; }
  T& front() { return items_[head_]; }
  void pop() {
    head_ = (head_ + 1) % items_.size();
    --count_;
  }
  T& push() {
    T& slot = items_[(head_ + count_) % items_.size()];
    ++count_;
    return slot;
  }
  T& at(size_t i) { return items_[(head_ + i) % items_.size()]; }  // i-th oldest

 private:
  std::vector<T> items_;
  size_t head_ = 0;
  size_t count_ = 0;
};

}  // namespace

struct Sm::Impl {
  Impl(const SmParams& p, uint32_t sm, const ClockDomain& clk, stats::Registry& reg, AddressTranslation* tr)
      : params(p),
        clock(clk),
        translation(tr != nullptr ? tr : &identity),
        max_warps(p.max_threads / 32),
        subcores(std::max<uint32_t>(p.subcores, 1)),
        warps(max_warps),
        lsu(p.lsu_queue),
        const_queue(p.lsu_queue),
        records(2 * p.lsu_queue + p.l1_mshrs * p.l1_mshr_merges + 8),
        mshrs(p.l1_mshrs),
        outgoing(p.l1_mshrs + p.lsu_queue * kMaxLines),
        responses(p.l1_mshrs + 8),
        group(reg.group("gpu.sm[" + std::to_string(sm) + "]")),
        cycles(group.counter("cycles", "cycle", "core cycles with resident warps")),
        active_cycles(group.counter("active_cycles", "cycle", "cycles in which an instruction issued")),
        warp_instructions(group.counter("warp_instructions", "warp-instr", "warp instructions issued")),
        thread_instructions(group.counter("thread_instructions", "thread-instr", "active lanes over issued instructions")),
        stall_scoreboard(group.counter("stall_scoreboard", "subcore-cycle", "no issue: first warp waits on an ALU result")),
        stall_memory(group.counter("stall_memory", "subcore-cycle", "no issue: first warp waits on memory or a full LSU")),
        stall_barrier(group.counter("stall_barrier", "subcore-cycle", "no issue: first warp waits at a barrier")),
        stall_fu_busy(group.counter("stall_fu_busy", "subcore-cycle", "no issue: first warp's functional unit busy")),
        stall_idle(group.counter("stall_idle", "subcore-cycle", "no issue: no warp on the sub-core")),
        stall_fetch(group.counter("stall_fetch", "subcore-cycle",
                                  "no issue: first warp's next instruction is being fetched (instruction cache miss)")),
        resident_warp_cycles(group.counter("resident_warp_cycles", "warp-cycle", "resident warps summed over cycles")),
        l1_sector_hits(group.counter("l1_sector_hits", "sector", "L1 load sectors found valid")),
        l1_sector_misses(group.counter("l1_sector_misses", "sector", "L1 load sectors missing")),
        l1_sector_accesses(group.counter("l1_sector_accesses", "sector", "L1 load sectors looked up")),
        mshr_merges(group.counter("mshr_merges", "line", "missed lines merged into a pending MSHR")),
        shared_accesses(group.counter("shared_accesses", "warp-instr", "shared-memory instructions")),
        shared_bank_conflicts(group.counter("shared_bank_conflicts", "cycle", "extra shared-memory cycles from bank conflicts")),
        shared_phases(group.counter("shared_phases", "phase",
                                    "shared-memory phases (1 per warp access; 2 for 8-byte, 4 for 16-byte accesses)")),
        line_requests(group.counter("line_requests", "request",
                                    "data requests sent toward L2 (one line each; constant and instruction fills apart)")),
        sector_requests(group.counter("sector_requests", "sector", "sectors requested toward L2")),
        store_requests(group.counter("store_requests", "request", "store requests sent")),
        atomic_requests(group.counter("atomic_requests", "request", "atomic/reduction requests sent")),
        local_accesses(group.counter("local_accesses", "warp-instr", "memory instructions with local-memory lanes")),
        local_load_sectors(group.counter("local_load_sectors", "sector", "local-memory sectors loaded (L1 lookups)")),
        local_store_sectors(group.counter("local_store_sectors", "sector", "local-memory sectors stored (written through)")),
        const_accesses(group.counter("const_accesses", "access", "constant cache lookups (one per distinct address of a warp)")),
        const_hits(group.counter("const_hits", "access", "constant cache lookups that hit")),
        const_misses(group.counter("const_misses", "access", "constant cache lookups that missed")),
        const_requests(group.counter("const_requests", "request", "constant cache line fills requested toward L2")),
        icache_hits(group.counter("icache_hits", "line", "instruction cache lookups that hit (one per line a warp enters)")),
        icache_misses(group.counter("icache_misses", "line", "lines a warp entered and had to wait for (per warp)")),
        icache_requests(group.counter("icache_requests", "request", "instruction cache line fills requested toward L2")),
        ctas_completed(group.counter("ctas_completed", "cta", "CTAs completed")),
        l1_reconfigurations(group.counter("l1_reconfigurations", "event",
                                          "L1 resized for a kernel's shared-memory carve-out (and emptied)")) {
    group.ratio("ipc", "warp instructions per cycle", warp_instructions, cycles);
    group.ratio("achieved_occupancy", "resident warps / max warps, averaged over cycles", resident_warp_cycles, cycles,
                1.0 / max_warps);
    group.ratio("l1_sector_hit_rate", "L1 load sectors found valid", l1_sector_hits, l1_sector_accesses);
    group.ratio("const_hit_rate", "constant cache lookups that hit", const_hits, const_accesses);
    for (auto& m : mshrs) m.waiters.resize(p.l1_mshr_merges);
    const uint64_t thread_bytes = regions::local_bytes_per_thread(uint64_t{std::max<uint32_t>(p.count, 1)} * p.max_threads);
    local_words_mask = thread_bytes / 4 - 1;
    local_warp_bytes = thread_bytes * 32;
    local_sm_base = regions::kLocalBase + uint64_t{sm} * max_warps * local_warp_bytes;
    mshr_busy.assign((mshrs.size() + 63) / 64, 0);
    record_busy.assign((records.size() + 63) / 64, 0);
    parked.assign(max_warps, 0);
    live.assign(subcores, 0);
    unparked.assign(subcores, 0);
    bits_ok = (max_warps + subcores - 1) / subcores <= 64;
    position.assign(max_warps, 0);
    live_bits.assign(subcores, 0);
    scan_valid_until.assign(subcores, 0);
    unparked_bits.assign(subcores, 0);
    size_l1(p.l1_bytes);
    if (p.const_bytes != 0) {
      const_line_bytes = std::min<uint32_t>(std::max<uint32_t>(p.const_line, kSectorBytes), kLineBytes);
      const uint64_t const_lines = std::max<uint64_t>(p.const_bytes / const_line_bytes, 1);
      const_ways = std::max<uint32_t>(std::min<uint64_t>(p.const_ways, const_lines), 1);
      const_sets = static_cast<uint32_t>(std::max<uint64_t>(const_lines / const_ways, 1));
      const_cache.resize(static_cast<size_t>(const_sets) * const_ways);
    }
    if (p.icache_bytes != 0) {
      icache_line_bytes = std::min<uint32_t>(std::max<uint32_t>(p.icache_line, kSectorBytes), kLineBytes);
      const uint64_t icache_lines = std::max<uint64_t>(p.icache_bytes / icache_line_bytes, 1);
      icache_ways = std::max<uint32_t>(std::min<uint64_t>(p.icache_ways, icache_lines), 1);
      icache_sets = static_cast<uint32_t>(std::max<uint64_t>(icache_lines / icache_ways, 1));
      icache.resize(static_cast<size_t>(icache_sets) * icache_ways);
    }
    unit_free.assign(static_cast<size_t>(subcores) * ptx::kUnitClassCount, 0);
    last_issued.assign(subcores, kNone);
    order.resize(subcores);
    for (auto& o : order) o.reserve(max_warps);
    auto ii = [&](uint32_t lanes) { return std::max<uint32_t>(1, 32 / std::max<uint32_t>(1, lanes / subcores)); };
    interval[static_cast<int>(UnitClass::kFp32)] = ii(p.fp32_lanes);
    interval[static_cast<int>(UnitClass::kFp64)] = ii(std::max<uint32_t>(p.fp64_lanes, 1));
    interval[static_cast<int>(UnitClass::kInt)] = ii(p.int32_lanes);
    interval[static_cast<int>(UnitClass::kSfu)] = ii(p.sfu_lanes);
    interval[static_cast<int>(UnitClass::kLdst)] = ii(p.ldst_lanes);
    latency[static_cast<int>(UnitClass::kFp32)] = p.fp32_latency;
    latency[static_cast<int>(UnitClass::kFp64)] = p.fp64_latency;
    latency[static_cast<int>(UnitClass::kInt)] = p.int32_latency;
    latency[static_cast<int>(UnitClass::kSfu)] = p.sfu_latency;
    latency[static_cast<int>(UnitClass::kLdst)] = p.l1_hit_latency;
    latency[static_cast<int>(UnitClass::kBranch)] = p.int32_latency;
    latency[static_cast<int>(UnitClass::kBarrier)] = p.int32_latency;
    latency[static_cast<int>(UnitClass::kOther)] = p.int32_latency;
    latency[static_cast<int>(UnitClass::kTensor)] = p.tensor_latency;
  }

  const SmParams& params;
  const ClockDomain& clock;
  IdentityTranslation identity;
  AddressTranslation* translation;
  uint32_t max_warps;
  uint32_t subcores;
  // Local memory of this SM's warp slots (device_regions.h): slot w's window starts at
  // local_sm_base + w * local_warp_bytes; word i of lane l is at + i * 128 + l * 4.
  uint64_t local_sm_base = 0;
  uint64_t local_warp_bytes = 0;
  uint64_t local_words_mask = 0;  // words per thread - 1 (a power of two)
  std::vector<WarpSlot> warps;
  std::vector<CtaRecord> ctas;
  std::vector<std::vector<uint32_t>> order;  // per sub-core: warp slots by age
  std::vector<uint32_t> last_issued;         // per sub-core
  std::vector<uint64_t> unit_free;           // [subcore][unit]: first cycle the unit takes a warp
  uint32_t interval[ptx::kUnitClassCount] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  uint32_t latency[ptx::kUnitClassCount] = {};
  uint64_t next_age = 0;
  uint32_t resident_warps = 0;

  Ring<LsuOp> lsu;
  Ring<ConstOp> const_queue;  // capacity lsu_queue; full: constant loads stall at issue
  std::vector<ConstLine> const_cache;  // empty: perfect (every lookup hits, no traffic)
  uint32_t const_line_bytes = 64, const_sets = 1, const_ways = 1;
  uint64_t const_clock = 0;
  std::vector<ConstLine> icache;  // empty: perfect instruction cache
  uint32_t icache_line_bytes = 128, icache_sets = 1, icache_ways = 1;
  uint64_t icache_clock = 0;
  // Changes when a line enters the instruction cache or an instruction fetch's MSHR is freed:
  // what a fetch that missed would find again otherwise (WarpSlot::settled_line).
  uint64_t icache_epoch = 0;
  std::vector<LoadRecord> records;
  std::vector<uint64_t> record_busy;  // bit i set: records[i] in use (the lowest free one is found per word)
  std::vector<Mshr> mshrs;
  Ring<Outgoing> outgoing;
  Ring<Response> responses;
  bool request_in_flight = false;  // BEGIN_REQ sent, END_REQ awaited
  tlm::tlm_generic_payload* in_flight = nullptr;
  uint64_t send_allowed = 0;       // first cycle the next BEGIN_REQ may go
  // MSHR waits, for elastic trace capture (GpuExtension::mshr_wait): the LSU's head blocked for
  // want of an MSHR since mshr_blocked_since (kNever: not blocked), mshr_blocked_cycles closed
  // blocked cycles before that; mshr_blocked_at(c) is their running total, so a request's wait
  // is the difference of two readings. last_freed_seq: the request whose response freed an MSHR
  // last; unblocked_by: the one that had done so when the last blocked stretch ended.
  uint64_t mshr_blocked_since = kNever;
  uint64_t mshr_blocked_cycles = 0;
  uint64_t last_freed_seq = 0;
  uint64_t unblocked_by = 0;
  uint64_t next_request_seq = 1;
  uint64_t mshr_blocked_at(uint64_t c) const {
    return mshr_blocked_cycles + (mshr_blocked_since != kNever && c > mshr_blocked_since ? c - mshr_blocked_since : 0);
  }
  bool mshr_blocked(uint64_t c) {  // the LSU's head found no free MSHR at cycle c
    if (mshr_blocked_since == kNever) mshr_blocked_since = c;
    return false;
  }
  void mshr_unblocked(uint64_t c) {  // the LSU's head moves on at cycle c
    if (mshr_blocked_since == kNever) return;
    mshr_blocked_cycles = mshr_blocked_at(c);
    mshr_blocked_since = kNever;
    unblocked_by = last_freed_seq;
  }
  L1Tags l1;  // sized as configured now (the carve-out's rest)
  // Elastic trace capture: L1 load lookups that sent no request are told to this observer (at
  // once, or kept in l1_notes while windowed and told by deliver_deferred).
  TraceObserver* l1_observer = nullptr;
  std::vector<L1Lookup> l1_notes;
  // Barrier releases (capture): noted where the barrier step runs (any host thread), told in the
  // serial phase or, windowed, by deliver_deferred.
  uint64_t barrier_releases = 0;
  std::vector<BarrierRelease> barrier_notes;
  // Bit i set: mshrs[i] in use. Lets the per-line searches (lowest free, lowest mergeable, the
  // one holding a response's payload) and memory_idle() visit only busy MSHRs, in index order.
  std::vector<uint64_t> mshr_busy;
  // Counting filter over the lines of busy MSHRs (hashed line index): a missed
  // line whose bucket is 0 cannot merge, so the merge search is skipped (streaming misses).
  static constexpr uint32_t kLineFilter = 256;
  uint16_t line_filter[kLineFilter] = {};
  // Per warp slot: kExitedBit = WarpSlot::exited, kMemoryWaitBit = WarpSlot::memory_wait. A
  // dense copy read first by the scheduler scan (most warps wait on memory most of the time).
  std::vector<uint8_t> parked;
  // Per sub-core, over resident warps: live = not exited, unparked = parked byte 0. With no
  // unparked warp the scan's outcome is known without walking the order (see tick).
  std::vector<uint32_t> live, unparked;
  // The same per position in order[k] (bit i: order[k][i]), when a sub-core holds at most 64
  // warp slots (bits_ok): the GTO scan visits only unparked warps (ready bitmask per sub-core).
  bool bits_ok = false;
  std::vector<uint32_t> position;                // per warp slot: its index in its order[k]
  std::vector<uint64_t> live_bits, unparked_bits;  // per sub-core
  // Per sub-core: a scan that issued nothing gives the same verdicts (and stall reason,
  // last_reason[k]) on every later cycle before this one, as long as nothing it looked at
  // changed: its warps' scoreboards and parked flags, the CTAs and scan order, the LSU queue
  // leaving full, or barriers (another sub-core's barrier, exit or branch step). Those events
  // reset it to 0 (mark_dirty); otherwise the scan is skipped. The earliest wake its stalls
  // named, kNever when only such an event can change them.
  std::vector<uint64_t> scan_valid_until;
  // Something that can finish a CTA happened since retire_done() last looked (an issue, a
  // load completing, a launch); otherwise only a faulted kernel makes it look again.
  bool retire_pending = true;
  // Resident CTAs whose kernel has a memory observer (Sm::observed(), asked every stepped cycle).
  uint32_t observed_ctas = 0;
  PayloadPool pool;
  ptx::StepResult step;
  // Effects of this SM's parallel phase on each kernel it runs, committed in its serial phase.
  struct StageEntry {
    ptx::KernelRun* run;
    uint64_t kernel_id;  // names the run to other ranks (export_stages)
    ptx::StepStage stage;
  };
  std::vector<StageEntry> stages;
  // Ranks: the owner's unstaged finish of a window (Sm::begin_log) records its effects outside
  // the SM here, per kernel run, for the other ranks to commit.
  bool logging = false;
  std::vector<StageEntry> logs;
  // The cycle being ticked, between its two phases.
  uint64_t t_wake = kNever;
  bool t_issued_any = false;
  uint32_t t_k = 0;           // first sub-core not yet scanned
  bool t_suspended = false;   // the parallel phase stopped before a serial-only instruction
  bool t_lsu_done = false;
  bool t_lsu_busy = false;
  // Windowed stepping (SmStepper, sim.window > 1): the SM runs a window of cycles on a host
  // thread; what leaves it is stamped with its cycle and kept in the outbox; at the boundary the
  // stepper hands the outbox over to the delivery queues, which the SystemC thread empties in
  // SystemC time (deliver_deferred), maybe while the SM runs its next window: requests through
  // `mem`, completed CTAs to the scheduler. Responses arriving meanwhile wait in the inbox until
  // the boundary (take_inbox), then in `arrived` until the SM's thread applies them at the start
  // of its next window (apply_arrivals). The SM's own thread touches the outbox and `arrived`;
  // the SystemC thread the delivery queues and the inbox.
  bool windowed = false;
  bool defer_commit = false;     // stages accumulate over the window (committed by the stepper)
  bool deadlock_pending = false;  // tick_serial found a barrier deadlock inside a window
  // SM partitions in several ranks (Sm::set_partition): what the owner's window did that other
  // ranks cannot compute (a kernel run failed by a deadlock report), and on the other ranks the
  // CTAs launched here whose run and slot their exported stages and completions name.
  Sm::Partition partition = Sm::Partition::kLocal;
  struct RunFault {
    uint64_t kernel_id;
    ptx::LaunchStatus status;
    std::string message;
  };
  std::vector<RunFault> run_faults;
  struct RemoteCta {
    uint64_t kernel_id, linear;
    ptx::KernelRun* run;
    uint32_t slot;
  };
  std::vector<RemoteCta> remote_ctas;
  void commit_entries(parallel::Message& in);  // what put_entries wrote, committed in order
  ptx::KernelRun& remote_run(uint64_t kernel_id) const {
    for (const RemoteCta& cta : remote_ctas) {
      if (cta.kernel_id == kernel_id) return *cta.run;
    }
    throw std::runtime_error("SM " + std::to_string(owner->index()) + ": the rank stepping it names kernel " +
                             std::to_string(kernel_id) + ", which has no CTA on it here");
  }
  struct DeferredRequest {
    uint64_t cycle;
    tlm::tlm_generic_payload* gp;
  };
  struct DeferredCta {
    uint64_t cycle;
    ptx::KernelRun* run;
    uint32_t slot;
    uint64_t kernel_id, linear;
  };
  struct Arrival {
    tlm::tlm_generic_payload* gp;
    uint64_t cycle;   // the response takes effect after this cycle
  };
  std::vector<DeferredRequest> outbox_requests;  // this window's (the SM's thread)
  std::vector<DeferredCta> outbox_ctas;
  std::vector<DeferredRequest> deferred_requests;  // handed over, not yet sent (SystemC thread)
  size_t deferred_request_head = 0;
  std::vector<DeferredCta> deferred_ctas;
  tlm::tlm_generic_payload* replay_in_flight = nullptr;  // a deferred request awaiting END_REQ
  std::vector<Arrival> inbox;  // responses since the last boundary (SystemC thread)
  uint64_t inbox_first = kNever;  // the earliest cycle in it
  std::vector<Arrival> arrived;  // taken over at a boundary, applied by the SM's thread
  // Windowed launches: the CTA's slot of the run is reserved when the scheduler launches it;
  // its functional state and warps are set up by the SM's own thread in the window holding its
  // first cycle.
  struct Launch {
    ptx::KernelRun* run;
    uint64_t kernel_id, linear;
    uint32_t slot;
    uint64_t start_cycle;
    uint64_t shared_bytes = kNever;  // the SM's shared-memory carve-out changes first (kNever: not)
  };
  uint64_t shared_for_launch = kNever;  // configure_shared while windowed: for the next launch
  std::vector<Launch> launch_inbox;    // since the last boundary (SystemC thread)
  std::vector<Launch> launches;        // taken over at a boundary (the SM's thread)
  uint64_t retire_cycle = 0;                               // the cycle retire_done() runs in

  stats::Group& group;
  stats::Counter& cycles;
  stats::Counter& active_cycles;
  stats::Counter& warp_instructions;
  stats::Counter& thread_instructions;
  stats::Counter& stall_scoreboard;
  stats::Counter& stall_memory;
  stats::Counter& stall_barrier;
  stats::Counter& stall_fu_busy;
  stats::Counter& stall_idle;
  stats::Counter& stall_fetch;
  stats::Counter& resident_warp_cycles;
  stats::Counter& l1_sector_hits;
  stats::Counter& l1_sector_misses;
  stats::Counter& l1_sector_accesses;
  stats::Counter& mshr_merges;
  stats::Counter& shared_accesses;
  stats::Counter& shared_bank_conflicts;
  stats::Counter& shared_phases;
  stats::Counter& line_requests;
  stats::Counter& sector_requests;
  stats::Counter& store_requests;
  stats::Counter& atomic_requests;
  stats::Counter& local_accesses;
  stats::Counter& local_load_sectors;
  stats::Counter& local_store_sectors;
  stats::Counter& const_accesses;
  stats::Counter& const_hits;
  stats::Counter& const_misses;
  stats::Counter& const_requests;
  stats::Counter& icache_hits;
  stats::Counter& icache_misses;
  stats::Counter& icache_requests;
  stats::Counter& ctas_completed;
  stats::Counter& l1_reconfigurations;
  stats::Counter* stall_counter[kStallCount] = {};
  int last_reason[16] = {};  // per sub-core, of the last ticked cycle (-1: issued)

  // ---------------------------------------------------------------- behaviour
  Sm* owner = nullptr;

  static constexpr uint8_t kExitedBit = 1, kMemoryWaitBit = 2;

  // Multiplicative hash: arrays a power-of-two apart (vectorAdd's a[i], b[i]) must not share buckets.
  static uint32_t filter_bucket(uint64_t line) {
    return static_cast<uint32_t>(((line / kLineBytes) * 0x9E3779B97F4A7C15ull) >> 56) % kLineFilter;
  }
  // Marks MSHR i busy for `line` (with its line set) or free again.
  void set_mshr_used(uint32_t i, bool used, uint64_t line = 0) {
    Mshr& e = mshrs[i];
    if (used) {
      e.line = line;
      ++line_filter[filter_bucket(line)];
      mshr_busy[i / 64] |= uint64_t{1} << (i % 64);
    } else {
      if (e.fill_icache) ++icache_epoch;
      --line_filter[filter_bucket(e.line)];
      mshr_busy[i / 64] &= ~(uint64_t{1} << (i % 64));
    }
  }
  // Counts of a resident warp's parked byte in live / unparked.
  void count_parked(uint32_t slot, bool add) {
    const uint32_t k = slot % subcores;
    const uint8_t flags = parked[slot];
    const uint32_t l = (flags & kExitedBit) ? 0 : 1, u = flags == 0 ? 1 : 0;
    if (add) {
      live[k] += l;
      unparked[k] += u;
    } else {
      live[k] -= l;
      unparked[k] -= u;
    }
    if (bits_ok) {
      const uint64_t bit = uint64_t{1} << position[slot];
      live_bits[k] = add && l ? live_bits[k] | bit : live_bits[k] & ~bit;
      unparked_bits[k] = add && u ? unparked_bits[k] | bit : unparked_bits[k] & ~bit;
    }
  }
  void set_parked(uint32_t slot, uint8_t flags) {  // a resident warp's
    count_parked(slot, false);
    parked[slot] = flags;
    count_parked(slot, true);
  }
  void mark_dirty(uint32_t k) { scan_valid_until[k] = 0; }
  void mark_all_dirty() { std::fill(scan_valid_until.begin(), scan_valid_until.end(), 0); }
  void set_memory_wait(uint32_t slot, bool wait) {
    warps[slot].memory_wait = wait;
    set_parked(slot, static_cast<uint8_t>(wait ? parked[slot] | kMemoryWaitBit : parked[slot] & ~kMemoryWaitBit));
  }

  [[gnu::always_inline]] int check(uint32_t k, uint32_t slot, uint64_t c, uint64_t& wake) {
    WarpSlot& w = warps[slot];
    if (w.start_cycle > c) {
      wake = std::min(wake, w.start_cycle);
      return kStallIdle;
    }
    if (w.memory_wait) return kStallMemory;
    if (w.scoreboard_until > c) {
      wake = std::min(wake, w.scoreboard_until);
      return kStallScoreboard;
    }
    if (w.next == nullptr) {
      CtaRecord& cta = ctas[w.cta];
      if (!cta.run->warp_ready(cta.slot, w.warp)) return kStallBarrier;
      w.next = &cta.run->next(cta.slot, w.warp);
    }
    if (!icache.empty()) {
      const uint64_t address = regions::kCodeBase + ((w.code_base + w.next->code_offset) & (regions::kCodeBytes - 1));
      const uint64_t line = address & ~uint64_t{icache_line_bytes - 1};
      if (line != w.fetched_line) {
        if (!fetch(line, slot, c, wake)) {
          if (w.missed_line != line) {  // counted once per warp and line
            w.missed_line = line;
            ++icache_misses;
          }
          return kStallFetch;
        }
        w.fetched_line = line;
      }
    }
    const InstructionInfo& info = *w.next;
    if (info.async_wait_groups != InstructionInfo::kNoAsyncWait && !async_wait_done(w, info.async_wait_groups)) {
      set_memory_wait(slot, true);  // cleared when one of its copies completes
      return kStallMemory;
    }
    if (!w.operands_known) {
      uint64_t until = 0;
      const uint64_t* const ready_at = w.ready_at.data();
      for (uint8_t i = 0; i < info.src_count; ++i) until = std::max(until, ready_at[info.src[i]]);
      for (uint8_t i = 0; i < info.dst_count; ++i) until = std::max(until, ready_at[info.dst[i]]);
      if (until == kNever) {
        set_memory_wait(slot, true);
        return kStallMemory;
      }
      w.operands_known = true;
      if (until > c) {
        w.scoreboard_until = until;
        wake = std::min(wake, until);
        return kStallScoreboard;
      }
    }
    const uint64_t free_at = unit_free[k * ptx::kUnitClassCount + static_cast<uint32_t>(info.unit)];
    if (free_at > c) {
      wake = std::min(wake, free_at);
      return kStallFuBusy;
    }
    if (uses_lsu(info) && lsu.full()) {
      if (w.lsu_full_mark == kNever) w.lsu_full_mark = mshr_blocked_at(c);
      return kStallMemory;
    }
    if (uses_const(info) && const_queue.full()) return kStallMemory;
    return -1;
  }

  // A generic access may resolve to global or local memory (LSU) or to the kernel's parameters
  // (constant cache): it needs room in both queues.
  // Instruction cache line `line` for warp `slot`'s next instruction: true when present (a
  // warp looks a line up once, as it enters it). A miss requests the line from L2; the warp
  // stalls until the fill, which re-scans every sub-core (no MSHR or queue room: retried next
  // cycle). Entering a line, hit or miss, also requests the next icache_prefetch lines that
  // are neither present nor pending (a stream prefetcher: fetch runs ahead of issue).
  bool fetch(uint64_t line, uint32_t slot, uint64_t c, uint64_t& wake) {
    WarpSlot& w = warps[slot];
    // A warp stalled on a fetch retries every cycle; until a fill arrives the retry is a miss
    // that finds every line ahead present or pending, as the last one left them.
    if (line == w.settled_line && w.settled_epoch == icache_epoch) return false;
    bool hit = false;
    bool settled = true;
    ConstLine* set = &icache[(line / icache_line_bytes % icache_sets) * icache_ways];
    for (uint32_t i = 0; i < icache_ways; ++i) {
      if (set[i].tag == line / icache_line_bytes) {
        set[i].last_use = ++icache_clock;
        ++icache_hits;
        hit = true;
        break;
      }
    }
    for (uint32_t ahead = hit ? 1 : 0; ahead <= params.icache_prefetch; ++ahead) {
      const uint64_t at = line + uint64_t{ahead} * icache_line_bytes;
      if (ahead != 0 && icache_present(at)) continue;
      const uint64_t line128 = at & ~uint64_t{kLineBytes - 1};
      const uint8_t need = sectors_within_line(at, at + icache_line_bytes);
      bool pending = false;
      for (uint32_t word = 0; line_filter[filter_bucket(line128)] != 0 && word < mshr_busy.size() && !pending; ++word) {
        for (uint64_t bits = mshr_busy[word]; bits; bits &= bits - 1) {
          const Mshr& e = mshrs[word * 64 + static_cast<uint32_t>(__builtin_ctzll(bits))];
          if (e.fill_icache && e.line == line128 && (need & ~e.mask) == 0) {
            pending = true;
            break;
          }
        }
      }
      if (pending) continue;
      const uint32_t m = outgoing.full() ? kNone : alloc_mshr();
      if (m == kNone) {
        if (ahead == 0) wake = std::min(wake, c + 1);
        settled = false;
        break;
      }
      Mshr& e = mshrs[m];
      set_mshr_used(m, true, line128);
      e.atomic = false;
      e.fill_l1 = false;
      e.fill_const = false;
      e.fill_icache = true;
      e.mask = need;
      e.waiter_count = 0;
      push_request(line128, need, AccessKind::InstructionFetch, m, slot, ctas[warps[slot].cta], c);
    }
    if (!hit && settled) {
      w.settled_line = line;
      w.settled_epoch = icache_epoch;
    }
    return hit;
  }
  bool icache_present(uint64_t line) const {
    const ConstLine* set = &icache[(line / icache_line_bytes % icache_sets) * icache_ways];
    for (uint32_t i = 0; i < icache_ways; ++i) {
      if (set[i].tag == line / icache_line_bytes) return true;
    }
    return false;
  }
  void icache_fill(uint64_t line128, uint8_t mask) {
    ++icache_epoch;
    for (uint64_t at = line128; at < line128 + kLineBytes; at += icache_line_bytes) {
      const uint8_t need = sectors_within_line(at, at + icache_line_bytes);
      if ((mask & need) != need || icache_present(at)) continue;
      ConstLine* set = &icache[(at / icache_line_bytes % icache_sets) * icache_ways];
      ConstLine* victim = &set[0];
      for (uint32_t i = 1; i < icache_ways; ++i) {
        if (set[i].last_use < victim->last_use) victim = &set[i];
      }
      victim->tag = at / icache_line_bytes;
      victim->last_use = ++icache_clock;
    }
  }

  static bool uses_lsu(const InstructionInfo& info) {
    return info.access != AccessOp::kNone &&
           (info.space == InstructionInfo::Space::kGlobal || info.space == InstructionInfo::Space::kGeneric ||
            info.space == InstructionInfo::Space::kLocal);
  }
  static bool uses_const(const InstructionInfo& info) {
    return info.access != AccessOp::kNone &&
           (info.space == InstructionInfo::Space::kConst || info.space == InstructionInfo::Space::kParam ||
            info.space == InstructionInfo::Space::kGeneric);
  }

  // Usual case of bank_degree (power-of-two banks): every lane touches one 4-byte word and no
  // bank sees two distinct words (conflict free or broadcast), i.e. the degree is 1.
  bool simple_degree(uint32_t lanes, uint32_t bank_mask) const {
    const ptx::LaneAccess* const accesses = step.accesses.data();
    uint32_t bank_word[64];
    uint64_t touched = 0;
    for (uint32_t m = lanes; m; m &= m - 1) {
      const ptx::LaneAccess& a = accesses[__builtin_ctz(m)];
      const uint64_t address = a.address;
      if ((address & 3) + a.size > 4) return false;  // more than one word (size 0 counts as 1 byte)
      const auto word = static_cast<uint32_t>(address >> 2);
      const uint32_t bank = word & bank_mask;
      const uint64_t bit = uint64_t{1} << bank;
      if (touched & bit) {
        if (bank_word[bank] != word) return false;
      } else {
        touched |= bit;
        bank_word[bank] = word;
      }
    }
    return true;
  }

  // Conflict degree of a shared-memory access: the most distinct 4-byte words in one bank
  // (the first 256 words the lanes touch, in lane order; equal words broadcast). Distinct
  // words are kept in one chain per bank, so a word is compared only with its bank's words.
  uint32_t bank_degree(uint32_t lanes) const {
    const uint32_t banks = std::max<uint32_t>(std::min<uint32_t>(params.shared_banks, 64), 1);
    const bool pow2 = (banks & (banks - 1)) == 0;
    if (pow2 && simple_degree(lanes, banks - 1)) return lanes != 0 ? 1 : 0;
    uint32_t words[256];
    uint16_t chain[256];     // next distinct word of the same bank (kEnd: none)
    uint16_t head[64];       // first distinct word of each bank, valid where `touched`
    constexpr uint16_t kEnd = 0xffff;
    uint32_t per_bank[64];
    uint64_t touched = 0;
    uint32_t n = 0, distinct = 0, degree = 0;
    while (lanes && n < 256) {
      const int lane = __builtin_ctz(lanes);
      lanes &= lanes - 1;
      const ptx::LaneAccess& a = step.accesses[static_cast<size_t>(lane)];
      const uint64_t first = a.address / 4;
      const uint64_t last = (a.address + std::max<uint32_t>(a.size, 1) - 1) / 4;
      for (uint64_t w = first; w <= last && n < 256; ++w, ++n) {
        const auto word = static_cast<uint32_t>(w);
        const uint32_t bank = pow2 ? (word & (banks - 1)) : word % banks;
        const uint64_t bit = uint64_t{1} << bank;
        bool seen = false;
        if (touched & bit) {
          for (uint32_t i = head[bank]; i != kEnd && !seen; i = chain[i]) seen = words[i] == word;
        } else {
          touched |= bit;
          head[bank] = kEnd;
          per_bank[bank] = 0;
        }
        if (seen) continue;  // same word: broadcast
        words[distinct] = word;
        chain[distinct] = head[bank];
        head[bank] = static_cast<uint16_t>(distinct);
        ++distinct;
        degree = std::max(degree, ++per_bank[bank]);
      }
    }
    return degree;
  }

  // Cycles of a shared-memory access: accesses of up to 4 bytes per lane in one phase for the
  // whole warp, 8 bytes in two half-warp phases, 16 bytes in four quarter-warp phases (a phase
  // moves at most one 4-byte word per bank, 128 bytes); each phase takes as many cycles as its
  // most-conflicted bank. `phases` = phases with active lanes. A warp instruction's lanes all
  // access the same size.
  uint32_t shared_cycles(uint32_t lanes, uint32_t& phases) const {
    const uint32_t size = step.accesses[static_cast<size_t>(__builtin_ctz(lanes))].size;
    if (size <= 4) {
      phases = 1;
      return bank_degree(lanes);
    }
    const uint32_t per_phase = size <= 8 ? 16 : 8;  // lanes
    const uint32_t phase_mask = (1u << per_phase) - 1;
    uint32_t total = 0;
    phases = 0;
    for (uint32_t first = 0; first < 32; first += per_phase) {
      const uint32_t phase_lanes = lanes & (phase_mask << first);
      if (phase_lanes == 0) continue;
      ++phases;
      total += bank_degree(phase_lanes);
    }
    return total;
  }

  uint32_t alloc_record() {  // the lowest free index, marked used
    for (uint32_t word = 0; word < record_busy.size(); ++word) {
      const uint64_t free = ~record_busy[word];
      if (free == 0) continue;
      const uint32_t i = word * 64 + static_cast<uint32_t>(__builtin_ctzll(free));
      if (i >= records.size()) return kNone;
      record_busy[word] |= uint64_t{1} << (i % 64);
      return i;
    }
    return kNone;
  }

  // cp.async.wait_group n: every committed group but the n most recent has landed;
  // kAsyncWaitAll: every group, the open one too.
  static bool async_wait_done(const WarpSlot& w, uint32_t n) {
    const uint64_t ring = WarpSlot::kAsyncGroupRing;
    const uint64_t newest_waited = n == InstructionInfo::kAsyncWaitAll ? w.async_committed + 1
                                   : w.async_committed > n              ? w.async_committed - n
                                                                        : 0;  // groups [.., newest_waited)
    const uint64_t oldest = w.async_committed > ring ? w.async_committed - ring : 0;
    for (uint64_t g = oldest; g < newest_waited; ++g) {
      if (w.async_in_flight[g % ring] != 0) return false;
    }
    return true;
  }

  void complete(uint32_t r, uint64_t c) {
    LoadRecord& rec = records[r];
    WarpSlot& w = warps[rec.warp_slot];
    if (rec.async_group != LoadRecord::kNoAsyncGroup) --w.async_in_flight[rec.async_group];
    const uint64_t ready = std::max(rec.ready_floor, c);
    for (uint8_t i = 0; i < rec.dst_count; ++i) w.ready_at[rec.dst[i]] = ready;
    --w.outstanding;
    set_memory_wait(rec.warp_slot, false);
    mark_dirty(rec.warp_slot % subcores);
    record_busy[r / 64] &= ~(uint64_t{1} << (r % 64));
    if (w.exited) retire_pending = true;  // a CTA is done only once all its warps exited
  }

  // The stage for `run`'s effects in this SM's parallel phase (usually one kernel: one entry).
  ptx::StepStage& stage_for(ptx::KernelRun& run, uint64_t kernel_id) { return entry_for(stages, run, kernel_id); }
  static ptx::StepStage& entry_for(std::vector<StageEntry>& entries, ptx::KernelRun& run, uint64_t kernel_id) {
    for (auto& entry : entries) {  // (a later kernel's run may reuse a finished one's address)
      if (entry.run == &run && entry.kernel_id == kernel_id) return entry.stage;
    }
    for (auto& entry : entries) {  // an entry of a finished kernel (always committed, empty)
      if (entry.stage.empty()) {
        entry.run = &run;
        entry.kernel_id = kernel_id;
        return entry.stage;
      }
    }
    entries.push_back(StageEntry{&run, kernel_id, ptx::StepStage{}});
    return entries.back().stage;
  }

  void issue(uint32_t k, uint32_t slot, uint64_t c, bool staged) {
    WarpSlot& w = warps[slot];
    CtaRecord& cta = ctas[w.cta];
    ptx::KernelRun& run = *cta.run;
    const InstructionInfo& info = *w.next;
    w.next = nullptr;
    w.operands_known = false;
    const uint32_t unit = static_cast<uint32_t>(info.unit);
    uint64_t& free_at = unit_free[k * ptx::kUnitClassCount + unit];
    free_at = c + interval[unit];
    if (info.tensor_fma != 0) {  // the tensor units take M*N*K / rate cycles
      free_at = c + std::max<uint64_t>(interval[unit], (info.tensor_fma + params.tensor_fma_per_cycle - 1) / params.tensor_fma_per_cycle);
    }
    if (info.reads_time) run.set_issue_time(cta.slot, w.warp, c, clock.ns_of_cycle(c));
    const bool ok = run.step(cta.slot, w.warp, &step, staged ? &stage_for(run, cta.kernel_id) : nullptr,
                             logging ? &entry_for(logs, run, cta.kernel_id) : nullptr);
    // A CTA is done when its live threads reach 0, which only the step exiting a warp's last
    // threads does (or a fault, which retire_done() looks for itself).
    if (step.warp_exited || !ok) retire_pending = true;
    // Barrier, exit and branch steps (and the rare kOther) can release or block warps of the
    // CTA on other sub-cores: their cached scans no longer hold.
    if (info.unit == UnitClass::kBarrier || info.unit == UnitClass::kBranch || info.unit == UnitClass::kOther || !ok)
      mark_all_dirty();
    if (info.unit == UnitClass::kBarrier && ok) note_barrier(slot, c);
    ++warp_instructions;
    thread_instructions.add(static_cast<uint64_t>(popcount32(step.active_mask)));
    if (!ok) return;  // the kernel faulted: its CTAs are retired by retire_done()
    // A device-runtime call (malloc, free, a child launch) holds the warp for its cost.
    if (step.runtime_call_cycles != 0) w.start_cycle = std::max(w.start_cycle, c + step.runtime_call_cycles);
    if (info.async_commit) ++w.async_committed;
    uint64_t ready = c + latency[unit];
    if (info.access != AccessOp::kNone && step.access_mask != 0) {
      uint32_t shared = 0, global = 0, local = 0, other = 0;
      // A step that did not fault resolves every lane of a declared space to that space (global
      // to global, shared to shared, local/const/param to themselves, a device function's
      // .param to local); generic lanes may differ.
      switch (info.space) {
        case InstructionInfo::Space::kGlobal: global = step.access_mask; break;
        case InstructionInfo::Space::kShared: shared = step.access_mask; break;
        case InstructionInfo::Space::kLocal: local = step.access_mask; break;
        case InstructionInfo::Space::kConst:
        case InstructionInfo::Space::kParam:
        default:
          for (uint32_t m = step.access_mask; m; m &= m - 1) {
            const int lane = __builtin_ctz(m);
            const auto space = step.accesses[static_cast<size_t>(lane)].space;
            if (space == ptx::MemoryAccess::Space::kShared) shared |= 1u << lane;
            else if (space == ptx::MemoryAccess::Space::kGlobal) global |= 1u << lane;
            else if (space == ptx::MemoryAccess::Space::kLocal) local |= 1u << lane;
            else other |= 1u << lane;
          }
          break;
      }
      ready = 0;
      // The instruction's load record, shared by the queues it goes to (a generic access may
      // reach the constant cache and the LSU): one pending count per queue walk.
      uint32_t record = kNone;
      auto load_record = [&]() {
        if (record == kNone) {
          record = alloc_record();  // sized so that this cannot fail
          LoadRecord& rec = records[record];
          rec.warp_slot = slot;
          rec.pending = 0;
          rec.ready_floor = 0;
          rec.async_group = LoadRecord::kNoAsyncGroup;
          if (info.async_copy) {
            rec.async_group = static_cast<uint8_t>(w.async_committed % WarpSlot::kAsyncGroupRing);
            ++w.async_in_flight[rec.async_group];
          }
          rec.dst_count = info.dst_count;
          for (uint8_t i = 0; i < info.dst_count; ++i) rec.dst[i] = info.dst[i];
          ++w.outstanding;
          ready = kNever;
        }
        ++records[record].pending;
        return record;
      };
      if (other && const_cache.empty()) {  // a perfect constant cache: every lookup hits, no traffic
        ready = c + params.const_hit_latency;
      } else if (other) {  // constant space: kernel parameters (constant bank 0) and .const
        const uint64_t bank0 = regions::const_bank0_slot(cta.kernel_id);
        ConstOp& op = const_queue.push();
        op.warp_slot = slot;
        op.next = 0;
        op.count = 0;
        for (uint32_t m = other; m; m &= m - 1) {
          const ptx::LaneAccess& a = step.accesses[static_cast<size_t>(__builtin_ctz(m))];
          const uint64_t address = a.space == ptx::MemoryAccess::Space::kParam ? bank0 + a.address : a.address;
          if (op.count != 0 && op.addresses[op.count - 1] == address) continue;  // the usual broadcast
          uint32_t i = 0;
          while (i < op.count && op.addresses[i] != address) ++i;
          if (i == op.count) op.addresses[op.count++] = address;
        }
        op.record = load_record();  // released when every address was looked up
      }
      if (shared) {
        uint32_t phases = 1;
        const uint32_t degree = shared_cycles(shared, phases);
        ++shared_accesses;
        shared_phases.add(phases);
        shared_bank_conflicts.add(degree - phases);
        free_at = c + std::max<uint64_t>(interval[unit], degree);
        ready = std::max<uint64_t>(ready, c + params.shared_latency + degree - 1);
      }
      if (global | local) {
        LsuOp& op = lsu.push();
        op.warp_slot = slot;
        op.op = info.access;
        op.next_line = 0;
        op.record = kNone;
        op.l1_bypass = info.l1_bypass;
        op.line_count = global ? coalesce(global, op.lines, op.masks) : 0;
        op.local_from = op.line_count;
        op.mshr_mark = w.lsu_full_mark != kNever ? w.lsu_full_mark : mshr_blocked_at(c);
        op.barrier = w.barrier;
        w.barrier = BarrierStamp{};
        if (local) {
          ++local_accesses;
          op.line_count = coalesce_local(local, local_sm_base + slot * local_warp_bytes, op.lines, op.masks, op.line_count);
        }
        if (info.access == AccessOp::kLoad || info.access == AccessOp::kAtomic) {
          op.record = load_record();  // released when the LSU has walked every line
        }
      }
      if (ready == 0) ready = c + 1;
    }
    w.lsu_full_mark = kNever;  // issued (a generic access may have gone to shared memory only)
    for (uint8_t i = 0; i < info.dst_count; ++i) w.ready_at[info.dst[i]] = ready;
    if (step.warp_exited) {
      w.exited = true;
      set_parked(slot, static_cast<uint8_t>(parked[slot] | kExitedBit));
    }
  }

  // GpuExtension::sector_mask_for(begin, end - begin) for begin < end <= the end of begin's
  // line, in closed form (it runs per lane and line of every global access).
  static uint8_t sectors_within_line(uint64_t begin, uint64_t end) {
    const uint32_t first = static_cast<uint32_t>(begin % kLineBytes) / kSectorBytes;
    const uint32_t last = static_cast<uint32_t>((end - 1) % kLineBytes) / kSectorBytes;
    return static_cast<uint8_t>(((2u << last) - 1) & ~((1u << first) - 1));
  }

  uint32_t coalesce(uint32_t lanes, uint64_t* lines, uint8_t* masks) const {
    if (const uint32_t n = coalesce_contiguous(lanes, lines, masks)) return n;
    uint32_t n = 0;
    uint32_t i = 0;  // the entry the previous piece went to (lines are unique: a hit there is the search's answer)
    for (; lanes; lanes &= lanes - 1) {
      const ptx::LaneAccess& a = step.accesses[static_cast<size_t>(__builtin_ctz(lanes))];
      uint64_t address = a.address;
      const uint64_t end = address + std::max<uint32_t>(a.size, 1);
      if (((end - 1) & ~uint64_t{kLineBytes - 1}) == (address & ~uint64_t{kLineBytes - 1}) && n != 0 &&
          lines[i] == (address & ~uint64_t{kLineBytes - 1})) {
        // The usual lane: within one line, the previous lane's.
        masks[i] = static_cast<uint8_t>(masks[i] | sectors_within_line(address, end));
        continue;
      }
      while (address < end) {
        const uint64_t line = address & ~uint64_t{kLineBytes - 1};
        const uint64_t line_end = std::min<uint64_t>(end, line + kLineBytes);
        const uint8_t mask = sectors_within_line(address, line_end);
        if (n == 0 || lines[i] != line) {
          i = 0;
          while (i < n && lines[i] != line) ++i;
          if (i == n) {
            if (n == kMaxLines) i = n - 1;  // cannot happen for aligned accesses of <= 32 B
            else {
              lines[n] = line;
              masks[n] = 0;
              ++n;
            }
          }
        }
        masks[i] = static_cast<uint8_t>(masks[i] | mask);
        address = line_end;
      }
    }
    return n;
  }

  // Appends the lines and sectors of the lanes' local accesses (offsets in their thread's
  // window) to lines[0..n), in the interleaved layout of the warp's window at `warp_base`:
  // word i of every lane is line warp_base + 128 i, lane l's bytes in sector l / 8.
  uint32_t coalesce_local(uint32_t lanes, uint64_t warp_base, uint64_t* lines, uint8_t* masks, uint32_t n) const {
    uint32_t i = kNone;  // the entry the previous word went to
    for (; lanes; lanes &= lanes - 1) {
      const uint32_t lane = static_cast<uint32_t>(__builtin_ctz(lanes));
      const ptx::LaneAccess& a = step.accesses[lane];
      const auto sector = static_cast<uint8_t>(1u << (lane * 4 / kSectorBytes));
      const uint64_t first = a.address / 4, last = (a.address + std::max<uint32_t>(a.size, 1) - 1) / 4;
      for (uint64_t word = first; word <= last; ++word) {
        const uint64_t line = warp_base + (word & local_words_mask) * kLineBytes;
        if (i == kNone || lines[i] != line) {
          i = 0;
          while (i < n && lines[i] != line) ++i;
          if (i == n) {
            if (n == kMaxLines) i = n - 1;  // cannot happen: 32 lanes x 4 words of 16 bytes
            else {
              lines[n] = line;
              masks[n] = 0;
              ++n;
            }
          }
        }
        masks[i] = static_cast<uint8_t>(masks[i] | sector);
      }
    }
    return n;
  }

  // coalesce() when the lanes, in lane order, access one contiguous ascending range with the
  // same size each (a unit-stride warp access): its lines in order with their sectors, the
  // same lists as the general walk. 0 when the lanes are not like that.
  uint32_t coalesce_contiguous(uint32_t lanes, uint64_t* lines, uint8_t* masks) const {
    if (lanes == 0) return 0;
    const ptx::LaneAccess& head = step.accesses[static_cast<size_t>(__builtin_ctz(lanes))];
    const uint32_t size = head.size;
    const uint64_t begin = head.address;
    uint64_t end = begin + std::max<uint32_t>(size, 1);
    for (uint32_t m = lanes & (lanes - 1); m; m &= m - 1) {
      const ptx::LaneAccess& a = step.accesses[static_cast<size_t>(__builtin_ctz(m))];
      if (a.address != end || a.size != size) return 0;
      end += std::max<uint32_t>(size, 1);
    }
    uint32_t n = 0;
    for (uint64_t address = begin; address < end && n < kMaxLines; ++n) {
      const uint64_t line = address & ~uint64_t{kLineBytes - 1};
      const uint64_t line_end = std::min<uint64_t>(end, line + kLineBytes);
      lines[n] = line;
      masks[n] = sectors_within_line(address, line_end);
      address = line_end;
    }
    return n;
  }

  void size_l1(uint64_t bytes) { l1.resize(bytes, params.l1_ways); }
  void configure_shared(uint64_t shared_bytes) {
    const uint64_t bytes = params.l1_capacity(shared_bytes);
    if (bytes == l1.bytes()) return;
    size_l1(bytes);
    ++l1_reconfigurations;
  }

  uint32_t alloc_mshr() {  // the lowest free index
    for (uint32_t word = 0; word < mshr_busy.size(); ++word) {
      const uint64_t free = ~mshr_busy[word];
      if (free == 0) continue;
      const uint32_t i = word * 64 + static_cast<uint32_t>(__builtin_ctzll(free));
      return i < mshrs.size() ? i : kNone;
    }
    return kNone;
  }

  // One line of the LSU's head instruction. Returns false when blocked (no MSHR / queue room).
  bool lsu_cycle(uint64_t c) {
    if (lsu.empty()) return false;
    LsuOp& op = lsu.front();
    if (op.next_line < op.line_count) {
      const uint64_t line = op.lines[op.next_line];
      const uint8_t mask = op.masks[op.next_line];
      const WarpSlot& w = warps[op.warp_slot];
      const CtaRecord& cta = ctas[w.cta];
      if (outgoing.full()) return false;
      if (op.op == AccessOp::kLoad) {
        L1Tags::Line* l = op.l1_bypass ? nullptr : l1.find(line);
        const uint8_t hit = l != nullptr ? static_cast<uint8_t>(l->valid & mask) : 0;
        const uint8_t miss = static_cast<uint8_t>(mask & ~hit);
        LoadRecord& rec = records[op.record];
        bool sent = false;  // the miss went out as a request of its own
        if (miss) {
          uint32_t m = kNone;  // the lowest busy MSHR this miss can merge into
          const bool maybe = line_filter[filter_bucket(line)] != 0;
          for (uint32_t word = 0; maybe && word < mshr_busy.size() && m == kNone; ++word) {
            for (uint64_t bits = mshr_busy[word]; bits; bits &= bits - 1) {
              const uint32_t i = word * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
              const Mshr& e = mshrs[i];
              if (!e.atomic && !e.fill_const && !e.fill_icache && e.line == line && (miss & ~e.mask) == 0 &&
                  e.waiter_count < e.waiters.size()) {
                m = i;
                break;
              }
            }
          }
          if (m != kNone) {
            ++mshr_merges;
          } else {
            m = alloc_mshr();
            if (m == kNone) return mshr_blocked(c);
            mshr_unblocked(c);
            Mshr& e = mshrs[m];
            set_mshr_used(m, true, line);
            e.atomic = false;
            e.fill_l1 = !op.l1_bypass;
            e.fill_const = false;
            e.fill_icache = false;
            e.mask = miss;
            e.waiter_count = 0;
            Outgoing& o = push_request(line, miss, AccessKind::Load, m, op.warp_slot, cta, c);
            o.l1_access = op.l1_bypass ? 0 : mask;
            note_mshr_wait(o, op, c);
            sent = true;
          }
          Mshr& e = mshrs[m];
          e.waiters[e.waiter_count++] = op.record;
          ++rec.pending;
        }
        if (l != nullptr && hit) l1.touch(*l);
        if (l1_observer != nullptr && !op.l1_bypass && (miss == 0 || !sent)) {
          note_l1_lookup(L1Lookup{c, cta.kernel_id, cta.linear, op.warp_slot, line, mask, miss != 0});
        }
        if (op.next_line >= op.local_from) local_load_sectors.add(static_cast<uint64_t>(popcount32(mask)));
        l1_sector_accesses.add(static_cast<uint64_t>(popcount32(mask)));
        l1_sector_hits.add(static_cast<uint64_t>(popcount32(hit)));
        l1_sector_misses.add(static_cast<uint64_t>(popcount32(miss)));
        rec.ready_floor = std::max<uint64_t>(rec.ready_floor, c + params.l1_hit_latency);
      } else if (op.op == AccessOp::kStore) {
        note_mshr_wait(push_request(line, mask, AccessKind::Store, kNone, op.warp_slot, cta, c), op, c);
        if (op.next_line >= op.local_from) {
          // Local lines are written through and allocated: a spill is read back soon.
          local_store_sectors.add(static_cast<uint64_t>(popcount32(mask)));
          l1.fill(line, mask);
        } else {
          l1.write(line, mask);  // write-through
        }
      } else {
        uint32_t m = kNone;
        if (op.record != kNone) {
          m = alloc_mshr();
          if (m == kNone) return mshr_blocked(c);
          mshr_unblocked(c);
          Mshr& e = mshrs[m];
          set_mshr_used(m, true, line);
          e.atomic = true;
          e.fill_const = false;
          e.fill_icache = false;
          e.mask = mask;
          e.waiter_count = 0;
          e.waiters[e.waiter_count++] = op.record;
          ++records[op.record].pending;
        }
        note_mshr_wait(push_request(line, mask, op.op == AccessOp::kAtomic ? AccessKind::Atomic : AccessKind::Reduction,
                                    m, op.warp_slot, cta, c),
                       op, c);
      }
      mshr_unblocked(c);
      ++op.next_line;
    }
    if (op.next_line == op.line_count) {
      if (op.record != kNone && --records[op.record].pending == 0) complete(op.record, c);
      if (lsu.full()) mark_all_dirty();  // a scan may have stalled a memory op on the full queue
      lsu.pop();
    }
    return true;
  }

  // Sectors of the 128-byte line that hold constant cache line `const_line`.
  uint8_t const_sectors(uint64_t const_line) const {
    return sectors_within_line(const_line, const_line + const_line_bytes);
  }
  ConstLine* const_find(uint64_t const_line) {
    const uint64_t tag = const_line / const_line_bytes;
    ConstLine* set = &const_cache[(tag % const_sets) * const_ways];
    for (uint32_t i = 0; i < const_ways; ++i) {
      if (set[i].tag == tag) return &set[i];
    }
    return nullptr;
  }
  // Allocates every constant cache line that the returned sectors of `line` hold whole.
  void const_fill(uint64_t line, uint8_t mask) {
    for (uint64_t at = line; at < line + kLineBytes; at += const_line_bytes) {
      const uint8_t need = const_sectors(at);
      if ((mask & need) != need || const_find(at) != nullptr) continue;
      const uint64_t tag = at / const_line_bytes;
      ConstLine* set = &const_cache[(tag % const_sets) * const_ways];
      ConstLine* victim = &set[0];
      for (uint32_t i = 1; i < const_ways; ++i) {
        if (set[i].last_use < victim->last_use) victim = &set[i];
      }
      victim->tag = tag;
      victim->last_use = ++const_clock;
    }
  }

  // One address of the constant queue's head instruction. Returns false when idle or blocked
  // (no MSHR / outgoing room for a miss).
  bool const_cycle(uint64_t c) {
    if (const_queue.empty()) return false;
    ConstOp& op = const_queue.front();
    if (op.next < op.count) {
      const uint64_t address = op.addresses[op.next];
      const uint64_t const_line = address & ~uint64_t{const_line_bytes - 1};
      LoadRecord& rec = records[op.record];
      if (ConstLine* hit = const_find(const_line)) {
        hit->last_use = ++const_clock;
        ++const_hits;
        rec.ready_floor = std::max<uint64_t>(rec.ready_floor, c + params.const_hit_latency);
      } else {
        if (outgoing.full()) return false;
        const uint64_t line = address & ~uint64_t{kLineBytes - 1};
        const uint8_t need = const_sectors(const_line);
        uint32_t m = kNone;  // a pending fill of this constant line
        bool pending_full = false;  // one exists, but its waiter slots are taken
        for (uint32_t word = 0; line_filter[filter_bucket(line)] != 0 && word < mshr_busy.size() && m == kNone; ++word) {
          for (uint64_t bits = mshr_busy[word]; bits; bits &= bits - 1) {
            const uint32_t i = word * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
            const Mshr& e = mshrs[i];
            if (e.fill_const && e.line == line && (need & ~e.mask) == 0) {
              if (e.waiter_count < e.waiters.size() || e.waiters[e.waiter_count - 1] == op.record) {
                m = i;
                break;
              }
              pending_full = true;
            }
          }
        }
        // The line is on its way: the queue waits for it (then hits) rather than asking L2 for the
        // same line again, as a constant cache merges every miss to a line in flight.
        if (m == kNone && pending_full) return false;
        if (m == kNone) {
          m = alloc_mshr();
          if (m == kNone) return false;
          Mshr& e = mshrs[m];
          set_mshr_used(m, true, line);
          e.atomic = false;
          e.fill_l1 = false;
          e.fill_const = true;
          e.fill_icache = false;
          e.mask = need;
          e.waiter_count = 0;
          push_request(line, need, AccessKind::ConstantLoad, m, op.warp_slot, ctas[warps[op.warp_slot].cta], c);
        } else {
          ++mshr_merges;
        }
        Mshr& e = mshrs[m];
        if (e.waiter_count == 0 || e.waiters[e.waiter_count - 1] != op.record) {  // once per fill
          e.waiters[e.waiter_count++] = op.record;
          ++rec.pending;
        }
        ++const_misses;
        rec.ready_floor = std::max<uint64_t>(rec.ready_floor, c + params.const_hit_latency);
      }
      ++const_accesses;
      ++op.next;
    }
    if (op.next == op.count) {
      if (--records[op.record].pending == 0) complete(op.record, c);
      if (const_queue.full()) mark_all_dirty();  // a scan may have stalled a constant load on the full queue
      const_queue.pop();
    }
    return true;
  }

  // Sends the head request if the port is free. Returns whether one went out.
  bool send_cycle(uint64_t c) {
    if (outgoing.empty() || request_in_flight || c < send_allowed) return false;
    Outgoing& o = outgoing.front();
    uint32_t extra = 0;
    const uint64_t physical = translation->translate(o.line, o.kind, extra);
    const tlm::tlm_command cmd = o.kind == AccessKind::Store ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND;
    tlm::tlm_generic_payload* gp = pool.allocate(cmd, physical, kLineBytes);
    GpuExtension* ext = gpu_extension(*gp);
    ext->sm_id = owner->index();
    ext->warp_id = o.warp_slot;
    ext->cta_id = o.cta;
    ext->kernel_id = o.kernel_id;
    ext->sector_mask = o.mask;
    ext->kind = o.kind;
    ext->queued_cycle = o.queued_cycle;
    ext->l1_access = o.l1_access;
    ext->request_seq = next_request_seq++;
    ext->mshr_wait = o.mshr_wait;
    ext->mshr_unblocked_by = o.mshr_unblocked_by;
    ext->barrier_wait = o.barrier.wait;
    ext->barrier_arrived = o.barrier.arrived;
    ext->barrier_release = o.barrier.release;
    ext->barrier_seq = o.barrier.seq;
    if (o.mshr != kNone) {
      mshrs[o.mshr].gp = gp;
      mshrs[o.mshr].request_seq = ext->request_seq;
    }
    if (o.kind == AccessKind::ConstantLoad) {
      ++const_requests;
    } else if (o.kind == AccessKind::InstructionFetch) {
      ++icache_requests;
    } else {
      ++line_requests;
      sector_requests.add(static_cast<uint64_t>(popcount32(o.mask)));
    }
    if (o.kind == AccessKind::Store) ++store_requests;
    if (o.kind == AccessKind::Atomic || o.kind == AccessKind::Reduction) ++atomic_requests;
    outgoing.pop();
    if (windowed) {  // accepted at once here; the stepper sends it at its cycle's time
      outbox_requests.push_back({c, gp});
      send_allowed = c + 1 + extra;
      return true;
    }
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    request_in_flight = true;
    in_flight = gp;
    const tlm::tlm_sync_enum status = owner->mem->nb_transport_fw(*gp, phase, delay);
    if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
      request_in_flight = false;
      send_allowed = c + 1 + extra;
      response(*gp, c);
    } else if (status == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
      request_in_flight = false;
      send_allowed = c + 1 + extra;
    }
    return true;
  }

  // A response arrived during cycle `c` (or at its edge): it takes effect at c + 1.
  void response(tlm::tlm_generic_payload& gp, uint64_t c) {
    for (uint32_t word = 0; word < mshr_busy.size(); ++word) {
      for (uint64_t bits = mshr_busy[word]; bits; bits &= bits - 1) {
        const uint32_t i = word * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
        if (mshrs[i].gp == &gp) {
          Response& r = responses.push();
          r.ready_cycle = c + 1;
          r.mshr = i;
          // Kept in ready order: responses annotated with different delays may arrive out of it.
          for (size_t k = responses.size() - 1;
               k > 0 && responses.at(k - 1).ready_cycle > responses.at(k).ready_cycle; --k) {
            std::swap(responses.at(k - 1), responses.at(k));
          }
          return;
        }
      }
    }
    gp.release();  // a store: nothing waits for it
  }

  void apply_responses(uint64_t c) {
    while (!responses.empty() && responses.front().ready_cycle <= c) {
      const uint32_t mi = responses.front().mshr;
      Mshr& e = mshrs[mi];
      responses.pop();
      if (!e.atomic && e.fill_l1) l1.fill(e.line, e.mask);
      if (e.fill_const) const_fill(e.line, e.mask);
      if (e.fill_icache) {
        icache_fill(e.line, e.mask);
        mark_all_dirty();  // warps stalled on the fetch may issue
      }
      for (uint32_t i = 0; i < e.waiter_count; ++i) {
        if (--records[e.waiters[i]].pending == 0) complete(e.waiters[i], c);
      }
      set_mshr_used(mi, false);
      last_freed_seq = e.request_seq;
      e.gp->release();
      e.gp = nullptr;
    }
  }

  bool memory_idle() const {
    if (!lsu.empty() || !const_queue.empty() || !outgoing.empty() || !responses.empty() || request_in_flight) return false;
    if (!outbox_requests.empty()) return false;  // windowed: sent at the boundary
    for (const uint64_t word : mshr_busy) {
      if (word != 0) return false;
    }
    return true;
  }

  // A launched CTA's warps take free warp slots; they issue from launch.start_cycle on.
  void start_warps(const Launch& launch) {
    if (launch.shared_bytes != kNever) configure_shared(launch.shared_bytes);
    ptx::KernelRun& run = *launch.run;
    const uint32_t n = run.warps_per_cta();
    if (n > max_warps - resident_warps) throw std::logic_error("Sm::launch_cta: not enough warp slots");
    run.init_cta(launch.slot);  // the CTA's functional state, on the thread that steps it
    uint32_t ci = 0;
    while (ci < ctas.size() && ctas[ci].used) ++ci;
    if (ci == ctas.size()) ctas.emplace_back();
    CtaRecord& cta = ctas[ci];
    cta.used = true;
    cta.run = &run;
    cta.kernel_id = launch.kernel_id;
    cta.linear = launch.linear;
    cta.slot = launch.slot;
    cta.start_cycle = launch.start_cycle;
    cta.warp_slots.clear();
    const uint64_t code_base = regions::kernel_code_offset(run.kernel().name);
    uint32_t slot = 0;
    for (uint32_t w = 0; w < n; ++w) {
      while (warps[slot].used) ++slot;
      WarpSlot& ws = warps[slot];
      ws.used = true;
      ws.cta = ci;
      ws.warp = w;
      ws.age = next_age++;
      ws.exited = false;
      ws.outstanding = 0;
      ws.memory_wait = false;
      parked[slot] = 0;
      position[slot] = static_cast<uint32_t>(order[slot % subcores].size());
      count_parked(slot, true);
      ws.scoreboard_until = 0;
      ws.operands_known = false;
      ws.start_cycle = cta.start_cycle;
      ws.next = nullptr;
      ws.code_base = code_base;
      ws.fetched_line = kNever;
      ws.missed_line = kNever;
      ws.settled_line = kNever;
      ws.lsu_full_mark = kNever;
      ws.barrier_arrived = kNever;
      ws.barrier = BarrierStamp{};
      ws.ready_at.assign(run.register_slots(), 0);
      ws.async_committed = 0;
      ws.async_in_flight.fill(0);
      cta.warp_slots.push_back(slot);
      order[slot % subcores].push_back(slot);  // ages increase: stays sorted
      ++resident_warps;
    }
    retire_pending = true;
    mark_all_dirty();
  }

  // Retires finished CTAs (and all CTAs of a kernel that faulted).
  void retire_done() {
    if (!retire_pending) {
      // Nothing of this SM moved: a CTA can only have become done through a fault elsewhere.
      // Usually every CTA runs the same kernel: ask each run once in a row.
      bool faulted = false;
      const ptx::KernelRun* asked = nullptr;
      for (const CtaRecord& cta : ctas) {
        if (!cta.used || cta.run == asked) continue;
        asked = cta.run;
        if (!cta.run->ok()) {
          faulted = true;
          break;
        }
      }
      if (!faulted) return;
    }
    retire_pending = false;
    for (uint32_t ci = 0; ci < ctas.size(); ++ci) {
      CtaRecord& cta = ctas[ci];
      if (!cta.used) continue;
      bool done = !cta.run->ok();
      if (!done && cta.run->cta_done(cta.slot)) {
        done = true;
        for (uint32_t ws : cta.warp_slots) done = done && warps[ws].outstanding == 0;
      }
      if (!done) continue;
      for (uint32_t ws : cta.warp_slots) {
        WarpSlot& w = warps[ws];
        if (w.outstanding != 0) return;  // a faulted kernel: wait for its loads to drain
      }
      for (uint32_t ws : cta.warp_slots) {
        warps[ws].used = false;
        count_parked(ws, false);
        auto& o = order[ws % subcores];
        const auto at = std::find(o.begin(), o.end(), ws);
        const auto p = static_cast<uint32_t>(at - o.begin());
        o.erase(at);
        if (bits_ok) {  // later positions move down by one
          const uint32_t k = ws % subcores;
          const uint64_t below = (uint64_t{1} << p) - 1;
          live_bits[k] = (live_bits[k] & below) | ((live_bits[k] >> 1) & ~below);
          unparked_bits[k] = (unparked_bits[k] & below) | ((unparked_bits[k] >> 1) & ~below);
          for (uint32_t i = p; i < o.size(); ++i) position[o[i]] = i;
        }
        if (last_issued[ws % subcores] == ws) last_issued[ws % subcores] = kNone;
        --resident_warps;
      }
      if (cta.run->observed()) --observed_ctas;
      if (windowed) {  // the kernel run and the scheduler are shared: the stepper delivers it
        outbox_ctas.push_back({retire_cycle, cta.run, cta.slot, cta.kernel_id, cta.linear});
      } else {
        cta.run->retire_cta(cta.slot);
      }
      cta.used = false;
      mark_all_dirty();
      ++ctas_completed;
      if (!windowed && owner->cta_done_) owner->cta_done_(owner->index(), *cta.run, cta.kernel_id, cta.linear);
    }
  }

  // Sub-cores t_k.. of cycle c. Staged (the parallel phase): stops before issuing an
  // instruction with shared side effects, leaving t_k at that sub-core; the serial phase
  // redoes that sub-core's scan (check() is idempotent until something issues) and goes on.
  void run_subcores(uint64_t c, bool staged) {
    for (uint32_t k = t_k; k < subcores; ++k) {
      if (c < scan_valid_until[k]) {  // the last scan's outcome still holds
        t_wake = std::min(t_wake, scan_valid_until[k]);
        ++*stall_counter[last_reason[k]];
        continue;
      }
      uint64_t wake = kNever;  // this sub-core's
      auto& o = order[k];
      int first_reason = -1;
      bool first = true;
      uint32_t chosen = kNone;
      auto consider = [&](uint32_t slot) __attribute__((always_inline)) {
        const uint8_t flags = parked[slot];
        if (flags & kExitedBit) return false;
        if (flags & kMemoryWaitBit) {  // check()'s verdict without touching the warp (it has started)
          if (first) {
            first_reason = kStallMemory;
            first = false;
          }
          return false;
        }
        const int reason = check(k, slot, c, wake);
        if (first) {
          first_reason = reason;
          first = false;
        }
        if (reason < 0) {
          chosen = slot;
          return true;
        }
        return false;
      };
      if (unparked[k] == 0) {
        // Every live warp waits on memory (check() says kStallMemory, changing nothing): the
        // walk would find no warp to issue, and its first live warp gives the stall reason.
        if (live[k] != 0) {
          first_reason = kStallMemory;
          first = false;
        }
      } else if (params.scheduler == WarpSchedulerPolicy::kGto) {
        const uint32_t last = last_issued[k];
        if (last == kNone || !consider(last)) {
          if (bits_ok) {
            // The walk below without visiting parked warps: only the first live warp's reason
            // matters when it is parked (kStallMemory); unparked warps in order get check().
            const uint64_t skip = last != kNone ? uint64_t{1} << position[last] : 0;
            uint64_t candidates = unparked_bits[k] & ~skip;
            const uint64_t alive = live_bits[k] & ~skip;
            if (first && alive != 0 && (alive & (~alive + 1)) != (candidates & (~candidates + 1))) {
              first_reason = kStallMemory;
              first = false;
            }
            for (; candidates; candidates &= candidates - 1) {
              if (consider(o[static_cast<uint32_t>(__builtin_ctzll(candidates))])) break;
            }
          } else {
            for (uint32_t slot : o) {
              if (slot != last && consider(slot)) break;
            }
          }
        }
      } else {
        const size_t n = o.size();
        size_t start = 0;
        if (last_issued[k] != kNone) {
          const auto it = std::find(o.begin(), o.end(), last_issued[k]);
          start = it == o.end() ? 0 : static_cast<size_t>(it - o.begin()) + 1;
        }
        for (size_t i = 0; i < n; ++i) {
          if (consider(o[(start + i) % n])) break;
        }
      }
      t_wake = std::min(t_wake, wake);
      if (chosen != kNone) {
        if (staged && warps[chosen].next->serial) {
          t_k = k;
          t_suspended = true;
          return;
        }
        scan_valid_until[k] = 0;
        issue(k, chosen, c, staged);
        last_issued[k] = chosen;
        last_reason[k] = -1;
        t_issued_any = true;
      } else {
        last_reason[k] = first ? kStallIdle : first_reason;
        ++*stall_counter[last_reason[k]];
        scan_valid_until[k] = wake;
      }
    }
    t_k = subcores;
    t_suspended = false;
  }

  // Phase 1 of cycle c: this SM's state only.
  void tick_parallel(uint64_t c) {
    apply_responses(c);
    t_wake = kNever;
    t_issued_any = false;
    t_k = 0;
    t_suspended = false;
    t_lsu_done = false;
    run_subcores(c, true);
    if (!t_suspended) {
      t_lsu_busy = lsu_cycle(c);
      t_lsu_busy = const_cycle(c) || t_lsu_busy;
      t_lsu_done = true;
    }
  }

  // Phase 2 of cycle c. Returns the next cycle at which anything can happen without an outside
  // event (c + 1 when busy; kNever when only a response or a launch can change things).
  uint64_t tick_serial(uint64_t c) {
    if (!barrier_notes.empty() && !windowed) tell_barrier_releases(c);
    if (!defer_commit) commit_stages();
    if (t_suspended) run_subcores(c, false);
    if (!t_lsu_done) {
      t_lsu_busy = lsu_cycle(c);
      t_lsu_busy = const_cycle(c) || t_lsu_busy;
    }
    uint64_t wake = t_wake;
    bool busy = t_lsu_busy;
    if (t_issued_any) {
      ++active_cycles;
      busy = true;
    }
    if (send_cycle(c)) busy = true;
    if (!outgoing.empty() && !request_in_flight) busy = true;
    ++cycles;
    resident_warp_cycles.add(resident_warps);
    retire_cycle = c;
    retire_done();
    if (busy) return c + 1;
    // A response queued for a later edge is a wake of its own: its notification may have been
    // merged into this very cycle's step (it arrived at this edge's time before the step ran).
    if (!responses.empty()) wake = std::min(wake, std::max(c + 1, responses.front().ready_cycle));
    if (wake == kNever && resident_warps > 0 && memory_idle()) {
      // Nothing can ever wake these warps: every live warp waits at a barrier.
      if (windowed) {  // reporting fails the shared kernel run: at the window's end
        deadlock_pending = true;
        return kNever;
      }
      for (auto& cta : ctas) {
        if (cta.used && cta.run->ok()) cta.run->report_deadlock(cta.slot);
      }
      retire_pending = true;
      retire_done();
      return c + 1;
    }
    return wake;
  }

  void commit_stages() {
    for (auto& entry : stages) {
      if (entry.stage.empty()) continue;
      if (logging) append_to_log(entry_for(logs, *entry.run, entry.kernel_id), entry.stage);
      entry.run->commit(entry.stage);
    }
  }
  // The unstaged finish commits the stages of its cycles as it goes: the log repeats them.
  static void append_to_log(ptx::StepStage& log, const ptx::StepStage& stage) {
    for (const ptx::StepStage::Store& store : stage.stores) {
      log.stores.push_back({store.address, static_cast<uint32_t>(log.bytes.size()), store.size});
      log.bytes.insert(log.bytes.end(), stage.bytes.begin() + store.offset, stage.bytes.begin() + store.offset + store.size);
    }
    log.warp_instructions += stage.warp_instructions;
    log.thread_instructions += stage.thread_instructions;
    if (log.status == ptx::LaunchStatus::kSuccess && stage.status != ptx::LaunchStatus::kSuccess) {
      log.status = stage.status;
      log.message = stage.message;
    }
  }

  // Sends the deferred requests stamped at or before `c`, one BEGIN_REQ outstanding at a time.
  void send_deferred(uint64_t c) {
    while (replay_in_flight == nullptr && deferred_request_head < deferred_requests.size() &&
           deferred_requests[deferred_request_head].cycle <= c) {
      tlm::tlm_generic_payload* gp = deferred_requests[deferred_request_head++].gp;
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      replay_in_flight = gp;
      const tlm::tlm_sync_enum status = owner->mem->nb_transport_fw(*gp, phase, delay);
      if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
        replay_in_flight = nullptr;
        owner->arrive(*gp, c);
      } else if (status == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
        replay_in_flight = nullptr;
      }
    }
    if (deferred_request_head == deferred_requests.size()) {
      deferred_requests.clear();
      deferred_request_head = 0;
    }
  }

  uint64_t tick(uint64_t c) {
    tick_parallel(c);
    return tick_serial(c);
  }

  // Accounts `n` cycles identical to the last ticked one (nothing issued, nothing moved).
  void account_skipped(uint64_t n) {
    if (n == 0) return;
    cycles.add(n);
    resident_warp_cycles.add(n * resident_warps);
    for (uint32_t k = 0; k < subcores; ++k) stall_counter[last_reason[k]]->add(n);
  }

  bool idle() const { return resident_warps == 0 && memory_idle(); }

  // Warp `slot` stepped a barrier instruction at cycle c: it waits there now, or it passed, and
  // then the warps of its CTA that waited and are free now were released by its arrival.
  void note_barrier(uint32_t slot, uint64_t c) {
    WarpSlot& w = warps[slot];
    CtaRecord& cta = ctas[w.cta];
    if (!cta.run->warp_ready(cta.slot, w.warp)) {
      w.barrier_arrived = c;
      return;
    }
    const uint64_t seq = ++barrier_releases;
    if (l1_observer != nullptr) barrier_notes.push_back(BarrierRelease{c, cta.kernel_id, cta.linear, seq, {}});
    for (const uint32_t other : cta.warp_slots) {
      WarpSlot& o = warps[other];
      if (o.barrier_arrived == kNever || !cta.run->warp_ready(cta.slot, o.warp)) continue;
      const uint64_t wait = uint64_t{o.barrier.wait} + (c - o.barrier_arrived);
      o.barrier.wait = static_cast<uint32_t>(std::min<uint64_t>(wait, 0xffffffffu));
      o.barrier.arrived = o.barrier_arrived;
      o.barrier.release = c;
      o.barrier.seq = seq;
      if (l1_observer != nullptr) barrier_notes.back().arrivals.emplace_back(other, o.barrier_arrived);
      o.barrier_arrived = kNever;
    }
    // Its own arrival released it: it waited for nobody (but another warp may arrive last on replay).
    w.barrier.arrived = w.barrier.release = c;
    w.barrier.seq = seq;
    if (l1_observer != nullptr) barrier_notes.back().arrivals.emplace_back(slot, c);
  }

  // Tells the observer the barrier releases noted up to cycle c (from the SystemC thread).
  void tell_barrier_releases(uint64_t c) {
    size_t n = 0;
    while (n < barrier_notes.size() && barrier_notes[n].cycle <= c) l1_observer->barrier_release(owner->index(), barrier_notes[n++]);
    barrier_notes.erase(barrier_notes.begin(), barrier_notes.begin() + static_cast<long>(n));
  }

  void note_l1_lookup(const L1Lookup& lookup) {
    if (windowed) {
      l1_notes.push_back(lookup);  // this may be a worker thread: told at the boundary
    } else {
      l1_observer->l1_lookup(owner->index(), lookup);
    }
  }
  void tell_l1_lookups(uint64_t c) {
    size_t n = 0;
    while (n < l1_notes.size() && l1_notes[n].cycle <= c) l1_observer->l1_lookup(owner->index(), l1_notes[n++]);
    l1_notes.erase(l1_notes.begin(), l1_notes.begin() + static_cast<long>(n));
  }

  // A request of LSU instruction `op`, queued at cycle c: how long the missing MSHRs held it, and
  // the barriers its warp passed before the instruction.
  void note_mshr_wait(Outgoing& o, const LsuOp& op, uint64_t c) {
    o.barrier = op.barrier;
    mshr_unblocked(c);
    const uint64_t wait = mshr_blocked_at(c) - op.mshr_mark;
    if (wait == 0) return;
    o.mshr_wait = static_cast<uint32_t>(std::min<uint64_t>(wait, 0xffffffffu));
    o.mshr_unblocked_by = unblocked_by;
  }

  Outgoing& push_request(uint64_t line, uint8_t mask, AccessKind kind, uint32_t mshr, uint32_t warp_slot,
                         const CtaRecord& cta, uint64_t c) {
    Outgoing& o = outgoing.push();
    o.queued_cycle = c;
    o.l1_access = 0;
    o.mshr_wait = 0;
    o.mshr_unblocked_by = 0;
    o.barrier = BarrierStamp{};
    o.line = line;
    o.mask = mask;
    o.kind = kind;
    o.mshr = mshr;
    o.warp_slot = warp_slot;
    o.cta = static_cast<uint32_t>(cta.linear);
    o.kernel_id = cta.kernel_id;
    return o;
  }
};


Sm::Sm(sc_core::sc_module_name name, const SmParams& params, uint32_t sm_index, const ClockDomain& clock,
       stats::Registry& stats, AddressTranslation* translation)
    : sc_core::sc_module(name),
      mem("mem"),
      index_(sm_index),
      impl_(std::make_unique<Impl>(params, sm_index, clock, stats, translation)) {
  Impl& s = *impl_;
  s.stall_counter[kStallScoreboard] = &s.stall_scoreboard;
  s.stall_counter[kStallMemory] = &s.stall_memory;
  s.stall_counter[kStallBarrier] = &s.stall_barrier;
  s.stall_counter[kStallFuBusy] = &s.stall_fu_busy;
  s.stall_counter[kStallIdle] = &s.stall_idle;
  s.stall_counter[kStallFetch] = &s.stall_fetch;
  s.owner = this;
  mem.register_nb_transport_bw(this, &Sm::nb_transport_bw);
  SC_HAS_PROCESS(Sm);
  SC_THREAD(thread);
}

Sm::~Sm() = default;

uint32_t Sm::free_warp_slots() const { return impl_->max_warps - impl_->resident_warps; }

uint32_t Sm::resident_ctas() const {
  uint32_t n = 0;
  for (const auto& c : impl_->ctas) n += c.used ? 1 : 0;
  return n;
}

void Sm::configure_shared(uint64_t shared_bytes) {
  Impl& s = *impl_;
  if (stepper_ != nullptr && s.windowed) {  // the SM may be running a window: its next launch carries it
    s.shared_for_launch = shared_bytes;
    return;
  }
  s.configure_shared(shared_bytes);
}

void Sm::launch_cta(ptx::KernelRun& run, uint64_t kernel_id, uint64_t linear) {
  Impl& s = *impl_;
  // The edge after now; windowed, the start of the window after next (SmStepper::arrival_cycle),
  // as for any event from outside the SMs, whether or not this SM is busy in the next window.
  uint64_t start_cycle = s.clock.cycle_at(current_time()) + 1;
  if (stepper_ == nullptr || !s.windowed) {
    if (run.observed()) ++s.observed_ctas;
    s.start_warps({&run, kernel_id, linear, run.reserve_cta(linear), start_cycle});
    notify_wake();
    return;
  }
  start_cycle = stepper_->arrival_cycle(start_cycle);
  // Windowed: the SMs may be running a window. Reserving the CTA's slot of the run touches
  // nothing they read unless the run's slot table grows, and an observed run is counted here (the
  // stepper reads the count before it hands a window to the pool); the CTA's functional state
  // and warps are this SM's thread's to set up, in the window holding the CTA's first cycle
  // (apply_arrivals), as a response is applied.
  if (run.observed() || !run.can_start_cta_in_place()) stepper_->quiesce();
  if (run.observed()) ++s.observed_ctas;
  if (s.inbox.empty() && s.launch_inbox.empty()) stepper_->note_arrival(index_);
  s.launch_inbox.push_back({&run, kernel_id, linear, run.reserve_cta(linear), start_cycle, s.shared_for_launch});
  s.shared_for_launch = kNever;
  s.inbox_first = std::min(s.inbox_first, start_cycle);
}

void Sm::notify_wake(const sc_core::sc_time& delay) {
  if (stepper_ != nullptr) stepper_->wake(index_, impl_->clock.cycle_at(current_time() + delay) + 1);
  else wake_.notify(delay);
}

void Sm::step_parallel(uint64_t c) { impl_->tick_parallel(c); }

uint64_t Sm::step_serial(uint64_t c) {
  const uint64_t next = impl_->tick_serial(c);
  cycle_ = c;
  return next;
}

void Sm::account_skipped(uint64_t n) { impl_->account_skipped(n); }

void Sm::set_windowed(bool on) { impl_->windowed = on; }

void Sm::set_trace_observer(TraceObserver* observer) {
  impl_->l1_observer = observer != nullptr && observer->wants_l1_lookups() ? observer : nullptr;
}

void Sm::set_defer_commit(bool on) { impl_->defer_commit = on; }

bool Sm::suspended() const { return impl_->t_suspended; }

void Sm::commit_stages() { impl_->commit_stages(); }

void Sm::finish_window() {
  Impl& s = *impl_;
  if (!s.deadlock_pending) return;
  s.deadlock_pending = false;
  for (auto& cta : s.ctas) {
    if (!cta.used || !cta.run->ok()) continue;
    cta.run->report_deadlock(cta.slot);
    if (s.partition == Partition::kOwned && !cta.run->ok())
      s.run_faults.push_back({cta.kernel_id, cta.run->status(), cta.run->message()});
  }
  s.retire_pending = true;
  s.retire_done();
}

namespace {
// A request as it crosses to another rank: the payload's fields and its GpuExtension.
struct WireRequest {
  uint64_t cycle, address, kernel_id, queued_cycle, request_seq, mshr_unblocked_by, barrier_arrived, barrier_release,
      barrier_seq;
  uint32_t length, sm_id, warp_id, cta_id, mshr_wait, barrier_wait;
  uint8_t command, sector_mask, l1_access;
  AccessKind kind;
};
// The GpuExtension's fields, between an extension and a WireRequest (either way).
template <typename From, typename To>
void copy_extension_fields(const From& from, To& to) {
  to.sm_id = from.sm_id;
  to.warp_id = from.warp_id;
  to.cta_id = from.cta_id;
  to.kernel_id = from.kernel_id;
  to.sector_mask = from.sector_mask;
  to.kind = from.kind;
  to.queued_cycle = from.queued_cycle;
  to.request_seq = from.request_seq;
  to.mshr_wait = from.mshr_wait;
  to.mshr_unblocked_by = from.mshr_unblocked_by;
  to.barrier_wait = from.barrier_wait;
  to.barrier_arrived = from.barrier_arrived;
  to.barrier_release = from.barrier_release;
  to.barrier_seq = from.barrier_seq;
  to.l1_access = from.l1_access;
}
struct WireCta {
  uint64_t cycle, kernel_id, linear;
};
}  // namespace

void Sm::set_partition(Partition partition) { impl_->partition = partition; }

namespace {
// The non-empty entries of `entries` (stages or logs), each named by its kernel id.
template <typename Entries>
void put_entries(parallel::Message& out, const Entries& entries) {
  uint32_t count = 0;
  for (const auto& entry : entries) count += entry.stage.empty() ? 0 : 1;
  out.put(count);
  for (const auto& entry : entries) {
    if (entry.stage.empty()) continue;
    const ptx::StepStage& stage = entry.stage;
    out.put(entry.kernel_id);
    out.put(stage.warp_instructions);
    out.put(stage.thread_instructions);
    out.put(stage.status);
    out.put_string(stage.message);
    out.put_bytes(stage.stores.data(), stage.stores.size() * sizeof(ptx::StepStage::Store));
    out.put_bytes(stage.bytes.data(), stage.bytes.size());
    out.put(static_cast<uint32_t>(stage.printf_lines.size()));
    for (const std::string& line : stage.printf_lines) out.put_string(line);
  }
}
}  // namespace

void Sm::export_stages(parallel::Message& out) const { put_entries(out, impl_->stages); }

void Sm::import_stages(parallel::Message& in) { impl_->commit_entries(in); }

void Sm::begin_log() { impl_->logging = true; }

void Sm::export_log(parallel::Message& out) {
  Impl& s = *impl_;
  s.logging = false;
  bool runtime_call = false;  // other ranks cannot repeat it
  for (const auto& entry : s.logs) runtime_call = runtime_call || entry.stage.runtime_call;
  out.put(static_cast<uint8_t>(runtime_call));
  put_entries(out, s.logs);
  for (auto& entry : s.logs) {  // applied here already
    entry.stage = ptx::StepStage{};
  }
}

bool Sm::import_log(parallel::Message& in) {
  // A device-runtime call's allocations exist on the owner alone: its record is not committed.
  if (in.get<uint8_t>() != 0) return true;
  impl_->commit_entries(in);
  return false;
}

void Sm::Impl::commit_entries(parallel::Message& in) {
  const auto count = in.get<uint32_t>();
  for (uint32_t k = 0; k < count; ++k) {
    ptx::KernelRun& run = remote_run(in.get<uint64_t>());
    ptx::StepStage stage;
    stage.warp_instructions = in.get<uint64_t>();
    stage.thread_instructions = in.get<uint64_t>();
    stage.status = in.get<ptx::LaunchStatus>();
    stage.message = in.get_string();
    size_t size = 0;
    const uint8_t* stores = in.get_bytes(size);
    stage.stores.resize(size / sizeof(ptx::StepStage::Store));
    std::memcpy(stage.stores.data(), stores, size);
    const uint8_t* bytes = in.get_bytes(size);
    stage.bytes.assign(bytes, bytes + size);
    const auto lines = in.get<uint32_t>();
    for (uint32_t line = 0; line < lines; ++line) stage.printf_lines.push_back(in.get_string());
    run.commit(stage);
  }
}

void Sm::export_window(parallel::Message& out) {
  Impl& s = *impl_;
  out.put(static_cast<uint32_t>(s.run_faults.size()));
  for (const Impl::RunFault& fault : s.run_faults) {
    out.put(fault.kernel_id);
    out.put(fault.status);
    out.put_string(fault.message);
  }
  s.run_faults.clear();
  out.put(static_cast<uint32_t>(s.outbox_requests.size()));
  for (const Impl::DeferredRequest& d : s.outbox_requests) {
    const GpuExtension& ext = *gpu_extension(*d.gp);
    WireRequest w{};
    w.cycle = d.cycle;
    w.address = d.gp->get_address();
    w.length = d.gp->get_data_length();
    w.command = static_cast<uint8_t>(d.gp->get_command());
    copy_extension_fields(ext, w);
    out.put(w);
  }
  out.put(static_cast<uint32_t>(s.outbox_ctas.size()));
  for (const Impl::DeferredCta& d : s.outbox_ctas) out.put(WireCta{d.cycle, d.kernel_id, d.linear});
  out.put(cycle_);
}

void Sm::import_window(parallel::Message& in) {
  Impl& s = *impl_;
  const auto faults = in.get<uint32_t>();
  for (uint32_t k = 0; k < faults; ++k) {
    ptx::KernelRun& run = s.remote_run(in.get<uint64_t>());
    ptx::StepStage failed;
    failed.status = in.get<ptx::LaunchStatus>();
    failed.message = in.get_string();
    run.commit(failed);
  }
  const auto requests = in.get<uint32_t>();
  for (uint32_t k = 0; k < requests; ++k) {
    const auto w = in.get<WireRequest>();
    tlm::tlm_generic_payload* gp = s.pool.allocate(static_cast<tlm::tlm_command>(w.command), w.address, w.length);
    copy_extension_fields(w, *gpu_extension(*gp));
    s.deferred_requests.push_back({w.cycle, gp});
  }
  const auto ctas = in.get<uint32_t>();
  for (uint32_t k = 0; k < ctas; ++k) {
    const auto w = in.get<WireCta>();
    const auto at = std::find_if(s.remote_ctas.begin(), s.remote_ctas.end(), [&](const Impl::RemoteCta& cta) {
      return cta.kernel_id == w.kernel_id && cta.linear == w.linear;
    });
    if (at == s.remote_ctas.end()) {
      throw std::runtime_error("SM " + std::to_string(index_) + ": the rank stepping it completed CTA " +
                               std::to_string(w.linear) + " of kernel " + std::to_string(w.kernel_id) +
                               ", which was not launched on it here");
    }
    s.deferred_ctas.push_back({w.cycle, at->run, at->slot, w.kernel_id, w.linear});
    s.remote_ctas.erase(at);
  }
  cycle_ = in.get<uint64_t>();
}

void Sm::export_statistics(parallel::Message& out) const {
  std::vector<uint64_t> values;
  impl_->group.save_values(values);
  out.put_bytes(values.data(), values.size() * sizeof(uint64_t));
}

void Sm::import_statistics(parallel::Message& in) {
  size_t size = 0;
  const uint8_t* bytes = in.get_bytes(size);
  std::vector<uint64_t> values(size / sizeof(uint64_t));
  std::memcpy(values.data(), bytes, size);
  impl_->group.load_values(values);
}

uint64_t Sm::next_deferred() const {
  const Impl& s = *impl_;
  uint64_t next = kNever;
  if (s.replay_in_flight == nullptr && s.deferred_request_head < s.deferred_requests.size())
    next = s.deferred_requests[s.deferred_request_head].cycle;
  if (!s.deferred_ctas.empty()) next = std::min(next, s.deferred_ctas.front().cycle);
  return next;
}

bool Sm::deferred_pending() const {
  const Impl& s = *impl_;
  return s.deferred_request_head < s.deferred_requests.size() || !s.deferred_ctas.empty();
}

void Sm::deliver_deferred(uint64_t c) {
  Impl& s = *impl_;
  if (!s.l1_notes.empty()) s.tell_l1_lookups(c);
  if (!s.barrier_notes.empty()) s.tell_barrier_releases(c);
  s.send_deferred(c);
  size_t done = 0;
  while (done < s.deferred_ctas.size() && s.deferred_ctas[done].cycle <= c) ++done;
  if (done == 0) return;
  // No quiesce: retiring frees the run's slot (the SystemC thread's), the scheduler's callback
  // changes its own accounting and wakes its process; what reads the SMs' state (a kernel's
  // end, a host-side memory change, a launch that grows the run's slot table) quiesces itself.
  // Copied out first: the callback may launch a CTA here, which may complete in a later window.
  std::vector<Impl::DeferredCta> now(s.deferred_ctas.begin(), s.deferred_ctas.begin() + static_cast<long>(done));
  s.deferred_ctas.erase(s.deferred_ctas.begin(), s.deferred_ctas.begin() + static_cast<long>(done));
  for (const auto& d : now) {
    d.run->retire_cta(d.slot);
    if (cta_done_) cta_done_(index_, *d.run, d.kernel_id, d.linear);
  }
}

void Sm::hand_over() {
  Impl& s = *impl_;
  s.deferred_requests.insert(s.deferred_requests.end(), s.outbox_requests.begin(), s.outbox_requests.end());
  s.outbox_requests.clear();
  s.deferred_ctas.insert(s.deferred_ctas.end(), s.outbox_ctas.begin(), s.outbox_ctas.end());
  s.outbox_ctas.clear();
}

void Sm::arrive(tlm::tlm_generic_payload& gp, uint64_t c) {
  Impl& s = *impl_;
  if (s.inbox.empty() && s.launch_inbox.empty()) stepper_->note_arrival(index_);
  const uint64_t cycle = stepper_->arrival_cycle(c + 1) - 1;
  s.inbox.push_back({&gp, cycle});
  s.inbox_first = std::min(s.inbox_first, cycle + 1);
}

uint64_t Sm::take_inbox() {
  Impl& s = *impl_;
  if (s.partition == Partition::kRemote) {  // another rank applies them; this one keeps the CTAs' names
    for (const Impl::Arrival& a : s.inbox) a.gp->release();
    s.inbox.clear();
    for (const Impl::Launch& l : s.launch_inbox) s.remote_ctas.push_back({l.kernel_id, l.linear, l.run, l.slot});
    s.launch_inbox.clear();
    const uint64_t first = s.inbox_first;
    s.inbox_first = kNever;
    return first;
  }
  if (s.arrived.empty()) {
    s.arrived.swap(s.inbox);
  } else {
    s.arrived.insert(s.arrived.end(), s.inbox.begin(), s.inbox.end());
    s.inbox.clear();
  }
  s.launches.insert(s.launches.end(), s.launch_inbox.begin(), s.launch_inbox.end());
  s.launch_inbox.clear();
  const uint64_t first = s.inbox_first;
  s.inbox_first = kNever;
  return first;
}

void Sm::apply_arrivals(uint64_t end) {
  Impl& s = *impl_;
  // A launch takes effect in the window holding its first cycle, whichever earlier window of
  // this SM ran after it was taken over (its warps are resident from then on).
  size_t started = 0;
  while (started < s.launches.size() && s.launches[started].start_cycle < end) s.start_warps(s.launches[started++]);
  s.launches.erase(s.launches.begin(), s.launches.begin() + static_cast<std::ptrdiff_t>(started));
  for (const Impl::Arrival& a : s.arrived) s.response(*a.gp, a.cycle);
  s.arrived.clear();
}

uint64_t Sm::next_launch_cycle() const { return impl_->launches.empty() ? kNever : impl_->launches.front().start_cycle; }

bool Sm::captures() const { return impl_->l1_observer != nullptr; }

bool Sm::idle() const { return impl_->idle(); }

bool Sm::observed() const { return impl_->observed_ctas != 0; }

void Sm::thread() {
  if (stepper_ != nullptr) return;  // stepped by the GpuCore's SmStepper
  Impl& s = *impl_;
  using sc_core::sc_time_stamp;
  while (true) {
    if (s.idle()) {
      wait(wake_);
      continue;
    }
    uint64_t c = std::max(s.clock.cycle_at(current_time()) + 1, cycle_ + 1);
    if (s.clock.time_of_cycle(c - 1) == current_time() && c - 1 > cycle_) c = c - 1;  // on an edge: this one
    while (!s.idle()) {
      const sc_core::sc_time at = s.clock.time_of_cycle(c);
      if (at > current_time()) wait(at - current_time());
      const uint64_t next = s.tick(c);
      cycle_ = c;
      if (next == c + 1 || !s.params.idle_skip) {
        ++c;
        continue;
      }
      if (s.idle()) break;
      if (next == kNever) wait(wake_);
      else wait(s.clock.time_of_cycle(next) - current_time(), wake_);
      const uint64_t resume = std::min(next, s.clock.cycle_at(current_time()) + 1);
      s.account_skipped(resume - c - 1);
      c = resume;
    }
  }
}

tlm::tlm_sync_enum Sm::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  Impl& s = *impl_;
  const uint64_t c = s.clock.cycle_at(current_time() + delay);  // an annotated delay: it takes effect then
  if (s.replay_in_flight == &gp && (phase == tlm::END_REQ || phase == tlm::BEGIN_RESP)) {
    s.replay_in_flight = nullptr;  // the next deferred request may go (now, if its cycle has come)
    if (stepper_ != nullptr) stepper_->deferred_ready(index_);
    if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::END_REQ) {
    // Only the END_REQ of the request in flight releases the socket: one that names another
    // payload (a cluster port or TLB repeating it for a request it had queued) must not let the
    // next request overwrite one still held downstream.
    if (!s.request_in_flight || s.in_flight != &gp) return tlm::TLM_ACCEPTED;
    s.request_in_flight = false;
    s.send_allowed = c + 1;
    notify_wake();
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    if (s.request_in_flight && s.in_flight == &gp) {  // BEGIN_RESP implies END_REQ for it
      s.request_in_flight = false;
      s.send_allowed = c + 1;
    }
    if (s.windowed && stepper_ != nullptr) {
      arrive(gp, c);  // the SM may be running a window: its next window applies it
      return tlm::TLM_COMPLETED;
    }
    s.response(gp, c);
    notify_wake(delay);
    return tlm::TLM_COMPLETED;
  }
  return tlm::TLM_ACCEPTED;
}

}  // namespace gpuvp::gpu
