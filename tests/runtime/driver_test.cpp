// The driver and its native transport against a minimal in-test ivshmem server written from
// QEMU's protocol description (version, peer id, shm fd, peers' eventfds per vector), with a
// fake device that completes every command. Covers the handshake, channel claim and Hello,
// commands and completions, a full queue, and platform death (socket closed, heartbeat
// stalled) detected within a bounded time. Plus the window allocator.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "gpuvp/device.h"
#include "sw/driver/driver.h"
#include "sw/driver/ivshmem_client.h"
#include "sw/driver/window_allocator.h"

namespace gpuvp::driver {
namespace {

namespace dev = gpuvp::device;
using namespace std::chrono_literals;

constexpr uint64_t kRegionBytes = uint64_t{64} << 20;

void send_message(int socket, int64_t value, int fd) {
  iovec iov{&value, sizeof value};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  ASSERT_EQ(::sendmsg(socket, &msg, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof value));
}

// One-client ivshmem server plus a device that completes every command with Ok.
class FakePlatform {
 public:
  explicit FakePlatform(bool beat = true) : beat_(beat) {
    char dir[] = "/tmp/gpuvp-driver-test-XXXXXX";
    directory_ = ::mkdtemp(dir);
    path_ = directory_ + "/socket";
    shm_ = ::memfd_create("gpuvp-test", MFD_CLOEXEC);
    EXPECT_EQ(::ftruncate(shm_, static_cast<off_t>(kRegionBytes)), 0);
    base_ = static_cast<uint8_t*>(::mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE, MAP_SHARED, shm_, 0));
    auto& h = header();
    h.magic = dev::kMagic;
    h.version = dev::kVersion;
    h.header_bytes = dev::kHeaderBytes;
    h.region_bytes = kRegionBytes;
    h.channels_offset = dev::kHeaderBytes;
    h.channel_bytes = (sizeof(dev::Channel) + 4095) / 4096 * 4096;
    h.max_channels = 4;
    h.queues_per_channel = dev::kQueuesPerChannel;
    h.window_offset = h.channels_offset + h.channel_bytes * h.max_channels;
    h.window_slice_bytes = (kRegionBytes - h.window_offset) / h.max_channels / 4096 * 4096;
    h.platform_state = static_cast<uint32_t>(dev::PlatformState::Ready);
    std::strcpy(h.device.name, "fake");
    h.device.compute_capability = 70;
    for (int& fd : platform_fds_) fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    for (int& fd : client_fds_) fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    listen_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, path_.c_str());
    EXPECT_EQ(::bind(listen_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(listen_, 4), 0);
    thread_ = std::thread([this] { serve(); });
  }

  ~FakePlatform() { close_all(); }

