// The PCIe link driven through its sockets: latency, size-dependent bandwidth, lane queuing,
// full duplex, data integrity and error pass-through.
#include <gtest/gtest.h>

#include "models/uvm/pcie/pcie_link.h"
#include "platform/stats/registry.h"
#include "tests/support/testbench.h"

namespace gpuvp::uvm {
namespace {

using sc_core::sc_time;
using sc_core::SC_PS;
using testbench::Initiator;
using testbench::MemoryTarget;

PcieParams v100_link() {
  PcieParams p;
  p.latency_ps = 23840;
  p.bandwidth = 16e9;
  p.transfer_model = PcieTransferModel::MeasuredCurve;
  return p;
}

// One side of the link driven by `initiator`, the other answered by `memory`.
struct Bench {
  testbench::Simulation sim;
  stats::Registry stats;
  PcieLink link{"link", v100_link(), stats, "pcie"};
  Initiator gpu{"gpu", testbench::Protocol::LT, 1 << 20};
  MemoryTarget host_memory{"host_memory", sc_time(0, SC_PS)};
  Initiator host{"host", testbench::Protocol::LT, 1 << 20};
  MemoryTarget device_memory{"device_memory", sc_time(0, SC_PS)};
  Bench() {
    gpu.socket.bind(link.device_in);
    link.host_out.bind(host_memory.socket);
    host.socket.bind(link.host_in);
    link.device_out.bind(device_memory.socket);
  }
  uint64_t counter(const std::string& name) const {
    return stats.find_group("pcie")->find_counter(name)->value();
  }
};

uint64_t serialization_ps(double bytes, double bandwidth) { return static_cast<uint64_t>(std::llround(bytes / bandwidth * 1e12)); }

TEST(PcieLink, PostedWriteCostsLatencyPlusSerializationAtTheMeasuredBandwidth) {
  Bench b;
  b.sim.run([&] {
    b.host.write(0x1000, std::vector<uint8_t>(4096, 0xab));
    // 4 KiB at 3.2219 GB/s (seed 003 Table 1) plus one 23840 ps latency.
    EXPECT_EQ(b.host.last_latency(), sc_time::from_value(23840 + serialization_ps(4096, 3.2219e9)));
  });
  EXPECT_EQ(b.device_memory.peek(0x1000, 4096), std::vector<uint8_t>(4096, 0xab));
  EXPECT_EQ(b.counter("downstream_bytes"), 4096u);
  EXPECT_EQ(b.counter("upstream_bytes"), 0u);
}

TEST(PcieLink, ReadCostsTwoLatenciesAndReturnsTheData) {
  Bench b;
  std::vector<uint8_t> pattern(65536);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 7);
  b.host_memory.poke(0x20000, pattern);
  b.sim.run([&] {
    EXPECT_EQ(b.gpu.read(0x20000, 65536), pattern);
    // Request header crosses upstream, 64 KiB of data comes back downstream at 8.4771 GB/s.
    EXPECT_EQ(b.gpu.last_latency(), sc_time::from_value(2 * 23840 + serialization_ps(65536, 8.4771e9)));
  });
  EXPECT_EQ(b.counter("downstream_bytes"), 65536u);
  EXPECT_EQ(b.counter("upstream_transfers"), 1u);
}

// Debug transport (the command processor's window probes) crosses untimed, both ways, and
// leaves the lanes alone.
TEST(PcieLink, DebugTransportPassesThroughWithoutTime) {
  Bench b;
  b.host_memory.poke(0x3000, {0x11, 0x22});
  b.device_memory.poke(0x4000, {0x33});
  auto debug_read = [](tlm_utils::simple_initiator_socket<Initiator>& socket, uint64_t address, unsigned bytes,
                       uint8_t* data) {
    tlm::tlm_generic_payload payload;
    payload.set_command(tlm::TLM_READ_COMMAND);
    payload.set_address(address);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    return socket->transport_dbg(payload);
  };
  uint8_t from_host[2] = {}, from_device[1] = {};
  b.sim.run([&] {
    EXPECT_EQ(debug_read(b.gpu.socket, 0x3000, 2, from_host), 2u);
    EXPECT_EQ(debug_read(b.host.socket, 0x4000, 1, from_device), 1u);
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME);
  });
  EXPECT_EQ(from_host[0], 0x11);
  EXPECT_EQ(from_host[1], 0x22);
  EXPECT_EQ(from_device[0], 0x33);
  EXPECT_EQ(b.counter("upstream_transfers") + b.counter("downstream_transfers"), 0u);
}

