#include "platform/bridge/ivshmem_server.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "gpuvp/device.h"

namespace gpuvp::bridge {
namespace {

constexpr size_t kMaxClients = 1024;  // peer ids must fit 16 bits; this bounds the fds we hold
constexpr uint64_t kListenTag = ~uint64_t{0};
constexpr uint64_t kStopTag = ~uint64_t{0} - 1;
constexpr uint64_t kTimerTag = ~uint64_t{0} - 2;
constexpr uint64_t kOwnVectorTag = uint64_t{1} << 32;  // + vector; client sockets use their peer id

[[noreturn]] void fail(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

void drain_fd(int fd) {
  uint64_t value = 0;
  while (::read(fd, &value, sizeof value) == static_cast<ssize_t>(sizeof value)) {
  }
}

}  // namespace

struct IvshmemServer::Vectors {
  std::vector<int> fds;
  ~Vectors() {
    for (int fd : fds) ::close(fd);
  }
};

IvshmemServer::IvshmemServer(const std::string& parent_dir, int shm_fd, uint32_t vectors,
                             std::chrono::milliseconds period, Listener& listener)
    : shm_fd_(shm_fd), vectors_(vectors), period_(period), listener_(listener) {
  std::string parent = parent_dir;
  if (parent.empty() || parent == "auto") {
    const char* tmp = std::getenv("TMPDIR");
    parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = parent + "/gpuvp-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) fail("mkdtemp " + pattern);
  directory_ = pattern;  // mkdtemp creates it 0700
  socket_path_ = directory_ + "/ivshmem.sock";

  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof address.sun_path) {
    ::rmdir(directory_.c_str());
    errno = ENAMETOOLONG;
    fail("socket path " + socket_path_);
  }
  std::memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) fail("socket");
  const mode_t old_mask = ::umask(0177);  // the socket is created 0600
  const int bound = ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (bound != 0 || ::chmod(socket_path_.c_str(), 0600) != 0 || ::listen(listen_fd_, 16) != 0) {
    const int error = errno;
    ::close(listen_fd_);
    ::unlink(socket_path_.c_str());
    ::rmdir(directory_.c_str());
    errno = error;
    fail("listen on " + socket_path_);
  }

  own_ = std::make_shared<Vectors>();
  for (uint32_t v = 0; v < vectors_; ++v) {
    const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) fail("eventfd");
    own_->fds.push_back(fd);
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (stop_fd_ < 0 || timer_fd_ < 0 || epoll_fd_ < 0) fail("eventfd/timerfd/epoll");
  itimerspec spec{};
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(period_).count();
  spec.it_interval.tv_sec = ns / 1000000000;
  spec.it_interval.tv_nsec = ns % 1000000000;
  spec.it_value = spec.it_interval;
  if (::timerfd_settime(timer_fd_, 0, &spec, nullptr) != 0) fail("timerfd_settime");

  auto add = [&](int fd, uint64_t tag) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = tag;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) fail("epoll_ctl");
  };
  add(listen_fd_, kListenTag);
  add(stop_fd_, kStopTag);
  add(timer_fd_, kTimerTag);
  for (uint32_t v = 0; v < vectors_; ++v) add(own_->fds[v], kOwnVectorTag + v);
}

IvshmemServer::~IvshmemServer() {
  shutdown_ = true;
  if (stop_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(stop_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [peer, client] : clients_) ::close(client.socket);
    clients_.clear();
  }
  for (int fd : {listen_fd_, epoll_fd_, stop_fd_, timer_fd_}) {
    if (fd >= 0) ::close(fd);
  }
  ::unlink(socket_path_.c_str());
  ::rmdir(directory_.c_str());
}

void IvshmemServer::start() { thread_ = std::thread([this] { run(); }); }

bool IvshmemServer::ring(int64_t peer, uint32_t vector) {
  std::shared_ptr<Vectors> vectors;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = clients_.find(peer);
    if (it == clients_.end()) return false;
    vectors = it->second.vectors;
  }
  if (vector >= vectors->fds.size()) return false;
  const uint64_t one = 1;
  return ::write(vectors->fds[vector], &one, sizeof one) == static_cast<ssize_t>(sizeof one) || errno == EAGAIN;
}

bool IvshmemServer::connected(int64_t peer) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return clients_.count(peer) != 0;
}

size_t IvshmemServer::client_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return clients_.size();
}

void IvshmemServer::request_stop() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(stop_fd_, &one, sizeof one);
}

