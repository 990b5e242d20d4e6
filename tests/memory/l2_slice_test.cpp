// One L2 slice between a test initiator and a fixed-latency DRAM: exact hit latency, a miss goes
// to DRAM once, MSHRs merge misses to one line, dirty lines are written back on eviction,
// atomics execute at the slice, and full MSHRs back-pressure the input.
#include <gtest/gtest.h>

#include <memory>

#include "models/memory/l2/l2_slice.h"
#include "tests/memory/params.h"
#include "tests/memory/traffic.h"
#include "tests/support/testbench.h"

namespace gpuvp::memory {
namespace {

using sc_core::sc_time;
using testbench::Initiator;
using testbench::MemoryTarget;
using testbench::Protocol;

constexpr uint64_t kDramNs = 100;

struct Bench {
  testbench::Simulation sim;
  stats::Registry stats;
  testing::MemoryParams p;
  std::unique_ptr<AddressMap> map;
  std::unique_ptr<L2Slice> l2;
  std::vector<std::unique_ptr<Initiator>> cpu;
  std::unique_ptr<MemoryTarget> dram;
  explicit Bench(const std::vector<std::string>& overrides = {}, int initiators = 1, uint64_t dram_ns = kDramNs)
      : p(testing::load_params(overrides)) {
    map = std::make_unique<AddressMap>(p.l2, p.hbm);
    l2 = std::make_unique<L2Slice>("l2", p.l2, *map, 0, stats, "memory.l2[0]");
    dram = std::make_unique<MemoryTarget>("dram", sc_time(static_cast<double>(dram_ns), sc_core::SC_NS));
    l2->dram.bind(dram->socket);
    // One initiator per thread that needs its own request in flight; the slice has one target
    // socket, so the extra initiators go through a tiny funnel: we bind only cpu0 and issue
    // concurrent requests from several threads through it (AT initiators allow that).
    cpu.push_back(std::make_unique<Initiator>("cpu", Protocol::AT));
    cpu[0]->socket.bind(l2->in);
    (void)initiators;
  }
  // Byte address of the k-th line of `set` in slice 0.
  uint64_t line(uint64_t set, uint64_t k = 0) const { return map->line_address(0, set + k * p.l2.sets()); }
  uint64_t counter(const char* name) const { return stats.find_group("memory.l2[0]")->find_counter(name)->value(); }
  sc_time cycles_from(sc_time t, uint64_t cycles) const {
    const ClockDomain& clk = l2->clock();
    return clk.time_of_cycle(clk.next_cycle(t) + cycles) - t;
  }
  // Runs `n` reads concurrently (one thread each) and returns when all are answered.
  void concurrent(const std::vector<std::function<void()>>& bodies) {
    std::vector<sc_core::sc_event> finished(bodies.size());
    sc_core::sc_event_and_list all;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      sc_core::sc_spawn([&, i] {
        bodies[i]();
        finished[i].notify();
      });
      all &= finished[i];
    }
    sc_core::wait(all);
  }
};

TEST(L2Slice, MissGoesToDramOnceAndTheNextAccessHitsWithTheExactHitLatency) {
  Bench b;
  const auto& l2 = b.p.l2;
  b.sim.run([&] {
    const sc_time t0 = sc_core::sc_time_stamp();
    b.cpu[0]->read(b.line(5), 128);
    // DRAM request leaves miss_latency cycles after the accept edge; the fill is forwarded at
    // the first L2 edge at or after it returns.
    ASSERT_EQ(b.dram->transactions().size(), 1u);
    const sc_time sent = t0 + b.cycles_from(t0, l2.miss_latency);
    EXPECT_EQ(b.dram->transactions()[0].time, sent);
    const sc_time fill = sent + sc_time(kDramNs, sc_core::SC_NS);
    EXPECT_EQ(b.cpu[0]->last_latency(), fill + b.cycles_from(fill, l2.fill_latency) - t0);

    sc_core::wait(sc_time(3, sc_core::SC_NS));
    const sc_time t1 = sc_core::sc_time_stamp();
    b.cpu[0]->read(b.line(5) + 64, 32);
    EXPECT_EQ(b.cpu[0]->last_latency(), b.cycles_from(t1, l2.hit_latency));
  });
  EXPECT_EQ(b.dram->transactions().size(), 1u);
  EXPECT_EQ(b.counter("sector_misses"), 4u);
  EXPECT_EQ(b.counter("sector_hits"), 1u);
  EXPECT_EQ(b.counter("dram_reads"), 1u);
}

TEST(L2Slice, AFullLineHoldsThePipelineForItsDataCycles) {
  // 64 B a cycle: a 4-sector (128 B) hit occupies the pipeline 2 cycles, a 1-sector hit 1.
  for (const uint32_t bytes : {32u, 128u}) {
    Bench b({"memory.l2.data_width=64B"});
    sc_time first, second;
    b.sim.run([&] {
      b.cpu[0]->read(b.line(3), 128);  // warm both lines
      b.cpu[0]->read(b.line(4), 128);
      b.concurrent({[&] {
                      b.cpu[0]->read(b.line(3), bytes);
                      first = sc_core::sc_time_stamp();
                    },
                    [&] {
                      b.cpu[0]->read(b.line(4), bytes);
                      second = sc_core::sc_time_stamp();
                    }});
    });
    const sc_time period = b.l2->clock().period();
    EXPECT_EQ(second - first, bytes == 128 ? 2 * period : period) << bytes << " B";
  }
}

TEST(L2Slice, TwoMissesToOneLineMergeIntoOneDramRead) {
  Bench b;
  b.sim.run([&] {
    b.concurrent({[&] { b.cpu[0]->read(b.line(9), 64); }, [&] { b.cpu[0]->read(b.line(9), 64); }});
  });
  EXPECT_EQ(b.dram->transactions().size(), 1u);
  EXPECT_EQ(b.counter("mshr_merges"), 1u);
  EXPECT_EQ(b.counter("mshr_allocations"), 1u);
}

TEST(L2Slice, MissesForOtherSectorsOfAPendingLineFetchOnlyThoseSectors) {
  Bench b;
  b.sim.run([&] {
    b.concurrent({[&] { b.cpu[0]->read(b.line(9), 32); }, [&] { b.cpu[0]->read(b.line(9) + 64, 32); }});
  });
  ASSERT_EQ(b.dram->transactions().size(), 2u);
  EXPECT_EQ(b.dram->transactions()[0].extension.sector_mask, 0x1);
  EXPECT_EQ(b.dram->transactions()[1].extension.sector_mask, 0x4);
  EXPECT_EQ(b.counter("mshr_merges"), 1u);
}

TEST(L2Slice, EvictingADirtyLineWritesBackItsDirtySectors) {
  Bench b;
  const uint32_t ways = b.p.l2.associativity;
  b.sim.run([&] {
    b.cpu[0]->write(b.line(3, 0) + 32, std::vector<uint8_t>(64, 1));  // sectors 1 and 2 dirty
    for (uint32_t k = 1; k < ways; ++k) b.cpu[0]->write(b.line(3, k), std::vector<uint8_t>(32, 1));
    EXPECT_EQ(b.dram->transactions().size(), 0u);  // write-allocate, no fetch, no eviction yet
    b.cpu[0]->write(b.line(3, ways), std::vector<uint8_t>(32, 1));  // evicts the LRU: line k = 0
    sc_core::wait(sc_time(1, sc_core::SC_US));
  });
  ASSERT_EQ(b.dram->transactions().size(), 1u);
  const auto& wb = b.dram->transactions()[0];
  EXPECT_EQ(wb.command, tlm::TLM_WRITE_COMMAND);
  EXPECT_EQ(wb.address, b.line(3, 0));
  EXPECT_EQ(wb.extension.sector_mask, 0x6);
  EXPECT_EQ(b.counter("writebacks"), 1u);
  EXPECT_EQ(b.counter("writeback_sectors"), 2u);
}

TEST(L2Slice, AtomicsExecuteAtTheSliceAndOccupyItsPipeline) {
  Bench b;
  const auto& l2 = b.p.l2;
  b.sim.run([&] {
    b.cpu[0]->read(b.line(7), 128);  // bring the line in
    sc_core::wait(sc_time(3, sc_core::SC_NS));
    b.cpu[0]->tags.kind = AccessKind::Atomic;
    const sc_time t = sc_core::sc_time_stamp();
    b.cpu[0]->write32(b.line(7) + 4, 1);
    EXPECT_EQ(b.cpu[0]->last_latency(), b.cycles_from(t, l2.hit_latency + l2.atomic_cycles));
    // The next request waits until the atomic has left the pipeline.
    b.cpu[0]->tags.kind = AccessKind::Load;
  });
  EXPECT_EQ(b.dram->transactions().size(), 1u);  // the atomic never went to DRAM
  EXPECT_EQ(b.counter("atomics"), 1u);
}

TEST(L2Slice, FullMshrsBackPressureTheInput) {
  // Driven by the traffic generator rather than the test-bench initiator: while the slice
  // withholds END_REQ it answers older requests, and the generator (unlike the test bench's
  // AT initiator) treats a BEGIN_RESP as END_REQ only for its own transaction.
  testbench::Simulation sim;
  stats::Registry stats;
  const auto p = testing::load_params({"memory.l2.mshrs=2", "memory.l2.queue_depth=1", "memory.l2.slice_hash=modulo"});
  const AddressMap map(p.l2, p.hbm);
  L2Slice l2("l2", p.l2, map, 0, stats, "memory.l2[0]");
  MemoryTarget dram("dram", sc_time(1, sc_core::SC_US));
  testing::TrafficGenerator::Stream stream;
  stream.base = map.line_address(0, 20);
  stream.stride = uint64_t{p.l2.slices} * p.l2.line_bytes;  // modulo hash: the next line of slice 0
  stream.count = 6;
  stream.length = 32;
  testing::TrafficGenerator cpu("cpu", stream, 6);
  cpu.socket.bind(l2.in);
  l2.dram.bind(dram.socket);
  sim.run([&] {
    while (!cpu.done()) sc_core::wait(cpu.finished());
  });
  const auto& log = dram.transactions();
  ASSERT_EQ(log.size(), 6u);
  // Two fills go out at once; the third waits for an MSHR, i.e. for the first fill (1 us).
  EXPECT_LT(log[1].time, sc_time(1, sc_core::SC_US));
  EXPECT_GE(log[2].time, log[0].time + sc_time(1, sc_core::SC_US));
  EXPECT_GE(log[4].time, log[2].time + sc_time(1, sc_core::SC_US));
  EXPECT_GE(stats.find_group("memory.l2[0]")->find_counter("stalls")->value(), 1u);
}

}  // namespace
// The slices of one memory system share their group's process; a group gives each index to one
// slice only, and knows only its own indices.
TEST(L2Slice, AGroupTakesEachSliceIndexOnce) {
  testbench::Simulation sim;
  stats::Registry stats;
  const auto p = testing::load_params();
  const AddressMap map(p.l2, p.hbm);
  L2SliceGroup group(2);
  L2Slice first("l2_0", p.l2, map, 0, stats, "memory.l2[0]", &group);
  EXPECT_THROW(L2Slice("l2_0b", p.l2, map, 0, stats, "memory.l2[0b]", &group), std::invalid_argument);
  EXPECT_THROW(L2Slice("l2_2", p.l2, map, 2, stats, "memory.l2[2]", &group), std::invalid_argument);
  L2Slice second("l2_1", p.l2, map, 1, stats, "memory.l2[1]", &group);
}

}  // namespace gpuvp::memory
