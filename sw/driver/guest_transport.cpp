#include "sw/driver/guest_transport.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "gpuvp/device.h"

namespace gpuvp::driver {
namespace {

namespace dev = gpuvp::device;

constexpr const char* kVendor = "0x1af4";  // Red Hat / virtio: QEMU's ivshmem
constexpr const char* kDevice = "0x1110";
constexpr uint64_t kRegisterBytes = 256;     // BAR0
constexpr uint32_t kIvPositionOffset = 8;
constexpr uint32_t kDoorbellOffset = 12;

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return false;
}

class GuestTransport final : public Transport {
 public:
  ~GuestTransport() override {
    if (region_ != nullptr) ::munmap(region_, region_bytes_);
    if (registers_ != nullptr) ::munmap(const_cast<uint8_t*>(registers_), kRegisterBytes);
  }

  bool connect(const GuestOptions& options, std::string* error) {
    const std::string device = find_guest_device(options, error);
    if (device.empty()) return false;
    {
      // Memory decoding on; harmless when already enabled (QEMU's BIOS usually did it).
      std::ofstream enable(device + "/enable");
      enable << "1";
    }
    const int bar0 = ::open((device + "/resource0").c_str(), O_RDWR | O_SYNC | O_CLOEXEC);
    if (bar0 < 0) return fail(error, "cannot open " + device + "/resource0: " + std::strerror(errno));
    void* regs = ::mmap(nullptr, kRegisterBytes, PROT_READ | PROT_WRITE, MAP_SHARED, bar0, 0);
    ::close(bar0);
    if (regs == MAP_FAILED) return fail(error, "cannot map " + device + "/resource0: " + std::strerror(errno));
    registers_ = static_cast<volatile uint8_t*>(regs);

    const int bar2 = ::open((device + "/resource2").c_str(), O_RDWR | O_CLOEXEC);
    if (bar2 < 0) return fail(error, "cannot open " + device + "/resource2: " + std::strerror(errno));
    struct stat info {};
    if (::fstat(bar2, &info) != 0 || info.st_size < static_cast<off_t>(dev::kHeaderBytes)) {
      ::close(bar2);
      return fail(error, device + "/resource2 (the shared region) is smaller than the region header");
    }
    region_bytes_ = static_cast<uint64_t>(info.st_size);
    void* mapped = ::mmap(nullptr, region_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, bar2, 0);
    ::close(bar2);
    if (mapped == MAP_FAILED) {
      region_bytes_ = 0;
      return fail(error, "cannot map " + device + "/resource2: " + std::strerror(errno));
    }
    region_ = static_cast<uint8_t*>(mapped);

    const int32_t position = static_cast<int32_t>(read_register(kIvPositionOffset));
    if (position <= 0 || position > 0xffff) {
      return fail(error, "the ivshmem device has no peer id (IVPosition " + std::to_string(position) +
                             "): is QEMU's chardev connected to the gpuvp platform?");
    }
    peer_id_ = static_cast<uint32_t>(position);
    const auto* header = reinterpret_cast<const dev::RegionHeader*>(region_);
    if (header->magic != dev::kMagic) return fail(error, "the shared region has no gpuvp header (bad magic)");
    if (header->version != dev::kVersion) {
      return fail(error, "device interface version " + std::to_string(header->version) + ", this driver speaks " +
                             std::to_string(dev::kVersion));
    }
    if (header->region_bytes != region_bytes_) return fail(error, "the region header's size disagrees with BAR2's");
    return true;
  }

  uint8_t* region() const override { return region_; }
  uint64_t region_bytes() const override { return region_bytes_; }
  uint32_t peer_id() const override { return peer_id_; }

  bool ring_platform() override {
    write_register(kDoorbellOffset, (static_cast<uint32_t>(dev::kPlatformPeerId) << 16) | dev::kVectorCommand);
    backoff_ = kFirstBackoff;  // new work: poll eagerly again
    return true;
  }

  // No interrupt reaches user space: sleep a little, longer each time nothing happened since
  // the last doorbell, and let the caller poll the region.
  WaitResult wait_for_doorbell(std::chrono::milliseconds timeout) override {
    const auto pause = std::min<std::chrono::microseconds>(backoff_, timeout);
    std::this_thread::sleep_for(pause);
    backoff_ = std::min(backoff_ * 2, kLastBackoff);
    return WaitResult::TimedOut;
  }

  // QEMU tells the guest nothing when the platform goes; the driver's heartbeat check does.
  bool platform_connected() override { return true; }

 private:
  static constexpr std::chrono::microseconds kFirstBackoff{10};
  static constexpr std::chrono::microseconds kLastBackoff{2000};

  uint32_t read_register(uint32_t offset) const {
    return *reinterpret_cast<volatile const uint32_t*>(registers_ + offset);
  }
  void write_register(uint32_t offset, uint32_t value) {
    *reinterpret_cast<volatile uint32_t*>(registers_ + offset) = value;
  }

  volatile uint8_t* registers_ = nullptr;
  uint8_t* region_ = nullptr;
  uint64_t region_bytes_ = 0;
  uint32_t peer_id_ = 0;
  std::chrono::microseconds backoff_ = kFirstBackoff;
};

}  // namespace

bool parse_guest_device(const std::string& socket, GuestOptions* options) {
  if (socket != "pci" && socket.rfind("pci:", 0) != 0) return false;
  if (options != nullptr) options->pci_address = socket.size() > 4 ? socket.substr(4) : std::string();
  return true;
}

std::string find_guest_device(const GuestOptions& options, std::string* error) {
  const std::string devices = options.sysfs_root + "/devices";
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(devices.c_str()); dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
    }
    ::closedir(dir);
  } else {
    fail(error, "cannot list " + devices + ": " + std::strerror(errno) + " (is sysfs mounted?)");
    return {};
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (!options.pci_address.empty() && name != options.pci_address) continue;
    const std::string path = devices + "/" + name;
    if (read_line(path + "/vendor") == kVendor && read_line(path + "/device") == kDevice) return path;
    if (!options.pci_address.empty()) {
      fail(error, "PCI device " + name + " is not an ivshmem-doorbell device (1af4:1110)");
      return {};
    }
  }
  fail(error, options.pci_address.empty()
                  ? "no ivshmem device (PCI 1af4:1110) in " + devices + ": is the guest's QEMU started with "
                    "-device ivshmem-doorbell?"
                  : "no PCI device " + options.pci_address + " in " + devices);
  return {};
}

std::unique_ptr<Transport> connect_guest(const GuestOptions& options, std::string* error) {
  auto transport = std::make_unique<GuestTransport>();
  if (!transport->connect(options, error)) return nullptr;
  return transport;
}

}  // namespace gpuvp::driver
