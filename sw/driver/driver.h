// The gpuvp user-space driver: one channel of the device (sw/include/gpuvp/device.h) over a
// Transport. Claims a free channel, says Hello, submits commands to the channel's queues,
// collects completions by sequence, hands out memory of the channel's DMA-window slice, and
// notices a dead platform (transport closed, heartbeat stalled, platform stopping) within a
// bounded time so that no caller blocks forever.
//
// Not thread-safe: the runtime serializes calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "gpuvp/device.h"
#include "sw/driver/transport.h"
#include "sw/driver/window_allocator.h"

namespace gpuvp::driver {

struct DriverOptions {
  // The platform is declared gone when its heartbeat has not moved for this long.
  std::chrono::milliseconds heartbeat_timeout{3000};
  // How long one blocking wait sleeps on the doorbell before polling the region again.
  std::chrono::milliseconds poll_interval{20};
  // Upper bound for Hello and Goodbye.
  std::chrono::milliseconds control_timeout{10000};
};

struct Completion {
  uint64_t sequence = 0;
  uint32_t queue = 0;
  device::Status status = device::Status::Ok;
  bool lost = false;  // the platform went away before the command completed
  uint64_t value0 = 0;
  uint64_t value1 = 0;
  uint64_t simulated_ps = 0;
  std::string message;

  bool ok() const { return !lost && status == device::Status::Ok; }
};

class Driver {
 public:
  static constexpr uint32_t kQueues = device::kQueuesPerChannel;

  // Claims a channel and completes Hello. nullptr and `error` on failure.
  static std::unique_ptr<Driver> open(std::unique_ptr<Transport> transport, const DriverOptions& options,
                                      std::string* error);
  ~Driver();  // Goodbye (bounded), then the transport closes
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  const device::DeviceInfo& device_info() const { return header().device; }
  uint32_t channel_index() const { return channel_index_; }
  uint32_t peer_id() const { return transport_->peer_id(); }

  // ---- DMA window: memory addressed by "host addresses" (offsets from the region's start).
  std::optional<uint64_t> allocate(uint64_t bytes, uint64_t align = 256);
  bool release(uint64_t host_address);
  void* pointer(uint64_t host_address) const { return transport_->region() + host_address; }
  // The host address of [p, p+bytes) if it lies in this channel's slice.
  std::optional<uint64_t> host_address(const void* p, uint64_t bytes = 1) const;
  uint64_t window_used() const { return window_.used(); }
  uint64_t window_base() const { return window_base_; }  // host address of this channel's slice
  uint64_t window_capacity() const { return window_.capacity(); }

  // ---- Commands.
  // Fills in the sequence and queues the command. A full queue (its last entry is kept for a
  // HostWaiting) is a wait for its oldest command: HostWaiting, then on once answered, as in
  // wait(). Returns the sequence, or 0 when the platform is gone.
  uint64_t submit(uint32_t queue, device::Command command);
  // Drains the completion ring; true when `sequence` has completed (or the platform is gone).
  bool completed(uint64_t sequence);
  // Removes and returns the completion of `sequence` if it has arrived.
  std::optional<Completion> take(uint64_t sequence);
  // Blocks until `sequence` completes and returns its completion. It tells the platform first that
  // the host waits for exactly that command (HostWaiting, device.h) and returns only once that
  // HostWaiting has completed too, i.e. simulated time has stopped again: the program's next
  // commands then take effect at a simulated time fixed by the command stream. Returns a `lost`
  // completion when the platform disappears.
  Completion wait(uint64_t sequence, std::chrono::milliseconds timeout = std::chrono::milliseconds::max());
  Completion execute(uint32_t queue, const device::Command& command) { return wait(submit(queue, command)); }
  // A query (cudaStreamQuery, cudaEventQuery): true when `sequence` has completed -- at once, with
  // simulated time standing still, if its completion has arrived. Otherwise the platform lets
  // simulated time run for at most its query quantum (RegionHeader::query_quantum_ps; a HostWaiting
  // naming `sequence`, bounded by it) or until `sequence` completes, whichever comes first, and
  // this returns once that HostWaiting has completed, time stopped and settled: true when
  // `sequence` completed meanwhile (take() it), false when it is still running. So a program that
  // polls without ever blocking moves its work forward by one quantum per query, deterministically.
  // True (with lost_reason) when the platform is gone.
  bool query(uint64_t sequence);
  uint64_t query_quantum_ps() const;

  // Checks liveness now; false (and lost_reason) once the platform is gone.
  bool alive();
  const std::string& lost_reason() const { return lost_reason_; }

 private:
  Driver(std::unique_ptr<Transport> transport, const DriverOptions& options);
  const device::RegionHeader& header() const {
    return *reinterpret_cast<const device::RegionHeader*>(transport_->region());
  }
  device::Channel& channel() const;
  bool claim(std::string* error);
  void drain();
  void mark_lost(std::string reason);
  Completion lost_completion(uint64_t sequence) const;
  // Queues a HostWaiting naming `target` on `queue`, bounded by `bound_ps` of simulated time (0:
  // none); its sequence, 0 when the platform is gone.
  uint64_t send_host_waiting(uint64_t target, uint32_t queue = 0, uint64_t bound_ps = 0);
  // Waits until the HostWaiting `waiting` has been answered (the instant settled); false when the
  // platform went away first.
  bool await_host_waiting(uint64_t waiting);
  // Drains completions and waits for doorbells until `done` holds (true), or the platform is gone
  // or `timeout` has passed (false; the driver is then lost).
  bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds timeout);
  // submit() on a full queue: HostWaiting for the queue's oldest command, answered (settled).
  void wait_for_room(uint32_t queue);
  // wait(); `settle` = also wait for the HostWaiting's completion (not for Goodbye, after which
  // the platform answers nothing more).
  Completion wait_settled(uint64_t sequence, std::chrono::milliseconds timeout, bool settle);

  std::unique_ptr<Transport> transport_;
  DriverOptions options_;
  uint32_t channel_index_ = 0;
  bool claimed_ = false;
  uint64_t window_base_ = 0;  // host address of this channel's slice
  WindowAllocator window_;
  uint64_t next_sequence_ = 1;
  uint32_t queue_tail_[kQueues] = {};
  uint32_t completion_head_ = 0;
  std::map<uint64_t, Completion> done_;
  std::map<uint64_t, bool> ignored_;  // fire-and-forget sequences (HostWaiting)
  bool lost_ = false;
  std::string lost_reason_;
  uint64_t last_heartbeat_ = 0;
  std::chrono::steady_clock::time_point heartbeat_seen_;
};

}  // namespace gpuvp::driver