  void close_all() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int* fd : {&listen_, &client_, &shm_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
    for (int& fd : platform_fds_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
    for (int& fd : client_fds_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
    if (base_ != nullptr) ::munmap(base_, kRegionBytes);
    base_ = nullptr;
    ::unlink(path_.c_str());
    ::rmdir(directory_.c_str());
  }

  const std::string& path() const { return path_; }
  dev::RegionHeader& header() { return *reinterpret_cast<dev::RegionHeader*>(base_); }
  dev::Channel& channel(uint32_t i) {
    return *reinterpret_cast<dev::Channel*>(base_ + header().channels_offset + header().channel_bytes * i);
  }
  // Once it returns, no pass over the queues is running or will start until unpaused.
  void pause_device(bool paused) {
    std::lock_guard<std::mutex> lock(serve_mutex_);
    paused_ = paused;
  }
  // While deferring, the device answers only HostWaiting commands (out of queue order, as the
  // platform does: a bounded one whose time ran out) and leaves all other work queued.
  void defer_work(bool deferring) { deferring_ = deferring; }
  std::vector<dev::Command> host_waits() {
    std::lock_guard<std::mutex> lock(mutex_);
    return host_waits_;
  }
  std::atomic<uint64_t> commands{0};

 private:
  void serve() {
    // Accept one client and greet it as QEMU's server does.
    for (;;) {
      if (stop_) return;
      pollfd p{listen_, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) break;
    }
    client_ = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
    send_message(client_, dev::kIvshmemProtocolVersion, -1);
    send_message(client_, 1, -1);                                                 // its peer id
    send_message(client_, -1, shm_);                                              // the region
    for (int fd : platform_fds_) send_message(client_, dev::kPlatformPeerId, fd);  // peer 0's vectors
    send_message(client_, 7, client_fds_[0]);                                     // another peer joined
    for (int fd : client_fds_) send_message(client_, 1, fd);                      // its own vectors
    auto last_beat = std::chrono::steady_clock::now();
    while (!stop_) {
      pollfd p{platform_fds_[dev::kVectorCommand], POLLIN, 0};
      ::poll(&p, 1, 5);
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t got = ::read(platform_fds_[dev::kVectorCommand], &count, sizeof count);
      if (beat_ && std::chrono::steady_clock::now() - last_beat > 20ms) {
        __atomic_fetch_add(&header().heartbeat, 1, __ATOMIC_RELEASE);
        last_beat = std::chrono::steady_clock::now();
      }
      std::lock_guard<std::mutex> lock(serve_mutex_);
      if (!paused_) serve_queues();
    }
  }

  bool is_host_waiting(const dev::Command& cmd) {
    return cmd.opcode == static_cast<uint32_t>(dev::Opcode::HostWaiting);
  }
  void post(dev::Channel& ch, uint32_t q, const dev::Command& cmd) {
    dev::CompletionRing& ring = ch.completions;
    dev::CompletionRecord& r = ring.entries[ring.tail.value % dev::kCompletionEntries];
    std::memset(&r, 0, sizeof r);
    r.sequence = cmd.sequence;
    r.queue = q;
    __atomic_store_n(&ring.tail.value, ring.tail.value + 1, __ATOMIC_RELEASE);
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = ::write(client_fds_[dev::kVectorCompletion], &one, sizeof one);
  }

  void serve_queues() {
    for (uint32_t c = 0; c < header().max_channels; ++c) {
      dev::Channel& ch = channel(c);
      if (__atomic_load_n(&ch.control.state, __ATOMIC_ACQUIRE) == 0) continue;
      for (uint32_t q = 0; q < dev::kQueuesPerChannel; ++q) {
        dev::CommandQueue& queue = ch.queues[q];
        const uint32_t tail = __atomic_load_n(&queue.tail.value, __ATOMIC_ACQUIRE);
        if (deferring_) {
          for (uint32_t i = queue.head.value; i != tail; ++i) {
            const dev::Command& cmd = queue.entries[i % dev::kQueueEntries];
            if (!is_host_waiting(cmd) || !answered_.insert({c, q, i}).second) continue;
            record_host_wait(cmd);
            post(ch, q, cmd);
          }
          continue;
        }
        while (queue.head.value != tail) {
          const dev::Command& cmd = queue.entries[queue.head.value % dev::kQueueEntries];
          if (is_host_waiting(cmd) && answered_.erase({c, q, queue.head.value}) != 0) {
            __atomic_store_n(&queue.head.value, queue.head.value + 1, __ATOMIC_RELEASE);
            continue;
          }
          if (is_host_waiting(cmd)) record_host_wait(cmd);
          dev::CompletionRing& ring = ch.completions;
          dev::CompletionRecord& r = ring.entries[ring.tail.value % dev::kCompletionEntries];
          std::memset(&r, 0, sizeof r);
          r.sequence = cmd.sequence;
          r.queue = q;
          if (cmd.opcode == static_cast<uint32_t>(dev::Opcode::Hello)) {
            r.value0 = c;
            __atomic_store_n(&ch.control.state, static_cast<uint32_t>(dev::ChannelState::Active), __ATOMIC_RELEASE);
          } else if (cmd.opcode == static_cast<uint32_t>(dev::Opcode::Nop)) {
            r.value0 = cmd.body.generic.a + 1;
          } else if (cmd.opcode > static_cast<uint32_t>(dev::Opcode::Goodbye)) {
            r.status = static_cast<uint32_t>(dev::Status::InvalidCommand);
            std::strcpy(r.message, "unknown opcode");
          }
          __atomic_store_n(&ring.tail.value, ring.tail.value + 1, __ATOMIC_RELEASE);
          __atomic_store_n(&queue.head.value, queue.head.value + 1, __ATOMIC_RELEASE);
          ++commands;
          const uint64_t one = 1;
          [[maybe_unused]] const ssize_t w = ::write(client_fds_[dev::kVectorCompletion], &one, sizeof one);
        }
      }
    }
  }

  void record_host_wait(const dev::Command& cmd) {
    std::lock_guard<std::mutex> lock(mutex_);
    host_waits_.push_back(cmd);
  }

  bool beat_;
  std::atomic<bool> deferring_{false};
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> answered_;  // HostWaitings answered ahead of their queue
  std::mutex mutex_;
  std::vector<dev::Command> host_waits_;
  std::string directory_, path_;
  int shm_ = -1, listen_ = -1, client_ = -1;
  int platform_fds_[dev::kVectors] = {-1, -1};
  int client_fds_[dev::kVectors] = {-1, -1};
  uint8_t* base_ = nullptr;
  std::atomic<bool> stop_{false};
  std::mutex serve_mutex_;  // held by a pass over the queues
  bool paused_ = false;     // guarded by serve_mutex_
  std::thread thread_;
};

std::unique_ptr<Driver> open_driver(FakePlatform& platform, DriverOptions options = {}) {
  std::string error;
  auto transport = connect_ivshmem(IvshmemOptions{platform.path(), 2000ms}, &error);
  EXPECT_NE(transport, nullptr) << error;
  if (transport == nullptr) return nullptr;
  auto driver = Driver::open(std::move(transport), options, &error);
  EXPECT_NE(driver, nullptr) << error;
  return driver;
}

dev::Command nop(uint64_t a) {
  dev::Command cmd{};
  cmd.opcode = static_cast<uint32_t>(dev::Opcode::Nop);
  cmd.body.generic.a = a;
  return cmd;
}

TEST(Transport, HandshakeMapsTheRegion) {
  FakePlatform platform;
  std::string error;
  auto transport = connect_ivshmem(IvshmemOptions{platform.path(), 2000ms}, &error);
  ASSERT_NE(transport, nullptr) << error;
  EXPECT_EQ(transport->peer_id(), 1u);
  EXPECT_EQ(transport->region_bytes(), kRegionBytes);
  EXPECT_EQ(reinterpret_cast<const dev::RegionHeader*>(transport->region())->magic, dev::kMagic);
  EXPECT_TRUE(transport->ring_platform());
  EXPECT_TRUE(transport->platform_connected());
}

TEST(Transport, BadHeaderAndMissingServerAreErrors) {
  std::string error;
  EXPECT_EQ(connect_ivshmem(IvshmemOptions{"/nonexistent/socket", 500ms}, &error), nullptr);
  EXPECT_NE(error.find("cannot connect"), std::string::npos) << error;
  FakePlatform platform;
  platform.header().version = dev::kVersion + 1;
  EXPECT_EQ(connect_ivshmem(IvshmemOptions{platform.path(), 2000ms}, &error), nullptr);
  EXPECT_NE(error.find("version"), std::string::npos) << error;
}

TEST(Driver, ClaimsAChannelAndCompletesCommands) {
  FakePlatform platform;
  auto driver = open_driver(platform);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->channel_index(), 0u);
  EXPECT_EQ(platform.channel(0).control.owner_peer, 1u);
  EXPECT_EQ(platform.channel(0).control.state, static_cast<uint32_t>(dev::ChannelState::Active));
  EXPECT_STREQ(driver->device_info().name, "fake");
  for (uint64_t i = 0; i < 10; ++i) {
    const Completion c = driver->execute(static_cast<uint32_t>(i % Driver::kQueues), nop(i));
    ASSERT_TRUE(c.ok()) << c.message;
    EXPECT_EQ(c.value0, i + 1);
  }
  dev::Command bad{};
  bad.opcode = 99;
  const Completion c = driver->execute(0, bad);
  EXPECT_EQ(c.status, dev::Status::InvalidCommand);
  EXPECT_EQ(c.message, "unknown opcode");
}

TEST(Driver, MoreCommandsThanAQueueHolds) {
  FakePlatform platform;
  auto driver = open_driver(platform);
  ASSERT_NE(driver, nullptr);
  std::vector<uint64_t> sequences;
  for (uint64_t i = 0; i < 3 * dev::kQueueEntries; ++i) sequences.push_back(driver->submit(1, nop(i)));
  for (uint64_t i = 0; i < sequences.size(); ++i) {
    const Completion c = driver->wait(sequences[i]);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.value0, i + 1);
  }
}

// A full queue is a wait: the driver fills a queue up to its last entry, which it keeps for a
// HostWaiting naming the queue's oldest command (simulated time moves only while the host says it
// waits); it submits the next command once that HostWaiting is answered.
TEST(Driver, FullQueueIsAHostWaitForItsOldestCommand) {
  FakePlatform platform;
  auto driver = open_driver(platform);
  ASSERT_NE(driver, nullptr);
  platform.pause_device(true);
  dev::CommandQueue& queue = platform.channel(driver->channel_index()).queues[2];
  const uint32_t head = __atomic_load_n(&queue.head.value, __ATOMIC_ACQUIRE);
  std::vector<uint64_t> sequences;
  for (uint32_t i = 0; i + 1 < dev::kQueueEntries; ++i) sequences.push_back(driver->submit(2, nop(i)));
  EXPECT_EQ(__atomic_load_n(&queue.tail.value, __ATOMIC_ACQUIRE) - head, dev::kQueueEntries - 1);
  std::atomic<uint64_t> last{0};
  std::thread submitter([&] { last = driver->submit(2, nop(dev::kQueueEntries - 1)); });
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (__atomic_load_n(&queue.tail.value, __ATOMIC_ACQUIRE) - head < dev::kQueueEntries &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  // The kept entry now holds a HostWaiting for the first command; the new one is not queued yet.
  const dev::Command& waiting = queue.entries[(head + dev::kQueueEntries - 1) % dev::kQueueEntries];
  EXPECT_EQ(waiting.opcode, static_cast<uint32_t>(dev::Opcode::HostWaiting));
  EXPECT_EQ(waiting.body.generic.c, sequences.front());
  EXPECT_EQ(last.load(), 0u);
  platform.pause_device(false);
  submitter.join();
  ASSERT_NE(last.load(), 0u);
  sequences.push_back(last);
  for (uint64_t i = 0; i < sequences.size(); ++i) {
    const Completion c = driver->wait(sequences[i]);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.value0, i + 1);
  }
}

// A query: done work is reported at once (no HostWaiting, so simulated time stands still);
// unfinished work gets one HostWaiting naming it, bounded by the header's quantum, and the answer
// comes only once that HostWaiting has completed.
TEST(Driver, QueryWaitsOneBoundedHostWaitingAndSaysWhetherTheCommandIsDone) {
  FakePlatform platform;
  platform.header().query_quantum_ps = 5000;
  auto driver = open_driver(platform);
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->query_quantum_ps(), 5000u);