bool IvshmemServer::send_message(int socket, int64_t value, int fd) {
  // The protocol's messages are little-endian int64; gpuvp runs on little-endian hosts only.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ivshmem protocol is little-endian");
  iovec iov{};
  iov.iov_base = &value;
  iov.iov_len = sizeof value;
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  }
  // Non-blocking: a client that does not read its socket must not stall the server.
  return ::sendmsg(socket, &message, MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(sizeof value);
}

int64_t IvshmemServer::next_peer_id() {
  // Ids increase (a departed peer's id is not handed out again soon) and wrap within 16 bits.
  for (int attempt = 0; attempt < 65535; ++attempt) {
    last_peer_id_ = last_peer_id_ >= 65535 ? 1 : last_peer_id_ + 1;
    if (last_peer_id_ != device::kPlatformPeerId && clients_.count(last_peer_id_) == 0) return last_peer_id_;
  }
  return -1;
}

void IvshmemServer::accept_client() {
  const int socket = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (socket < 0) return;
  int64_t peer = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (clients_.size() < kMaxClients) peer = next_peer_id();
  }
  if (peer < 0) {
    ::close(socket);
    return;
  }
  auto vectors = std::make_shared<Vectors>();
  for (uint32_t v = 0; v < vectors_; ++v) {
    const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) {
      ::close(socket);
      return;
    }
    vectors->fds.push_back(fd);
  }

  // The listener learns of the peer before the client can touch the region.
  listener_.peer_joined(peer);

  bool ok = send_message(socket, device::kIvshmemProtocolVersion, -1) && send_message(socket, peer, -1) &&
            send_message(socket, -1, shm_fd_);
  std::vector<int64_t> others;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint32_t v = 0; ok && v < vectors_; ++v) ok = send_message(socket, device::kPlatformPeerId, own_->fds[v]);
    for (const auto& [id, client] : clients_) {
      for (uint32_t v = 0; ok && v < vectors_; ++v) ok = send_message(socket, id, client.vectors->fds[v]);
      others.push_back(id);
    }
  }
  std::vector<int64_t> unreachable;
  if (ok) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t id : others) {
      const Client& other = clients_.at(id);
      bool delivered = true;
      for (uint32_t v = 0; delivered && v < vectors_; ++v) delivered = send_message(other.socket, peer, vectors->fds[v]);
      if (!delivered) unreachable.push_back(id);
    }
  }
  for (uint32_t v = 0; ok && v < vectors_; ++v) ok = send_message(socket, peer, vectors->fds[v]);

  if (!ok) {
    ::close(socket);
    listener_.peer_left(peer);
  } else {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      clients_[peer] = Client{socket, std::move(vectors)};
    }
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP;
    event.data.u64 = static_cast<uint64_t>(peer);
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, socket, &event) != 0) unreachable.push_back(peer);
  }
  for (int64_t id : unreachable) drop_client(id);
}

void IvshmemServer::drop_client(int64_t peer) {
  std::vector<int> sockets;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = clients_.find(peer);
    if (it == clients_.end()) return;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.socket, nullptr);
    ::close(it->second.socket);
    clients_.erase(it);  // its eventfds close when the last ring() lets go
    for (const auto& [id, client] : clients_) sockets.push_back(client.socket);
  }
  for (int socket : sockets) send_message(socket, peer, -1);  // disconnect notification
  listener_.peer_left(peer);
}

void IvshmemServer::run() {
  std::vector<epoll_event> events(64);
  while (!shutdown_) {
    const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < n && !shutdown_; ++i) {
      const uint64_t tag = events[i].data.u64;
      if (tag == kListenTag) {
        accept_client();
      } else if (tag == kStopTag) {
        drain_fd(stop_fd_);
        if (!shutdown_) listener_.stop_asked();
      } else if (tag == kTimerTag) {
        drain_fd(timer_fd_);
        listener_.tick();
      } else if (tag >= kOwnVectorTag && tag < kOwnVectorTag + vectors_) {
        const uint32_t vector = static_cast<uint32_t>(tag - kOwnVectorTag);
        drain_fd(own_->fds[vector]);
        listener_.doorbell(vector);
      } else {
        const auto peer = static_cast<int64_t>(tag);
        int socket = -1;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          const auto it = clients_.find(peer);
          if (it != clients_.end()) socket = it->second.socket;
        }
        if (socket < 0) continue;
        // Clients send nothing in this protocol: read and discard; EOF or an error is a hang-up.
        char buffer[256];
        const ssize_t got = ::recv(socket, buffer, sizeof buffer, MSG_DONTWAIT);
        const bool hung_up = (events[i].events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) != 0 || got == 0 ||
                             (got < 0 && errno != EAGAIN && errno != EINTR);
        if (hung_up) drop_client(peer);
      }
    }
  }
}

}  // namespace gpuvp::bridge
