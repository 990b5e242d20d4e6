// The rank exchange's message format and its in-process implementation (the MPI one is driven by
// rank_exchange_mpi_check under mpirun, and end to end by `gpuvp run --mpi` in the timing tests).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/parallel/rank_exchange.h"

namespace gpuvp::parallel {
namespace {

struct Pair {
  uint64_t cycle;
  uint32_t sm;
};

TEST(RankMessage, ValuesStringsAndBlocksComeBackInOrder) {
  Message m;
  m.put<uint32_t>(7);
  m.put(Pair{123456789012ULL, 79});
  m.put_string("atomicAdd");
  const std::vector<uint8_t> block = {1, 2, 3, 250};
  m.put_bytes(block.data(), block.size());
  m.put_string("");
  m.rewind();
  EXPECT_EQ(m.get<uint32_t>(), 7u);
  const auto p = m.get<Pair>();
  EXPECT_EQ(p.cycle, 123456789012ULL);
  EXPECT_EQ(p.sm, 79u);
  EXPECT_EQ(m.get_string(), "atomicAdd");
  size_t size = 0;
  const uint8_t* bytes = m.get_bytes(size);
  ASSERT_EQ(size, block.size());
  EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + size), block);
  EXPECT_EQ(m.get_string(), "");
  EXPECT_TRUE(m.at_end());
}

TEST(RankMessage, ReadingPastTheEndIsAClearError) {
  Message m;
  m.put<uint16_t>(3);
  m.rewind();
  try {
    (void)m.get<uint64_t>();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("6 byte(s) early"), std::string::npos) << e.what();
  }
  // A block whose size field claims more than the message holds.
  Message block;
  block.put<uint64_t>(1000);
  block.rewind();
  size_t size = 0;
  EXPECT_THROW(block.get_bytes(size), std::runtime_error);
}

TEST(InProcessExchange, OneRankOwnsEverySmAndGetsItsOwnMessage) {
  InProcessExchange exchange;
  EXPECT_EQ(exchange.rank(), 0u);
  EXPECT_EQ(exchange.ranks(), 1u);
  for (uint32_t sm = 0; sm < 84; ++sm) EXPECT_EQ(exchange.owner(sm), 0u);
  Message mine;
  mine.put<uint64_t>(42);
  std::vector<Message> all;
  exchange.all_gather(mine, all);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].get<uint64_t>(), 42u);
  EXPECT_TRUE(all[0].at_end());
  Message root;
  root.put<uint32_t>(5);
  (void)root.get<uint32_t>();
  exchange.broadcast(root, 0);
  EXPECT_EQ(root.get<uint32_t>(), 5u);  // rewound
}

}  // namespace
}  // namespace gpuvp::parallel