  const uint64_t done = driver->submit(0, nop(1));
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!driver->completed(done) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  const size_t waits_before = platform.host_waits().size();
  EXPECT_TRUE(driver->query(done));
  EXPECT_EQ(platform.host_waits().size(), waits_before);
  ASSERT_TRUE(driver->take(done).has_value());

  platform.defer_work(true);
  const uint64_t running = driver->submit(1, nop(2));
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(driver->query(running));
    const auto waits = platform.host_waits();
    ASSERT_EQ(waits.size(), waits_before + i + 1);
    EXPECT_EQ(waits.back().body.generic.a, 0u);
    EXPECT_EQ(waits.back().body.generic.c, running);
    EXPECT_EQ(waits.back().body.generic.d, 5000u);
  }
  EXPECT_FALSE(driver->take(running).has_value());
  platform.defer_work(false);
  bool finished = false;
  for (int i = 0; i < 1000 && !finished; ++i) finished = driver->query(running);
  ASSERT_TRUE(finished);
  const auto completion = driver->take(running);
  ASSERT_TRUE(completion.has_value());
  EXPECT_TRUE(completion->ok());
  EXPECT_EQ(completion->value0, 3u);
  EXPECT_TRUE(driver->alive());
}

TEST(Driver, SocketClosedIsDetectedQuickly) {
  FakePlatform platform;
  auto driver = open_driver(platform);
  ASSERT_NE(driver, nullptr);
  platform.pause_device(true);
  const uint64_t sequence = driver->submit(0, nop(1));
  std::thread killer([&] {
    std::this_thread::sleep_for(100ms);
    platform.close_all();
  });
  const auto start = std::chrono::steady_clock::now();
  const Completion c = driver->wait(sequence);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  killer.join();
  EXPECT_TRUE(c.lost);
  EXPECT_LT(elapsed, 2s);
  EXPECT_FALSE(driver->alive());
  EXPECT_EQ(driver->submit(0, nop(2)), 0u);
}

