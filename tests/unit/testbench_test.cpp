// The test bench itself: LT and AT paths, latency, recorded transactions, errors.
#include "tests/support/testbench.h"

#include <gtest/gtest.h>

#include <ostream>
#include <stdexcept>

using gpuvp::AccessKind;
using gpuvp::testbench::Initiator;
using gpuvp::testbench::MemoryTarget;
using gpuvp::testbench::Protocol;
using gpuvp::testbench::Simulation;
using sc_core::sc_time;
using sc_core::SC_NS;

namespace gpuvp::testbench {
// Readable test names in ctest ("GetParam() = LT").
inline void PrintTo(Protocol p, std::ostream* os) { *os << (p == Protocol::LT ? "LT" : "AT"); }
}  // namespace gpuvp::testbench

class TestBench : public ::testing::TestWithParam<Protocol> {};

TEST_P(TestBench, WriteReadExpectWithLatency) {
    Simulation sim;
    Initiator cpu("cpu", GetParam());
    MemoryTarget mem("mem", sc_time(20, SC_NS));
    cpu.socket.bind(mem.socket);
    sim.run([&] {
        cpu.write32(0x100, 0xcafef00d);
        EXPECT_EQ(cpu.last_latency(), sc_time(20, SC_NS));
        EXPECT_EQ(cpu.read32(0x100), 0xcafef00du);
        EXPECT_EQ(cpu.last_latency(), sc_time(20, SC_NS));
        EXPECT_EQ(cpu.read64(0x200), 0u);  // unwritten memory reads as zero
        EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(60, SC_NS));
    });
    ASSERT_EQ(mem.transactions().size(), 3u);
    EXPECT_EQ(mem.transactions()[0].command, tlm::TLM_WRITE_COMMAND);
    EXPECT_EQ(mem.transactions()[0].address, 0x100u);
    EXPECT_EQ(mem.transactions()[0].length, 4u);
    EXPECT_EQ(mem.transactions()[0].data, (std::vector<std::uint8_t>{0x0d, 0xf0, 0xfe, 0xca}));
    EXPECT_EQ(mem.transactions()[1].time, sc_time(20, SC_NS));
    EXPECT_EQ(mem.transactions()[2].length, 8u);
    EXPECT_EQ(mem.transactions()[0].blocking, GetParam() == Protocol::LT);
    EXPECT_EQ(mem.peek(0x100, 4), (std::vector<std::uint8_t>{0x0d, 0xf0, 0xfe, 0xca}));
    EXPECT_EQ(cpu.pool().in_use(), 0u);  // every payload came back to the pool
}

TEST_P(TestBench, RecordsGpuExtensionFields) {
    Simulation sim;
    Initiator sm("sm", GetParam());
    MemoryTarget mem("mem", sc_time(5, SC_NS));
    sm.socket.bind(mem.socket);
    sm.tags.sm_id = 3;
    sm.tags.warp_id = 12;
    sm.tags.cta_id = 40;
    sm.tags.kernel_id = 2;
    sm.tags.kind = AccessKind::Atomic;
    sm.tags.sector_mask = gpuvp::GpuExtension::sector_mask_for(0x1040, 4);
    sim.run([&] { sm.write32(0x1040, 1); });
    ASSERT_EQ(mem.transactions().size(), 1u);
    const auto& r = mem.transactions()[0];
    ASSERT_TRUE(r.has_extension);
    EXPECT_EQ(r.extension.sm_id, 3u);
    EXPECT_EQ(r.extension.warp_id, 12u);
    EXPECT_EQ(r.extension.cta_id, 40u);
    EXPECT_EQ(r.extension.kernel_id, 2u);
    EXPECT_EQ(r.extension.kind, AccessKind::Atomic);
    EXPECT_EQ(r.extension.sector_mask, 0x4);
}

TEST_P(TestBench, AddressErrorIsReported) {
    Simulation sim;
    Initiator cpu("cpu", GetParam());
    MemoryTarget mem("mem", sc_time(1, SC_NS), /*size=*/0x1000);
    cpu.socket.bind(mem.socket);
    sim.run([&] {
        const auto r = cpu.transport(tlm::TLM_READ_COMMAND, 0xFFE, 4);
        EXPECT_EQ(r.status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
        EXPECT_THROW(cpu.read32(0x2000), std::runtime_error);
        EXPECT_NO_THROW(cpu.read32(0xFFC));
    });
}

TEST_P(TestBench, RunCanBeCalledRepeatedly) {
    Simulation sim;
    Initiator cpu("cpu", GetParam());
    MemoryTarget mem("mem", sc_time(10, SC_NS));
    cpu.socket.bind(mem.socket);
    sim.run([&] { cpu.write32(0, 7); });
    sim.run([&] { EXPECT_EQ(cpu.read32(0), 7u); });
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(20, SC_NS));
}

INSTANTIATE_TEST_SUITE_P(Protocols, TestBench, ::testing::Values(Protocol::LT, Protocol::AT),
                         [](const auto& p) { return p.param == Protocol::LT ? "LT" : "AT"; });

