#include "sw/driver/guest_transport.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
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
constexpr const char* kVfioDriver = "vfio-pci";
constexpr uint64_t kRegisterBytes = 256;     // BAR0
constexpr uint32_t kIvPositionOffset = 8;
constexpr uint32_t kDoorbellOffset = 12;

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The last component of what the symbolic link `path` points to; "" when it is no link.
std::string link_name(const std::string& path) {
  char target[4096];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  if (n <= 0) return {};
  const std::string text(target, static_cast<size_t>(n));
  const size_t slash = text.find_last_of('/');
  return slash == std::string::npos ? text : text.substr(slash + 1);
}

bool exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

bool fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return false;
}

std::string errno_text() { return std::strerror(errno); }

class Fd {
 public:
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(-1); }
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

class GuestTransport final : public Transport {
 public:
  ~GuestTransport() override {
    if (std::getenv("GPUVP_VERBOSE") != nullptr) {
      const CompletionReport r = report();
      if (r.path == Completions::Msix) {
        std::fprintf(stderr, "gpuvp: completions by %s: %llu interrupts, %llu waits woken\n", r.description.c_str(),
                     static_cast<unsigned long long>(r.interrupts), static_cast<unsigned long long>(r.woken_waits));
      } else {
        std::fprintf(stderr, "gpuvp: completions by %s: %s\n", r.description.c_str(), r.why.c_str());
      }
    }
    if (region_ != nullptr) ::munmap(region_, region_bytes_);
    if (registers_ != nullptr) ::munmap(const_cast<uint8_t*>(registers_), kRegisterBytes);
    // Closing the device fd disables its interrupts; the group and container go after it.
    device_.reset(-1);
    group_.reset(-1);
    container_.reset(-1);
  }

  bool connect(const GuestOptions& options, std::string* error) {
    const std::string device = find_guest_device(options, error);
    if (device.empty()) return false;
    plan_ = plan_completions(device, options);
    const bool mapped = plan_.path == Completions::Msix ? map_with_vfio(device, options, error)
                                                        : map_with_sysfs(device, error);
    return mapped && check_device(error);
  }

  uint8_t* region() const override { return region_; }
  uint64_t region_bytes() const override { return region_bytes_; }
  uint32_t peer_id() const override { return peer_id_; }

  bool ring_platform() override {
    write_register(kDoorbellOffset, (static_cast<uint32_t>(dev::kPlatformPeerId) << 16) | dev::kVectorCommand);
    backoff_ = kFirstBackoff;  // new work: poll eagerly again
    return true;
  }

  WaitResult wait_for_doorbell(std::chrono::milliseconds timeout) override {
    if (interrupt_.get() >= 0) {
      // MSI-X: the completion vector's interrupt signals the eventfd.
      pollfd fd{interrupt_.get(), POLLIN, 0};
      int r = 0;
      do {
        r = ::poll(&fd, 1, static_cast<int>(timeout.count()));
      } while (r < 0 && errno == EINTR);
      if (r <= 0 || !take_interrupts()) return WaitResult::TimedOut;
      ++woken_waits_;
      return WaitResult::Signaled;
    }
    // No interrupt reaches user space: sleep a little, longer each time nothing happened since
    // the last doorbell, and let the caller poll the region.
    const auto pause = std::min<std::chrono::microseconds>(backoff_, timeout);
    std::this_thread::sleep_for(pause);
    backoff_ = std::min(backoff_ * 2, kLastBackoff);
    return WaitResult::TimedOut;
  }

  // QEMU tells the guest nothing when the platform goes; the driver's heartbeat check does.
  bool platform_connected() override { return true; }

  CompletionReport report() const {
    if (interrupt_.get() >= 0) take_interrupts();
    CompletionReport r;
    r.path = plan_.path;
    r.description = plan_.path == Completions::Msix ? "MSI-X (vfio group " + plan_.iommu_group + ")" : "polling (sysfs)";
    r.why = plan_.why;
    r.interrupts = interrupts_;
    r.woken_waits = woken_waits_;
    return r;
  }

