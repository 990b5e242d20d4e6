// libFuzzer target for the device command decoder: what a client writes into its channel of the
// shared region (commands on any of its queues, ring indices, the bytes of its window slice that
// commands point at) as the platform's bridge and command processor read it. The bridge and the
// command processor are compiled with the fuzzer's coverage and sanitizers; the GPU model behind
// them is linked from the build as it is.
//
// One platform (v100 preset, a 512 MiB device so that a MemMap cannot take the host's memory, a
// 64 MiB region) runs on a background thread for the whole campaign, with a well-behaved client
// on channel 0. Each input is one session of a second client: connect, claim a channel (Hello),
// then the input's actions in order, a doorbell, a bounded wait for the platform to settle, and a
// disconnect without Goodbye. Then the platform must free the fuzzed channel, and the
// well-behaved client must still get Ok for a Nop and read back what it wrote to its device
// memory; anything else aborts, which libFuzzer reports as a finding.
//
// Input: a sequence of actions, each an action byte A followed by its operands (missing bytes
// read as 0). Queue q = (A >> 3) % kQueuesPerChannel.
//   A % 8 == 0  command: 128 bytes, the opcode taken modulo (opcode count + 2) so most are real;
//               queued at the queue's tail
//   A % 8 == 1  window command: a mask byte, then as 0; body word i (a, b, c, d) with mask bit i
//               set is an offset into the channel's window slice (modulo its size) and becomes
//               that host address, as real clients send them
//   A % 8 == 2  tail: 4 bytes stored as the queue's tail index (corrupt rings)
//   A % 8 == 3  completion head: 4 bytes stored as the completion ring's head
//   A % 8 == 4  window bytes: 2 bytes of offset (in 16-byte units), 2 bytes of length, the bytes
//   A % 8 == 5  HostWaiting for everything queued before it (lets simulated time run)
//   A % 8 == 6  a wait of 1 ms (the platform works on what it has)
//   A % 8 == 7  doorbell on the platform's command vector
// bench/fuzz/corpus/command holds seeds made by bench/fuzz/command_seeds.py.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "gpuvp/device.h"
#include "platform/bridge/platform_server.h"
#include "platform/config/config.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"
#include "tests/bridge/test_client.h"

// libsystemc.so calls sc_main from its own main(); libFuzzer's main is the one that runs.
extern "C" int sc_main(int, char**) { return 1; }

namespace {

using gpuvp::device::Command;
using gpuvp::device::Opcode;
using gpuvp::device::Status;
using gpuvp::test::RawClient;
using Clock = std::chrono::steady_clock;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "command fuzzer: %s\n", what.c_str());
  std::abort();
}

