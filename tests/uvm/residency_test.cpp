// Page table, eviction policies and far-fault MSHRs: the pure-C++ core of the GMMU.
#include <gtest/gtest.h>

#include "models/uvm/eviction/eviction_policy.h"
#include "models/uvm/gmmu/far_fault_mshrs.h"
#include "models/uvm/residency/page_table.h"

namespace gpuvp::uvm {
namespace {

constexpr uint64_t kBase = 0x7000'0000'0000ULL;
constexpr uint64_t kBasePage = kBase / kPageBytes;

void make_resident(PageTable& t, uint64_t page, uint64_t use) {
  t.set_migrating(page, false);
  t.set_resident(page);
  t.touch(page, use, false);
}

TEST(PageTable, AllocationsStartOnTheHostAndFindTheirPages) {
  PageTable t;
  t.add_allocation(kBase, 10000);  // 3 pages
  t.add_allocation(kBase + 0x10000, 4096);
  EXPECT_EQ(t.allocation_of_page(kBasePage + 2)->base, kBase);
  EXPECT_EQ(t.allocation_of_page(kBasePage + 3), nullptr);
  EXPECT_EQ(t.allocation_of_page(kBasePage + 16)->bytes, 4096u);
  EXPECT_EQ(t.state(kBasePage + 1), PageState::Host);
  EXPECT_EQ(t.device_pages(), 0u);
  EXPECT_THROW(t.info(kBasePage + 3), std::out_of_range);
}

TEST(PageTable, RejectsBadAllocationsWithClearErrors) {
  PageTable t;
  t.add_allocation(kBase, 8192);
  EXPECT_THROW(t.add_allocation(kBase + 4096, 4096), std::invalid_argument);  // overlap
  EXPECT_THROW(t.add_allocation(kBase - 4096, 8192), std::invalid_argument);  // overlap below
  EXPECT_THROW(t.add_allocation(kBase + 0x100001, 4096), std::invalid_argument);  // unaligned
  EXPECT_THROW(t.add_allocation(kBase + 0x200000, 0), std::invalid_argument);
  EXPECT_THROW(t.remove_allocation(kBase + 4096), std::invalid_argument);
  try {
    t.add_allocation(kBase + 4096, 4096);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("overlaps"), std::string::npos) << e.what();
  }
}

TEST(PageTable, StateTransitionsKeepCountsAndRefuseDoubleMigration) {
  PageTable t;
  t.add_allocation(kBase, 4 * 4096);
  t.set_migrating(kBasePage, true);
  EXPECT_EQ(t.migrating_pages(), 1u);
  EXPECT_THROW(t.set_migrating(kBasePage, false), std::logic_error);
  EXPECT_THROW(t.set_resident(kBasePage + 1), std::logic_error);
  t.set_resident(kBasePage);
  EXPECT_EQ(t.device_pages(), 1u);
  EXPECT_EQ(t.migrating_pages(), 0u);
  EXPECT_TRUE(t.touch(kBasePage, 5, true));   // first use of a prefetched page
  EXPECT_FALSE(t.touch(kBasePage, 6, false));
  EXPECT_TRUE(t.info(kBasePage).dirty);
  EXPECT_EQ(t.info(kBasePage).uses, 2u);
  t.set_host(kBasePage);
  EXPECT_EQ(t.device_pages(), 0u);
  EXPECT_FALSE(t.info(kBasePage).dirty);
  t.set_migrating(kBasePage + 2, false);
  t.set_resident(kBasePage + 2);
  t.remove_allocation(kBase);
  EXPECT_EQ(t.device_pages(), 0u);
}

TEST(Eviction, Lru4kPicksTheLeastRecentlyUsedPages) {
  PageTable t;
  t.add_allocation(kBase, 8 * 4096);
  uint64_t uses[8] = {50, 10, 70, 20, 80, 30, 60, 40};
  for (uint64_t i = 0; i < 8; ++i) make_resident(t, kBasePage + i, uses[i]);
  auto lru = make_eviction_policy(EvictionKind::Lru4K, 1);
  EXPECT_EQ(lru->victims(t, 3), (std::vector<uint64_t>{kBasePage + 1, kBasePage + 3, kBasePage + 5}));
}

TEST(Eviction, Lru2mEvictsWholeLargePagesByTheirMostRecentUse) {
  PageTable t;
  t.add_allocation(kBase, 3 * kLargePageBytes);
  // Large page 0: used at 10 and 90; large page 1: 20 and 30; large page 2: 40.
  make_resident(t, kBasePage + 1, 10);
  make_resident(t, kBasePage + 2, 90);
  make_resident(t, kBasePage + kPagesPerLargePage + 5, 20);
  make_resident(t, kBasePage + kPagesPerLargePage + 6, 30);
  make_resident(t, kBasePage + 2 * kPagesPerLargePage, 40);
  auto lru2m = make_eviction_policy(EvictionKind::Lru2M, 1);
  EXPECT_EQ(lru2m->victims(t, 1),
            (std::vector<uint64_t>{kBasePage + kPagesPerLargePage + 5, kBasePage + kPagesPerLargePage + 6}));
  EXPECT_EQ(lru2m->victims(t, 3).size(), 3u);  // large pages 1 and 2
  EXPECT_EQ(lru2m->victims(t, 4).size(), 5u);
}

TEST(Eviction, SequentialLocalEvictsWholeBasicBlocks) {
  PageTable t;
  t.add_allocation(kBase, 4 * kBasicBlockBytes);
  for (uint64_t i = 0; i < 4; ++i) make_resident(t, kBasePage + i, 100 + i);          // block 0
  for (uint64_t i = 0; i < 3; ++i) make_resident(t, kBasePage + 16 + i, 10 + i);       // block 1: oldest
  auto seq = make_eviction_policy(EvictionKind::SequentialLocal, 1);
  EXPECT_EQ(seq->victims(t, 1), (std::vector<uint64_t>{kBasePage + 16, kBasePage + 17, kBasePage + 18}));
}

TEST(Eviction, LfuPicksTheLeastUsedThenTheOldest) {
  PageTable t;
  t.add_allocation(kBase, 4 * 4096);
  for (uint64_t i = 0; i < 4; ++i) make_resident(t, kBasePage + i, 10 + i);
  t.touch(kBasePage, 20, false);
  t.touch(kBasePage + 1, 21, false);
  auto lfu = make_eviction_policy(EvictionKind::Lfu, 1);
  EXPECT_EQ(lfu->victims(t, 2), (std::vector<uint64_t>{kBasePage + 2, kBasePage + 3}));
}

TEST(Eviction, RandomIsSeededAndPicksResidentPagesOnly) {
  PageTable t;
  t.add_allocation(kBase, 64 * 4096);
  for (uint64_t i = 0; i < 64; i += 2) make_resident(t, kBasePage + i, i);
  auto a = make_eviction_policy(EvictionKind::Random, 5);
  auto b = make_eviction_policy(EvictionKind::Random, 5);
  auto c = make_eviction_policy(EvictionKind::Random, 6);
  auto va = a->victims(t, 4);
  EXPECT_EQ(va, b->victims(t, 4));
  EXPECT_NE(va, c->victims(t, 4));
  ASSERT_EQ(va.size(), 4u);
  for (uint64_t p : va) EXPECT_TRUE(t.resident(p));
  EXPECT_EQ(a->victims(t, 100).size(), 32u);  // no more than are resident
}

TEST(Eviction, InFlightPagesAreNeverVictims) {
  PageTable t;
  t.add_allocation(kBase, 4 * 4096);
  make_resident(t, kBasePage, 1);
  t.set_migrating(kBasePage + 1, false);
  for (auto kind : {EvictionKind::Lru4K, EvictionKind::Lru2M, EvictionKind::Random, EvictionKind::SequentialLocal,
                    EvictionKind::Lfu})
    EXPECT_EQ(make_eviction_policy(kind, 1)->victims(t, 4), (std::vector<uint64_t>{kBasePage}));
}

TEST(FarFaultMshrs, CoalescesPerPageBoundsEntriesAndBatchesInArrivalOrder) {
  FarFaultMshrs m(3);
  EXPECT_EQ(m.record(30, 1), FarFaultMshrs::Outcome::Allocated);
  EXPECT_EQ(m.record(10, 2), FarFaultMshrs::Outcome::Allocated);
  EXPECT_EQ(m.record(30, 3), FarFaultMshrs::Outcome::Coalesced);
  EXPECT_EQ(m.record(20, 4), FarFaultMshrs::Outcome::Allocated);
  EXPECT_EQ(m.record(40, 5), FarFaultMshrs::Outcome::Full);  // back-pressure
  EXPECT_EQ(m.record(20, 6), FarFaultMshrs::Outcome::Coalesced);  // coalescing still works when full
  EXPECT_EQ(m.occupancy(), 3u);
  EXPECT_EQ(m.take_batch(2), (std::vector<uint64_t>{30, 10}));
  EXPECT_EQ(m.queued(), 1u);
  EXPECT_EQ(m.record(10, 7), FarFaultMshrs::Outcome::Coalesced);  // joins an entry in service
  EXPECT_EQ(m.take_batch(5), (std::vector<uint64_t>{20}));
  EXPECT_EQ(m.complete(30), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(m.record(40, 5), FarFaultMshrs::Outcome::Allocated);
  EXPECT_EQ(m.complete(10), (std::vector<uint64_t>{2, 7}));
  m.requeue(20);
  EXPECT_EQ(m.take_batch(5), (std::vector<uint64_t>{20, 40}));
  EXPECT_TRUE(m.complete(99).empty());
  EXPECT_THROW(FarFaultMshrs(0), std::invalid_argument);
}

}  // namespace
}  // namespace gpuvp::uvm