 private:
  static constexpr std::chrono::microseconds kFirstBackoff{10};
  static constexpr std::chrono::microseconds kLastBackoff{2000};

  bool map_with_sysfs(const std::string& device, std::string* error) {
    {
      // Memory decoding on; harmless when already enabled (QEMU's BIOS usually did it).
      std::ofstream enable(device + "/enable");
      enable << "1";
    }
    const int bar0 = ::open((device + "/resource0").c_str(), O_RDWR | O_SYNC | O_CLOEXEC);
    if (bar0 < 0) return fail(error, "cannot open " + device + "/resource0: " + errno_text());
    void* regs = ::mmap(nullptr, kRegisterBytes, PROT_READ | PROT_WRITE, MAP_SHARED, bar0, 0);
    ::close(bar0);
    if (regs == MAP_FAILED) return fail(error, "cannot map " + device + "/resource0: " + errno_text());
    registers_ = static_cast<volatile uint8_t*>(regs);

    const int bar2 = ::open((device + "/resource2").c_str(), O_RDWR | O_CLOEXEC);
    if (bar2 < 0) return fail(error, "cannot open " + device + "/resource2: " + errno_text());
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
      return fail(error, "cannot map " + device + "/resource2: " + errno_text());
    }
    region_ = static_cast<uint8_t*>(mapped);
    return true;
  }

  // The vfio set-up (Documentation/driver-api/vfio.rst): container, group, type1 IOMMU, device
  // fd, BARs through the region offsets, Bus Master, the completion vector's eventfd.
  bool map_with_vfio(const std::string& device, const GuestOptions& options, std::string* error) {
    const std::string address = device.substr(device.find_last_of('/') + 1);
    const std::string vfio = options.dev_root + "/vfio/";
    const std::string where = "vfio (" + address + ", group " + plan_.iommu_group + "): ";
    container_.reset(::open((vfio + "vfio").c_str(), O_RDWR | O_CLOEXEC));
    if (container_.get() < 0) return fail(error, where + "cannot open " + vfio + "vfio: " + errno_text());
    if (::ioctl(container_.get(), VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
      return fail(error, where + "the kernel's vfio API version is not " + std::to_string(VFIO_API_VERSION));
    }
    if (::ioctl(container_.get(), VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) <= 0) {
      return fail(error, where + "no type1 IOMMU (is the vfio_iommu_type1 module loaded?)");
    }
    group_.reset(::open((vfio + plan_.iommu_group).c_str(), O_RDWR | O_CLOEXEC));
    if (group_.get() < 0) {
      if (errno == EBUSY) {
        return fail(error, where + vfio + plan_.iommu_group +
                               " is held by another process (vfio lets one process at a time use the device)");
      }
      return fail(error, where + "cannot open " + vfio + plan_.iommu_group + ": " + errno_text());
    }
    vfio_group_status status{};
    status.argsz = sizeof status;
    if (::ioctl(group_.get(), VFIO_GROUP_GET_STATUS, &status) != 0) {
      return fail(error, where + "VFIO_GROUP_GET_STATUS: " + errno_text());
    }
    if ((status.flags & VFIO_GROUP_FLAGS_VIABLE) == 0) {
      return fail(error, where + "the IOMMU group is not viable (every device in it must be bound to vfio-pci)");
    }
    const int container = container_.get();
    if (::ioctl(group_.get(), VFIO_GROUP_SET_CONTAINER, &container) != 0) {
      return fail(error, where + "VFIO_GROUP_SET_CONTAINER: " + errno_text());
    }
    if (::ioctl(container_.get(), VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) != 0) {
      return fail(error, where + "VFIO_SET_IOMMU (type1): " + errno_text() +
                             " (an IOMMU without interrupt remapping needs vfio_iommu_type1 allow_unsafe_interrupts=1)");
    }
    device_.reset(::ioctl(group_.get(), VFIO_GROUP_GET_DEVICE_FD, address.c_str()));
    if (device_.get() < 0) return fail(error, where + "VFIO_GROUP_GET_DEVICE_FD: " + errno_text());

    vfio_region_info bar0{}, bar2{}, config{};
    if (!region_info(VFIO_PCI_BAR0_REGION_INDEX, "BAR0", &bar0, where, error) ||
        !region_info(VFIO_PCI_BAR2_REGION_INDEX, "BAR2", &bar2, where, error) ||
        !region_info(VFIO_PCI_CONFIG_REGION_INDEX, "config space", &config, where, error)) {
      return false;
    }
    if (bar0.size < kRegisterBytes) return fail(error, where + "BAR0 is smaller than the ivshmem registers");
    bar0_offset_ = bar0.offset;
    if ((bar0.flags & VFIO_REGION_INFO_FLAG_MMAP) != 0) {
      // vfio maps BARs smaller than a page when they start on a page; else pread/pwrite.
      void* regs = ::mmap(nullptr, kRegisterBytes, PROT_READ | PROT_WRITE, MAP_SHARED, device_.get(),
                          static_cast<off_t>(bar0.offset));
      if (regs != MAP_FAILED) registers_ = static_cast<volatile uint8_t*>(regs);
    }
    if (bar2.size < dev::kHeaderBytes) return fail(error, where + "BAR2 (the shared region) is smaller than the region header");
    if ((bar2.flags & VFIO_REGION_INFO_FLAG_MMAP) == 0) return fail(error, where + "vfio does not let BAR2 be mapped");
    void* mapped = ::mmap(nullptr, bar2.size, PROT_READ | PROT_WRITE, MAP_SHARED, device_.get(),
                          static_cast<off_t>(bar2.offset));
    if (mapped == MAP_FAILED) return fail(error, where + "cannot map BAR2: " + errno_text());
    region_ = static_cast<uint8_t*>(mapped);
    region_bytes_ = bar2.size;

    // Bus Master: an MSI-X message is a write by the device, which the PCI core drops without it.
    uint16_t command = 0;
    const off_t command_at = static_cast<off_t>(config.offset + PCI_COMMAND);
    if (::pread(device_.get(), &command, sizeof command, command_at) != static_cast<ssize_t>(sizeof command)) {
      return fail(error, where + "cannot read PCI_COMMAND: " + errno_text());
    }
    command |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
    if (::pwrite(device_.get(), &command, sizeof command, command_at) != static_cast<ssize_t>(sizeof command)) {
      return fail(error, where + "cannot set Bus Master in PCI_COMMAND: " + errno_text());
    }

    vfio_irq_info irq{};
    irq.argsz = sizeof irq;
    irq.index = VFIO_PCI_MSIX_IRQ_INDEX;
    if (::ioctl(device_.get(), VFIO_DEVICE_GET_IRQ_INFO, &irq) != 0) {
      return fail(error, where + "VFIO_DEVICE_GET_IRQ_INFO (MSI-X): " + errno_text());
    }
    if (irq.count <= dev::kVectorCompletion || (irq.flags & VFIO_IRQ_INFO_EVENTFD) == 0) {
      return fail(error, where + "the device has " + std::to_string(irq.count) + " MSI-X vectors; the completion vector is " +
                             std::to_string(dev::kVectorCompletion) + " (QEMU's ivshmem-doorbell needs vectors=" +
                             std::to_string(dev::kVectors) + ")");
    }
    interrupt_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (interrupt_.get() < 0) return fail(error, where + "eventfd: " + errno_text());
    alignas(vfio_irq_set) uint8_t buffer[sizeof(vfio_irq_set) + sizeof(int32_t)] = {};
    auto* set = reinterpret_cast<vfio_irq_set*>(buffer);
    set->argsz = sizeof buffer;
    set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
    set->index = VFIO_PCI_MSIX_IRQ_INDEX;
    set->start = dev::kVectorCompletion;
    set->count = 1;
    const int32_t fd = interrupt_.get();
    std::memcpy(set->data, &fd, sizeof fd);
    if (::ioctl(device_.get(), VFIO_DEVICE_SET_IRQS, set) != 0) {
      interrupt_.reset(-1);
      return fail(error, where + "VFIO_DEVICE_SET_IRQS (MSI-X vector " + std::to_string(dev::kVectorCompletion) +
                             " -> eventfd): " + errno_text());
    }
    return true;
  }

  bool region_info(uint32_t index, const char* name, vfio_region_info* info, const std::string& where,
                   std::string* error) {
    info->argsz = sizeof *info;
    info->index = index;
    if (::ioctl(device_.get(), VFIO_DEVICE_GET_REGION_INFO, info) != 0) {
      return fail(error, where + "VFIO_DEVICE_GET_REGION_INFO (" + name + "): " + errno_text());
    }
    return true;
  }

  bool check_device(std::string* error) {
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

  // Adds what the eventfd counted (one per interrupt) since the last read; false if nothing.
  bool take_interrupts() const {
    uint64_t count = 0;
    if (::read(interrupt_.get(), &count, sizeof count) != static_cast<ssize_t>(sizeof count) || count == 0) return false;
    interrupts_ += count;
    return true;
  }

  uint32_t read_register(uint32_t offset) const {
    if (registers_ != nullptr) return *reinterpret_cast<volatile const uint32_t*>(registers_ + offset);
    uint32_t value = 0;
    if (::pread(device_.get(), &value, sizeof value, static_cast<off_t>(bar0_offset_ + offset)) != sizeof value) return 0;
    return value;
  }
  void write_register(uint32_t offset, uint32_t value) {
    if (registers_ != nullptr) {
      *reinterpret_cast<volatile uint32_t*>(registers_ + offset) = value;
    } else {
      [[maybe_unused]] const ssize_t wrote =
          ::pwrite(device_.get(), &value, sizeof value, static_cast<off_t>(bar0_offset_ + offset));
    }
  }

  CompletionPlan plan_;
  Fd container_, group_, device_, interrupt_;
  uint64_t bar0_offset_ = 0;
  volatile uint8_t* registers_ = nullptr;
  uint8_t* region_ = nullptr;
  uint64_t region_bytes_ = 0;
  uint32_t peer_id_ = 0;
  std::chrono::microseconds backoff_ = kFirstBackoff;
  mutable uint64_t interrupts_ = 0;  // mutable: a report takes what the eventfd counted
  uint64_t woken_waits_ = 0;
};

}  // namespace

