// The crossbar alone, slices answered by fixed-latency memories: exact packet timing from flit
// size, link bandwidth and latency; requests reach the slice the address map names; the reply
// finds its port; round-robin shares an output fairly.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/gpu/crossbar/crossbar.h"
#include "tests/memory/params.h"
#include "tests/memory/traffic.h"
#include "tests/support/testbench.h"

namespace gpuvp::gpu {
namespace {

using memory::AddressMap;
using sc_core::sc_time;
using testbench::Initiator;
using testbench::MemoryTarget;

struct Bench {
  testbench::Simulation sim;
  stats::Registry stats;
  memory::testing::MemoryParams p = memory::testing::load_params({"memory.l2.slices=2"});
  AddressMap map{p.l2, p.hbm};
  Crossbar xbar{"xbar", p.crossbar, map, 2, stats, "gpu.crossbar"};
  Initiator port0{"port0", testbench::Protocol::AT};
  Initiator port1{"port1", testbench::Protocol::AT};
  MemoryTarget slice0{"slice0"}, slice1{"slice1"};
  Bench() {
    port0.socket.bind(xbar.cluster);
    port1.socket.bind(xbar.cluster);
    xbar.slice.bind(slice0.socket);
    xbar.slice.bind(slice1.socket);
  }
};

TEST(Crossbar, ReadLatencyIsSerializationPlusLatencyOnBothNetworks) {
  Bench b;
  const ClockDomain clk("xbar", 1200000000);
  b.sim.run([&] {
    b.port1.read(0, 128);
    // Request: 8 B header = 1 flit; reply: 8 + 128 B = 4 flits of 40 B; 1067 ps per flit.
    const uint64_t flit = b.xbar.flit_ps();
    EXPECT_EQ(flit, 1067u);
    const uint64_t at_slice = 1 * flit + 750;
    const uint64_t reply_start = clk.next_edge(sc_time::from_value(at_slice)).value();
    EXPECT_EQ(b.port1.last_latency(), sc_time::from_value(reply_start + 4 * flit + 750));
  });
  const uint32_t s = b.map.slice(0);
  EXPECT_EQ((s == 0 ? b.slice0 : b.slice1).transactions().size(), 1u);
  EXPECT_EQ(b.stats.find_group("gpu.crossbar")->find_counter("reply_flits")->value(), 4u);
}

TEST(Crossbar, PortBandwidthIsLinksTimesLinkBandwidth) {
  testbench::Simulation sim;
  stats::Registry stats;
  const auto p = memory::testing::load_params({"memory.l2.slices=2", "gpu.crossbar.links_per_port=4"});
  const AddressMap map{p.l2, p.hbm};
  const Crossbar xbar{"xbar4", p.crossbar, map, 2, stats, "gpu.crossbar"};
  EXPECT_EQ(xbar.flit_ps(), 267u);  // 40 B / (4 x 37.5 GB/s)
  EXPECT_DOUBLE_EQ(p.crossbar.port_bandwidth(), 150e9);
}

TEST(Crossbar, RequestsGoToTheSliceTheMapNamesAndRepliesFindTheirPort) {
  Bench b;
  b.sim.run([&] {
    for (uint64_t line = 0; line < 16; ++line) {
      b.port0.read(line * 128, 32);
      b.port1.write(line * 128 + 32, std::vector<uint8_t>(32, 7));
    }
  });
  for (const auto* t : {&b.slice0, &b.slice1}) {
    for (const auto& r : t->transactions()) EXPECT_EQ(b.map.slice(r.address), t == &b.slice0 ? 0u : 1u);
  }
  EXPECT_EQ(b.slice0.transactions().size() + b.slice1.transactions().size(), 32u);
}

TEST(Crossbar, RoundRobinSharesOneOutputBetweenTwoInputs) {
  testbench::Simulation sim;
  stats::Registry stats;
  auto p = memory::testing::load_params({"memory.l2.slices=1"});
  AddressMap map(p.l2, p.hbm);
  Crossbar xbar("xbar", p.crossbar, map, 2, stats, "gpu.crossbar");
  memory::testing::TrafficGenerator::Stream s;
  s.count = 200;
  s.command = tlm::TLM_WRITE_COMMAND;  // 4-flit requests: the request link to the slice is the bottleneck
  memory::testing::TrafficGenerator a("a", s, 16), c("c", s, 16);
  MemoryTarget slice("slice");
  a.socket.bind(xbar.cluster);
  c.socket.bind(xbar.cluster);
  xbar.slice.bind(slice.socket);
  sim.run([&] {
    sc_core::wait(sc_time(400, sc_core::SC_NS));  // both busy the whole time
    const int64_t diff = static_cast<int64_t>(a.completed()) - static_cast<int64_t>(c.completed());
    EXPECT_LE(std::abs(diff), 1);
    EXPECT_GT(a.completed(), 40u);  // 400 ns / (4 flits x 1067 ps) = 93 packets in all
  });
  EXPECT_GT(stats.find_group("gpu.crossbar")->find_counter("request_withheld")->value(), 0u);
}

// One input, one slice answering at once, one-flit requests and replies (8 B header + 32 B
// data = 40 B), as many in flight as the crossbar takes: replies completed in 1 us, and the
// requests whose acceptance was withheld.
struct OneMicrosecond {
  uint64_t completed = 0, withheld = 0, flit_ps = 0;
};
OneMicrosecond one_flit_reads_for_a_microsecond(std::vector<std::string> knobs) {
  knobs.insert(knobs.begin(), "memory.l2.slices=1");
  testbench::Simulation sim;
  stats::Registry stats;
  const auto p = memory::testing::load_params(knobs);
  const AddressMap map(p.l2, p.hbm);
  Crossbar xbar("xbar", p.crossbar, map, 1, stats, "gpu.crossbar");
  memory::testing::TrafficGenerator::Stream s;
  s.count = 100000;
  s.length = 32;
  memory::testing::TrafficGenerator gen("gen", s, 1024);
  MemoryTarget slice("slice");
  slice.latency = sc_core::SC_ZERO_TIME;
  gen.socket.bind(xbar.cluster);
  xbar.slice.bind(slice.socket);
  OneMicrosecond r;
  sim.run([&] {
    sc_core::wait(sc_time(1, sc_core::SC_US));
    r.completed = gen.completed();
  });
  r.withheld = stats.find_group("gpu.crossbar")->find_counter("request_withheld")->value();
  r.flit_ps = xbar.flit_ps();
  return r;
}

// A link sends its next packet only while fewer than gpu.crossbar.wire_packets are on its wire:
// with a latency of many packets' serialization, a shallow wire caps the link's bandwidth and a
// deep one keeps the link busy.
TEST(Crossbar, WirePacketsBoundWhatALongLinkCarries) {
  const OneMicrosecond shallow_run =
      one_flit_reads_for_a_microsecond({"gpu.crossbar.latency=20ns", "gpu.crossbar.wire_packets=4"});
  const OneMicrosecond deep_run =
      one_flit_reads_for_a_microsecond({"gpu.crossbar.latency=20ns", "gpu.crossbar.wire_packets=64"});
  const uint64_t shallow = shallow_run.completed, deep = deep_run.completed, flit_ps = shallow_run.flit_ps;
  EXPECT_EQ(flit_ps, deep_run.flit_ps);
  // 4 packets per (20 ns + a flit) at most, on the request link and again on the reply link.
  EXPECT_LE(shallow, 4 * 1000000 / (20000 + flit_ps) + 4);
  EXPECT_GE(shallow, 4 * 1000000 / (20000 + flit_ps) - 16);  // and it does carry that many
  // 64 on the wire: the link sends a packet per flit time, about 937 in 1 us, less the first
  // round trip (about 42 ns).
  EXPECT_GE(deep, (1000000 - 2 * (20000 + flit_ps)) / flit_ps - 8);
}

// gpu.crossbar.cluster_latency puts C between the cluster ports and the arbiters: a request
// reaches its buffer C after it was sent, a reply arrives C after the link's latency.
TEST(Crossbar, ClusterLatencyIsAddedOnBothNetworks) {
  testbench::Simulation sim;
  stats::Registry stats;
  const auto p = memory::testing::load_params({"memory.l2.slices=1", "gpu.crossbar.cluster_latency=5ns"});
  const AddressMap map(p.l2, p.hbm);
  Crossbar xbar("xbar", p.crossbar, map, 1, stats, "gpu.crossbar");
  Initiator port("port", testbench::Protocol::AT);
  MemoryTarget slice("slice");
  port.socket.bind(xbar.cluster);
  xbar.slice.bind(slice.socket);
  const ClockDomain clk("xbar", 1200000000);
  sim.run([&] {
    port.read(0, 128);
    const uint64_t flit = xbar.flit_ps();
    const uint64_t request_start = clk.next_edge(sc_time::from_value(5000)).value();
    const uint64_t at_slice = request_start + 1 * flit + 750;
    const uint64_t reply_start = clk.next_edge(sc_time::from_value(at_slice)).value();
    EXPECT_EQ(port.last_latency(), sc_time::from_value(reply_start + 4 * flit + 750 + 5000));
  });
  EXPECT_EQ(slice.transactions().size(), 1u);
}

// With a cluster latency an input's buffer slots are credits that take C to reach the buffer
// and C to come back: an input with B slots carries at most B packets per 2 C, and enough slots
// keep its link busy.
TEST(Crossbar, ClusterLatencyMakesTheInputBufferCredits) {
  auto with_slots = [](uint32_t slots) {
    return one_flit_reads_for_a_microsecond({"gpu.crossbar.cluster_latency=20ns", "gpu.crossbar.wire_packets=256",
                                             "gpu.crossbar.input_buffer=" + std::to_string(slots)});
  };
  const OneMicrosecond few_slots = with_slots(2);
  const uint64_t few = few_slots.completed, many = with_slots(128).completed;
  // 2 slots, each back after 2 x 20 ns plus at most a crossbar cycle and a flit: about 50 in 1 us.
  EXPECT_LE(few, 2u * 1000000 / 40000);
  EXPECT_GE(few, 2u * 1000000 / (40000 + 834 + 1067) - 4);
  EXPECT_GT(few_slots.withheld, 0u);
  // 128 slots cover the round trip: the link's flit rate (937 per us), less the first round trip.
  EXPECT_GE(many, (1000000 - 2 * (20000 + 750 + 1067)) / 1067 - 8);
}

}  // namespace
}  // namespace gpuvp::gpu
