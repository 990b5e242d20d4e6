// The HBM controller through its socket: exact row hit / miss / conflict latencies from the
// timing parameters, tRRD and tFAW spacing of activates, refresh every tREFI, FR-FCFS
// reordering, write draining between the watermarks, back-pressure from a full queue; the same
// as a partition (memory.hbm.partition) driving itself or driven in steps.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/memory/hbm/hbm_controller.h"
#include "tests/memory/params.h"
#include "tests/support/testbench.h"

namespace gpuvp::memory {
namespace {

using sc_core::sc_time;
using testbench::Initiator;
using testbench::Protocol;

struct Bench {
  testbench::Simulation sim;
  stats::Registry stats;
  testing::MemoryParams p;
  std::unique_ptr<AddressMap> map;
  std::unique_ptr<HbmController> hbm;
  std::vector<std::unique_ptr<Initiator>> cpu;
  explicit Bench(const std::vector<std::string>& overrides = {}, int initiators = 1) : p(testing::load_params(overrides)) {
    map = std::make_unique<AddressMap>(p.l2, p.hbm);
    hbm = std::make_unique<HbmController>("hbm", p.hbm, *map, stats, "memory.hbm");
    for (int i = 0; i < initiators; ++i) {
      cpu.push_back(std::make_unique<Initiator>(("cpu" + std::to_string(i)).c_str(), Protocol::AT));
      cpu.back()->socket.bind(hbm->socket);
    }
  }
  uint64_t address(uint32_t channel, uint32_t bg, uint32_t bank, uint32_t row, uint32_t column = 0) const {
    DramCoord c;
    c.channel = channel;
    c.bank_group = bg;
    c.bank = bank;
    c.row = row;
    c.column = column;
    return map->encode(c);
  }
  // Latency of a request issued at `t` that completes `cycles` after its decode edge.
  sc_time expected(sc_time t, uint64_t cycles) const {
    const ClockDomain& clk = hbm->clock();
    return clk.time_of_cycle(clk.cycle_at(t) + 1 + cycles) - t;
  }
  uint64_t channel_counter(uint32_t c, const char* name) const {
    return stats.find_group("memory.hbm.channel[" + std::to_string(c) + "]")->find_counter(name)->value();
  }
  sc_time read(uint64_t address, unsigned length = 32, int who = 0) {
    cpu[static_cast<std::size_t>(who)]->read(address, length);
    return cpu[static_cast<std::size_t>(who)]->last_latency();
  }
};

void check_row_latencies(const std::vector<std::string>& overrides) {
  Bench b(overrides);
  const HbmTiming t = b.hbm->timing();
  b.sim.run([&] {
    sc_time now = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(3, 1, 2, 100)), b.expected(now, t.rcd + t.cl + t.burst));  // bank closed
    sc_core::wait(sc_time(200, sc_core::SC_NS));  // every constraint of the first request met
    now = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(3, 1, 2, 100, 8)), b.expected(now, t.cl + t.burst));  // row open
    sc_core::wait(sc_time(200, sc_core::SC_NS));
    now = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(3, 1, 2, 101)), b.expected(now, t.rp + t.rcd + t.cl + t.burst));  // other row
    sc_core::wait(sc_time(200, sc_core::SC_NS));
    now = sc_core::sc_time_stamp();
    // A whole line: four bursts to one bank group, tCCD_L apart.
    EXPECT_EQ(b.read(b.address(3, 1, 2, 101, 4), 128), b.expected(now, t.cl + t.burst + 3 * t.ccd_l));
  });
  EXPECT_EQ(b.channel_counter(3, "row_misses"), 1u);
  EXPECT_EQ(b.channel_counter(3, "row_hits"), 2u);
  EXPECT_EQ(b.channel_counter(3, "row_conflicts"), 1u);
  EXPECT_EQ(b.channel_counter(3, "activates"), 2u);
  EXPECT_EQ(b.channel_counter(3, "precharges"), 1u);
  EXPECT_EQ(b.channel_counter(3, "reads"), 4u);
}

TEST(HbmController, RowMissHitAndConflictLatenciesFollowTheTimingParameters) { check_row_latencies({}); }
// As a partition driving itself (its own process, just behind SystemC time): the same latencies.
TEST(HbmController, APartitionKeepsTheExactLatencies) { check_row_latencies({"memory.hbm.partition=true"}); }

