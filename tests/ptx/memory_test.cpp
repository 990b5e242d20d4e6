// Functional device memory: sparse pages, host copies, faults on unmapped ranges.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <string>
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

// Host memory follows what is written, not what is allocated: 12 GiB mapped (as a program that
// fills a V100's memory does) and written in a few places cost a few pages of the host.
static long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

TEST(PtxDeviceMemory, UntouchedPagesOfLargeAllocationsCostNoHostMemory) {
  DeviceMemory memory;
  const long before = resident_kib();
  ASSERT_GT(before, 0);
  const uint64_t big = uint64_t{12} << 30;
  const uint64_t a = memory.allocate(big);
  const uint64_t b = memory.allocate(1 << 20);  // adjacent range: reads never run from one into the other
  for (uint64_t offset = 0; offset < big; offset += uint64_t{1} << 30) memory.store<uint64_t>(a + offset, offset + 7);
  for (uint64_t offset = 0; offset < big; offset += uint64_t{1} << 30) {
    EXPECT_EQ(memory.load<uint64_t>(a + offset), offset + 7);
    EXPECT_EQ(memory.load<uint64_t>(a + offset + 4096), 0u);  // never written: zero
  }
  EXPECT_EQ(memory.load<uint64_t>(a + big - 8), 0u);
  EXPECT_EQ(memory.load<uint64_t>(b), 0u);
  // A copy across the end of the first allocation into the second works page by page.
  const std::vector<uint8_t> bytes(8192, 0xab);
  memory.copy_to_device(a + big - 4096, bytes.data(), bytes.size());
  EXPECT_EQ(memory.load<uint8_t>(b + 4095), 0xab);
  EXPECT_LT(resident_kib() - before, 64 * 1024) << "KiB resident after mapping 12 GiB";
  memory.release(a);
  uint8_t byte = 0;
  EXPECT_FALSE(memory.read(a, &byte, 1));
  EXPECT_EQ(memory.load<uint8_t>(b + 4095), 0xab);
}

}  // namespace
}  // namespace gpuvp::ptx