TEST(TestBenchAt, ConcurrentRequestsPipelineThroughFourPhases) {
    Simulation sim;
    Initiator cpu("cpu", Protocol::AT);
    MemoryTarget mem("mem", sc_time(100, SC_NS));
    cpu.socket.bind(mem.socket);
    mem.poke(0x0, {1, 0, 0, 0});
    mem.poke(0x40, {2, 0, 0, 0});
    sim.run([&] {
        sc_core::sc_event_and_list both;
        std::uint32_t a = 0, b = 0;
        auto pa = sc_core::sc_spawn([&] { a = cpu.read32(0x0); });
        auto pb = sc_core::sc_spawn([&] { b = cpu.read32(0x40); });
        both &= pa.terminated_event();
        both &= pb.terminated_event();
        sc_core::wait(both);
        EXPECT_EQ(a, 1u);
        EXPECT_EQ(b, 2u);
        // Both requests were accepted at time 0 and overlap: total 100 ns, not 200 ns.
        EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(100, SC_NS));
    });
    EXPECT_EQ(cpu.pool().peak_in_use(), 2u);
    EXPECT_EQ(cpu.pool().in_use(), 0u);
}

TEST(TestBenchAt, ImmediateTargetCompletesOnForwardCall) {
    Simulation sim;
    Initiator cpu("cpu", Protocol::AT);
    MemoryTarget mem("mem", sc_time(7, SC_NS));
    mem.at_style = MemoryTarget::AtStyle::Immediate;
    cpu.socket.bind(mem.socket);
    sim.run([&] {
        cpu.write32(0x10, 5);
        EXPECT_EQ(cpu.last_latency(), sc_time(7, SC_NS));
        EXPECT_EQ(cpu.read32(0x10), 5u);
    });
}

TEST(TestBenchRun, ExceptionsAndStarvationSurface) {
    Simulation sim;
    EXPECT_THROW(sim.run([] { throw std::logic_error("boom"); }), std::logic_error);
    sc_core::sc_event never;
    EXPECT_THROW(sim.run([&] { sc_core::wait(never); }), std::runtime_error);
}

TEST(TestBenchRun, FreshContextPerSimulation) {
    // Two elaborations in one process: the second starts at time zero with new modules
    // of the same names (this test is meaningful when the binary runs all tests at once).
    for (int i = 0; i < 2; ++i) {
        Simulation sim;
        Initiator cpu("cpu", Protocol::LT);
        MemoryTarget mem("mem", sc_time(3, SC_NS));
        cpu.socket.bind(mem.socket);
        EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME);
        sim.run([&] { cpu.write32(0, 1); });
        EXPECT_EQ(sc_core::sc_time_stamp(), sc_time(3, SC_NS));
    }
}

// A target that answers each request 10 ns after accepting it but accepts (END_REQ) a new
// request only 30 ns after it arrived, so responses to older transactions come back while a
// younger request still waits for its END_REQ. It checks the request-exclusion rule: no
// BEGIN_REQ while another request is unaccepted.
class SlowAcceptTarget : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<SlowAcceptTarget> socket;
    int overlapping_requests = 0;
    int accepted = 0;

    explicit SlowAcceptTarget(sc_core::sc_module_name name)
        : sc_module(name), socket("socket"), peq_(this, &SlowAcceptTarget::on_phase) {
        socket.register_nb_transport_fw(this, &SlowAcceptTarget::nb_transport_fw);
    }

private:
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_time& delay) {
        if (phase == tlm::BEGIN_REQ) {
            if (unaccepted_ != nullptr) ++overlapping_requests;
            unaccepted_ = &gp;
            gp.acquire();
            peq_.notify(gp, tlm::END_REQ, delay + sc_time(30, SC_NS));
        }
        return tlm::TLM_ACCEPTED;  // END_RESP: nothing to do
    }
    void on_phase(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase) {
        sc_time zero = sc_core::SC_ZERO_TIME;
        tlm::tlm_phase p = phase;
        if (phase == tlm::END_REQ) {
            unaccepted_ = nullptr;
            ++accepted;
            socket->nb_transport_bw(gp, p, zero);
            peq_.notify(gp, tlm::BEGIN_RESP, sc_time(10, SC_NS));
        } else if (phase == tlm::BEGIN_RESP) {
            gp.set_response_status(tlm::TLM_OK_RESPONSE);
            socket->nb_transport_bw(gp, p, zero);
            gp.release();
        }
    }
    tlm_utils::peq_with_cb_and_phase<SlowAcceptTarget> peq_;
    tlm::tlm_generic_payload* unaccepted_ = nullptr;
};

TEST(TestBenchAt, ResponsesToOlderRequestsDoNotReleaseTheRequestChannel) {
    Simulation sim;
    Initiator cpu("cpu", Protocol::AT);
    SlowAcceptTarget target("target");
    cpu.socket.bind(target.socket);
    sim.run([&] {
        sc_core::sc_event done[3];
        for (int i = 0; i < 3; ++i) {
            sc_core::sc_spawn([&, i] {
                cpu.read(static_cast<std::uint64_t>(i) * 64, 4);
                done[i].notify();
            });
        }
        sc_core::wait(done[0] & done[1] & done[2]);
    });
    EXPECT_EQ(target.accepted, 3);
    EXPECT_EQ(target.overlapping_requests, 0);
}
