// TraceInjector on its socket: a test memory answers every request after a fixed latency. The
// injector issues the captured requests in (ready cycle, order) order, one per cycle, each
// `gap` cycles after its dependencies' responses (or its warp's previous request), stretches
// with the memory's latency (elastic), ends the CTA `end_gap` after its last held event, moves
// written lines of a replica by its offset, and ends a CTA without requests at once.
#include <gtest/gtest.h>

#include <vector>

#include "models/gpu/trace_injector/trace_injector.h"
#include "platform/stats/registry.h"
#include "tests/support/testbench.h"

namespace gpuvp::gpu {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

elastic::Request req(uint64_t address, AccessKind kind, uint32_t gap, std::vector<uint32_t> deps,
                     elastic::WarpTrace& warp, uint64_t order, bool holds) {
  elastic::Request r;
  r.address = address;
  r.length = 128;
  r.sector_mask = 0xf;
  r.kind = kind;
  r.write = kind == AccessKind::Store;
  r.holds_cta_end = holds;
  r.gap = gap;
  r.order = order;
  r.dep_first = static_cast<uint32_t>(warp.deps.size());
  r.dep_count = static_cast<uint32_t>(deps.size());
  for (uint32_t d : deps) warp.deps.push_back(d);
  r.shared = kind != AccessKind::Store;
  return r;
}

// Warp 0: load A (5 after the CTA starts), load B (1 after A), store C (10 after both answered).
// Warp 1: load A (2 after the start).
elastic::CtaTrace sample_cta() {
  elastic::CtaTrace cta;
  cta.cta = 3;
  cta.end_gap = 3;
  elastic::WarpTrace w0;
  w0.requests.push_back(req(0x1000, AccessKind::Load, 5, {}, w0, 10, true));
  w0.requests.push_back(req(0x2000, AccessKind::Load, 1, {}, w0, 11, true));
  w0.requests.push_back(req(0x3000, AccessKind::Store, 10, {0, 1}, w0, 12, false));
  elastic::WarpTrace w1;
  w1.requests.push_back(req(0x1000, AccessKind::Load, 2, {}, w1, 5, true));
  cta.warps = {w0, w1};
  return cta;
}

struct Replayed {
  std::vector<uint64_t> issue_cycles;  // per request arriving at the memory
  std::vector<uint64_t> addresses;
  std::vector<uint32_t> sm_ids;
  uint64_t end_cycle = 0;
  uint64_t tag = 0;
  std::vector<uint64_t> l1;  // L1 redo: hits, merges, misses
};

// `l1_hit_latency` != 0: the injector redoes a 32 KiB L1 with that hit latency.
Replayed replay(const elastic::CtaTrace& cta, sc_time latency, uint64_t offset, bool captured_sm = false,
                uint32_t mshrs = 0, uint32_t l1_hit_latency = 0) {
  testbench::Simulation sim;
  ClockDomain clock("core", 1'000'000'000);  // 1 ns cycles
  stats::Registry stats;
  TraceInjector injector("sm_7", 7, clock, stats, "gpu.injector[7]", mshrs);
  if (l1_hit_latency != 0) {
    injector.enable_l1(4, l1_hit_latency, 8);
    injector.configure_l1(32 * 1024);
  }
  testbench::MemoryTarget memory("memory", latency);
  injector.mem.bind(memory.socket);
  Replayed run;
  sc_core::sc_event done;
  bool ended = false;
  injector.on_cta_done([&](uint64_t tag, uint64_t end) {
    run.tag = tag;
    run.end_cycle = end;
    ended = true;
    done.notify(sc_core::SC_ZERO_TIME);
  });
  sim.run([&] {
    sc_core::wait(sc_time(10, SC_NS));
    injector.start_cta(cta, 9, 10, offset, 42, captured_sm);
    EXPECT_EQ(injector.resident(), 1u);
    while (!ended) sc_core::wait(done);
    sc_core::wait(sc_time(1, sc_core::SC_US));  // let posted stores be answered
    EXPECT_EQ(injector.resident(), 0u);
  });
  for (const auto& t : memory.transactions()) {
    run.issue_cycles.push_back(clock.cycle_at(t.time));
    run.addresses.push_back(t.address);
    run.sm_ids.push_back(t.extension.sm_id);
  }
  uint64_t requests = 0;
  for (const auto& w : cta.warps) requests += w.requests.size();
  const stats::Group* group = stats.find_group("gpu.injector[7]");
  if (l1_hit_latency == 0) {
    EXPECT_EQ(group->find_counter("requests")->value(), requests);
  } else {
    run.l1 = {group->find_counter("l1_hits")->value(), group->find_counter("l1_merges")->value(),
              group->find_counter("l1_misses")->value()};
    EXPECT_EQ(group->find_counter("requests")->value(), requests - run.l1[0] - run.l1[1]);
  }
  return run;
}

TEST(TraceInjector, IssuesCapturedRequestsWithTheirGapsAndDependencies) {
  const Replayed run = replay(sample_cta(), sc_time(100, SC_NS), 0);
  // Warp 1's load at 12, warp 0's loads at 15 and 16; their responses at 115 and 116, the store
  // 10 cycles after the later one.
  EXPECT_EQ(run.issue_cycles, (std::vector<uint64_t>{12, 15, 16, 126}));
  EXPECT_EQ(run.addresses, (std::vector<uint64_t>{0x1000, 0x1000, 0x2000, 0x3000}));
  EXPECT_EQ(run.sm_ids, (std::vector<uint32_t>{7, 7, 7, 7}));
  // Its last event is the store's issue (the store does not hold it): 126 + 3.
  EXPECT_EQ(run.end_cycle, 129u);
  EXPECT_EQ(run.tag, 42u);
}

TEST(TraceInjector, StretchesWithTheMemoryLatency) {
  const Replayed run = replay(sample_cta(), sc_time(200, SC_NS), 0);
  EXPECT_EQ(run.issue_cycles, (std::vector<uint64_t>{12, 15, 16, 226}));
  EXPECT_EQ(run.end_cycle, 229u);
}

TEST(TraceInjector, HeldResponsesDelayTheCtaEnd) {
  elastic::CtaTrace cta = sample_cta();
  cta.warps[0].requests.pop_back();  // no store: the last held response (116) ends it
  elastic::CtaTrace copy = cta;
  testbench::Simulation sim;
  ClockDomain clock("core", 1'000'000'000);
  stats::Registry stats;
  TraceInjector injector("sm_0", 0, clock, stats, "gpu.injector[0]");
  testbench::MemoryTarget memory("memory", sc_time(100, SC_NS));
  injector.mem.bind(memory.socket);
  uint64_t end = 0;
  injector.on_cta_done([&](uint64_t, uint64_t e) { end = e; });
  sim.run([&] {
    sc_core::wait(sc_time(10, SC_NS));
    injector.start_cta(copy, 1, 10, 0, 0);
    sc_core::wait(sc_time(1, sc_core::SC_US));
  });
  EXPECT_EQ(end, 116u + 3u);
}

// Warp 1's load was held back by the MSHRs at capture: 20 cycles of its gap were the wait, and
// it left 4 cycles after the SM's first MSHR-freeing response (warp 0's load). On the captured
// SM it waits for that response as replayed; in task mode the captured wait stands.
elastic::CtaTrace mshr_cta() {
  elastic::CtaTrace cta;
  cta.cta = 1;
  cta.end_gap = 1;
  elastic::WarpTrace w0;
  w0.requests.push_back(req(0x1000, AccessKind::Load, 0, {}, w0, 1, true));
  elastic::WarpTrace w1;
  elastic::Request held = req(0x2000, AccessKind::Load, 2, {}, w1, 2, true);
  held.mshr_wait = 20;
  held.mshr_after = 1;
  held.mshr_gap = 4;
  w1.requests.push_back(held);
  cta.warps = {w0, w1};
  return cta;
}

TEST(TraceInjector, AHeldBackRequestWaitsForTheResponseThatFreesAnMshr) {
  EXPECT_EQ(replay(mshr_cta(), sc_time(100, SC_NS), 0, true).issue_cycles, (std::vector<uint64_t>{10, 114}));
  EXPECT_EQ(replay(mshr_cta(), sc_time(50, SC_NS), 0, true).issue_cycles, (std::vector<uint64_t>{10, 64}));
  EXPECT_EQ(replay(mshr_cta(), sc_time(100, SC_NS), 0, false).issue_cycles, (std::vector<uint64_t>{10, 32}));
}

// Warp 1 passed a barrier that warp 0 arrived at last, 6 cycles after its load's response; its
// next load was ready 2 cycles after its previous one, not counting the wait. It leaves at the
// release as replayed (6 cycles after warp 0's response), whatever the memory's latency; a
// barrier whose only arrival was 40 cycles after the CTA's start holds warp 1's third load
// until then.
elastic::CtaTrace barrier_cta() {
  elastic::CtaTrace cta;
  cta.cta = 2;
  cta.end_gap = 1;
  elastic::WarpTrace w0;
  w0.requests.push_back(req(0x1000, AccessKind::Load, 0, {}, w0, 1, true));
  elastic::WarpTrace w1;
  w1.requests.push_back(req(0x2000, AccessKind::Load, 1, {}, w1, 2, true));
  elastic::Request after = req(0x3000, AccessKind::Load, 2, {}, w1, 3, true);
  after.barrier = true;
  after.barrier_index = 0;
  w1.requests.push_back(after);
  elastic::Request early = req(0x4000, AccessKind::Load, 1, {}, w1, 4, true);
  early.barrier = true;
  early.barrier_index = 1;
  w1.requests.push_back(early);
  cta.warps = {w0, w1};
  // Barrier 0: warp 0 arrives 6 cycles after its load's response, warp 1 one cycle after its
  // first load; barrier 1: its only arrival 40 cycles after the CTA's start.
  cta.barriers.resize(2);
  cta.barriers[0].arrivals = {elastic::BarrierArrival{elastic::kNone, 0, 0, true, 6}, elastic::BarrierArrival{elastic::kNone, 1, 0, false, 1}};
  cta.barriers[1].arrivals = {elastic::BarrierArrival{elastic::kNone, elastic::kNone, 0, false, 40}};
  return cta;
}

TEST(TraceInjector, ARequestPastABarrierWaitsForTheWarpThatReleasedIt) {
  EXPECT_EQ(replay(barrier_cta(), sc_time(100, SC_NS), 0).issue_cycles, (std::vector<uint64_t>{10, 11, 116, 117}));
  EXPECT_EQ(replay(barrier_cta(), sc_time(20, SC_NS), 0).issue_cycles, (std::vector<uint64_t>{10, 11, 36, 50}));
  // When warp 1 arrives last on replay (its arrival 100 cycles after its first load), it releases
  // the barrier: the anchor is whichever warp arrives last, not the one that did at capture.
  elastic::CtaTrace late = barrier_cta();
  late.barriers[0].arrivals[1].gap = 100;
  EXPECT_EQ(replay(late, sc_time(20, SC_NS), 0).issue_cycles, (std::vector<uint64_t>{10, 11, 111, 112}));
  // An arrival may count from an earlier barrier's release: 5 cycles after barrier 0 (at 111),
  // barrier 1 releases at 116, not at 50.
  late.barriers[1].arrivals.push_back(elastic::BarrierArrival{0, elastic::kNone, 0, false, 5});
  EXPECT_EQ(replay(late, sc_time(20, SC_NS), 0).issue_cycles, (std::vector<uint64_t>{10, 11, 111, 116}));
  elastic::CtaTrace plain = barrier_cta();
  plain.warps[1].requests[1].barrier = false;
  plain.warps[1].requests[2].barrier = false;
  EXPECT_EQ(replay(plain, sc_time(100, SC_NS), 0).issue_cycles, (std::vector<uint64_t>{10, 11, 13, 14}));
}

// With one L1 MSHR, each load waits for the response that frees it: warp 1's load goes at 12,
// warp 0's first load (ready at 15) at its response (112), the second load (ready at 16), queued
// behind the first, at 212, and the store 10 cycles after that one's response. With as many
// MSHRs as the captured L1 had, the pool changes nothing.
TEST(TraceInjector, LoadsWaitForAFreeMshrAndHoldTheQueueBehindThem) {
  EXPECT_EQ(replay(sample_cta(), sc_time(100, SC_NS), 0).issue_cycles, (std::vector<uint64_t>{12, 15, 16, 126}));
  EXPECT_EQ(replay(sample_cta(), sc_time(100, SC_NS), 0, false, 1).issue_cycles,
            (std::vector<uint64_t>{12, 112, 212, 322}));
  EXPECT_EQ(replay(sample_cta(), sc_time(100, SC_NS), 0, false, 64).issue_cycles,
            (std::vector<uint64_t>{12, 15, 16, 126}));
}

// L1 redo: warp 0 loads line A (a miss at capture), looks it up again one cycle later (a merge
// at capture), and again 300 cycles later (a hit), then stores 10 cycles after that hit's data.
// Redone, the second lookup merges into the pending miss, the third hits (28 cycles), and only
// the first load and the store reach the memory; replayed as captured, all four would.
TEST(TraceInjector, RedoneL1MergesIntoPendingMissesAndAnswersHits) {
  elastic::CtaTrace cta;
  cta.end_gap = 3;
  elastic::WarpTrace w;
  w.requests.push_back(req(0x1000, AccessKind::Load, 5, {}, w, 1, true));
  w.requests.push_back(req(0x1000, AccessKind::Load, 1, {}, w, 2, false));
  w.requests.push_back(req(0x1000, AccessKind::Load, 300, {}, w, 3, false));
  w.requests.push_back(req(0x3000, AccessKind::Store, 10, {2}, w, 4, false));
  for (int i = 0; i < 3; ++i) w.requests[i].l1_access = 0xf;
  w.requests[1].captured_hit = w.requests[2].captured_hit = true;
  cta.warps = {w};
  const Replayed redone = replay(cta, sc_time(100, SC_NS), 0, false, 0, 28);
  EXPECT_EQ(redone.issue_cycles, (std::vector<uint64_t>{15, 354}));
  EXPECT_EQ(redone.l1, (std::vector<uint64_t>{1, 1, 1}));
  EXPECT_EQ(redone.end_cycle, 357u);
  // A line the load bypassed the L1 for (l1_access 0) is requested again.
  cta.warps[0].requests[0].l1_access = 0;
  EXPECT_EQ(replay(cta, sc_time(100, SC_NS), 0, false, 0, 28).issue_cycles, (std::vector<uint64_t>{15, 16, 354}));
}

TEST(TraceInjector, OffsetMovesOnlyWrittenLines) {
  const Replayed run = replay(sample_cta(), sc_time(100, SC_NS), uint64_t{1} << 30);
  EXPECT_EQ(run.addresses, (std::vector<uint64_t>{0x1000, 0x1000, 0x2000, 0x3000 + (uint64_t{1} << 30)}));
}

TEST(TraceInjector, ACtaWithoutRequestsEndsAfterItsGap) {
  testbench::Simulation sim;
  ClockDomain clock("core", 1'000'000'000);
  stats::Registry stats;
  TraceInjector injector("sm_0", 0, clock, stats, "gpu.injector[0]");
  testbench::MemoryTarget memory("memory", sc_time(100, SC_NS));
  injector.mem.bind(memory.socket);
  elastic::CtaTrace empty;
  empty.end_gap = 17;
  uint64_t end = 0;
  injector.on_cta_done([&](uint64_t, uint64_t e) { end = e; });
  sim.run([&] {
    sc_core::wait(sc_time(5, SC_NS));
    injector.start_cta(empty, 1, 5, 0, 0);
  });
  EXPECT_EQ(end, 22u);
  EXPECT_TRUE(memory.transactions().empty());
}

}  // namespace
}  // namespace gpuvp::gpu
