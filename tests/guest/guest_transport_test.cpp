// The guest transport (sw/driver/guest_transport.h) over a fake sysfs: regular files stand in for
// the ivshmem device's `vendor`, `device`, `enable`, `resource0` (BAR0 registers) and
// `resource2` (the shared region); mmap of a regular file behaves like the BAR mapping. The
// completion path (MSI-X through vfio or polling) is decided from the `driver` and `iommu_group`
// links and the /dev/vfio nodes, all faked here.
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
    o.dev_root = (root_ / "dev").string();
    return o;
  }
  // The device bound to `driver` (a link to .../drivers/<driver>), in IOMMU group `group` ("" =
  // none), with the /dev/vfio nodes `nodes` (regular files).
  void bind(const std::string& driver, const std::string& group, const std::vector<std::string>& nodes) {
    fs::create_directories(root_ / "drivers" / driver);
    fs::create_symlink(root_ / "drivers" / driver, device_ / "driver");
    if (!group.empty()) {
      fs::create_directories(root_ / "kernel/iommu_groups" / group);
      fs::create_symlink(root_ / "kernel/iommu_groups" / group, device_ / "iommu_group");
    }
    fs::create_directories(root_ / "dev/vfio");
    for (const std::string& node : nodes) std::ofstream(root_ / "dev/vfio" / node) << "";
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

TEST_F(FakeSysfs, PollsUnlessTheDeviceIsBoundToVfioPci) {
  EXPECT_EQ(plan_completions(device_.string(), options()).path, Completions::Polling);
  EXPECT_NE(plan_completions(device_.string(), options()).why.find("no driver"), std::string::npos);
  // The transport reports what it does: polling through sysfs, and why not MSI-X.
  std::string error;
  auto transport = connect_guest(options(), &error);
  ASSERT_NE(transport, nullptr) << error;
  const auto report = guest_completion_report(*transport);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->path, Completions::Polling);
  EXPECT_EQ(report->description, "polling (sysfs)");
  EXPECT_EQ(report->interrupts, 0u);
}

TEST_F(FakeSysfs, AnotherDriverMeansPolling) {
  bind("uio_pci_generic", "3", {"vfio", "3"});
  const CompletionPlan plan = plan_completions(device_.string(), options());
  EXPECT_EQ(plan.path, Completions::Polling);
  EXPECT_NE(plan.why.find("bound to uio_pci_generic, not vfio-pci"), std::string::npos) << plan.why;
}

TEST_F(FakeSysfs, VfioPciWithoutIommuGroupMeansPolling) {
  bind("vfio-pci", "", {"vfio"});
  const CompletionPlan plan = plan_completions(device_.string(), options());
  EXPECT_EQ(plan.path, Completions::Polling);
  EXPECT_NE(plan.why.find("no IOMMU group"), std::string::npos) << plan.why;
  EXPECT_NE(plan.why.find("intel_iommu=on"), std::string::npos) << plan.why;
}

TEST_F(FakeSysfs, VfioPciWithoutItsDeviceNodesMeansPolling) {
  bind("vfio-pci", "7", {"vfio"});  // /dev/vfio/7 missing
  CompletionPlan plan = plan_completions(device_.string(), options());
  EXPECT_EQ(plan.path, Completions::Polling);
  EXPECT_NE(plan.why.find("/dev/vfio/7 is missing"), std::string::npos) << plan.why;
  fs::remove(root_ / "dev/vfio/vfio");
  std::ofstream(root_ / "dev/vfio/7") << "";
  plan = plan_completions(device_.string(), options());
  EXPECT_EQ(plan.path, Completions::Polling);
  EXPECT_NE(plan.why.find("/dev/vfio/vfio is missing"), std::string::npos) << plan.why;
}

TEST_F(FakeSysfs, VfioPciInAGroupWithItsNodesMeansMsix) {
  bind("vfio-pci", "7", {"vfio", "7"});
  const CompletionPlan plan = plan_completions(device_.string(), options());
  EXPECT_EQ(plan.path, Completions::Msix);
  EXPECT_EQ(plan.iommu_group, "7");
  // Once MSI-X is chosen, a vfio set-up that fails is an error naming vfio and the group, not a
  // silent fall-back to polling (here /dev/vfio/vfio is a regular file: no vfio ioctls).
  std::string error;
  EXPECT_EQ(connect_guest(options(), &error), nullptr);
  EXPECT_NE(error.find("vfio (0000:00:03.0, group 7): "), std::string::npos) << error;
  fs::remove(root_ / "dev/vfio/vfio");
  fs::create_directory(root_ / "dev/vfio/vfio");  // exists, but cannot be opened read/write
  EXPECT_EQ(connect_guest(options(), &error), nullptr);
  EXPECT_NE(error.find("cannot open " + (root_ / "dev/vfio/vfio").string()), std::string::npos) << error;
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
