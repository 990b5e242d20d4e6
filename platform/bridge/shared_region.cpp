#include "platform/bridge/shared_region.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace gpuvp::bridge {
namespace {

constexpr uint64_t kWindowAlignment = uint64_t{2} << 20;  // 2 MiB: huge-page friendly
constexpr uint64_t kSliceAlignment = 64 * 1024;
constexpr uint64_t kMinSliceBytes = uint64_t{1} << 20;

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

}  // namespace

SharedRegion::SharedRegion(uint64_t bytes, const device::DeviceInfo& device, uint64_t query_quantum_ps)
    : bytes_(bytes) {
  if (bytes == 0 || (bytes & (bytes - 1)) != 0) {
    throw std::invalid_argument("shared region size " + std::to_string(bytes) + " is not a power of two");
  }
  const uint64_t channels_offset = device::kHeaderBytes;
  window_offset_ = align_up(channels_offset + sizeof(device::Channel) * device::kMaxChannels, kWindowAlignment);
  if (window_offset_ >= bytes) throw std::invalid_argument("shared region too small for the channels");
  slice_bytes_ = (bytes - window_offset_) / device::kMaxChannels / kSliceAlignment * kSliceAlignment;
  if (slice_bytes_ < kMinSliceBytes) {
    throw std::invalid_argument("shared region of " + std::to_string(bytes) +
                                " bytes leaves less than 1 MiB of DMA window per channel");
  }

  fd_ = ::memfd_create("gpuvp-region", MFD_CLOEXEC);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "ftruncate of the shared region");
  }
  void* mapping = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mapping == MAP_FAILED) {
    const int error = errno;
    ::close(fd_);
    throw std::system_error(error, std::generic_category(), "mmap of the shared region");
  }
  base_ = static_cast<uint8_t*>(mapping);

  device::RegionHeader& h = header();  // the memfd starts zeroed
  h.version = device::kVersion;
  h.header_bytes = static_cast<uint32_t>(device::kHeaderBytes);
  h.region_bytes = bytes;
  h.channels_offset = channels_offset;
  h.channel_bytes = sizeof(device::Channel);
  h.max_channels = device::kMaxChannels;
  h.queues_per_channel = device::kQueuesPerChannel;
  h.window_offset = window_offset_;
  h.window_slice_bytes = slice_bytes_;
  h.platform_pid = static_cast<uint32_t>(::getpid());
  h.device = device;
  h.query_quantum_ps = query_quantum_ps;
  store_release(h.platform_state, static_cast<uint32_t>(device::PlatformState::Starting));
  store_release(h.magic, device::kMagic);  // last: the header is valid from here on
}

SharedRegion::~SharedRegion() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
  if (fd_ >= 0) ::close(fd_);
}

device::Channel& SharedRegion::channel(uint32_t index) const {
  return *reinterpret_cast<device::Channel*>(base_ + device::kHeaderBytes + sizeof(device::Channel) * index);
}

bool SharedRegion::in_slice(uint32_t channel, uint64_t address, uint64_t length) const {
  if (channel >= device::kMaxChannels) return false;
  const uint64_t begin = slice_begin(channel);
  if (address < begin) return false;
  const uint64_t offset = address - begin;
  if (offset >= slice_bytes_) return false;
  return length <= slice_bytes_ - offset;
}

void SharedRegion::set_state(device::PlatformState state) {
  store_release(header().platform_state, static_cast<uint32_t>(state));
}

void SharedRegion::beat() { __atomic_add_fetch(&header().heartbeat, 1, __ATOMIC_RELEASE); }

}  // namespace gpuvp::bridge