// Five reads to five closed banks issued together: the ACTs are spaced by tRRD_S (different
// bank groups) or tRRD_L (same group), and the fifth waits for the tFAW window.
void check_activate_spacing(bool same_group) {
  Bench b({"memory.hbm.t_faw=40 cycles"}, 5);
  const HbmTiming t = b.hbm->timing();
  std::vector<sc_time> done(5);
  b.sim.run([&] {
    sc_core::sc_event_and_list all;
    std::vector<sc_core::sc_event> finished(5);
    for (int i = 0; i < 5; ++i) {
      sc_core::sc_spawn([&, i] {
        const uint32_t bg = same_group ? 0 : static_cast<uint32_t>(i % 4);
        const uint32_t bank = same_group ? static_cast<uint32_t>(i % 4) : static_cast<uint32_t>(i / 4);
        // Same-group case: the fifth would reuse bank 0 (a row hit); send it to another channel.
        b.read(b.address(same_group && i == 4 ? 1 : 0, bg, bank, 7), 32, i);
        done[static_cast<std::size_t>(i)] = sc_core::sc_time_stamp();
        finished[static_cast<std::size_t>(i)].notify();
      });
      all &= finished[static_cast<std::size_t>(i)];
    }
    sc_core::wait(all);
  });
  const ClockDomain& clk = b.hbm->clock();
  const uint64_t rrd = same_group ? t.rrd_l : t.rrd_s;
  // ACT k at decode + k * tRRD for k < 4; ACT 4 at max(4 * tRRD, tFAW); each read then
  // completes tRCD + tCL + BL/2 later. Same bank group with five banks: the fifth reuses bank 0
  // of group 0, so in that case only the first four are checked.
  const uint64_t decode = 1;
  std::vector<uint64_t> act = {0, rrd, 2 * rrd, 3 * rrd, std::max<uint64_t>(4 * rrd, t.faw)};
  for (int i = 0; i < (same_group ? 4 : 5); ++i)
    EXPECT_EQ(done[static_cast<std::size_t>(i)], clk.time_of_cycle(decode + act[static_cast<std::size_t>(i)] + t.rcd + t.cl + t.burst))
        << "request " << i;
}

TEST(HbmController, ControllerLatencyDelaysEveryResponseButNotTheBanks) {
  Bench b({"memory.hbm.controller_latency=140ns"});
  const HbmTiming t = b.hbm->timing();
  const sc_time extra(140, sc_core::SC_NS);
  b.sim.run([&] {
    sc_time now = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(3, 1, 2, 100)), b.expected(now, t.rcd + t.cl + t.burst) + extra);
    sc_core::wait(sc_time(200, sc_core::SC_NS));
    now = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(3, 1, 2, 100, 8)), b.expected(now, t.cl + t.burst) + extra);  // row still open
  });
  EXPECT_EQ(b.channel_counter(3, "row_hits"), 1u);
}

TEST(HbmController, ActivatesAreSpacedByRrdSAndTheFawWindow) { check_activate_spacing(false); }
TEST(HbmController, ActivatesInOneBankGroupAreSpacedByRrdL) { check_activate_spacing(true); }

TEST(HbmController, RefreshEveryTrefiBlocksTheChannelForTrfc) {
  Bench b;
  const HbmTiming t = b.hbm->timing();
  const ClockDomain& clk = b.hbm->clock();
  b.sim.run([&] {
    // Arrive so that the decode edge is exactly the 10th refresh's due cycle.
    sc_core::wait(clk.time_of_cycle(10 * t.refi - 1) - sc_core::sc_time_stamp());
    const sc_time now = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(5, 0, 0, 1)), b.expected(now, t.rfc + t.rcd + t.cl + t.burst));
    EXPECT_EQ(b.channel_counter(5, "refreshes"), 10u);
    // Half an interval later: no further refresh yet, the row is still open.
    sc_core::wait(clk.time_of_cycle(10 * t.refi + t.refi / 2) - sc_core::sc_time_stamp());
    const sc_time later = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(5, 0, 0, 1, 4)), b.expected(later, t.cl + t.burst));
    EXPECT_EQ(b.channel_counter(5, "refreshes"), 10u);
    // After the next refresh the bank is closed again.
    sc_core::wait(clk.time_of_cycle(11 * t.refi + t.rfc + 100) - sc_core::sc_time_stamp());
    const sc_time after = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(5, 0, 0, 1, 8)), b.expected(after, t.rcd + t.cl + t.burst));
    EXPECT_EQ(b.channel_counter(5, "refreshes"), 11u);
  });
}

