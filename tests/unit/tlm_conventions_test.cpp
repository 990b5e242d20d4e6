#include "models/tlm/clock_domain.h"
#include "models/tlm/gpu_extension.h"
#include "models/tlm/payload_pool.h"
#include "tests/support/testbench.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <stdexcept>

using gpuvp::AccessKind;
using gpuvp::ClockDomain;
using gpuvp::GpuExtension;
using gpuvp::PayloadPool;
using gpuvp::testbench::Simulation;
using sc_core::sc_time;
using sc_core::SC_PS;

// ------------------------------------------------------------------ ClockDomain

TEST(ClockDomain, ExactEdgesOverABillionCycles) {
    Simulation sim;
    const ClockDomain core("core", 1'312'000'000);  // V100 core clock
    EXPECT_EQ(core.period(), sc_time(762, SC_PS));
    // 1e9 cycles at 1312 MHz = 762.195121951... ms: floor(1e9 * 1e12 / 1.312e9) ps
    EXPECT_EQ(core.time_of_cycle(1'000'000'000).value(), 762'195'121'951u);
    // A naive period accumulation would have drifted by 0.195 ms.
    EXPECT_NE(core.time_of_cycle(1'000'000'000).value(), 762u * 1'000'000'000u);
    // Exactly one second's worth of cycles lands exactly on 1 s.
    EXPECT_EQ(core.time_of_cycle(1'312'000'000), sc_time(1, sc_core::SC_SEC));
    EXPECT_EQ(core.cycle_at(sc_time(1, sc_core::SC_SEC)), 1'312'000'000u);
}

TEST(ClockDomain, CycleAtAndNextEdgeAreInverse) {
    Simulation sim;
    const ClockDomain xbar("xbar", 1'200'000'000);  // 833.33 ps period
    for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 999ull, 123'456'789ull, 4'000'000'000ull}) {
        const sc_time t = xbar.time_of_cycle(n);
        EXPECT_EQ(xbar.cycle_at(t), n);
        EXPECT_EQ(xbar.next_cycle(t), n);
        EXPECT_EQ(xbar.next_edge(t), t);
        const sc_time after = t + sc_time(1, SC_PS);
        EXPECT_EQ(xbar.cycle_at(after), n);
        EXPECT_EQ(xbar.next_cycle(after), n + 1);
        EXPECT_EQ(xbar.next_edge(after), xbar.time_of_cycle(n + 1));
        if (n > 0) {
            const sc_time before = t - sc_time(1, SC_PS);
            EXPECT_EQ(xbar.cycle_at(before), n - 1);
            EXPECT_EQ(xbar.next_cycle(before), n);
        }
    }
    EXPECT_EQ(xbar.time_of_cycle(3).value(), 2500u);  // 3 * 833.33 = 2500 exactly
    EXPECT_EQ(xbar.time_of_cycle(1).value(), 833u);
    EXPECT_EQ(xbar.time_of_cycle(2).value(), 1666u);
}

TEST(ClockDomain, DelayUntil) {
    Simulation sim;
    const ClockDomain c("c", 1'000'000'000);  // 1 ns
    EXPECT_EQ(c.delay_until(sc_time(0, SC_PS), 0), sc_time(0, SC_PS));
    EXPECT_EQ(c.delay_until(sc_time(1, SC_PS), 0), sc_time(999, SC_PS));
    EXPECT_EQ(c.delay_until(sc_time(1000, SC_PS), 4), sc_time(4000, SC_PS));
    EXPECT_EQ(c.delay_until(sc_time(1500, SC_PS), 2), sc_time(2500, SC_PS));
}

TEST(ClockDomain, RejectsBadFrequencies) {
    Simulation sim;
    EXPECT_THROW(ClockDomain("zero", 0), std::invalid_argument);
    EXPECT_THROW(ClockDomain("fast", 2'000'000'000'000ull), std::invalid_argument);  // 2 THz at 1 ps
    EXPECT_NO_THROW(ClockDomain("max", 1'000'000'000'000ull));
}

// ------------------------------------------------------------------ GpuExtension

TEST(GpuExtension, CloneAndCopyFromCopyEveryField) {
    GpuExtension e;
    e.sm_id = 3;
    e.warp_id = 17;
    e.cta_id = 1234;
    e.kernel_id = 99;
    e.sector_mask = 0b1010;
    e.kind = AccessKind::Reduction;
    std::unique_ptr<GpuExtension> c(static_cast<GpuExtension*>(e.clone()));
    EXPECT_EQ(c->sm_id, 3u);
    EXPECT_EQ(c->warp_id, 17u);
    EXPECT_EQ(c->cta_id, 1234u);
    EXPECT_EQ(c->kernel_id, 99u);
    EXPECT_EQ(c->sector_mask, 0b1010);
    EXPECT_EQ(c->kind, AccessKind::Reduction);
    GpuExtension d;
    d.copy_from(e);
    EXPECT_EQ(d.cta_id, 1234u);
    EXPECT_EQ(d.kind, AccessKind::Reduction);
    d.reset();
    EXPECT_EQ(d.sm_id, GpuExtension::kNone);
    EXPECT_EQ(d.sector_mask, 0);
    EXPECT_EQ(d.kind, AccessKind::Load);
}

TEST(GpuExtension, DeepCopyOfPayloadClonesExtension) {
    tlm::tlm_generic_payload a, b;
    auto* e = new GpuExtension;
    e->warp_id = 5;
    e->kind = AccessKind::PageTableWalk;
    a.set_extension(e);
    b.deep_copy_from(a);
    GpuExtension* be = b.get_extension<GpuExtension>();
    ASSERT_NE(be, nullptr);
    EXPECT_NE(be, e);
    EXPECT_EQ(be->warp_id, 5u);
    EXPECT_EQ(be->kind, AccessKind::PageTableWalk);
}

TEST(GpuExtension, SectorMaskAndNames) {
    EXPECT_EQ(GpuExtension::sector_mask_for(0x1000, 128), 0xF);
    EXPECT_EQ(GpuExtension::sector_mask_for(0x1000, 4), 0x1);
    EXPECT_EQ(GpuExtension::sector_mask_for(0x1020, 32), 0x2);
    EXPECT_EQ(GpuExtension::sector_mask_for(0x101F, 2), 0x3);
    EXPECT_EQ(GpuExtension::sector_mask_for(0x1060, 64), 0x8);  // clipped to the line
    EXPECT_EQ(GpuExtension::sector_mask_for(0x1000, 0), 0);
    EXPECT_STREQ(gpuvp::to_string(AccessKind::InstructionFetch), "ifetch");
    EXPECT_STREQ(gpuvp::to_string(AccessKind::Dma), "dma");
}

// ------------------------------------------------------------------ PayloadPool

TEST(PayloadPool, ReusesPayloadsAndStopsGrowingAfterWarmUp) {
    PayloadPool pool(128);
    std::set<tlm::tlm_generic_payload*> first;
    std::vector<tlm::tlm_generic_payload*> live;
    for (int i = 0; i < 8; ++i) live.push_back(pool.allocate());
    first.insert(live.begin(), live.end());
    EXPECT_EQ(pool.created(), 8u);
    EXPECT_EQ(pool.in_use(), 8u);
    for (auto* gp : live) gp->release();
    EXPECT_EQ(pool.in_use(), 0u);
    for (int round = 0; round < 1000; ++round) {
        live.clear();
        for (int i = 0; i < 8; ++i) live.push_back(pool.allocate());
        for (auto* gp : live) EXPECT_EQ(first.count(gp), 1u);
        for (auto* gp : live) gp->release();
    }
    EXPECT_EQ(pool.created(), 8u);  // no growth after warm-up
    EXPECT_EQ(pool.peak_in_use(), 8u);
    EXPECT_EQ(pool.allocations(), 8u + 8000u);
}

TEST(PayloadPool, ReferenceCountingAndResetOnFree) {
    PayloadPool pool(128);
    tlm::tlm_generic_payload* gp = pool.allocate(tlm::TLM_WRITE_COMMAND, 0x80, 64);
    EXPECT_EQ(gp->get_ref_count(), 1);
    EXPECT_TRUE(gp->has_mm());
    ASSERT_NE(gp->get_data_ptr(), nullptr);
    unsigned char* inline_buffer = gp->get_data_ptr();
    EXPECT_EQ(gp->get_data_length(), 64u);
    GpuExtension* ext = gpuvp::gpu_extension(*gp);
    ASSERT_NE(ext, nullptr);
    ext->sm_id = 7;
    ext->kind = AccessKind::Store;
    unsigned char other[4];
    gp->set_data_ptr(other);
    gp->set_response_status(tlm::TLM_OK_RESPONSE);

    gp->acquire();  // a second holder (e.g. a target keeping it in a queue)
    gp->release();
    EXPECT_EQ(pool.in_use(), 1u);  // still held once
    gp->release();
    EXPECT_EQ(pool.in_use(), 0u);

    tlm::tlm_generic_payload* again = pool.allocate();
    ASSERT_EQ(again, gp);
    EXPECT_EQ(again->get_command(), tlm::TLM_IGNORE_COMMAND);
    EXPECT_EQ(again->get_address(), 0u);
    EXPECT_EQ(again->get_data_length(), 0u);
    EXPECT_EQ(again->get_data_ptr(), inline_buffer);
    EXPECT_EQ(again->get_response_status(), tlm::TLM_INCOMPLETE_RESPONSE);
    EXPECT_EQ(gpuvp::gpu_extension(*again), ext);  // same pre-attached extension, reset
    EXPECT_EQ(ext->sm_id, GpuExtension::kNone);
    EXPECT_EQ(ext->kind, AccessKind::Load);
    again->release();
}

TEST(PayloadPool, RejectsOversizedRequests) {
    PayloadPool pool(128);
    EXPECT_THROW(pool.allocate(tlm::TLM_READ_COMMAND, 0, 129), std::length_error);
    EXPECT_EQ(pool.in_use(), 0u);
    EXPECT_NO_THROW(pool.allocate(tlm::TLM_READ_COMMAND, 0, 128)->release());
}
