// The GMMU's far-fault engine with a PCIe port that serializes transfers on two lanes at the
// seed 003 Table 1 bandwidths: MSHR admission, batching, fault latency plus transfer timing,
// replay, eviction with write-back, explicit prefetch and host eviction, statistics.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/uvm/gmmu/fault_service.h"
#include "models/uvm/pcie/pcie_params.h"

namespace gpuvp::uvm {
namespace {

constexpr uint64_t kBase = 0x7000'0000'0000ULL;
constexpr uint64_t kBasePage = kBase / kPageBytes;
constexpr uint64_t kFaultPs = 45'000'000;

// Two lanes, each one transfer at a time, at the PCIe model's effective bandwidth.
struct LanePort : MigrationPort {
  PcieParams pcie;
  uint64_t down_free = 0, up_free = 0;
  std::vector<PageRange> in, out, invalid;
  LanePort() {
    pcie.latency_ps = 23840;
    pcie.bandwidth = 16e9;
  }
  uint64_t migrate_in(PageRange r, uint64_t ready) override {
    in.push_back(r);
    down_free = std::max(down_free, ready) + static_cast<uint64_t>(pcie.transfer_time_ps(r.bytes()));
    return down_free;
  }
  uint64_t write_back(PageRange r, uint64_t ready) override {
    out.push_back(r);
    up_free = std::max(up_free, ready) + static_cast<uint64_t>(pcie.transfer_time_ps(r.bytes()));
    return up_free;
  }
  void invalidated(PageRange r) override { invalid.push_back(r); }
};

struct Bench {
  stats::Registry registry;
  PageTable table;
  LanePort port;
  FaultServiceParams params;
  std::unique_ptr<FaultService> gmmu;
  explicit Bench(PrefetcherKind prefetcher, uint64_t device_pages = ~uint64_t{0}, uint32_t mshrs = 256,
                 EvictionKind eviction = EvictionKind::Lru4K) {
    params.prefetcher = prefetcher;
    params.device_pages = device_pages;
    params.mshr_entries = mshrs;
    params.eviction = eviction;
    table.add_allocation(kBase, 1 << 20);
    gmmu = std::make_unique<FaultService>(params, table, port, registry.group("uvm.gmmu"));
  }
  uint64_t counter(const char* name) const { return registry.find_group("uvm.gmmu")->find_counter(name)->value(); }
};

TEST(FaultService, FaultWaitsForLatencyPlusTransferThenReplaysEveryWaiter) {
  Bench b(PrefetcherKind::None);
  EXPECT_EQ(b.gmmu->fault(kBasePage + 3, 100), FaultService::Admit::Allocated);
  EXPECT_EQ(b.gmmu->fault(kBasePage + 3, 101), FaultService::Admit::Coalesced);
  EXPECT_TRUE(b.gmmu->batch_pending());
  EXPECT_EQ(b.gmmu->service_batch(1000), 1u);
  uint64_t expect = 1000 + kFaultPs + static_cast<uint64_t>(b.port.pcie.transfer_time_ps(4096));
  EXPECT_EQ(b.gmmu->next_landing_ps(), expect);
  EXPECT_TRUE(b.gmmu->advance(expect - 1).empty());
  EXPECT_EQ(b.table.state(kBasePage + 3), PageState::Migrating);
  auto replays = b.gmmu->advance(expect);
  ASSERT_EQ(replays.size(), 1u);
  EXPECT_EQ(replays[0].page, kBasePage + 3);
  EXPECT_EQ(replays[0].requesters, (std::vector<uint64_t>{100, 101}));
  EXPECT_TRUE(b.table.resident(kBasePage + 3));
  EXPECT_EQ(b.gmmu->fault(kBasePage + 3, 102), FaultService::Admit::Resident);
  EXPECT_EQ(b.counter("far_faults"), 1u);
  EXPECT_EQ(b.counter("coalesced_faults"), 1u);
  EXPECT_EQ(b.counter("migrated_bytes"), 4096u);
}

TEST(FaultService, OneBatchPaysTheFaultLatencyOnceAndSerializesTransfers) {
  Bench b(PrefetcherKind::None);
  for (uint64_t i = 0; i < 4; ++i) b.gmmu->fault(kBasePage + 10 * i, i);
  EXPECT_EQ(b.gmmu->service_batch(0), 4u);
  uint64_t one = static_cast<uint64_t>(b.port.pcie.transfer_time_ps(4096));
  EXPECT_EQ(b.port.down_free, kFaultPs + 4 * one);
  EXPECT_EQ(b.gmmu->advance(kFaultPs + 2 * one).size(), 2u);  // the first two landed
  EXPECT_EQ(b.gmmu->advance(kFaultPs + 4 * one).size(), 2u);
  EXPECT_EQ(b.counter("batches"), 1u);
  EXPECT_EQ(b.registry.find_group("uvm.gmmu")->find_histogram("faults_per_batch")->count(), 1u);
}

TEST(FaultService, FullMshrsRefuseNewPagesUntilAnEntryCompletes) {
  Bench b(PrefetcherKind::None, ~uint64_t{0}, 2);
  EXPECT_EQ(b.gmmu->fault(kBasePage, 1), FaultService::Admit::Allocated);
  EXPECT_EQ(b.gmmu->fault(kBasePage + 1, 2), FaultService::Admit::Allocated);
  EXPECT_EQ(b.gmmu->fault(kBasePage + 2, 3), FaultService::Admit::Full);
  EXPECT_EQ(b.counter("mshr_full"), 1u);
  b.gmmu->service_batch(0);
  b.gmmu->advance(b.gmmu->next_landing_ps());
  EXPECT_EQ(b.gmmu->fault(kBasePage + 2, 3), FaultService::Admit::Allocated);
}

TEST(FaultService, AFaultOnAPrefetchedPageInFlightWaitsForThatTransfer) {
  Bench b(PrefetcherKind::SequentialLocal);
  b.gmmu->fault(kBasePage, 1);
  b.gmmu->service_batch(0);
  EXPECT_EQ(b.port.in.size(), 2u);  // 4 KB + 60 KB
  EXPECT_EQ(b.gmmu->fault(kBasePage + 5, 2), FaultService::Admit::Allocated);
  b.gmmu->service_batch(10);
  EXPECT_EQ(b.port.in.size(), 2u);  // nothing new to move
  uint64_t first = b.gmmu->next_landing_ps();
  EXPECT_EQ(b.gmmu->advance(first).size(), 1u);  // the faulting page
  auto second = b.gmmu->advance(b.gmmu->next_landing_ps());
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].page, kBasePage + 5);
  EXPECT_EQ(b.counter("prefetched_pages"), 15u);
  b.gmmu->touch(kBasePage + 5, 1, false);
  b.gmmu->touch(kBasePage + 6, 2, false);
  b.gmmu->touch(kBasePage + 6, 3, false);
  EXPECT_EQ(b.counter("useful_prefetches"), 2u);
}

