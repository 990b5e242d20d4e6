// The L1 TLB and GMMU modules driven through their sockets: two SMs' initiators -> L1 TLBs ->
// memory targets standing in for the SM clusters; the TLBs translate through the GMMU, which
// migrates over a PcieLink to a host memory target. Core clock 1 GHz (1 cycle = 1 ns).
#include <gtest/gtest.h>

#include <memory>

#include "models/uvm/gmmu/gmmu.h"
#include "models/uvm/pcie/pcie_link.h"
#include "models/uvm/tlb/l1_tlb.h"
#include "platform/stats/registry.h"
#include "tests/support/testbench.h"

namespace gpuvp::uvm {
namespace {

using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;
using testbench::Initiator;
using testbench::MemoryTarget;
using testbench::Protocol;

constexpr uint64_t kManaged = 0x7000'0000'0000ULL;
constexpr uint64_t kDevice = 0x1000'0000ULL;  // not managed: passes straight through

UvmParams test_params() {
  UvmParams p;
  p.l1_tlb_entries = 8;
  p.l1_tlb_associativity = 8;
  p.l1_tlb_latency = 1;
  p.l1_tlb_pending = 8;
  p.l2_tlb_entries = 64;
  p.l2_tlb_associativity = 8;
  p.l2_tlb_latency = 10;
  p.page_walk_latency = 100;
  p.fault_latency_ps = 45e6;  // 45 us (seed 003 Listing 1)
  p.far_fault_mshrs = 16;
  p.fault_batch = 16;
  p.prefetcher = PrefetcherKind::None;
  p.eviction = EvictionKind::Lru4K;
  p.shootdown = ShootdownKind::WholeTlb;
  return p;
}

PcieParams link_params() {
  PcieParams p;
  p.latency_ps = 23840;
  p.bandwidth = 16e9;
  return p;
}

struct Bench {
  testbench::Simulation sim;
  stats::Registry stats;
  ClockDomain clock{"core", 1'000'000'000};
  PageTable table;
  UvmParams params;
  PcieLink link{"link", link_params(), stats, "pcie"};
  MemoryTarget host_memory{"host_memory"};
  Initiator host{"host", Protocol::LT};
  MemoryTarget link_device_side{"link_device_side"};
  std::unique_ptr<Gmmu> gmmu;
  std::vector<std::unique_ptr<Initiator>> sms;
  std::vector<std::unique_ptr<L1Tlb>> tlbs;
  std::vector<std::unique_ptr<MemoryTarget>> clusters;

  explicit Bench(UvmParams p = test_params(), uint64_t device_pages = 1 << 20) : params(p) {
    table.add_allocation(kManaged, 4 << 20);
    gmmu = std::make_unique<Gmmu>("gmmu", params, device_pages, 1, clock, table, stats, "uvm.gmmu");
    gmmu->pcie.bind(link.device_in);
    link.host_out.bind(host_memory.socket);
    host.socket.bind(link.host_in);
    link.device_out.bind(link_device_side.socket);
    for (int i = 0; i < 2; ++i) {
      std::string n = std::to_string(i);
      sms.push_back(std::make_unique<Initiator>(("sm" + n).c_str(), Protocol::AT));
      sms.back()->tags.sm_id = static_cast<uint32_t>(i);
      tlbs.push_back(std::make_unique<L1Tlb>(("tlb" + n).c_str(), params, clock, table, stats,
                                             "uvm.l1_tlb[" + n + "]",
                                             [this](uint64_t page, bool write, uint32_t bytes) { return gmmu->access(page, write, bytes); }));
      clusters.push_back(std::make_unique<MemoryTarget>(("cluster" + n).c_str(), sc_time(10, SC_NS)));
      sms.back()->socket.bind(tlbs.back()->in);
      tlbs.back()->out.bind(clusters.back()->socket);
      tlbs.back()->gmmu.bind(gmmu->translate);
      gmmu->notify.bind(tlbs.back()->notify);
    }
  }
  uint64_t gmmu_counter(const char* name) const { return stats.find_group("uvm.gmmu")->find_counter(name)->value(); }
  uint64_t tlb_counter(int i, const char* name) const {
    return stats.find_group("uvm.l1_tlb[" + std::to_string(i) + "]")->find_counter(name)->value();
  }
  // Fault latency plus one 4 KB migration (a PCIe read: two latencies and the serialization).
  sc_time one_fault() const {
    return sc_time::from_value(45'000'000 + 2 * 23840 +
                               static_cast<uint64_t>(std::llround(4096 / 3.2219e9 * 1e12)));
  }
};

TEST(UvmModules, UnmanagedRequestsPassStraightThrough) {
  Bench b;
  b.sim.run([&] {
    b.sms[0]->read(kDevice, 128);
    EXPECT_EQ(b.sms[0]->last_latency(), sc_time(10, SC_NS));
    b.sms[0]->write(kDevice + 128, std::vector<uint8_t>(128, 1));
    EXPECT_EQ(b.sms[0]->last_latency(), sc_time(10, SC_NS));
  });
  EXPECT_EQ(b.tlb_counter(0, "accesses"), 0u);
  EXPECT_EQ(b.gmmu_counter("l2_tlb_accesses"), 0u);
  EXPECT_EQ(b.clusters[0]->peek(kDevice + 128, 1), std::vector<uint8_t>{1});
}

TEST(UvmModules, FirstTouchFaultsMigratesAndReplaysThenHitsInTheL1) {
  Bench b;
  b.sim.run([&] {
    b.sms[0]->read(kManaged, 128);
    // L1 lookup 1 + L2 10 + walk 100 -> Nack; 45 us + PCIe; replay: L2 10 + walk 100; memory 10.
    sc_time expected = sc_time(1 + 110, SC_NS) + b.one_fault() + sc_time(110 + 10, SC_NS);
    EXPECT_GE(b.sms[0]->last_latency(), expected);
    EXPECT_LE(b.sms[0]->last_latency(), expected + sc_time(2, SC_NS));  // edge alignment
    b.sms[0]->read(kManaged + 128, 128);
    EXPECT_EQ(b.sms[0]->last_latency(), sc_time(1 + 10, SC_NS));  // L1 TLB hit
  });
  EXPECT_TRUE(b.table.resident(kManaged / kPageBytes));
  EXPECT_EQ(b.gmmu_counter("far_faults"), 1u);
  EXPECT_EQ(b.gmmu_counter("migrated_bytes"), 4096u);
  EXPECT_EQ(b.gmmu_counter("page_walks"), 2u);
  EXPECT_EQ(b.tlb_counter(0, "nacks"), 1u);
  EXPECT_EQ(b.tlb_counter(0, "replays"), 1u);
  EXPECT_EQ(b.tlb_counter(0, "hits"), 1u);
  EXPECT_EQ(b.tlb_counter(0, "misses"), 1u);
  EXPECT_GT(b.tlb_counter(0, "fault_stall_cycles"), 45'000u);
  EXPECT_EQ(b.stats.find_group("pcie")->find_counter("downstream_bytes")->value(), 4096u);
}

TEST(UvmModules, OtherSmFindsTheTranslationInTheSharedL2) {
  Bench b;
  b.sim.run([&] {
    b.sms[0]->read(kManaged, 128);
    b.sms[1]->read(kManaged, 128);
    EXPECT_EQ(b.sms[1]->last_latency(), sc_time(1 + 10 + 10, SC_NS));  // L1 miss, L2 hit, memory
  });
  EXPECT_EQ(b.gmmu_counter("l2_tlb_hits"), 1u);
}

TEST(UvmModules, RequestsThatDoNotFaultKeepFlowingWhileAFaultIsServiced) {
  Bench b;
  sc_time faulted, other, other_done;
  b.sim.run([&] {
    sc_core::sc_spawn([&] {
      b.sms[0]->read(kManaged + 5 * kPageBytes, 128);
      faulted = b.sms[0]->last_latency();
    });
    sc_core::wait(1, SC_US);
    b.sms[0]->read(kDevice, 128);
    other = b.sms[0]->last_latency();
    other_done = sc_core::sc_time_stamp();
    sc_core::wait(100, SC_US);
  });
  EXPECT_EQ(other, sc_time(10, SC_NS));
  EXPECT_LT(other_done, sc_time(2, SC_US));
  EXPECT_GT(faulted, sc_time(45, SC_US));
}

TEST(UvmModules, FaultsOnOnePageFromTwoSmsCoalesceIntoOneMigration) {
  Bench b;
  b.sim.run([&] {
    sc_core::sc_spawn([&] { b.sms[0]->read(kManaged + 64, 32); });
    sc_core::sc_spawn([&] { b.sms[1]->read(kManaged + 256, 32); });
    sc_core::wait(100, SC_US);
  });
  EXPECT_EQ(b.gmmu_counter("far_faults"), 1u);
  EXPECT_EQ(b.gmmu_counter("coalesced_faults"), 1u);
  EXPECT_EQ(b.gmmu_counter("replays"), 2u);
  EXPECT_EQ(b.gmmu_counter("migrated_bytes"), 4096u);
  EXPECT_EQ(b.clusters[0]->transactions().size(), 1u);
  EXPECT_EQ(b.clusters[1]->transactions().size(), 1u);
}

TEST(UvmModules, FaultsInOneWindowShareABatchAndItsLatency) {
  Bench b;
  std::vector<sc_time> done(4);
  b.sim.run([&] {
    for (int i = 0; i < 4; ++i)
      sc_core::sc_spawn([&, i] {
        b.sms[i % 2]->read(kManaged + static_cast<uint64_t>(i) * 16 * kPageBytes, 128);
        done[static_cast<size_t>(i)] = sc_core::sc_time_stamp();
      });
    sc_core::wait(200, SC_US);
  });
  EXPECT_EQ(b.gmmu_counter("far_faults"), 4u);
  EXPECT_EQ(b.gmmu_counter("batches"), 1u);
  // One 45 us latency for all four (then four serialized 4 KB transfers), not four in a row.
  for (const sc_time& t : done) EXPECT_LT(t, sc_time(60, SC_US));
}

TEST(UvmModules, FullTlbHoldsTheSmAndFullMshrsHoldTranslationsUntilTheyDrain) {
  UvmParams p = test_params();
  p.l1_tlb_pending = 2;
  p.far_fault_mshrs = 1;
  Bench b(p);
  int completed = 0;
  b.sim.run([&] {
    for (int i = 0; i < 4; ++i)
      sc_core::sc_spawn([&, i] {
        b.sms[0]->read(kManaged + static_cast<uint64_t>(i) * 16 * kPageBytes, 128);
        ++completed;
      });
    sc_core::wait(1000, SC_US);
  });
  EXPECT_EQ(completed, 4);
  EXPECT_GT(b.tlb_counter(0, "blocked"), 0u);
  EXPECT_EQ(b.gmmu_counter("far_faults"), 4u);
  EXPECT_GE(b.gmmu_counter("batches"), 4u);  // one MSHR: one fault per batch
}

void eviction_run(ShootdownKind shootdown, Bench*& out) {
  UvmParams p = test_params();
  p.shootdown = shootdown;
  out = new Bench(p, 1);  // one frame of device memory
  Bench& b = *out;
  b.sim.run([&] {
    b.sms[0]->write(kManaged, std::vector<uint8_t>(128, 7));  // page A, dirty
    b.sms[0]->read(kManaged + kPageBytes, 128);               // page B evicts A
    b.sms[0]->read(kManaged, 128);                            // A faults again
  });
}

TEST(UvmModules, OversubscriptionEvictsWritesBackAndShootsDownPerEntry) {
  Bench* raw = nullptr;
  eviction_run(ShootdownKind::PerEntry, raw);
  std::unique_ptr<Bench> b(raw);
  EXPECT_EQ(b->gmmu_counter("far_faults"), 3u);
  EXPECT_EQ(b->gmmu_counter("evicted_pages"), 2u);
  EXPECT_EQ(b->gmmu_counter("writeback_bytes"), 4096u);  // A was written, B only read
  EXPECT_EQ(b->stats.find_group("pcie")->find_counter("upstream_bytes")->value() >= 4096u, true);
  EXPECT_EQ(b->tlb_counter(0, "invalidations"), 2u);
  EXPECT_EQ(b->tlb_counter(0, "flushes"), 0u);
  EXPECT_EQ(b->table.device_pages(), 1u);
}

TEST(UvmModules, WholeTlbShootdownFlushesEveryTlb) {
  Bench* raw = nullptr;
  eviction_run(ShootdownKind::WholeTlb, raw);
  std::unique_ptr<Bench> b(raw);
  EXPECT_EQ(b->gmmu_counter("far_faults"), 3u);
  EXPECT_EQ(b->tlb_counter(0, "invalidations"), 0u);
  EXPECT_GE(b->tlb_counter(0, "flushes"), 2u);
  EXPECT_GE(b->tlb_counter(1, "flushes"), 2u);  // the idle SM's TLB too
}

TEST(UvmModules, ExplicitPrefetchAvoidsTheFault) {
  Bench b;
  b.sim.run([&] {
    b.gmmu->prefetch({kManaged / kPageBytes, 512}, true);  // 2 MB
    b.sms[0]->read(kManaged + 100 * kPageBytes, 128);
    // The walk finds it resident (the prefetch ended between two clock edges: up to one more cycle).
    EXPECT_GE(b.sms[0]->last_latency(), sc_time(1 + 110 + 10, SC_NS));
    EXPECT_LT(b.sms[0]->last_latency(), sc_time(1 + 110 + 10 + 1, SC_NS));
    b.gmmu->prefetch({kManaged / kPageBytes, 512}, false);  // back to the host
  });
  EXPECT_EQ(b.gmmu_counter("far_faults"), 0u);
  EXPECT_EQ(b.gmmu_counter("explicit_prefetch_bytes"), 2u << 20);
  EXPECT_EQ(b.table.device_pages(), 0u);
}

TEST(UvmModules, TbnPrefetchTurnsAStreamIntoFewFaults) {
  UvmParams p = test_params();
  p.prefetcher = PrefetcherKind::Tbn;
  Bench b(p);
  b.sim.run([&] {
    for (uint64_t a = 0; a < (1u << 20); a += kPageBytes) b.sms[0]->read(kManaged + a, 128);
  });
  EXPECT_LT(b.gmmu_counter("far_faults"), 32u);
  EXPECT_GT(b.gmmu_counter("prefetched_pages"), 200u);
  EXPECT_GT(b.gmmu_counter("useful_prefetches"), 200u);
}

}  // namespace
}  // namespace gpuvp::uvm

namespace gpuvp::uvm {
namespace {
TEST(UvmModules, ManyThreadsStreamThroughASmallTlbWithPrefetching) {
  UvmParams p = test_params();
  p.l1_tlb_pending = 2;
  p.prefetcher = PrefetcherKind::SequentialLocal;
  Bench b(p);
  int completed = 0;
  b.sim.run([&] {
    for (int s = 0; s < 2; ++s)
      for (int t = 0; t < 8; ++t)
        sc_core::sc_spawn([&, s, t] {
          for (uint64_t i = 0; i < 64; ++i) {
            b.sms[static_cast<size_t>(s)]->read(kManaged + ((i * 8 + static_cast<uint64_t>(t)) * 512), 128);
          }
          ++completed;
        });
    sc_core::wait(5000, SC_US);
  });
  EXPECT_EQ(completed, 16);
}
}  // namespace
}  // namespace gpuvp::uvm

// cudaMemAdvise at the GMMU's sockets (fault_service.h describes each advice).
namespace gpuvp::uvm {
namespace {

constexpr uint64_t kPage0 = kManaged / kPageBytes;
constexpr uint32_t kSetReadMostly = 1, kSetPreferred = 3, kUnsetPreferred = 4, kSetAccessedBy = 5,
                   kUnsetAccessedBy = 6;
constexpr uint32_t kOnDevice = 0, kOnHost = 1;

TEST(UvmAdvice, ReadMostlyDuplicatesOnAReadAndCollapsesOnAWrite) {
  Bench b;
  b.gmmu->advise({kPage0, 4}, kSetReadMostly, kOnDevice);
  b.sim.run([&] {
    b.sms[0]->read(kManaged, 128);             // far fault: the page is copied to the device
    b.gmmu->host_access({kPage0, 1}, false);   // host read: served by the host's copy
    b.sms[0]->read(kManaged + 128, 128);       // still resident: no second fault
    b.sms[0]->write(kManaged + 256, std::vector<uint8_t>(128, 3));  // device write: collapses
    b.gmmu->host_access({kPage0, 1}, false);   // host read: dirty data written back, duplicated again
    b.gmmu->host_access({kPage0, 1}, true);    // host write: the host's copy wins, page leaves
  });
  EXPECT_EQ(b.gmmu_counter("far_faults"), 1u);
  EXPECT_EQ(b.gmmu_counter("migrated_bytes"), 4096u);
  EXPECT_EQ(b.gmmu_counter("read_duplicated_pages"), 2u);  // on arrival, then on the host read after the write
  EXPECT_EQ(b.gmmu_counter("duplicate_host_reads"), 1u);
  EXPECT_EQ(b.gmmu_counter("duplicate_collapses"), 2u);    // the device write, the host write
  EXPECT_EQ(b.gmmu_counter("writeback_bytes"), 4096u);     // only the device-written copy went back
  EXPECT_EQ(b.gmmu_counter("host_accesses"), 3u);
  EXPECT_EQ(b.gmmu_counter("host_migrated_pages"), 1u);    // only the write took it away
  EXPECT_EQ(b.gmmu_counter("advice_calls"), 1u);
  EXPECT_FALSE(b.table.resident(kPage0));
}

TEST(UvmAdvice, WithoutAdviceAHostReadTakesThePageBack) {
  Bench b;
  b.sim.run([&] {
    b.sms[0]->read(kManaged, 128);
    b.gmmu->host_access({kPage0, 1}, false);
    b.sms[0]->read(kManaged, 128);
  });
  EXPECT_EQ(b.gmmu_counter("far_faults"), 2u);
  EXPECT_EQ(b.gmmu_counter("host_migrated_pages"), 1u);
  EXPECT_EQ(b.gmmu_counter("read_duplicated_pages"), 0u);
}

TEST(UvmAdvice, PreferredLocationHostMapsRemotelyAndNeverMigrates) {
  Bench b;
  b.gmmu->advise({kPage0, 16}, kSetPreferred, kOnHost);
  sc_time first, second;
  b.sim.run([&] {
    b.sms[0]->read(kManaged, 128);  // far fault: mapped for remote access after the fault latency
    first = b.sms[0]->last_latency();
    b.sms[0]->read(kManaged + 128, 128);  // L1 TLB hit, then the PCIe round trip
    second = b.sms[0]->last_latency();
    b.sms[0]->write(kManaged + 256, std::vector<uint8_t>(128, 1));
  });
  EXPECT_GT(first, sc_time(45, SC_US));
  // L1 1 + PCIe read (request latency, completion latency and 128 B) + memory 10.
  EXPECT_GT(second, sc_time(1 + 2 * 23 + 10, SC_NS));
  EXPECT_LT(second, sc_time(1000, SC_NS));
  EXPECT_EQ(b.gmmu_counter("far_faults"), 1u);
  EXPECT_EQ(b.gmmu_counter("migrated_bytes"), 0u);
  EXPECT_EQ(b.gmmu_counter("prefetched_pages"), 0u);
  EXPECT_EQ(b.gmmu_counter("remote_mappings"), 1u);
  EXPECT_EQ(b.gmmu_counter("remote_accesses"), 3u);
  EXPECT_EQ(b.gmmu_counter("remote_bytes"), 3u * 128u);
  EXPECT_EQ(b.table.device_pages(), 0u);
  EXPECT_GE(b.stats.find_group("pcie")->find_counter("downstream_bytes")->value(), 2u * 128u);
}

TEST(UvmAdvice, PreferredHostPagesAreLeftOutOfPrefetches) {
  UvmParams p = test_params();
  p.prefetcher = PrefetcherKind::SequentialLocal;
  Bench b(p);
  b.gmmu->advise({kPage0 + 8, 8}, kSetPreferred, kOnHost);  // second half of the first 64 KB block
  b.sim.run([&] { b.sms[0]->read(kManaged, 128); });
  EXPECT_EQ(b.gmmu_counter("migrated_bytes"), 8u * 4096u);  // the faulting page and its 7 neighbours
  for (uint64_t i = 8; i < 16; ++i) EXPECT_FALSE(b.table.resident(kPage0 + i)) << i;
}

TEST(UvmAdvice, AccessedByMapsTheRangeWithoutAFault) {
  Bench b;
  b.gmmu->advise({kPage0, 4}, kSetAccessedBy, kOnDevice);
  sc_time latency;
  b.sim.run([&] {
    b.sms[0]->read(kManaged + kPageBytes, 128);
    latency = b.sms[0]->last_latency();
    b.gmmu->advise({kPage0, 4}, kUnsetAccessedBy, kOnDevice);  // the mapping goes: shootdown
    b.sms[0]->read(kManaged + kPageBytes, 128);                 // now it faults and migrates
  });
  EXPECT_LT(latency, sc_time(2, SC_US));  // L1 1 + L2 10 + walk 100 + PCIe + memory 10: no fault
  EXPECT_GT(latency, sc_time(1 + 110 + 10 + 2 * 23, SC_NS));
  EXPECT_EQ(b.gmmu_counter("remote_mappings"), 4u);
  EXPECT_EQ(b.gmmu_counter("remote_accesses"), 1u);
  EXPECT_EQ(b.gmmu_counter("far_faults"), 1u);
  EXPECT_EQ(b.gmmu_counter("migrated_bytes"), 4096u);
  EXPECT_GE(b.gmmu_counter("shootdowns"), 1u);
}

TEST(UvmAdvice, PreferredDevicePagesResistEviction) {
  Bench b(test_params(), 2);  // two frames
  b.gmmu->advise({kPage0, 1}, kSetPreferred, kOnDevice);
  b.sim.run([&] {
    b.sms[0]->read(kManaged, 128);                   // A (prefers the device), least recently used
    b.sms[0]->read(kManaged + kPageBytes, 128);      // B
    b.sms[0]->read(kManaged + 2 * kPageBytes, 128);  // C: evicts B, not A
    b.sms[0]->read(kManaged, 128);                   // A: still resident
  });
  EXPECT_EQ(b.gmmu_counter("far_faults"), 3u);
  EXPECT_TRUE(b.table.resident(kPage0));
  EXPECT_FALSE(b.table.resident(kPage0 + 1));
  EXPECT_EQ(b.gmmu_counter("preferred_evictions"), 0u);
  // Once nothing else can go, the preferred page goes too (counted).
  b.gmmu->advise({kPage0 + 2, 1}, kSetPreferred, kOnDevice);
  b.sim.run([&] { b.sms[0]->read(kManaged + 3 * kPageBytes, 128); });
  EXPECT_EQ(b.gmmu_counter("preferred_evictions"), 1u);
  b.gmmu->advise({kPage0, 3}, kUnsetPreferred, kOnDevice);
}

TEST(UvmAdvice, UnknownAdviceOrLocationIsRefused) {
  Bench b;
  EXPECT_THROW(b.gmmu->advise({kPage0, 1}, 0, kOnDevice), std::invalid_argument);
  EXPECT_THROW(b.gmmu->advise({kPage0, 1}, 7, kOnDevice), std::invalid_argument);
  EXPECT_THROW(b.gmmu->advise({kPage0, 1}, kSetPreferred, 2), std::invalid_argument);
  EXPECT_EQ(b.gmmu_counter("advice_calls"), 0u);
}

}  // namespace
}  // namespace gpuvp::uvm