TEST(PcieLink, BandwidthIsInterpolatedBetweenTablePointsAndCappedAtPeak) {
  PcieParams p = v100_link();
  const double at_32k = p.effective_bandwidth(32 * 1024);
  EXPECT_GT(at_32k, 6.4437e9);
  EXPECT_LT(at_32k, 8.4771e9);
  EXPECT_DOUBLE_EQ(at_32k, (6.4437e9 + 8.4771e9) / 2);  // halfway in log2(size)
  EXPECT_DOUBLE_EQ(p.effective_bandwidth(512), 3.2219e9);
  EXPECT_DOUBLE_EQ(p.effective_bandwidth(64u << 20), 11.223e9);
  p.bandwidth = 5e9;
  EXPECT_DOUBLE_EQ(p.effective_bandwidth(1 << 20), 5e9);
  p.transfer_model = PcieTransferModel::Peak;
  EXPECT_DOUBLE_EQ(p.effective_bandwidth(4096), 5e9);
}

TEST(PcieLink, BackToBackTransfersQueueOnTheirLane) {
  Bench b;
  const uint64_t one_mib_ps = serialization_ps(1 << 20, 11.223e9);
  b.sim.run([&] {
    // Two 1 MiB writes issued at the same simulated time by two processes: the second waits
    // for the first to leave the downstream lane.
    sc_time latencies[2];
    sc_core::sc_event done[2];
    for (int i = 0; i < 2; ++i) {
      sc_core::sc_spawn([&, i] {
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        tlm::tlm_generic_payload payload;
        std::vector<uint8_t> data(1 << 20, static_cast<uint8_t>(i));
        payload.set_command(tlm::TLM_WRITE_COMMAND);
        payload.set_address(static_cast<uint64_t>(i) << 20);
        payload.set_data_ptr(data.data());
        payload.set_data_length(static_cast<unsigned>(data.size()));
        payload.set_streaming_width(static_cast<unsigned>(data.size()));
        b.host.socket->b_transport(payload, delay);
        latencies[i] = delay;
        done[i].notify();
      });
    }
    sc_core::wait(done[0] & done[1]);
    EXPECT_EQ(latencies[0], sc_time::from_value(23840 + one_mib_ps));
    EXPECT_EQ(latencies[1], sc_time::from_value(23840 + 2 * one_mib_ps));
  });
  EXPECT_EQ(b.counter("downstream_queued"), one_mib_ps);
  EXPECT_EQ(b.counter("downstream_busy"), 2 * one_mib_ps);
  EXPECT_EQ(b.device_memory.peek((1 << 20) + 5, 1), std::vector<uint8_t>{1});
}

TEST(PcieLink, LanesAreFullDuplex) {
  Bench b;
  b.sim.run([&] {
    // A device->host write does not wait for the host->device write in flight.
    b.host.write(0, std::vector<uint8_t>(4096, 2));
    const sc_time downstream = b.host.last_latency();
    b.gpu.write(0, std::vector<uint8_t>(4096, 3));
    EXPECT_EQ(b.gpu.last_latency(), downstream);
  });
  EXPECT_EQ(b.counter("upstream_queued"), 0u);
  EXPECT_EQ(b.counter("downstream_queued"), 0u);
}

TEST(PcieLink, ErrorsFromTheFarSidePassThroughAndAreCounted) {
  testbench::Simulation sim;
  stats::Registry stats;
  PcieLink link("link", v100_link(), stats, "pcie");
  Initiator gpu("gpu");
  MemoryTarget small_host("small_host", sc_time(0, SC_PS), 4096);  // addresses >= 4 KiB fail
  Initiator host("host");
  MemoryTarget device("device");
  gpu.socket.bind(link.device_in);
  link.host_out.bind(small_host.socket);
  host.socket.bind(link.host_in);
  link.device_out.bind(device.socket);
  sim.run([&] {
    const auto result = gpu.transport(tlm::TLM_READ_COMMAND, 1 << 20, 64);
    EXPECT_EQ(result.status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  EXPECT_EQ(stats.find_group("pcie")->find_counter("errors")->value(), 1u);
}

}  // namespace
}  // namespace gpuvp::uvm