// Reads operands from the input; past its end every byte is 0.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  void bytes(void* out, size_t n) {
    auto* o = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < n; ++i) o[i] = byte();
  }
  uint32_t u32() {
    uint32_t v = 0;
    bytes(&v, sizeof v);
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// The platform, its well-behaved client (a device buffer with a known pattern) for the campaign.
class Fixture {
 public:
  static constexpr uint64_t kProbeBytes = 4096;

  Fixture() {
    const gpuvp::config::KnobRegistry registry = gpuvp::build_knob_registry();
    const gpuvp::config::ConfigLoader loader(registry, gpuvp::config::default_preset_dirs());
    params_ = gpuvp::PlatformParams::load(
        loader.load("v100", {"platform.bridge.region_size=64 MiB", "memory.hbm.capacity=512 MiB"}));
    server_ = std::make_unique<gpuvp::bridge::PlatformServer>(params_, stats_);
    thread_ = std::thread([this] { server_->run(); });
    std::string error;
    keeper_ = RawClient::connect(server_->socket_path(), &error);
    if (keeper_ == nullptr || !keeper_->open_channel(&error)) finding("the well-behaved client cannot start: " + error);
    const auto mapped = keeper_->execute(0, RawClient::command(Opcode::MemMap, kProbeBytes));
    if (mapped.status != uint32_t(Status::Ok)) finding("MemMap for the well-behaved client failed");
    device_ = mapped.value0;
    host_ = keeper_->allocate(kProbeBytes);
    back_ = keeper_->allocate(kProbeBytes);
    auto* pattern = static_cast<uint8_t*>(keeper_->at(host_));
    for (uint64_t i = 0; i < kProbeBytes; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 3);
    copy(device_, host_, uint64_t(gpuvp::device::CopyDirection::HostToDevice));
    check_keeper();
  }

  // The platform still serves the well-behaved client, and its device memory is intact.
  void check_keeper() {
    // Peer notifications (with their doorbell fds) as QEMU reads them: the server drops a client
    // whose socket stays full.
    while (auto message = gpuvp::test::read_message(keeper_->socket(), std::chrono::milliseconds(0))) {
      if (message->fd >= 0) ::close(message->fd);
    }
    if (keeper_->execute(0, RawClient::command(Opcode::Nop)).status != uint32_t(Status::Ok)) {
      finding("the well-behaved client's Nop failed after a fuzzed session");
    }
    std::memset(keeper_->at(back_), 0, kProbeBytes);
    copy(back_, device_, uint64_t(gpuvp::device::CopyDirection::DeviceToHost));
    if (std::memcmp(keeper_->at(back_), keeper_->at(host_), kProbeBytes) != 0) {
      finding("the well-behaved client's device memory changed during a fuzzed session");
    }
  }

  const std::string& socket_path() const { return server_->socket_path(); }
  uint64_t channels_released() const { return server_->activity().channels_released; }
  gpuvp::bridge::PlatformActivity activity() const { return server_->activity(); }

 private:
  void copy(uint64_t destination, uint64_t source, uint64_t direction) {
    const auto r = keeper_->execute(0, RawClient::command(Opcode::Memcpy, destination, source, kProbeBytes, direction));
    if (r.status != uint32_t(Status::Ok)) finding("the well-behaved client's Memcpy failed");
  }

  gpuvp::PlatformParams params_;
  gpuvp::stats::Registry stats_;
  std::unique_ptr<gpuvp::bridge::PlatformServer> server_;
  std::thread thread_;  // runs until the process exits (libFuzzer ends it with exit())
  std::unique_ptr<RawClient> keeper_;
  uint64_t device_ = 0;
  uint64_t host_ = 0;  // the pattern, in the window
  uint64_t back_ = 0;  // where the pattern is read back
};

Fixture& fixture() {
  static Fixture* f = new Fixture();  // never destroyed: the simulation thread outlives main's return
  return *f;
}

constexpr uint32_t kOpcodes = uint32_t(Opcode::IpcEventWait) + 1;

void run_session(RawClient& client, Reader& in) {
  gpuvp::device::Channel& channel = client.channel();
  const uint64_t window = client.window_base();
  const uint64_t window_bytes = client.window_bytes();
  uint32_t tails[gpuvp::device::kQueuesPerChannel];
  for (uint32_t q = 0; q < gpuvp::device::kQueuesPerChannel; ++q) {
    tails[q] = __atomic_load_n(&channel.queues[q].tail.value, __ATOMIC_ACQUIRE);
  }
  int actions = 0;
  while (!in.done() && actions++ < 256) {
    const uint8_t action = in.byte();
    const uint32_t q = (action >> 3) % gpuvp::device::kQueuesPerChannel;
    gpuvp::device::CommandQueue& queue = channel.queues[q];
    auto queue_command = [&](Command command) {
      std::memcpy(&queue.entries[tails[q] % gpuvp::device::kQueueEntries], &command, sizeof command);
      __atomic_store_n(&queue.tail.value, ++tails[q], __ATOMIC_RELEASE);
    };
    switch (action % 8) {
      case 0:
      case 1: {
        const uint8_t window_words = action % 8 == 1 ? in.byte() : 0;
        Command command;
        in.bytes(&command, sizeof command);
        command.opcode %= kOpcodes + 2;
        uint64_t* words[] = {&command.body.generic.a, &command.body.generic.b, &command.body.generic.c,
                             &command.body.generic.d};
        for (int i = 0; i < 4; ++i) {
          if ((window_words >> i) & 1) *words[i] = window + *words[i] % window_bytes;
        }
        queue_command(command);
        break;
      }
      case 2:
        tails[q] = in.u32();
        __atomic_store_n(&queue.tail.value, tails[q], __ATOMIC_RELEASE);
        break;
      case 3:
        __atomic_store_n(&channel.completions.head.value, in.u32(), __ATOMIC_RELEASE);
        break;
      case 4: {
        const uint64_t offset = (uint64_t{in.byte()} | uint64_t{in.byte()} << 8) * 16 % window_bytes;
        const uint32_t length = uint32_t{in.byte()} | uint32_t{in.byte()} << 8;
        auto* bytes = static_cast<uint8_t*>(client.at(window));
        for (uint32_t i = 0; i < length && !in.done(); ++i) {
          const uint8_t b = in.byte();
          if (offset + i < window_bytes) bytes[offset + i] = b;
        }
        break;
      }
      case 5: {
        Command command{};
        command.opcode = uint32_t(Opcode::HostWaiting);
        command.sequence = ~uint64_t{0};
        queue_command(command);
        client.ring(gpuvp::device::kPlatformPeerId, gpuvp::device::kVectorCommand);
        break;
      }
      case 6:
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        break;
      default:
        client.ring(gpuvp::device::kPlatformPeerId, gpuvp::device::kVectorCommand);
        break;
    }
  }
  client.ring(gpuvp::device::kPlatformPeerId, gpuvp::device::kVectorCommand);
  // Settled: the completion tail and the channel state unchanged for 20 ms (at most 300 ms).
  const auto deadline = Clock::now() + std::chrono::milliseconds(300);
  uint64_t last = ~uint64_t{0};
  auto stable_since = Clock::now();
  while (Clock::now() < deadline) {
    const uint64_t now = (uint64_t{__atomic_load_n(&channel.completions.tail.value, __ATOMIC_ACQUIRE)} << 32) |
                         __atomic_load_n(&channel.control.state, __ATOMIC_ACQUIRE);
    if (now != last) {
      last = now;
      stable_since = Clock::now();
    } else if (Clock::now() - stable_since > std::chrono::milliseconds(20)) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& f = fixture();
  const uint64_t released = f.channels_released();
  uint32_t channel = 0;
  {
    std::string error;
    std::unique_ptr<RawClient> client = RawClient::connect(f.socket_path(), &error);
    if (client == nullptr) finding("a new client cannot connect: " + error);
    if (!client->open_channel(&error)) finding("a new client cannot open a channel: " + error);
    channel = client->channel_index();
    Reader in(data, size);
    run_session(*client, in);
  }  // disconnects without Goodbye
  const auto deadline = Clock::now() + std::chrono::seconds(8);
  while (f.channels_released() == released) {
    if (Clock::now() > deadline) {
      const auto a = f.activity();
      finding("channel " + std::to_string(channel) + " was not freed within 8 s after its client left (peers " +
              std::to_string(a.peers_connected) + ", channels active " + std::to_string(a.channels_active) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  f.check_keeper();
  return 0;
}