bool parse_guest_device(const std::string& socket, GuestOptions* options) {
  if (socket != "pci" && socket.rfind("pci:", 0) != 0) return false;
  if (options != nullptr) options->pci_address = socket.size() > 4 ? socket.substr(4) : std::string();
  return true;
}

CompletionPlan plan_completions(const std::string& device, const GuestOptions& options) {
  CompletionPlan plan;
  const std::string driver = link_name(device + "/driver");
  if (driver != kVfioDriver) {
    plan.why = driver.empty() ? "the device has no driver (MSI-X needs it bound to vfio-pci)"
                              : "the device is bound to " + driver + ", not vfio-pci";
    return plan;
  }
  const std::string group = link_name(device + "/iommu_group");
  if (group.empty()) {
    plan.why = "the device has no IOMMU group (MSI-X through vfio needs an IOMMU: intel_iommu=on)";
    return plan;
  }
  const std::string vfio = options.dev_root + "/vfio/";
  for (const std::string& node : {vfio + "vfio", vfio + group}) {
    if (!exists(node)) {
      plan.why = node + " is missing (vfio-pci is bound; is devtmpfs mounted on " + options.dev_root + "?)";
      return plan;
    }
  }
  plan.path = Completions::Msix;
  plan.iommu_group = group;
  plan.why = "the device is bound to vfio-pci in IOMMU group " + group;
  return plan;
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

std::optional<CompletionReport> guest_completion_report(const Transport& transport) {
  auto* guest = dynamic_cast<const GuestTransport*>(&transport);
  if (guest == nullptr) return std::nullopt;
  return guest->report();
}

}  // namespace gpuvp::driver
