#include "sw/driver/ivshmem_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "gpuvp/device.h"
#include "sw/driver/guest_transport.h"

namespace gpuvp::driver {
namespace {

namespace dev = gpuvp::device;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~Fd() { reset(-1); }
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// One protocol message: a little-endian int64 and at most one fd.
struct Message {
  int64_t value = 0;
  Fd fd;
};

enum class ReadStatus { Ok, Closed, Error };

ReadStatus read_message(int socket, Message& message) {
  int64_t value = 0;
  iovec iov{&value, sizeof value};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t got = 0;
  do {
    got = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got == 0) return ReadStatus::Closed;
  if (got != static_cast<ssize_t>(sizeof value)) return ReadStatus::Error;
  message.value = value;  // x86-64 and aarch64 hosts are little-endian, as the protocol is
  message.fd.reset(-1);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      message.fd.reset(fd);
    }
  }
  return ReadStatus::Ok;
}

bool wait_readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  int r = 0;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

class IvshmemTransport final : public Transport {
 public:
  ~IvshmemTransport() override {
    if (region_ != nullptr) ::munmap(region_, region_bytes_);
  }

  bool connect(const IvshmemOptions& options, std::string* error) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (options.socket_path.empty() || options.socket_path.size() >= sizeof address.sun_path) {
      return fail(error, "invalid platform socket path '" + options.socket_path + "'");
    }
    std::memcpy(address.sun_path, options.socket_path.c_str(), options.socket_path.size() + 1);
    socket_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (socket_.get() < 0) return fail(error, std::string("socket: ") + std::strerror(errno));
    if (::connect(socket_.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      return fail(error, "cannot connect to the gpuvp platform at " + options.socket_path + ": " + std::strerror(errno));
    }
    const auto deadline = std::chrono::steady_clock::now() + options.handshake_timeout;
    auto next = [&](Message& message) -> bool {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !wait_readable(socket_.get(), static_cast<int>(left.count()))) {
        return fail(error, "the gpuvp platform did not complete the ivshmem handshake in time");
      }
      if (read_message(socket_.get(), message) != ReadStatus::Ok) {
        return fail(error, "the gpuvp platform closed the connection during the handshake");
      }
      return true;
    };
    Message message;
    if (!next(message)) return false;
    if (message.value != dev::kIvshmemProtocolVersion) {
      return fail(error, "unsupported ivshmem protocol version " + std::to_string(message.value));
    }
    if (!next(message)) return false;
    if (message.value < 0 || message.value > 0xffff || message.fd.get() >= 0) {
      return fail(error, "bad peer id from the ivshmem server");
    }
    peer_id_ = static_cast<uint32_t>(message.value);
    if (!next(message)) return false;
    if (message.value != -1 || message.fd.get() < 0) return fail(error, "the ivshmem server sent no shared-memory fd");
    Fd shm = std::move(message.fd);
    // Peer notifications until this client's own vectors have all arrived (they come last).
    while (own_vectors_ < dev::kVectors) {
      if (!next(message)) return false;
      handle_peer_message(message);
    }
    if (platform_command_.get() < 0) return fail(error, "the ivshmem server announced no platform peer");
    struct stat info {};
    if (::fstat(shm.get(), &info) != 0 || info.st_size < static_cast<off_t>(dev::kHeaderBytes)) {
      return fail(error, "the shared region is smaller than its header");
    }
    region_bytes_ = static_cast<uint64_t>(info.st_size);
    void* mapped = ::mmap(nullptr, region_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, shm.get(), 0);
    if (mapped == MAP_FAILED) return fail(error, std::string("mmap of the shared region: ") + std::strerror(errno));
    region_ = static_cast<uint8_t*>(mapped);
    const auto* header = reinterpret_cast<const dev::RegionHeader*>(region_);
    if (header->magic != dev::kMagic) return fail(error, "the shared region has no gpuvp header (bad magic)");
    if (header->version != dev::kVersion) {
      return fail(error, "device interface version " + std::to_string(header->version) + ", this driver speaks " +
                             std::to_string(dev::kVersion));
    }
    if (header->region_bytes != region_bytes_) return fail(error, "the region header's size disagrees with the mapping");
    return true;
  }

  uint8_t* region() const override { return region_; }
  uint64_t region_bytes() const override { return region_bytes_; }
  uint32_t peer_id() const override { return peer_id_; }

  bool ring_platform() override {
    if (!platform_connected()) return false;
    const uint64_t one = 1;
    ssize_t r = 0;
    do {
      r = ::write(platform_command_.get(), &one, sizeof one);
    } while (r < 0 && errno == EINTR);
    return r == static_cast<ssize_t>(sizeof one) || errno == EAGAIN;
  }

  WaitResult wait_for_doorbell(std::chrono::milliseconds timeout) override {
    if (!platform_connected()) return WaitResult::PlatformGone;
    pollfd fds[2] = {{own_completion_.get(), POLLIN, 0}, {socket_.get(), POLLIN, 0}};
    int r = 0;
    do {
      r = ::poll(fds, 2, static_cast<int>(timeout.count()));
    } while (r < 0 && errno == EINTR);
    if (r <= 0) return WaitResult::TimedOut;
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) service_socket();
    if ((fds[0].revents & POLLIN) != 0) {
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t got = ::read(own_completion_.get(), &count, sizeof count);
      return WaitResult::Signaled;
    }
    return connected_ ? WaitResult::TimedOut : WaitResult::PlatformGone;
  }

  bool platform_connected() override {
    if (connected_ && wait_readable(socket_.get(), 0)) service_socket();
    return connected_;
  }

 private:
  static bool fail(std::string* error, std::string message) {
    if (error != nullptr) *error = std::move(message);
    return false;
  }

  // Peer announcements after the handshake: new peers (ignored), departures (the platform's
  // departure means it is gone), or the socket closing.
  void service_socket() {
    while (connected_ && wait_readable(socket_.get(), 0)) {
      Message message;
      if (read_message(socket_.get(), message) != ReadStatus::Ok) {
        connected_ = false;
        return;
      }
      handle_peer_message(message);
    }
  }

  void handle_peer_message(Message& message) {
    const int64_t peer = message.value;
    if (message.fd.get() < 0) {
      // A peer left. The platform leaving means the device is gone.
      if (peer == dev::kPlatformPeerId) connected_ = false;
      vectors_seen_.erase(peer);
      return;
    }
    const uint32_t vector = vectors_seen_[peer]++;
    if (peer == static_cast<int64_t>(peer_id_)) {
      if (vector == dev::kVectorCompletion) {
        own_completion_ = std::move(message.fd);
        ::fcntl(own_completion_.get(), F_SETFL, ::fcntl(own_completion_.get(), F_GETFL) | O_NONBLOCK);
      }
      ++own_vectors_;
    } else if (peer == dev::kPlatformPeerId && vector == dev::kVectorCommand) {
      platform_command_ = std::move(message.fd);
    }
    // Other peers' and other vectors' fds close here: this client never rings them.
  }

  Fd socket_;
  Fd platform_command_;
  Fd own_completion_;
  uint32_t peer_id_ = 0;
  uint32_t own_vectors_ = 0;
  std::map<int64_t, uint32_t> vectors_seen_;
  bool connected_ = true;
  uint8_t* region_ = nullptr;
  uint64_t region_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Transport> connect_ivshmem(const IvshmemOptions& options, std::string* error) {
  // Inside a QEMU guest the platform is a PCI device, not a socket (guest_transport.h).
  if (GuestOptions guest; parse_guest_device(options.socket_path, &guest)) return connect_guest(guest, error);
  auto transport = std::make_unique<IvshmemTransport>();
  if (!transport->connect(options, error)) return nullptr;
  return transport;
}

}  // namespace gpuvp::driver