TEST(Driver, StalledHeartbeatIsDetectedWithinItsBound) {
  FakePlatform platform(/*beat=*/false);
  DriverOptions options;
  options.heartbeat_timeout = 300ms;
  auto driver = open_driver(platform, options);
  ASSERT_NE(driver, nullptr);
  platform.pause_device(true);
  const auto start = std::chrono::steady_clock::now();
  const Completion c = driver->wait(driver->submit(0, nop(1)));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(c.lost);
  EXPECT_NE(driver->lost_reason().find("heartbeat"), std::string::npos) << driver->lost_reason();
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 2s);
}

TEST(Driver, WindowAddressesAreInTheChannelsSlice) {
  FakePlatform platform;
  auto driver = open_driver(platform);
  ASSERT_NE(driver, nullptr);
  const auto a = driver->allocate(1000, 4096);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a % 4096, 0u);
  EXPECT_GE(*a, platform.header().window_offset);
  EXPECT_LT(*a, platform.header().window_offset + platform.header().window_slice_bytes);
  EXPECT_EQ(driver->host_address(driver->pointer(*a), 1000), a);
  int on_stack = 0;
  EXPECT_FALSE(driver->host_address(&on_stack).has_value());
  EXPECT_TRUE(driver->release(*a));
  EXPECT_FALSE(driver->release(*a));
}

TEST(WindowAllocator, FirstFitAlignsAndCoalesces) {
  WindowAllocator window(1 << 20);
  const auto a = window.allocate(100);
  const auto b = window.allocate(5000, 4096);
  const auto c = window.allocate(100);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, 0u);
  EXPECT_EQ(*b, 4096u);
  EXPECT_EQ(*c, 256u);  // the gap before b is reused (default alignment 256)
  EXPECT_EQ(window.find(*b + 4999)->first, *b);
  EXPECT_FALSE(window.find(*b + 5008).has_value());
  EXPECT_FALSE(window.allocate(2 << 20).has_value());
  EXPECT_TRUE(window.release(*a));
  EXPECT_TRUE(window.release(*b));
  EXPECT_TRUE(window.release(*c));
  EXPECT_EQ(window.used(), 0u);
  EXPECT_EQ(window.allocate(1 << 20), std::optional<uint64_t>(0));  // fully coalesced again
}

}  // namespace
}  // namespace gpuvp::driver
