// A raw ivshmem client for the bridge tests, written from QEMU's ivshmem-spec.rst and device.h
// (independent of sw/driver): handshake, region mapping, doorbells, one channel with commands
// and completions. Every wait is bounded.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuvp/device.h"

namespace gpuvp::test {

struct IvshmemMessage {
  int64_t value = 0;
  int fd = -1;  // -1: no fd came with the message (the receiver owns it otherwise)
};

// One protocol message, or nullopt on timeout / EOF.
std::optional<IvshmemMessage> read_message(int socket, std::chrono::milliseconds timeout);

class RawClient {
 public:
  static constexpr std::chrono::milliseconds kTimeout{10000};

  // Connects and reads the whole handshake. nullptr (and *error) on failure.
  static std::unique_ptr<RawClient> connect(const std::string& socket_path, std::string* error);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  int socket() const { return socket_; }
  int64_t peer_id() const { return peer_id_; }
  const std::vector<IvshmemMessage>& handshake() const { return handshake_; }
  const std::map<int64_t, std::vector<int>>& peer_vectors() const { return peers_; }
  const std::vector<int>& own_vectors() const { return own_; }
  uint64_t region_bytes() const { return region_bytes_; }
  uint8_t* region() const { return region_; }
  const device::RegionHeader& header() const { return *reinterpret_cast<const device::RegionHeader*>(region_); }

  // Doorbells: ring vector `vector` of `peer` (an eventfd received in the handshake).
  bool ring(int64_t peer, uint32_t vector);
  // True when our own vector's eventfd fired within `timeout` (and drains it).
  bool wait_own(uint32_t vector, std::chrono::milliseconds timeout);

  // ---- Channel.
  // Claims a Free channel and completes Hello. False (and *error) on failure.
  bool open_channel(std::string* error);
  uint32_t channel_index() const { return channel_; }
  device::Channel& channel() const;
  uint64_t window_base() const;
  uint64_t window_bytes() const { return header().window_slice_bytes; }
  // Bump allocation in the channel's window slice: host address (region offset).
  uint64_t allocate(uint64_t bytes, uint64_t alignment = 256);
  void* at(uint64_t host_address) const { return region_ + host_address; }

  // Queues a command (sequence assigned) and rings the platform. Returns the sequence.
  uint64_t submit(uint32_t queue, device::Command command);
  // Waits (bounded) for `sequence`'s completion. Sends HostWaiting (a = 0) first when `host_waits`.
  std::optional<device::CompletionRecord> wait(uint64_t sequence, bool host_waits = true,
                                               std::chrono::milliseconds timeout = kTimeout);
  // submit + wait; a missing completion becomes status 0xffffffff with a message.
  device::CompletionRecord execute(uint32_t queue, const device::Command& command);

  // Convenience builders.
  static device::Command command(device::Opcode opcode, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0);
  uint64_t put_text(const std::string& text);  // copies into the window (NUL-terminated)

 private:
  RawClient() = default;
  void drain();

  int socket_ = -1;
  int shm_fd_ = -1;
  int64_t peer_id_ = -1;
  std::vector<IvshmemMessage> handshake_;
  std::map<int64_t, std::vector<int>> peers_;
  std::vector<int> own_;
  uint8_t* region_ = nullptr;
  uint64_t region_bytes_ = 0;
  uint32_t channel_ = 0;
  bool claimed_ = false;
  uint64_t next_sequence_ = 1;
  uint32_t tails_[device::kQueuesPerChannel] = {};
  uint32_t completion_head_ = 0;
  uint64_t window_used_ = 0;
  std::map<uint64_t, device::CompletionRecord> done_;
};

}  // namespace gpuvp::test
