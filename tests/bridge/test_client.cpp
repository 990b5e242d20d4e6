#include "tests/bridge/test_client.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace gpuvp::test {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
T load_acquire(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_ACQUIRE);
}
template <class T>
void store_release(T& field, T value) {
  __atomic_store_n(&field, value, __ATOMIC_RELEASE);
}

bool readable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) == 1 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

}  // namespace

std::optional<IvshmemMessage> read_message(int socket, std::chrono::milliseconds timeout) {
  if (!readable(socket, timeout)) return std::nullopt;
  IvshmemMessage message;
  iovec iov{&message.value, sizeof message.value};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr header{};
  header.msg_iov = &iov;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(socket, &header, MSG_CMSG_CLOEXEC);
  if (n != static_cast<ssize_t>(sizeof message.value)) return std::nullopt;
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
      std::memcpy(&message.fd, CMSG_DATA(c), sizeof(int));
    }
  }
  return message;
}

std::unique_ptr<RawClient> RawClient::connect(const std::string& socket_path, std::string* error) {
  std::unique_ptr<RawClient> client(new RawClient());
  auto fail = [&](const std::string& message) -> std::unique_ptr<RawClient> {
    if (error != nullptr) *error = message;
    return nullptr;
  };
  client->socket_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  if (::connect(client->socket_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return fail("connect " + socket_path + ": " + std::strerror(errno));
  }
  // 1. version, 2. our id, 3. -1 + shm fd, 4. other peers' vectors, 5. our own id N times.
  uint32_t own_count = 0;
  while (own_count < device::kVectors) {
    auto message = read_message(client->socket_, kTimeout);
    if (!message) return fail("handshake: no message after " + std::to_string(client->handshake_.size()));
    client->handshake_.push_back(*message);
    const size_t index = client->handshake_.size() - 1;
    if (index == 0) {
      if (message->value != device::kIvshmemProtocolVersion) return fail("unexpected protocol version");
    } else if (index == 1) {
      client->peer_id_ = message->value;
    } else if (index == 2) {
      if (message->value != -1 || message->fd < 0) return fail("third message is not -1 with the shm fd");
      client->shm_fd_ = message->fd;
    } else if (message->value == client->peer_id_) {
      client->own_.push_back(message->fd);
      ++own_count;
    } else {
      client->peers_[message->value].push_back(message->fd);
    }
  }
  struct stat info{};
  if (::fstat(client->shm_fd_, &info) != 0) return fail("fstat of the shm fd");
  client->region_bytes_ = static_cast<uint64_t>(info.st_size);
  void* mapping = ::mmap(nullptr, client->region_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, client->shm_fd_, 0);
  if (mapping == MAP_FAILED) return fail("mmap of the shared region");
  client->region_ = static_cast<uint8_t*>(mapping);
  return client;
}

RawClient::~RawClient() {
  if (region_ != nullptr) ::munmap(region_, region_bytes_);
  for (const auto& message : handshake_) {
    if (message.fd >= 0) ::close(message.fd);
  }
  if (socket_ >= 0) ::close(socket_);
}

bool RawClient::ring(int64_t peer, uint32_t vector) {
  const auto it = peers_.find(peer);
  if (it == peers_.end() || vector >= it->second.size()) return false;
  const uint64_t one = 1;
  return ::write(it->second[vector], &one, sizeof one) == static_cast<ssize_t>(sizeof one);
}

bool RawClient::wait_own(uint32_t vector, std::chrono::milliseconds timeout) {
  if (vector >= own_.size() || !readable(own_[vector], timeout)) return false;
  uint64_t value = 0;
  return ::read(own_[vector], &value, sizeof value) == static_cast<ssize_t>(sizeof value);
}

device::Channel& RawClient::channel() const {
  return *reinterpret_cast<device::Channel*>(region_ + header().channels_offset + header().channel_bytes * channel_);
}

uint64_t RawClient::window_base() const { return header().window_offset + header().window_slice_bytes * channel_; }

bool RawClient::open_channel(std::string* error) {
  const auto& h = header();
  for (uint32_t i = 0; i < h.max_channels && !claimed_; ++i) {
    auto* control = reinterpret_cast<device::ChannelControl*>(region_ + h.channels_offset + h.channel_bytes * i);
    uint32_t expected = static_cast<uint32_t>(device::ChannelState::Free);
    if (__atomic_compare_exchange_n(&control->state, &expected, static_cast<uint32_t>(device::ChannelState::Claimed),
                                    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      channel_ = i;
      claimed_ = true;
      store_release(control->owner_peer, static_cast<uint32_t>(peer_id_));
      store_release(control->owner_pid, static_cast<uint32_t>(::getpid()));
    }
  }
  if (!claimed_) {
    if (error != nullptr) *error = "no free channel";
    return false;
  }
  const auto done = execute(0, command(device::Opcode::Hello, static_cast<uint64_t>(::getpid())));
  if (done.status != static_cast<uint32_t>(device::Status::Ok) || done.value0 != channel_) {
    if (error != nullptr) *error = "Hello: status " + std::to_string(done.status) + " " + done.message;
    return false;
  }
  return true;
}

uint64_t RawClient::allocate(uint64_t bytes, uint64_t alignment) {
  window_used_ = (window_used_ + alignment - 1) / alignment * alignment;
  const uint64_t address = window_base() + window_used_;
  window_used_ += bytes;
  return address;
}

uint64_t RawClient::put_text(const std::string& text) {
  const uint64_t address = allocate(text.size() + 1);
  std::memcpy(at(address), text.c_str(), text.size() + 1);
  return address;
}

device::Command RawClient::command(device::Opcode opcode, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  device::Command command{};
  command.opcode = static_cast<uint32_t>(opcode);
  command.body.generic = {a, b, c, d};
  return command;
}

uint64_t RawClient::submit(uint32_t queue, device::Command command) {
  command.sequence = next_sequence_++;
  device::CommandQueue& q = channel().queues[queue];
  std::memcpy(&q.entries[tails_[queue] % device::kQueueEntries], &command, sizeof command);
  ++tails_[queue];
  store_release(q.tail.value, tails_[queue]);
  ring(device::kPlatformPeerId, device::kVectorCommand);
  return command.sequence;
}

void RawClient::drain() {
  device::CompletionRing& ring = channel().completions;
  const uint32_t tail = load_acquire(ring.tail.value);
  while (completion_head_ != tail) {
    const device::CompletionRecord& record = ring.entries[completion_head_ % device::kCompletionEntries];
    done_[record.sequence] = record;
    ++completion_head_;
  }
  store_release(ring.head.value, completion_head_);
}

std::optional<device::CompletionRecord> RawClient::wait(uint64_t sequence, bool host_waits,
                                                        std::chrono::milliseconds timeout) {
  if (host_waits) submit(0, command(device::Opcode::HostWaiting));
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    drain();
    const auto it = done_.find(sequence);
    if (it != done_.end()) {
      device::CompletionRecord record = it->second;
      done_.erase(it);
      return record;
    }
    if (Clock::now() > deadline) return std::nullopt;
    wait_own(device::kVectorCompletion, std::chrono::milliseconds(20));
  }
}

device::CompletionRecord RawClient::execute(uint32_t queue, const device::Command& command) {
  const auto done = wait(submit(queue, command));
  if (done) return *done;
  device::CompletionRecord missing{};
  missing.status = 0xffffffffu;
  std::strncpy(missing.message, "no completion within the timeout", sizeof missing.message - 1);
  return missing;
}

}  // namespace gpuvp::test
