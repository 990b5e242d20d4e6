// The copy engine alone, on a fixed-latency memory: a range becomes line writes in order with
// the sector masks of its ends, tagged as DMA of the kernel; one request at a time; drained()
// fires when the last response is in; statistics count lines and bytes.
#include <gtest/gtest.h>

#include "models/gpu/copy_engine/copy_engine.h"
#include "tests/support/testbench.h"

namespace gpuvp::gpu {
namespace {

struct Bench {
  testbench::Simulation sim;
  stats::Registry stats;
  CopyEngine engine{"engine", stats, "gpu.copy_engine"};
  testbench::MemoryTarget memory{"memory", sc_core::sc_time(10, sc_core::SC_NS)};
  Bench() { engine.out.bind(memory.socket); }
  uint64_t counter(const char* name) const {
    return stats.find_group("gpu.copy_engine")->find_counter(name)->value();
  }
};

TEST(CopyEngine, WritesARangeAsLinesWithTheSectorsOfItsEnds) {
  Bench b;
  b.sim.run([&] {
    b.engine.write(0x1010, 300, 7);  // [0x1010, 0x113c): three lines
    EXPECT_FALSE(b.engine.idle());
    sc_core::wait(b.engine.drained());
    EXPECT_TRUE(b.engine.idle());
  });
  const auto& t = b.memory.transactions();
  ASSERT_EQ(t.size(), 3u);
  const uint64_t lines[] = {0x1000, 0x1080, 0x1100};
  const uint8_t masks[] = {0xF, 0xF, 0x3};  // 0x1010 lies in sector 0; 0x113b in sector 1
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(t[i].command, tlm::TLM_WRITE_COMMAND);
    EXPECT_EQ(t[i].address, lines[i]);
    ASSERT_TRUE(t[i].has_extension);
    EXPECT_EQ(t[i].extension.sector_mask, masks[i]) << i;
    EXPECT_EQ(t[i].extension.kind, AccessKind::Dma);
    EXPECT_EQ(t[i].extension.kernel_id, 7u);
    if (i > 0) {
      EXPECT_GE(t[i].time, t[i - 1].time);
    }
  }
  EXPECT_EQ(b.counter("writes"), 3u);
  EXPECT_EQ(b.counter("bytes"), 10u * 32);
}

TEST(CopyEngine, QueuedRangesGoOutInOrderAndAnEmptyRangeWritesNothing) {
  Bench b;
  b.sim.run([&] {
    b.engine.write(0x4000, 0, 1);
    EXPECT_TRUE(b.engine.idle());
    b.engine.write(0x8000, 256, 1);
    b.engine.write(0x2000, 32, 2);
    sc_core::wait(b.engine.drained());
  });
  const auto& t = b.memory.transactions();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].address, 0x8000u);
  EXPECT_EQ(t[1].address, 0x8080u);
  EXPECT_EQ(t[2].address, 0x2000u);
  EXPECT_EQ(t[2].extension.sector_mask, 0x1);
  EXPECT_EQ(t[2].extension.kernel_id, 2u);
  EXPECT_EQ(b.counter("bytes"), 9u * 32);
}

}  // namespace
}  // namespace gpuvp::gpu