TEST(HbmController, FrFcfsServesAYoungerRowHitBeforeAnOlderConflict) {
  Bench b({}, 2);
  const HbmTiming t = b.hbm->timing();
  sc_time conflict_done, hit_done, hit_latency;
  b.sim.run([&] {
    b.read(b.address(2, 3, 1, 50));  // opens row 50
    sc_core::wait(sc_time(200, sc_core::SC_NS));
    const sc_time start = sc_core::sc_time_stamp();
    sc_core::sc_event hit_finished;
    sc_core::sc_spawn([&] {
      sc_core::wait(sc_core::SC_ZERO_TIME);  // issued after the conflict: the younger request
      hit_latency = b.read(b.address(2, 3, 1, 50, 12), 32, 1);
      hit_done = sc_core::sc_time_stamp();
      hit_finished.notify();
    });
    b.read(b.address(2, 3, 1, 51), 32, 0);  // older: needs PRE + ACT
    conflict_done = sc_core::sc_time_stamp();
    if (hit_done == sc_core::SC_ZERO_TIME) sc_core::wait(hit_finished);
    EXPECT_EQ(hit_latency, b.expected(start, t.cl + t.burst));
  });
  EXPECT_LT(hit_done, conflict_done);
  EXPECT_EQ(b.channel_counter(2, "row_hits"), 1u);
  EXPECT_EQ(b.channel_counter(2, "row_conflicts"), 1u);
}

TEST(HbmController, AReadAfterAWriteWaitsForTwtr) {
  // A high watermark of one: the write is drained at once, ahead of the read.
  Bench b({"memory.hbm.write_drain_high=1", "memory.hbm.write_drain_low=0"}, 2);
  const HbmTiming t = b.hbm->timing();
  sc_time write_latency, read_latency;
  b.sim.run([&] {
    const sc_time start = sc_core::sc_time_stamp();
    sc_core::sc_event read_done;
    sc_core::sc_spawn([&] {
      sc_core::wait(sc_core::SC_ZERO_TIME);  // younger than the write
      read_latency = b.read(b.address(4, 2, 3, 60, 4), 32, 1);
      read_done.notify();
    });
    b.cpu[0]->write(b.address(4, 2, 3, 60), std::vector<uint8_t>(32, 1));
    write_latency = b.cpu[0]->last_latency();
    sc_core::wait(read_done);
    // ACT at the decode edge; WR tRCD later; the RD waits tWTR after the write data.
    EXPECT_EQ(write_latency, b.expected(start, t.rcd + t.wl + t.burst));
    EXPECT_EQ(read_latency, b.expected(start, t.rcd + t.wl + t.burst + t.wtr + t.cl + t.burst));
  });
  EXPECT_EQ(b.channel_counter(4, "writes"), 1u);
  EXPECT_EQ(b.channel_counter(4, "row_hits"), 1u);
}

struct Op {
  bool write;
  uint64_t address;
};

// Issues `ops` together, one per initiator (all decoded at the same edge); their completion times.
std::vector<sc_time> issue_together(Bench& b, const std::vector<Op>& ops) {
  std::vector<sc_time> done(ops.size());
  b.sim.run([&] {
    std::vector<sc_core::sc_event> finished(ops.size());
    sc_core::sc_event_and_list all;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      sc_core::sc_spawn([&, i] {
        if (ops[i].write) b.cpu[i]->write(ops[i].address, std::vector<uint8_t>(32, 1));
        else b.read(ops[i].address, 32, static_cast<int>(i));
        done[i] = sc_core::sc_time_stamp();
        finished[i].notify();
      });
      all &= finished[i];
    }
    sc_core::wait(all);
  });
  return done;
}

// How many of the writes (reads) of `ops` completed before `t`.
std::size_t done_before(const std::vector<Op>& ops, const std::vector<sc_time>& done, bool write, sc_time t) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) n += ops[i].write == write && done[i] < t;
  return n;
}

sc_time first_done(const std::vector<Op>& ops, const std::vector<sc_time>& done, bool write) {
  sc_time t = sc_core::SC_ZERO_TIME;
  bool any = false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].write != write || (any && done[i] >= t)) continue;
    t = done[i];
    any = true;
  }
  return t;
}

const std::vector<std::string> kSmallWriteQueue = {"memory.hbm.write_queue_depth=8", "memory.hbm.write_drain_high=4",
                                                   "memory.hbm.write_drain_low=2"};

