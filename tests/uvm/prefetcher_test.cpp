// The prefetchers of seed 003 §B.3 on a bare page table: what each migrates on a far fault and
// how the migration is split into PCIe transfers, including TBNp's two worked examples of
// seed 003 Figure 2.
#include <gtest/gtest.h>

#include <set>

#include "models/uvm/prefetch/prefetcher.h"

namespace gpuvp::uvm {
namespace {

constexpr uint64_t kBase = 0x7000'0000'0000ULL;  // 2 MB aligned
constexpr uint64_t kBasePage = kBase / kPageBytes;
constexpr uint64_t KB = 1024;

// Page number of byte `offset` into the allocation.
uint64_t page_at(uint64_t offset) { return kBasePage + offset / kPageBytes; }
// First page of basic block N_0^i (64 KB leaves).
uint64_t block(uint64_t i) { return kBasePage + i * kPagesPerBlock; }

// Applies a plan as if its transfers had landed.
void land(PageTable& t, const MigrationPlan& plan) {
  for (const auto& r : plan.transfers)
    for (uint64_t p = r.first; p < r.end(); ++p) {
      t.set_migrating(p, false);
      t.set_resident(p);
    }
}

std::vector<uint64_t> transfer_bytes(const MigrationPlan& plan) {
  std::vector<uint64_t> out;
  for (const auto& r : plan.transfers) out.push_back(r.bytes());
  return out;
}

TEST(Prefetcher, NoneMigratesOnlyTheFaultingPage) {
  PageTable t;
  t.add_allocation(kBase, 4 * 1024 * KB);
  auto p = make_prefetcher(PrefetcherKind::None, 1);
  MigrationPlan plan = p->plan(t, page_at(123 * KB));
  ASSERT_EQ(plan.transfers.size(), 1u);
  EXPECT_EQ(plan.transfers[0], (PageRange{page_at(120 * KB), 1}));
}

TEST(Prefetcher, SequentialLocalBringsTheWholeBasicBlockFaultPageFirst) {
  PageTable t;
  t.add_allocation(kBase, 1024 * KB);
  auto p = make_prefetcher(PrefetcherKind::SequentialLocal, 1);
  // Fault in the middle of block 2: the page alone, then the runs before and after it.
  uint64_t fault = block(2) + 5;
  MigrationPlan plan = p->plan(t, fault);
  ASSERT_EQ(plan.transfers.size(), 3u);
  EXPECT_EQ(plan.transfers[0], (PageRange{fault, 1}));
  EXPECT_EQ(plan.transfers[1], (PageRange{block(2), 5}));
  EXPECT_EQ(plan.transfers[2], (PageRange{fault + 1, 10}));
  // Resident pages of the block are skipped.
  land(t, plan);
  t.set_host(block(3) + 7);
  MigrationPlan again = p->plan(t, block(3) + 7);
  ASSERT_EQ(again.transfers.size(), 3u);
  EXPECT_EQ(again.pages(), 16u);
  MigrationPlan single = make_prefetcher(PrefetcherKind::SequentialLocal, 1)->plan(t, block(3) + 7);
  EXPECT_EQ(single.transfers[0], (PageRange{block(3) + 7, 1}));
}

TEST(Prefetcher, SequentialLocalStaysInsideTheAllocation) {
  PageTable t;
  t.add_allocation(kBase, 24 * KB);  // 6 pages: the block is cut at the allocation's end
  MigrationPlan plan = make_prefetcher(PrefetcherKind::SequentialLocal, 1)->plan(t, kBasePage);
  EXPECT_EQ(transfer_bytes(plan), (std::vector<uint64_t>{4 * KB, 20 * KB}));
}

TEST(Prefetcher, RandomAddsOneHostPageOfTheSameLargePageAndIsReproducible) {
  PageTable t;
  t.add_allocation(kBase, 8 * 1024 * KB);  // four 2 MB large pages
  auto a = make_prefetcher(PrefetcherKind::Random, 42);
  auto b = make_prefetcher(PrefetcherKind::Random, 42);
  auto c = make_prefetcher(PrefetcherKind::Random, 43);
  std::set<uint64_t> seen;
  bool differs = false;
  for (uint64_t i = 0; i < 50; ++i) {
    uint64_t fault = kBasePage + kPagesPerLargePage + 3 * i;  // in the second large page
    MigrationPlan pa = a->plan(t, fault), pb = b->plan(t, fault), pc = c->plan(t, fault);
    ASSERT_EQ(pa.transfers.size(), 2u);
    EXPECT_EQ(pa.transfers[0], (PageRange{fault, 1}));
    uint64_t extra = pa.transfers[1].first;
    EXPECT_EQ(pa.transfers[1].count, 1u);
    EXPECT_NE(extra, fault);
    EXPECT_GE(extra, kBasePage + kPagesPerLargePage);
    EXPECT_LT(extra, kBasePage + 2 * kPagesPerLargePage);
    EXPECT_EQ(pb.transfers[1].first, extra);  // same seed, same choice
    differs |= pc.transfers[1].first != extra;
    seen.insert(extra);
  }
  EXPECT_TRUE(differs);
  EXPECT_GT(seen.size(), 10u);  // spread over the large page, not one fixed choice
}

TEST(Prefetcher, RandomPicksOnlyHostResidentPages) {
  PageTable t;
  t.add_allocation(kBase, 16 * KB);  // 4 pages, 2 of them resident
  for (uint64_t p : {kBasePage + 1, kBasePage + 2}) {
    t.set_migrating(p, false);
    t.set_resident(p);
  }
  auto r = make_prefetcher(PrefetcherKind::Random, 7);
  for (int i = 0; i < 20; ++i) {
    MigrationPlan plan = r->plan(t, kBasePage);
    ASSERT_EQ(plan.transfers.size(), 2u);
    EXPECT_EQ(plan.transfers[1].first, kBasePage + 3);
  }
}

TEST(Prefetcher, TbnTreesAreFullTwoMegabyteTreesPlusARoundedRemainder) {
  // Seed 003 §B.3.3: 4 MB + 192 KB -> two 2 MB trees and one 256 KB tree.
  auto trees = tbn_trees(Allocation{kBase, 4 * 1024 * KB + 192 * KB});
  ASSERT_EQ(trees.size(), 3u);
  EXPECT_EQ(trees[0].first_page, kBasePage);
  EXPECT_EQ(trees[0].pages * kPageBytes, 2048 * KB);
  EXPECT_EQ(trees[1].pages * kPageBytes, 2048 * KB);
  EXPECT_EQ(trees[2].first_page, kBasePage + 2 * kPagesPerLargePage);
  EXPECT_EQ(trees[2].pages * kPageBytes, 256 * KB);
  EXPECT_EQ(tbn_trees(Allocation{kBase, 4 * KB})[0].pages * kPageBytes, 64 * KB);
  EXPECT_EQ(tbn_trees(Allocation{kBase, 65 * KB})[0].pages * kPageBytes, 128 * KB);
}

// Seed 003 Figure 2, first example, on a 512 KB allocation: the first byte of N_0^1, N_0^3,
// N_0^5, N_0^7 faults, each bringing its 64 KB block (4 KB fault group + 60 KB prefetch group);
// the fifth fault, on N_0^0, makes N_2^0 192 KB of 256 KB (> 50 %): N_0^2 joins; the root
// then holds 384 KB of 512 KB (> 50 %): N_0^4 and N_0^6 join. All 512 KB are valid.
TEST(Prefetcher, TbnFigure2FirstExample) {
  PageTable t;
  t.add_allocation(kBase, 512 * KB);
  auto tbn = make_prefetcher(PrefetcherKind::Tbn, 1);
  for (uint64_t leaf : {1, 3, 5, 7}) {
    MigrationPlan plan = tbn->plan(t, block(leaf));
    EXPECT_EQ(transfer_bytes(plan), (std::vector<uint64_t>{4 * KB, 60 * KB})) << "N_0^" << leaf;
    EXPECT_EQ(plan.transfers[0].first, block(leaf));
    land(t, plan);
  }
  EXPECT_EQ(t.device_pages() * kPageBytes, 256 * KB);
  MigrationPlan fifth = tbn->plan(t, block(0));
  ASSERT_EQ(fifth.transfers.size(), 5u);
  EXPECT_EQ(fifth.transfers[0], (PageRange{block(0), 1}));
  EXPECT_EQ(fifth.transfers[1], (PageRange{block(0) + 1, 15}));
  EXPECT_EQ(fifth.transfers[2], (PageRange{block(2), 16}));
  EXPECT_EQ(fifth.transfers[3], (PageRange{block(4), 16}));
  EXPECT_EQ(fifth.transfers[4], (PageRange{block(6), 16}));
  land(t, fifth);
  EXPECT_EQ(t.device_pages() * kPageBytes, 512 * KB);
}

// Seed 003 Figure 2, second example: N_0^1 and N_0^3 fault; the third fault, on N_0^0, brings
// N_0^2 too (N_2^0: 192 KB > 128 KB) while the root stays at 256 KB (not > 50 %). The fourth
// fault, on the right half's first block, lifts the root to 320 KB: the whole right 256 KB
// moves as two transfers, 4 KB and 252 KB.
TEST(Prefetcher, TbnFigure2SecondExample) {
  PageTable t;
  t.add_allocation(kBase, 512 * KB);
  auto tbn = make_prefetcher(PrefetcherKind::Tbn, 1);
  land(t, tbn->plan(t, block(1)));
  land(t, tbn->plan(t, block(3)));
  MigrationPlan third = tbn->plan(t, block(0));
  EXPECT_EQ(transfer_bytes(third), (std::vector<uint64_t>{4 * KB, 60 * KB, 64 * KB}));
  EXPECT_EQ(third.transfers[2].first, block(2));
  land(t, third);
  EXPECT_EQ(t.device_pages() * kPageBytes, 256 * KB);
  MigrationPlan fourth = tbn->plan(t, block(4));
  EXPECT_EQ(transfer_bytes(fourth), (std::vector<uint64_t>{4 * KB, 252 * KB}));
  EXPECT_EQ(fourth.transfers[0].first, block(4));
  land(t, fourth);
  EXPECT_EQ(t.device_pages() * kPageBytes, 512 * KB);
}

// "For a full binary tree of 2 MB, TBNp can prefetch at most 1020 KB at once."
TEST(Prefetcher, TbnPrefetchesAtMost1020KilobytesInATwoMegabyteTree) {
  PageTable t;
  t.add_allocation(kBase, 2048 * KB);
  auto tbn = make_prefetcher(PrefetcherKind::Tbn, 1);
  for (uint64_t leaf = 0; leaf < 16; ++leaf)
    if (t.state(block(leaf)) == PageState::Host) land(t, tbn->plan(t, block(leaf)));
  EXPECT_EQ(t.device_pages() * kPageBytes, 1024 * KB);  // the left half only
  MigrationPlan plan = tbn->plan(t, block(16));
  EXPECT_EQ(transfer_bytes(plan), (std::vector<uint64_t>{4 * KB, 1020 * KB}));
}

TEST(Prefetcher, TbnCountsPagesInFlightAsValidAndNeverPlansThemAgain) {
  PageTable t;
  t.add_allocation(kBase, 512 * KB);
  auto tbn = make_prefetcher(PrefetcherKind::Tbn, 1);
  // N_0^1 and N_0^3 on their way (not landed): N_0^0 still pulls in N_0^2.
  for (uint64_t leaf : {1, 3})
    for (const auto& r : tbn->plan(t, block(leaf)).transfers)
      for (uint64_t p = r.first; p < r.end(); ++p) t.set_migrating(p, true);
  MigrationPlan plan = tbn->plan(t, block(0));
  EXPECT_EQ(transfer_bytes(plan), (std::vector<uint64_t>{4 * KB, 60 * KB, 64 * KB}));
}

TEST(Prefetcher, TbnRemainderTreeStopsAtTheAllocationEnd) {
  PageTable t;
  t.add_allocation(kBase, 2048 * KB + 192 * KB);  // remainder tree of 256 KB, 192 KB of it real
  auto tbn = make_prefetcher(PrefetcherKind::Tbn, 1);
  uint64_t rem = kBasePage + kPagesPerLargePage;
  land(t, tbn->plan(t, rem));                       // N_0^0 of the small tree
  MigrationPlan plan = tbn->plan(t, rem + 16);      // N_0^1: N_1^0 full; root 128 of 256: no
  EXPECT_EQ(plan.pages(), 16u);
  land(t, plan);
  plan = tbn->plan(t, rem + 32);                    // N_0^2: root 192 > 128 -> N_0^3, which is
  EXPECT_EQ(plan.pages(), 16u);                     // past the allocation's end: nothing more
}

TEST(Prefetcher, RejectsAFaultOnAResidentOrUnmanagedPage) {
  PageTable t;
  t.add_allocation(kBase, 64 * KB);
  auto tbn = make_prefetcher(PrefetcherKind::Tbn, 1);
  EXPECT_THROW(tbn->plan(t, kBasePage + 100), std::logic_error);
  land(t, tbn->plan(t, kBasePage));
  EXPECT_THROW(tbn->plan(t, kBasePage), std::logic_error);
}

}  // namespace
}  // namespace gpuvp::uvm
