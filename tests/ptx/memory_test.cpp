// Functional device memory: sparse pages, host copies, faults on unmapped ranges.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "models/gpu/ptx/memory.h"

namespace gpuvp::ptx {
namespace {

TEST(PtxDeviceMemory, AllocationsAreAlignedZeroedAndDisjoint) {
  DeviceMemory memory;
  const uint64_t a = memory.allocate(100);
  const uint64_t b = memory.allocate(5000, 4096);
  EXPECT_EQ(a % 256, 0u);
  EXPECT_EQ(b % 4096, 0u);
  EXPECT_GE(b, a + 100);
  EXPECT_GE(a, DeviceMemory::kHeapBase);
  EXPECT_EQ(memory.load<uint64_t>(b + 4992), 0u);
}

TEST(PtxDeviceMemory, CopiesCrossPageBoundaries) {
  DeviceMemory memory;
  const uint64_t base = memory.allocate(3 * DeviceMemory::kPageBytes);
  std::vector<uint8_t> data(2 * DeviceMemory::kPageBytes + 123);
  std::iota(data.begin(), data.end(), 0);
  memory.copy_to_device(base + 77, data.data(), data.size());
  std::vector<uint8_t> back(data.size());
  memory.copy_from_device(back.data(), base + 77, back.size());
  EXPECT_EQ(back, data);
  uint32_t word = 0;
  EXPECT_TRUE(memory.read(base + DeviceMemory::kPageBytes - 2, &word, 4));  // straddles two pages
  EXPECT_EQ(word, (uint32_t{data[DeviceMemory::kPageBytes - 79 + 3]} << 24) | (uint32_t{data[DeviceMemory::kPageBytes - 79 + 2]} << 16) |
                      (uint32_t{data[DeviceMemory::kPageBytes - 79 + 1]} << 8) | data[DeviceMemory::kPageBytes - 79]);
}

TEST(PtxDeviceMemory, UnmappedAndReleasedRangesFault) {
  DeviceMemory memory;
  uint32_t value = 1;
  EXPECT_FALSE(memory.write(0, &value, 4));
  EXPECT_FALSE(memory.read(DeviceMemory::kHeapBase, &value, 4));
  const uint64_t a = memory.allocate(64);
  EXPECT_TRUE(memory.write(a, &value, 4));
  // A write that runs off the mapped page writes nothing.
  const uint64_t end = a + DeviceMemory::kPageBytes - 2;
  EXPECT_FALSE(memory.write(end, &value, 4));
  EXPECT_THROW(memory.copy_to_device(end, &value, 4), IllegalHostAccess);
  memory.release(a);
  EXPECT_FALSE(memory.read(a, &value, 4));
  EXPECT_THROW(memory.load<uint32_t>(a), IllegalHostAccess);
  EXPECT_THROW(memory.release(a), IllegalHostAccess);
}

}  // namespace
}  // namespace gpuvp::ptx