TEST(HbmController, WritesWaitWhileReadsAreServedBelowTheHighWatermark) {
  Bench b(kSmallWriteQueue, 6);
  // Three writes, older than three reads, all to one row: plain FR-FCFS would serve the writes
  // first; below the high watermark the reads go first and the writes follow once none is left.
  std::vector<Op> ops;
  for (uint32_t i = 0; i < 3; ++i) ops.push_back({true, b.address(6, 1, 0, 20, i)});
  for (uint32_t i = 0; i < 3; ++i) ops.push_back({false, b.address(6, 1, 0, 20, 8 + i)});
  const std::vector<sc_time> done = issue_together(b, ops);
  EXPECT_EQ(done_before(ops, done, false, first_done(ops, done, true)), 3u);  // every read before any write
  EXPECT_EQ(b.channel_counter(6, "writes"), 3u);                            // and the writes were not starved
  EXPECT_EQ(b.channel_counter(6, "bus_turnarounds"), 1u);
  EXPECT_EQ(b.channel_counter(6, "write_batches"), 1u);
  EXPECT_EQ(b.channel_counter(6, "watermark_drains"), 0u);
  EXPECT_EQ(b.channel_counter(6, "activates"), 1u);
}

TEST(HbmController, WritesDrainInABatchFromTheHighToTheLowWatermark) {
  Bench b(kSmallWriteQueue, 7);
  // Four writes (the high watermark) and three reads: two writes drain (down to the low
  // watermark), then the reads, then the last two writes: two turnarounds, not one per write.
  std::vector<Op> ops;
  for (uint32_t i = 0; i < 4; ++i) ops.push_back({true, b.address(6, 2, 1, 30, i)});
  for (uint32_t i = 0; i < 3; ++i) ops.push_back({false, b.address(6, 2, 1, 30, 8 + i)});
  const std::vector<sc_time> done = issue_together(b, ops);
  const sc_time first_read = first_done(ops, done, false);
  sc_time last_read = sc_core::SC_ZERO_TIME;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (!ops[i].write) last_read = std::max(last_read, done[i]);
  EXPECT_EQ(done_before(ops, done, true, first_read), 2u);
  EXPECT_EQ(done_before(ops, done, true, last_read), 2u);
  EXPECT_EQ(b.channel_counter(6, "bus_turnarounds"), 2u);
  EXPECT_EQ(b.channel_counter(6, "write_batches"), 2u);
  EXPECT_EQ(b.channel_counter(6, "watermark_drains"), 1u);
}

TEST(HbmController, ALoneWriteDrainsAtOnceWhenNoReadIsQueued) {
  Bench b;
  const HbmTiming t = b.hbm->timing();
  b.sim.run([&] {
    const sc_time start = sc_core::sc_time_stamp();
    b.cpu[0]->write(b.address(9, 0, 2, 5), std::vector<uint8_t>(32, 1));
    EXPECT_EQ(b.cpu[0]->last_latency(), b.expected(start, t.rcd + t.wl + t.burst));
  });
  EXPECT_EQ(b.channel_counter(9, "write_batches"), 1u);
  EXPECT_EQ(b.channel_counter(9, "watermark_drains"), 0u);
}

TEST(HbmController, AnOlderWriteYieldsToAReadAndItsDataFollowsOnTheBus) {
  Bench b({}, 2);
  const HbmTiming t = b.hbm->timing();
  const std::vector<Op> ops = {{true, b.address(4, 2, 3, 60)}, {false, b.address(4, 2, 3, 60, 4)}};
  const sc_time start = sc_core::SC_ZERO_TIME;
  const std::vector<sc_time> done = issue_together(b, ops);
  // ACT at the decode edge, RD tRCD later; the WR goes as soon as its data may follow the
  // read's on the bus (tCL + BL/2 - tWL after the RD).
  EXPECT_EQ(done[1] - start, b.expected(start, t.rcd + t.cl + t.burst));
  EXPECT_EQ(done[0] - start, b.expected(start, t.rcd + t.cl + 2 * t.burst));
  EXPECT_EQ(b.channel_counter(4, "bus_turnarounds"), 1u);
}

TEST(HbmController, WatermarksOutsideTheWriteQueueAreRefused) {
  testing::MemoryParams p = testing::load_params({"memory.hbm.write_queue_depth=8", "memory.hbm.write_drain_high=9"});
  AddressMap map(p.l2, p.hbm);
  stats::Registry stats;
  EXPECT_THROW(HbmController("hbm_high", p.hbm, map, stats, "memory.hbm"), std::invalid_argument);
  p = testing::load_params({"memory.hbm.write_drain_high=8", "memory.hbm.write_drain_low=8"});
  EXPECT_THROW(HbmController("hbm_low", p.hbm, map, stats, "memory.hbm2"), std::invalid_argument);
}

