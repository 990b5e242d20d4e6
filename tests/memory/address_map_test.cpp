// Address mapping: every address has exactly one slice and one DRAM coordinate, sequential lines
// spread over every slice and pseudo-channel, strides spread under the XOR-fold hash, and the
// DRAM mapping is a bijection (decode then encode gives the address back).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "models/memory/address_map.h"
#include "tests/memory/params.h"

namespace gpuvp::memory {
namespace {

using testing::load_params;

TEST(AddressMap, SequentialLinesCoverEverySliceOncePerGroup) {
  for (const char* hash : {"xor_fold", "modulo"}) {
    for (const char* slices : {"32", "8", "10"}) {  // 10: not a power of two
      const auto p = load_params({std::string("memory.l2.slice_hash=") + hash, std::string("memory.l2.slices=") + slices});
      const AddressMap map(p.l2, p.hbm);
      const uint32_t s = map.slices();
      for (uint64_t group = 0; group < 300; ++group) {
        std::vector<int> seen(s, 0);
        for (uint64_t k = 0; k < s; ++k) ++seen[map.slice((group * s + k) * 128 + 5)];
        for (uint32_t i = 0; i < s; ++i) ASSERT_EQ(seen[i], 1) << hash << " slices " << s << " group " << group;
      }
    }
  }
}

TEST(AddressMap, SliceAndLocalLineIdentifyTheLine) {
  for (const char* hash : {"xor_fold", "modulo"}) {
    const auto p = load_params({std::string("memory.l2.slice_hash=") + hash});
    const AddressMap map(p.l2, p.hbm);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 100000; ++i) {
      const uint64_t a = rng() % (uint64_t{1} << 40);
      EXPECT_EQ(map.line_address(map.slice(a), map.slice_line(a)), a / 128 * 128) << hash << " " << a;
      EXPECT_LT(map.slice(a), map.slices());
    }
  }
}

TEST(AddressMap, XorFoldSpreadsPowerOfTwoStridesThatModuloConcentrates) {
  const auto x = load_params({"memory.l2.slice_hash=xor_fold"});
  const auto m = load_params({"memory.l2.slice_hash=modulo"});
  const AddressMap xor_map(x.l2, x.hbm), mod_map(m.l2, m.hbm);
  for (uint64_t stride : {uint64_t{4096}, uint64_t{32 * 128}, uint64_t{1} << 16, uint64_t{1} << 20}) {
    std::set<uint32_t> xs, ms;
    for (uint64_t i = 0; i < 1024; ++i) {
      xs.insert(xor_map.slice(i * stride));
      ms.insert(mod_map.slice(i * stride));
    }
    EXPECT_EQ(xs.size(), 32u) << "stride " << stride;
    if (stride % (32 * 128) == 0) {
      EXPECT_EQ(ms.size(), 1u) << "stride " << stride;
    }
  }
}

TEST(AddressMap, DramMappingIsABijectionOnASmallMemory) {
  for (const char* mapping : {"line_interleaved", "row_interleaved"})
  for (const char* bank_hash : {"xor_fold", "none"}) {
    // 2 stacks x 2 channels x 2 pseudo-channels x 16 banks x 8 rows x 1 KiB = 1 MiB.
    const auto p = load_params({std::string("memory.hbm.address_map=") + mapping,
                                std::string("memory.hbm.bank_hash=") + bank_hash, "memory.hbm.stacks=2",
                                "memory.hbm.channels_per_stack=2", "memory.hbm.capacity=1 MiB"});
    const AddressMap map(p.l2, p.hbm);
    ASSERT_EQ(map.rows(), 8u);
    std::vector<int> hits(1024 * 1024 / 32, 0);
    for (uint64_t a = 0; a < 1024 * 1024; a += 32) {
      const DramCoord c = map.decode(a + 7);
      ASSERT_LT(c.channel, 8u);
      ASSERT_LT(c.bank_group, 4u);
      ASSERT_LT(c.bank, 4u);
      ASSERT_LT(c.row, 8u);
      ASSERT_LT(c.column, map.bursts_per_row());
      EXPECT_EQ(c.channel, (c.stack * 2 + c.stack_channel) * 2 + c.pseudo_channel);
      const uint64_t back = map.encode(c);
      ASSERT_EQ(back, a) << mapping << " " << bank_hash;
      const uint64_t flat = (((uint64_t{c.channel} * 4 + c.bank_group) * 4 + c.bank) * 8 + c.row) * 32 + c.column;
      ++hits[flat];
    }
    for (int h : hits) ASSERT_EQ(h, 1) << mapping << " " << bank_hash;  // every coordinate used exactly once
  }
}

TEST(AddressMap, LineInterleavingSpreadsSequentialLinesOverEveryPseudoChannelThenBankGroup) {
  const auto p = load_params();
  const AddressMap map(p.l2, p.hbm);
  ASSERT_EQ(map.channels(), 64u);
  std::vector<int> seen(64, 0);
  for (uint64_t line = 0; line < 64; ++line) {
    const DramCoord c = map.decode(line * 128);
    ++seen[c.channel];
    EXPECT_EQ(c.bank_group, 0u);
    EXPECT_EQ(map.decode(line * 128 + 96).channel, c.channel);  // a line's sectors stay together
  }
  for (int s : seen) EXPECT_EQ(s, 1);
  EXPECT_EQ(map.decode(64 * 128).bank_group, 1u);
  EXPECT_EQ(map.decode(64 * 128).row, map.decode(0).row);
}

// Two buffers a power of two apart (a copy's source and destination) have the same channel and
// bank fields and differ only in the row: without a bank hash every line of one conflicts with
// the same line of the other in one bank; the XOR fold puts them in different banks.
TEST(AddressMap, BankHashSeparatesBuffersAPowerOfTwoApart) {
  const auto hashed = load_params({"memory.hbm.bank_hash=xor_fold"});
  const auto plain = load_params({"memory.hbm.bank_hash=none"});
  const AddressMap xor_map(hashed.l2, hashed.hbm), plain_map(plain.l2, plain.hbm);
  for (uint64_t distance : {uint64_t{16} << 20, uint64_t{1} << 20, uint64_t{256} << 20}) {
    for (uint64_t line = 0; line < 4096; ++line) {
      const uint64_t a = line * 128, b = a + distance;
      const DramCoord pa = plain_map.decode(a), pb = plain_map.decode(b);
      ASSERT_EQ(pa.channel, pb.channel);
      ASSERT_EQ(pa.bank * 4 + pa.bank_group, pb.bank * 4 + pb.bank_group) << "distance " << distance;
      ASSERT_NE(pa.row, pb.row);
      const DramCoord xa = xor_map.decode(a), xb = xor_map.decode(b);
      ASSERT_EQ(xa.channel, xb.channel);
      ASSERT_NE(xa.bank * 4 + xa.bank_group, xb.bank * 4 + xb.bank_group) << "distance " << distance << " line " << line;
    }
  }
}

}  // namespace
}  // namespace gpuvp::memory
