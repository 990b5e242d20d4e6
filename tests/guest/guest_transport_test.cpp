// The guest transport (sw/driver/guest_transport.h) over a fake sysfs: regular files stand in for
// the ivshmem device's `vendor`, `device`, `enable`, `resource0` (BAR0 registers) and
// `resource2` (the shared region); mmap of a regular file behaves like the BAR mapping.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "gpuvp/device.h"
#include "sw/driver/guest_transport.h"
#include "sw/driver/ivshmem_client.h"

namespace gpuvp::driver {
namespace {

namespace dev = gpuvp::device;
namespace fs = std::filesystem;

constexpr uint64_t kRegionBytes = 1 << 20;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gpuvp_fake_sysfs.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    add_device("0000:00:02.0", "0x8086", "0x100e", false);  // a NIC, to be skipped
    device_ = add_device("0000:00:03.0", "0x1af4", "0x1110", true);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path add_device(const std::string& address, const std::string& vendor, const std::string& device,
                      bool with_bars) {
    const fs::path dir = root_ / "devices" / address;
    fs::create_directories(dir);
    std::ofstream(dir / "vendor") << vendor << "\n";
    std::ofstream(dir / "device") << device << "\n";
    std::ofstream(dir / "enable") << "0\n";
    if (with_bars) {
      std::vector<uint32_t> registers(64, 0);
      registers[2] = 3;            // IVPosition: this guest is peer 3
      registers[3] = 0xffffffff;   // Doorbell: to see the write
      write_file(dir / "resource0", registers.data(), registers.size() * 4);
      std::vector<uint8_t> region(kRegionBytes, 0);
      auto* header = reinterpret_cast<dev::RegionHeader*>(region.data());
      header->magic = dev::kMagic;
      header->version = dev::kVersion;
      header->region_bytes = kRegionBytes;
      write_file(dir / "resource2", region.data(), region.size());
    }
    return dir;
  }
  static void write_file(const fs::path& path, const void* data, size_t bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  }
  template <typename T>
  void patch(const std::string& file, uint64_t offset, T value) {
    std::fstream f(device_ / file, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(reinterpret_cast<const char*>(&value), sizeof value);
  }
  uint32_t read_register(uint32_t offset) {
    std::ifstream f(device_ / "resource0", std::ios::binary);
    f.seekg(offset);
    uint32_t value = 0;
    f.read(reinterpret_cast<char*>(&value), sizeof value);
    return value;
  }
  GuestOptions options(const std::string& address = "") const {
    GuestOptions o;
    o.pci_address = address;
    o.sysfs_root = root_.string();
    return o;
  }

  fs::path root_;
  fs::path device_;
};

TEST(GuestDeviceSelection, OnlyPciSocketValuesSelectTheGuestTransport) {
  GuestOptions o;
  EXPECT_TRUE(parse_guest_device("pci", &o));
  EXPECT_EQ(o.pci_address, "");
  EXPECT_TRUE(parse_guest_device("pci:0000:00:04.0", &o));
  EXPECT_EQ(o.pci_address, "0000:00:04.0");
  EXPECT_FALSE(parse_guest_device("/tmp/gpuvp-x/gpuvp.sock", &o));
  EXPECT_FALSE(parse_guest_device("pcie", &o));
}

TEST_F(FakeSysfs, FindsTheIvshmemDeviceMapsItsBarsAndRingsThePlatform) {
  std::string error;
  auto transport = connect_guest(options(), &error);
  ASSERT_NE(transport, nullptr) << error;
  EXPECT_EQ(transport->peer_id(), 3u);
  EXPECT_EQ(transport->region_bytes(), kRegionBytes);
  EXPECT_EQ(reinterpret_cast<const dev::RegionHeader*>(transport->region())->magic, dev::kMagic);
  std::ifstream enable(device_ / "enable");
  std::string enabled;
  enable >> enabled;
  EXPECT_EQ(enabled, "1");
  // Doorbell = (platform peer << 16) | command vector, written to BAR0 offset 12.
  EXPECT_TRUE(transport->ring_platform());
  EXPECT_EQ(read_register(12), (uint32_t(dev::kPlatformPeerId) << 16) | dev::kVectorCommand);
  // The region is shared: a write through the mapping reaches the "device".
  transport->region()[kRegionBytes - 1] = 0x5a;
  auto again = connect_guest(options("0000:00:03.0"), &error);
  ASSERT_NE(again, nullptr) << error;
  EXPECT_EQ(again->region()[kRegionBytes - 1], 0x5a);
  // No interrupts: waiting is a bounded sleep, never a hang, and the platform counts as there.
  EXPECT_EQ(transport->wait_for_doorbell(std::chrono::milliseconds(5)), WaitResult::TimedOut);
  EXPECT_TRUE(transport->platform_connected());
}

TEST_F(FakeSysfs, SocketValuePciReachesTheGuestTransportThroughConnectIvshmem) {
  // Unmodified libcudart calls connect_ivshmem with $GPUVP_SOCKET; "pci" must not be a socket.
  IvshmemOptions o;
  o.socket_path = "pci:0000:00:09.0";
  std::string error;
  EXPECT_EQ(connect_ivshmem(o, &error), nullptr);
  EXPECT_NE(error.find("0000:00:09.0"), std::string::npos) << error;
  EXPECT_EQ(error.find("cannot connect"), std::string::npos) << error;
}

TEST_F(FakeSysfs, BadDevicesAreClearErrors) {
  std::string error;
  EXPECT_EQ(connect_guest(options("0000:00:02.0"), &error), nullptr);
  EXPECT_NE(error.find("not an ivshmem-doorbell device"), std::string::npos) << error;

  GuestOptions nowhere = options();
  nowhere.sysfs_root = (root_ / "missing").string();
  EXPECT_EQ(connect_guest(nowhere, &error), nullptr);
  EXPECT_NE(error.find("cannot list"), std::string::npos) << error;

  patch<uint32_t>("resource0", 8, 0xffffffff);  // IVPosition -1: no server behind QEMU's chardev
  EXPECT_EQ(connect_guest(options(), &error), nullptr);
  EXPECT_NE(error.find("no peer id"), std::string::npos) << error;
  patch<uint32_t>("resource0", 8, 3);

  patch<uint64_t>("resource2", 0, 0x1234);  // not a gpuvp region
  EXPECT_EQ(connect_guest(options(), &error), nullptr);
  EXPECT_NE(error.find("bad magic"), std::string::npos) << error;
  patch<uint64_t>("resource2", 0, dev::kMagic);

  patch<uint64_t>("resource2", offsetof(dev::RegionHeader, region_bytes), kRegionBytes * 2);
  EXPECT_EQ(connect_guest(options(), &error), nullptr);
  EXPECT_NE(error.find("size disagrees"), std::string::npos) << error;
}

TEST(GuestDeviceMissing, NoIvshmemDeviceNamesTheQemuOption) {
  char pattern[] = "/tmp/gpuvp_fake_sysfs.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  fs::create_directories(fs::path(pattern) / "devices");
  GuestOptions o;
  o.sysfs_root = pattern;
  std::string error;
  EXPECT_EQ(connect_guest(o, &error), nullptr);
  EXPECT_NE(error.find("ivshmem-doorbell"), std::string::npos) << error;
  fs::remove_all(pattern);
}

}  // namespace
}  // namespace gpuvp::driver