// Three reads to one pseudo-channel at once: their completion times.
std::vector<sc_time> three_reads_at_once(Bench& b) {
  std::vector<sc_time> done(3);
  b.sim.run([&] {
    std::vector<sc_core::sc_event> finished(3);
    sc_core::sc_event_and_list all;
    for (int i = 0; i < 3; ++i) {
      sc_core::sc_spawn([&, i] {
        b.read(b.address(1, static_cast<uint32_t>(i), 0, 9), 32, i);
        done[static_cast<std::size_t>(i)] = sc_core::sc_time_stamp();
        finished[static_cast<std::size_t>(i)].notify();
      });
      all &= finished[static_cast<std::size_t>(i)];
    }
    sc_core::wait(all);
  });
  return done;
}

TEST(HbmController, AFullQueueWithholdsEndReqUntilAnEntryFrees) {
  Bench b({"memory.hbm.queue_depth=1"}, 3);
  const std::vector<sc_time> done = three_reads_at_once(b);
  // One request at a time: each one starts after the previous completed.
  EXPECT_LT(done[0], done[1]);
  EXPECT_LT(done[1], done[2]);
  EXPECT_EQ(b.stats.find_group("memory.hbm")->find_counter("requests")->value(), 3u);
  EXPECT_EQ(b.channel_counter(1, "full_queue_refusals"), 2u);
}

// A partition accepts every request at once; one that finds its queue full waits in the front end
// and is taken in when the entry frees, as the exact model takes in the refused one: the same
// completion times.
TEST(HbmController, APartitionQueuesWhatAFullQueueRefusesInItsFrontEnd) {
  Bench exact({"memory.hbm.queue_depth=1"}, 3);
  const std::vector<sc_time> expected = three_reads_at_once(exact);
  Bench b({"memory.hbm.queue_depth=1", "memory.hbm.partition=true"}, 3);
  EXPECT_EQ(three_reads_at_once(b), expected);
  EXPECT_EQ(b.stats.find_group("memory.hbm")->find_counter("requests")->value(), 3u);
  EXPECT_EQ(b.channel_counter(1, "full_queue_refusals"), 2u);
}

// Driven by its caller (as SmStepper does at each phase): exchange, then simulate up to now. With
// a lookahead longer than the step, every response reaches SystemC before it is due and goes out
// at its own time; with a shorter one, the exchange says so instead of answering late.
void drive_in_steps(Bench& b, sc_time step, bool& stop) {
  parallel::TimePartition& partition = *b.hbm->partition();
  partition.attach();
  sc_core::sc_spawn([&b, &partition, step, &stop] {
    while (!stop) {
      sc_core::wait(step);
      partition.exchange();
      partition.advance(sc_core::sc_time_stamp().value());
    }
    partition.detach();
  });
}

TEST(HbmController, APartitionDrivenInStepsAnswersAtTheExactTimes) {
  Bench b({"memory.hbm.partition=true", "memory.hbm.controller_latency=140ns"});
  const HbmTiming t = b.hbm->timing();
  const sc_time extra(140, sc_core::SC_NS);
  bool stop = false;
  b.sim.run([&] {
    drive_in_steps(b, sc_time(50, sc_core::SC_NS), stop);
    sc_core::wait(sc_time(7, sc_core::SC_NS));  // between two steps
    sc_time now = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(3, 1, 2, 100)), b.expected(now, t.rcd + t.cl + t.burst) + extra);
    sc_core::wait(sc_time(200, sc_core::SC_NS));
    now = sc_core::sc_time_stamp();
    EXPECT_EQ(b.read(b.address(3, 1, 2, 100, 8)), b.expected(now, t.cl + t.burst) + extra);
    stop = true;
  });
  EXPECT_EQ(b.channel_counter(3, "row_hits"), 1u);
  EXPECT_EQ(b.channel_counter(3, "row_misses"), 1u);
}

TEST(HbmController, APartitionDrivenInStepsLongerThanItsLookaheadIsAnError) {
  Bench b({"memory.hbm.partition=true", "memory.hbm.controller_latency=0ns"});
  parallel::TimePartition& partition = *b.hbm->partition();
  std::string error;
  b.sim.run([&] {
    partition.attach();
    sc_core::sc_spawn([&] { b.read(b.address(3, 1, 2, 100)); });
    sc_core::wait(sc_time(1, sc_core::SC_NS));
    partition.exchange();  // the request, for the partition
    sc_core::wait(sc_time(500, sc_core::SC_NS));
    partition.advance(sc_core::sc_time_stamp().value());  // answered for about 35 ns: long past
    try {
      partition.exchange();
    } catch (const std::logic_error& e) {
      error = e.what();
    }
  });
  EXPECT_NE(error.find("memory.hbm.partition"), std::string::npos) << error;
  EXPECT_NE(error.find("lookahead"), std::string::npos) << error;
}

}  // namespace
}  // namespace gpuvp::memory