TEST(FaultService, FullDeviceMemoryEvictsAndWritesBackDirtyPages) {
  Bench b(PrefetcherKind::None, 2);
  for (uint64_t p : {0, 1}) {
    b.gmmu->fault(kBasePage + p, p);
    b.gmmu->service_batch(0);
    b.gmmu->advance(b.gmmu->next_landing_ps());
  }
  b.gmmu->touch(kBasePage + 0, 10, true);   // dirty, older
  b.gmmu->touch(kBasePage + 1, 20, false);  // clean, newer
  b.gmmu->fault(kBasePage + 7, 9);
  uint64_t now = b.gmmu->next_landing_ps();
  b.gmmu->service_batch(now);
  EXPECT_EQ(b.table.state(kBasePage + 0), PageState::Host);  // LRU victim
  EXPECT_TRUE(b.table.resident(kBasePage + 1));
  ASSERT_EQ(b.port.out.size(), 1u);
  EXPECT_EQ(b.port.out[0], (PageRange{kBasePage, 1}));
  ASSERT_EQ(b.port.invalid.size(), 1u);
  EXPECT_EQ(b.counter("evicted_bytes"), 4096u);
  EXPECT_EQ(b.counter("writeback_bytes"), 4096u);
  EXPECT_LE(b.table.device_pages() + b.table.migrating_pages(), 2u);
  // A clean victim costs no write-back.
  b.gmmu->advance(b.gmmu->next_landing_ps());
  b.gmmu->touch(kBasePage + 7, 30, false);
  b.gmmu->fault(kBasePage + 8, 10);
  b.gmmu->service_batch(b.port.down_free);
  EXPECT_EQ(b.port.out.size(), 1u);
  EXPECT_EQ(b.counter("evicted_pages"), 2u);
}

