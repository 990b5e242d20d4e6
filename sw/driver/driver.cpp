#include "sw/driver/driver.h"

#include <unistd.h>

#include <cstring>

namespace gpuvp::driver {
namespace {

namespace dev = gpuvp::device;
using Clock = std::chrono::steady_clock;

template <typename T>
T load_acquire(const T& cell) {
  return __atomic_load_n(&cell, __ATOMIC_ACQUIRE);
}
template <typename T>
void store_release(T& cell, T value) {
  __atomic_store_n(&cell, value, __ATOMIC_RELEASE);
}

}  // namespace

Driver::Driver(std::unique_ptr<Transport> transport, const DriverOptions& options)
    : transport_(std::move(transport)), options_(options) {}

std::unique_ptr<Driver> Driver::open(std::unique_ptr<Transport> transport, const DriverOptions& options,
                                     std::string* error) {
  if (transport == nullptr) {
    if (error != nullptr) *error = "no transport";
    return nullptr;
  }
  std::unique_ptr<Driver> driver(new Driver(std::move(transport), options));
  if (!driver->claim(error)) return nullptr;
  dev::Command hello{};
  hello.opcode = static_cast<uint32_t>(dev::Opcode::Hello);
  hello.body.generic.a = static_cast<uint64_t>(::getpid());
  const Completion done = driver->wait(driver->submit(0, hello), options.control_timeout);
  if (!done.ok()) {
    if (error != nullptr) {
      *error = done.lost ? "the gpuvp platform is unavailable: " + driver->lost_reason_
                         : "the gpuvp platform refused the channel: " + done.message;
    }
    return nullptr;
  }
  if (done.value0 != driver->channel_index_) {
    if (error != nullptr) *error = "the platform acknowledged a different channel";
    return nullptr;
  }
  return driver;
}

Driver::~Driver() {
  if (!claimed_) return;
  if (!lost_ && alive()) {
    dev::Command goodbye{};
    goodbye.opcode = static_cast<uint32_t>(dev::Opcode::Goodbye);
    // Not settled: the platform retires the channel with Goodbye and answers no later HostWaiting.
    wait_settled(submit(0, goodbye), options_.control_timeout, false);
  }
}

dev::Channel& Driver::channel() const {
  const auto& h = header();
  return *reinterpret_cast<dev::Channel*>(transport_->region() + h.channels_offset + h.channel_bytes * channel_index_);
}

bool Driver::claim(std::string* error) {
  const dev::RegionHeader& h = header();
  const uint64_t region = transport_->region_bytes();
  auto fail = [&](std::string message) {
    if (error != nullptr) *error = std::move(message);
    return false;
  };
  if (load_acquire(h.platform_state) != static_cast<uint32_t>(dev::PlatformState::Ready)) {
    return fail("the gpuvp platform is not ready");
  }
  if (load_acquire(h.version) != dev::kVersion) {
    return fail("the gpuvp platform speaks device protocol version " + std::to_string(load_acquire(h.version)) +
                ", this driver version " + std::to_string(dev::kVersion));
  }
  if (h.channel_bytes < sizeof(dev::Channel) || h.max_channels == 0 || h.max_channels > dev::kMaxChannels ||
      h.queues_per_channel != dev::kQueuesPerChannel || h.channels_offset + h.channel_bytes * h.max_channels > region ||
      h.window_offset + h.window_slice_bytes * h.max_channels > region) {
    return fail("the region header's geometry is inconsistent");
  }
  last_heartbeat_ = load_acquire(h.heartbeat);
  heartbeat_seen_ = Clock::now();
  for (uint32_t i = 0; i < h.max_channels; ++i) {
    auto* control = reinterpret_cast<dev::ChannelControl*>(transport_->region() + h.channels_offset + h.channel_bytes * i);
    uint32_t expected = static_cast<uint32_t>(dev::ChannelState::Free);
    if (__atomic_compare_exchange_n(&control->state, &expected, static_cast<uint32_t>(dev::ChannelState::Claimed),
                                    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      channel_index_ = i;
      claimed_ = true;
      store_release(control->owner_peer, transport_->peer_id());
      store_release(control->owner_pid, static_cast<uint32_t>(::getpid()));
      break;
    }
  }
  if (!claimed_) return fail("all " + std::to_string(h.max_channels) + " channels of the gpuvp platform are in use");
  dev::Channel& ch = channel();
  for (uint32_t q = 0; q < kQueues; ++q) queue_tail_[q] = load_acquire(ch.queues[q].tail.value);
  completion_head_ = load_acquire(ch.completions.head.value);
  window_base_ = h.window_offset + h.window_slice_bytes * channel_index_;
  window_ = WindowAllocator(h.window_slice_bytes);
  return true;
}

std::optional<uint64_t> Driver::allocate(uint64_t bytes, uint64_t align) {
  const auto offset = window_.allocate(bytes, align);
  if (!offset) return std::nullopt;
  return window_base_ + *offset;
}

bool Driver::release(uint64_t host_address) {
  if (host_address < window_base_) return false;
  return window_.release(host_address - window_base_);
}

std::optional<uint64_t> Driver::host_address(const void* p, uint64_t bytes) const {
  const auto* byte = static_cast<const uint8_t*>(p);
  const uint8_t* begin = transport_->region() + window_base_;
  const uint8_t* end = begin + window_.capacity();
  if (byte < begin || byte >= end || bytes > static_cast<uint64_t>(end - byte)) return std::nullopt;
  return window_base_ + static_cast<uint64_t>(byte - begin);
}

void Driver::mark_lost(std::string reason) {
  if (lost_) return;
  lost_ = true;
  lost_reason_ = std::move(reason);
}

bool Driver::alive() {
  if (lost_) return false;
  if (!transport_->platform_connected()) {
    mark_lost("the platform closed its connection");
    return false;
  }
  const dev::RegionHeader& h = header();
  if (load_acquire(h.platform_state) == static_cast<uint32_t>(dev::PlatformState::Stopping)) {
    mark_lost("the platform is stopping");
    return false;
  }
  if (load_acquire(channel().control.state) == static_cast<uint32_t>(dev::ChannelState::Faulted)) {
    mark_lost("the platform faulted this channel");
    return false;
  }
  const uint64_t beat = load_acquire(h.heartbeat);
  const auto now = Clock::now();
  if (beat != last_heartbeat_) {
    last_heartbeat_ = beat;
    heartbeat_seen_ = now;
  } else if (now - heartbeat_seen_ > options_.heartbeat_timeout) {
    mark_lost("the platform's heartbeat stopped");
    return false;
  }
  return true;
}

Completion Driver::lost_completion(uint64_t sequence) const {
  Completion c;
  c.sequence = sequence;
  c.lost = true;
  c.status = dev::Status::ChannelUnavailable;
  c.message = lost_reason_.empty() ? "the gpuvp platform is unavailable" : lost_reason_;
  return c;
}

void Driver::drain() {
  if (!claimed_) return;
  dev::CompletionRing& ring = channel().completions;
  const uint32_t tail = load_acquire(ring.tail.value);
  if (tail - completion_head_ > dev::kCompletionEntries) {
    mark_lost("the completion ring's indices are corrupt");
    return;
  }
  while (completion_head_ != tail) {
    const dev::CompletionRecord& record = ring.entries[completion_head_ % dev::kCompletionEntries];
    Completion c;
    c.sequence = record.sequence;
    c.queue = record.queue;
    c.status = static_cast<dev::Status>(record.status);
    c.value0 = record.value0;
    c.value1 = record.value1;
    c.simulated_ps = record.simulated_ps;
    c.message.assign(record.message, strnlen(record.message, sizeof record.message));
    ++completion_head_;
    if (ignored_.erase(c.sequence) == 0) done_[c.sequence] = std::move(c);
  }
  store_release(ring.head.value, completion_head_);
}

uint64_t Driver::submit(uint32_t queue, dev::Command command) {
  if (queue >= kQueues || lost_) return 0;
  dev::CommandQueue& q = channel().queues[queue];
  // The queue's last entry is kept for a HostWaiting, so that a host waiting for room can always
  // say so: the platform advances simulated time only while the host waits (device.h), and a
  // full queue's oldest command cannot finish without it.
  const bool host_waiting = command.opcode == static_cast<uint32_t>(dev::Opcode::HostWaiting);
  const uint32_t room = host_waiting ? dev::kQueueEntries : dev::kQueueEntries - 1;
  // Wait for room: the platform advances head as it consumes.
  while (queue_tail_[queue] - load_acquire(q.head.value) >= room) {
    drain();
    if (!alive()) return 0;
    if (!host_waiting) {
      wait_for_room(queue);
      continue;
    }
    transport_->wait_for_doorbell(options_.poll_interval);
  }
  command.sequence = next_sequence_++;
  std::memcpy(&q.entries[queue_tail_[queue] % dev::kQueueEntries], &command, sizeof command);
  ++queue_tail_[queue];
  store_release(q.tail.value, queue_tail_[queue]);
  if (!transport_->ring_platform()) {
    mark_lost("the platform closed its connection");
  }
  return command.sequence;
}

bool Driver::completed(uint64_t sequence) {
  drain();
  return done_.count(sequence) != 0 || lost_;
}

std::optional<Completion> Driver::take(uint64_t sequence) {
  drain();
  const auto it = done_.find(sequence);
  if (it == done_.end()) {
    if (lost_ || sequence == 0) return lost_completion(sequence);
    return std::nullopt;
  }
  Completion c = std::move(it->second);
  done_.erase(it);
  return c;
}

uint64_t Driver::send_host_waiting(uint64_t target, uint32_t queue, uint64_t bound_ps) {
  dev::Command waiting{};
  waiting.opcode = static_cast<uint32_t>(dev::Opcode::HostWaiting);
  waiting.body.generic.c = target;
  waiting.body.generic.d = bound_ps;
  const uint64_t sequence = submit(queue, waiting);
  if (sequence != 0) ignored_[sequence] = true;
  return sequence;
}

bool Driver::poll_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto start = Clock::now();
  for (;;) {
    drain();
    if (done()) return true;
    if (!alive()) return false;
    if (timeout != std::chrono::milliseconds::max() && Clock::now() - start > timeout) {
      mark_lost("the platform did not answer within " + std::to_string(timeout.count()) + " ms");
      return false;
    }
    if (transport_->wait_for_doorbell(options_.poll_interval) == WaitResult::PlatformGone) {
      drain();
      if (done()) return true;
      mark_lost("the platform closed its connection");
      return false;
    }
  }
}

bool Driver::await_host_waiting(uint64_t waiting) {
  // Answered once the instant has settled.
  return poll_until([&] { return ignored_.count(waiting) == 0; }, std::chrono::milliseconds::max());
}

void Driver::wait_for_room(uint32_t queue) {
  // The host waits for the queue's oldest command, exactly as wait() would for it, and goes on
  // once the platform has answered the HostWaiting on the settled instant: the next command then
  // lands at a simulated time fixed by the command stream. The HostWaiting takes the kept entry;
  // the oldest command's completion stays for take().
  const dev::CommandQueue& q = channel().queues[queue];
  const uint32_t head = load_acquire(q.head.value);
  const uint64_t oldest = __atomic_load_n(&q.entries[head % dev::kQueueEntries].sequence, __ATOMIC_RELAXED);
  const uint64_t waiting = send_host_waiting(oldest, queue);
  if (waiting != 0) await_host_waiting(waiting);
}

uint64_t Driver::query_quantum_ps() const {
  // Never 0 (which would mean "unbounded" and make a query block like a synchronization).
  const uint64_t quantum = load_acquire(header().query_quantum_ps);
  return quantum != 0 ? quantum : 1;
}

bool Driver::query(uint64_t sequence) {
  if (sequence == 0 || completed(sequence)) return true;
  // Not done: let the platform run for one quantum of simulated time (or until it completes),
  // and go on only once that HostWaiting's completion has come -- after the instant settled, so
  // everything that finished by then has posted its completion and the program's next commands
  // land at a simulated time fixed by the command stream (device.h).
  const uint64_t waiting = send_host_waiting(sequence, 0, query_quantum_ps());
  if (waiting == 0 || !await_host_waiting(waiting)) return true;  // the platform is gone
  return completed(sequence);
}

Completion Driver::wait(uint64_t sequence, std::chrono::milliseconds timeout) {
  return wait_settled(sequence, timeout, true);
}

Completion Driver::wait_settled(uint64_t sequence, std::chrono::milliseconds timeout, bool settle) {
  if (sequence == 0) return lost_completion(0);
  if (auto done = take(sequence); done) return *done;
  // The HostWaiting names exactly the awaited command, so simulated time stops when that command
  // completes. Its own completion comes once the platform has stopped time and let the instant
  // settle: only then may this program go on, or its next commands would land at a simulated time
  // that depends on how fast this host ran.
  const uint64_t waiting = send_host_waiting(sequence);
  std::optional<Completion> result;
  auto finished = [&] {
    if (!result) {
      if (const auto it = done_.find(sequence); it != done_.end()) {
        result = std::move(it->second);
        done_.erase(it);
      }
    }
    return result.has_value() && (!settle || waiting == 0 || ignored_.count(waiting) == 0);
  };
  if (poll_until(finished, timeout)) return *result;
  return lost_completion(sequence);
}

}  // namespace gpuvp::driver