TEST(FaultService, PrefetchPlansAreCutToTheFreeFramesFaultingPageFirst) {
  Bench b(PrefetcherKind::SequentialLocal, 4);
  b.gmmu->fault(kBasePage + 3, 1);
  b.gmmu->service_batch(0);
  EXPECT_EQ(b.table.migrating_pages(), 4u);
  EXPECT_EQ(b.port.in[0], (PageRange{kBasePage + 3, 1}));
  // Every frame is in flight: a new fault waits in its MSHR until something lands.
  b.gmmu->fault(kBasePage + 40, 2);
  EXPECT_EQ(b.gmmu->service_batch(1), 0u);
  EXPECT_TRUE(b.gmmu->batch_pending());
  b.gmmu->advance(b.port.down_free);
  EXPECT_EQ(b.gmmu->service_batch(b.port.down_free), 1u);
  EXPECT_EQ(b.table.state(kBasePage + 40), PageState::Migrating);
}

TEST(FaultService, ExplicitPrefetchMovesLargeRunsWithoutFaultLatency) {
  Bench b(PrefetcherKind::None);
  uint64_t done = b.gmmu->prefetch_to_device({kBasePage, 256}, 0);  // all 1 MB
  EXPECT_EQ(b.port.in.size(), 1u);
  EXPECT_EQ(done, static_cast<uint64_t>(b.port.pcie.transfer_time_ps(1 << 20)));
  b.gmmu->advance(done);
  EXPECT_EQ(b.table.device_pages(), 256u);
  EXPECT_EQ(b.counter("explicit_prefetch_bytes"), 1u << 20);
  EXPECT_EQ(b.counter("far_faults"), 0u);
  // Back to the host: only dirty pages travel.
  b.gmmu->touch(kBasePage + 4, 1, true);
  b.gmmu->touch(kBasePage + 5, 1, true);
  b.gmmu->evict_to_host({kBasePage, 256}, done);
  EXPECT_EQ(b.table.device_pages(), 0u);
  ASSERT_EQ(b.port.out.size(), 1u);
  EXPECT_EQ(b.port.out[0], (PageRange{kBasePage + 4, 2}));
}

TEST(FaultService, TbnFaultsFewerThanNoPrefetcherOnAStream) {
  auto stream = [](PrefetcherKind kind) {
    Bench b(kind);
    uint64_t now = 0;
    for (uint64_t p = kBasePage; p < kBasePage + 256; ++p) {
      if (b.gmmu->fault(p, p) == FaultService::Admit::Allocated) {
        b.gmmu->service_batch(now);
        now = b.gmmu->next_landing_ps();
      }
      for (uint64_t t = b.gmmu->next_landing_ps(); t != ~uint64_t{0} && !b.table.resident(p);
           t = b.gmmu->next_landing_ps()) {
        b.gmmu->advance(t);
        now = std::max(now, t);
      }
      b.gmmu->touch(p, now, false);
    }
    return std::make_pair(b.counter("far_faults"), now);
  };
  auto none = stream(PrefetcherKind::None);
  auto seq = stream(PrefetcherKind::SequentialLocal);
  auto tbn = stream(PrefetcherKind::Tbn);
  EXPECT_EQ(none.first, 256u);
  EXPECT_EQ(seq.first, 16u);
  EXPECT_LT(tbn.first, seq.first);
  EXPECT_LT(tbn.second, seq.second);
  EXPECT_LT(seq.second, none.second);
}

TEST(FaultService, UnmanagedPagesAreAnError) {
  Bench b(PrefetcherKind::None);
  EXPECT_THROW(b.gmmu->fault(kBasePage + 100000, 1), std::out_of_range);
}

}  // namespace
}  // namespace gpuvp::uvm
