// A hostile or broken client next to a well-behaved one, on one platform. The hostile client
// writes garbage commands, corrupt ring indices, lengths that wrap, addresses of another
// client's window or device memory, floods doorbells, never reads its completions, or leaves in
// the middle of a kernel. Each bad act gets its error (or faults/frees only that client's
// channel); meanwhile the other program computes vec_add and its results match the CPU's, and
// afterwards the platform still accepts and serves new clients.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "tests/bridge/platform_fixture.h"

namespace gpuvp::test {
namespace {

using device::Opcode;
using device::Status;

constexpr uint64_t kH2D = uint64_t(device::CopyDirection::HostToDevice);
constexpr uint64_t kD2H = uint64_t(device::CopyDirection::DeviceToHost);
constexpr uint32_t kLastStatus = uint32_t(Status::CooperativeLaunchTooLarge);

std::string status_text(const device::CompletionRecord& r) {
  return "status " + std::to_string(r.status) + ": " + r.message;
}

// One program's view of the device through a RawClient: allocations, the test kernels, launches.
class Program {
 public:
  explicit Program(std::unique_ptr<RawClient> client) : client_(std::move(client)) {}
  RawClient& client() { return *client_; }
  device::CompletionRecord run(Opcode opcode, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0) {
    return client_->execute(0, RawClient::command(opcode, a, b, c, d));
  }
  uint64_t map(uint64_t bytes) {
    const auto r = run(Opcode::MemMap, bytes);
    EXPECT_EQ(r.status, uint32_t(Status::Ok)) << status_text(r);
    return r.value0;
  }
  // Loads the bridge tests' kernels and looks up `name`; fills `layout` with its parameters.
  uint64_t function(const std::string& name, std::vector<device::ParamLayout>& layout) {
    const std::string ptx = read_file(GPUVP_BRIDGE_PTX);
    const uint64_t image = client_->allocate(ptx.size());
    std::memcpy(client_->at(image), ptx.data(), ptx.size());
    const auto module = run(Opcode::LoadModule, image, ptx.size());
    EXPECT_EQ(module.status, uint32_t(Status::Ok)) << status_text(module);
    module_ = module.value0;
    const uint64_t text = client_->put_text(name);
    const uint64_t buffer = client_->allocate(device::kParamLayoutBytes, 8);
    const auto r = run(Opcode::GetFunction, module.value0, text, name.size(), buffer);
    EXPECT_EQ(r.status, uint32_t(Status::Ok)) << status_text(r);
    const auto* entries = static_cast<const device::ParamLayout*>(client_->at(buffer));
    layout.assign(entries, entries + (r.value1 >> 32));
    return r.value0;
  }
  uint64_t module() const { return module_; }  // the last one function() loaded
  device::CompletionRecord launch(uint64_t function, uint32_t grid, uint32_t block, const std::vector<uint8_t>& args) {
    device::Command command{};
    command.opcode = uint32_t(Opcode::Launch);
    device::LaunchArgs& a = command.body.launch;
    a.function = function;
    a.grid[0] = grid;
    a.grid[1] = a.grid[2] = 1;
    a.block[0] = block;
    a.block[1] = a.block[2] = 1;
    a.args_address = client_->allocate(args.size(), 16);
    std::memcpy(client_->at(a.args_address), args.data(), args.size());
    a.args_bytes = args.size();
    return client_->execute(0, command);
  }

 private:
  std::unique_ptr<RawClient> client_;
  uint64_t module_ = 0;
};

template <class... T>
std::vector<uint8_t> pack(const std::vector<device::ParamLayout>& layout, const T&... values) {
  std::vector<uint8_t> buffer;
  size_t i = 0;
  auto put = [&](const auto& value) {
    const device::ParamLayout& p = layout.at(i++);
    if (buffer.size() < p.offset + p.size) buffer.resize(p.offset + p.size);
    std::memcpy(buffer.data() + p.offset, &value, std::min<size_t>(sizeof value, p.size));
  };
  (put(values), ...);
  return buffer;
}

// The well-behaved program: vec_add over its own buffers, checked against the CPU, `rounds` times
// (and on until `keep_going` turns false). Returns the rounds done; every mismatch is a failure.
int victim_rounds(Program& victim, int rounds, const std::atomic<bool>& keep_going) {
  std::vector<device::ParamLayout> layout;
  const uint64_t vec_add = victim.function("vec_add", layout);
  const int n = 2048;
  const uint64_t bytes = n * sizeof(float);
  const uint64_t a = victim.map(bytes), b = victim.map(bytes), c = victim.map(bytes);
  RawClient& client = victim.client();
  const uint64_t host_a = client.allocate(bytes), host_b = client.allocate(bytes), host_c = client.allocate(bytes);
  int done = 0;
  for (; done < rounds || keep_going.load(); ++done) {
    auto* ha = static_cast<float*>(client.at(host_a));
    auto* hb = static_cast<float*>(client.at(host_b));
    for (int i = 0; i < n; ++i) {
      ha[i] = static_cast<float>(i + done);
      hb[i] = 1.0f - static_cast<float>(i) / 3.0f;
    }
    EXPECT_EQ(victim.run(Opcode::Memcpy, a, host_a, bytes, kH2D).status, uint32_t(Status::Ok));
    EXPECT_EQ(victim.run(Opcode::Memcpy, b, host_b, bytes, kH2D).status, uint32_t(Status::Ok));
    const auto launched = victim.launch(vec_add, n / 128, 128, pack(layout, a, b, c, n));
    EXPECT_EQ(launched.status, uint32_t(Status::Ok)) << status_text(launched);
    std::memset(client.at(host_c), 0, bytes);
    EXPECT_EQ(victim.run(Opcode::Memcpy, host_c, c, bytes, kD2H).status, uint32_t(Status::Ok));
    const auto* hc = static_cast<const float*>(client.at(host_c));
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += hc[i] != ha[i] * 2.0f + hb[i];
    EXPECT_EQ(wrong, 0) << "round " << done;
    if (wrong != 0 || ::testing::Test::HasFatalFailure()) break;
  }
  return done;
}

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    platform = std::make_unique<RunningPlatform>();
    victim = std::make_unique<Program>(connect_open(platform->socket_path()));
    hostile = std::make_unique<Program>(connect_open(platform->socket_path()));
  }
  // Runs `act` on the hostile client while the victim computes; then checks that a new client is
  // served (the platform is alive and accepts programs).
  void while_victim_computes(const std::function<void()>& act) {
    std::atomic<bool> acting{true};
    int rounds = 0;
    std::thread victim_thread([&] { rounds = victim_rounds(*victim, 3, acting); });
    act();
    acting = false;
    victim_thread.join();
    EXPECT_GE(rounds, 3);
    auto fresh = connect_open(platform->socket_path());
    ASSERT_NE(fresh, nullptr);
    EXPECT_EQ(fresh->execute(0, RawClient::command(Opcode::Nop)).status, uint32_t(Status::Ok));
  }
  void expect_refused(const device::CompletionRecord& r, const char* what) {
    EXPECT_NE(r.status, uint32_t(Status::Ok)) << what;
    EXPECT_LE(r.status, kLastStatus) << what << ": " << status_text(r);
    EXPECT_NE(r.message[0], '\0') << what << ": an error completion says why";
  }

  std::unique_ptr<RunningPlatform> platform;
  std::unique_ptr<Program> victim;
  std::unique_ptr<Program> hostile;
};

// Seeded random commands of every opcode (and unknown ones) with random fields, on every queue.
// Commands that legitimately block (HostWaiting, SemaphoreWait) or end the channel (Goodbye) are
// replaced by unknown opcodes: their hostile forms have tests of their own.
TEST_F(Hostile, GarbageCommandsGetOneCompletionEachAndHurtNoOne) {
  ASSERT_TRUE(victim && hostile);
  std::mt19937_64 random(20);
  uint64_t answered = 0;
  while_victim_computes([&] {
    RawClient& client = hostile->client();
    const uint64_t window = client.window_base();
    for (int batch = 0; batch < 40; ++batch) {
      std::vector<uint64_t> sequences;
      for (int i = 0; i < 24; ++i) {
        device::Command command{};
        for (auto& byte : command.body.raw) byte = static_cast<uint8_t>(random());
        uint32_t opcode = static_cast<uint32_t>(random() % 26);
        if (opcode == uint32_t(Opcode::HostWaiting) || opcode == uint32_t(Opcode::SemaphoreWait) ||
            opcode == uint32_t(Opcode::Goodbye)) {
          opcode = 1000 + opcode;
        }
        command.opcode = opcode;
        command.flags = random() % 8 == 0 ? static_cast<uint32_t>(random()) : 0;
        // Half the addresses point into the client's own window, so checks past the first run too.
        if (random() % 2 == 0) command.body.generic.a = window + random() % client.window_bytes();
        if (random() % 2 == 0) command.body.generic.b = window + random() % client.window_bytes();
        if (random() % 2 == 0) command.body.generic.c = random() % 4096;
        sequences.push_back(client.submit(static_cast<uint32_t>(random() % device::kQueuesPerChannel), command));
      }
      for (uint64_t sequence : sequences) {
        const auto r = client.wait(sequence, sequence == sequences.front());
        ASSERT_TRUE(r.has_value()) << "batch " << batch << ": no completion for sequence " << sequence;
        EXPECT_LE(r->status, kLastStatus) << status_text(*r);
        ++answered;
      }
    }
    EXPECT_EQ(hostile->run(Opcode::Nop).status, uint32_t(Status::Ok));
  });
  EXPECT_EQ(answered, 40u * 24u);
  platform->stop();
  EXPECT_GT(platform->counter("bridge", "errors"), 0u);
}

// Lengths chosen so that address + length wraps around 2^64 (or lands just past the window).
TEST_F(Hostile, WrappingLengthsAreRefused) {
  ASSERT_TRUE(victim && hostile);
  while_victim_computes([&] {
    RawClient& client = hostile->client();
    std::vector<device::ParamLayout> layout;
    const uint64_t vec_add = hostile->function("vec_add", layout);
    const uint64_t module = hostile->module();
    const uint64_t mapped = hostile->map(4096);
    const uint64_t host = client.allocate(4096);
    const uint64_t wrap = ~uint64_t{0} - host + 2;  // host + wrap == 1 (mod 2^64)
    const uint64_t device_wrap = ~uint64_t{0} - mapped + 2;
    expect_refused(hostile->run(Opcode::Memcpy, mapped, host, wrap, kH2D), "memcpy h2d host wrap");
    expect_refused(hostile->run(Opcode::Memcpy, host, mapped, wrap, kD2H), "memcpy d2h host wrap");
    expect_refused(hostile->run(Opcode::Memcpy, mapped, host, device_wrap, kH2D), "memcpy device wrap");
    expect_refused(hostile->run(Opcode::Memcpy, mapped, mapped, device_wrap, uint64_t(device::CopyDirection::DeviceToDevice)),
                   "memcpy d2d wrap");
    expect_refused(hostile->run(Opcode::Memset, mapped, device_wrap, 0), "memset wrap");
    expect_refused(hostile->run(Opcode::Memset, mapped, ~uint64_t{0}, 0), "memset all of memory");
    expect_refused(hostile->run(Opcode::LoadModule, host, wrap), "load_module wrap");
    expect_refused(hostile->run(Opcode::GetFunction, module, host, wrap), "get_function name wrap");
    expect_refused(hostile->run(Opcode::GetFunction, module, client.put_text("vec_add"), 7, ~uint64_t{0} - 16),
                   "get_function layout buffer wraps");
    expect_refused(hostile->run(Opcode::GetSymbol, module, host, wrap), "get_symbol name wrap");
    expect_refused(hostile->run(Opcode::Prefetch, mapped, device_wrap, 0), "prefetch wrap");
    expect_refused(hostile->run(Opcode::MemAdvise, mapped, device_wrap, 1, 0), "mem_advise wrap");
    expect_refused(hostile->run(Opcode::HostAccess, mapped, device_wrap, 0, host), "host_access wrap");
    expect_refused(hostile->run(Opcode::MemMap, ~uint64_t{0}), "mem_map of 2^64 - 1 bytes");
    expect_refused(hostile->run(Opcode::MemMapHost, host & ~uint64_t{4095}, wrap, 0x7000'0000'0000), "mem_map_host wrap");
    // A launch whose argument and printf buffers wrap.
    device::Command command{};
    command.opcode = uint32_t(Opcode::Launch);
    command.body.launch.function = vec_add;
    command.body.launch.grid[0] = command.body.launch.grid[1] = command.body.launch.grid[2] = 1;
    command.body.launch.block[0] = command.body.launch.block[1] = command.body.launch.block[2] = 1;
    command.body.launch.args_address = host;
    command.body.launch.args_bytes = wrap;
    expect_refused(client.execute(0, command), "launch arguments wrap");
    command.body.launch.args_bytes = 0;
    command.body.launch.printf_address = host;
    command.body.launch.printf_bytes = wrap;
    expect_refused(client.execute(0, command), "launch printf buffer wraps");
    EXPECT_EQ(hostile->run(Opcode::Nop).status, uint32_t(Status::Ok));
  });
}

// A client names the other client's window slice (host addresses) and device allocations. Each
// channel is its own context with its own device address space: the victim's device address means
// nothing in the hostile's context (refused, or a kernel's illegal address), and once the hostile
// maps memory at the same numbers, writing it touches only the hostile's own bytes.
TEST_F(Hostile, AnotherClientsWindowAndMemoryAreOutOfReach) {
  ASSERT_TRUE(victim && hostile);
  // The victim's data: a device buffer (above a 1 MiB one, so that its address lies past the
  // hostile's first small mapping) and a host (window) buffer, with known contents.
  RawClient& v = victim->client();
  const uint64_t bytes = 4096;
  victim->map(uint64_t{1} << 20);
  const uint64_t victim_device = victim->map(bytes);
  const uint64_t victim_host = v.allocate(bytes);
  auto* victim_bytes = static_cast<uint8_t*>(v.at(victim_host));
  for (uint64_t i = 0; i < bytes; ++i) victim_bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  ASSERT_EQ(victim->run(Opcode::Memcpy, victim_device, victim_host, bytes, kH2D).status, uint32_t(Status::Ok));
  const std::vector<uint8_t> expected(victim_bytes, victim_bytes + bytes);

  while_victim_computes([&] {
    RawClient& h = hostile->client();
    const uint64_t own_device = hostile->map(bytes);
    ASSERT_LT(own_device + bytes, victim_device) << "the hostile's mapping must not cover the victim's address yet";
    const uint64_t own_host = h.allocate(bytes);
    std::memset(h.at(own_host), 0xEE, bytes);
    // Host addresses in the victim's slice (region offsets are the same in every process).
    expect_refused(hostile->run(Opcode::Memcpy, own_device, victim_host, bytes, kH2D), "read the victim's window");
    expect_refused(hostile->run(Opcode::Memcpy, victim_host, own_device, bytes, kD2H), "write the victim's window");
    expect_refused(hostile->run(Opcode::SemaphoreSignal, victim_host, 1), "signal a cell in the victim's window");
    expect_refused(hostile->run(Opcode::LoadModule, victim_host, 64), "a module image in the victim's window");
    // The victim's device address, unmapped in the hostile's context.
    expect_refused(hostile->run(Opcode::Memcpy, own_host, victim_device, bytes, kD2H), "read the victim's device memory");
    expect_refused(hostile->run(Opcode::Memcpy, victim_device, own_host, bytes, kH2D), "write the victim's device memory");
    expect_refused(hostile->run(Opcode::Memset, victim_device, bytes, 0xEE), "memset the victim's device memory");
    expect_refused(hostile->run(Opcode::Memcpy, own_device, victim_device, bytes,
                                uint64_t(device::CopyDirection::DeviceToDevice)),
                   "copy from the victim's device memory");
    expect_refused(hostile->run(Opcode::Prefetch, victim_device, bytes, 0), "prefetch the victim's memory");
    expect_refused(hostile->run(Opcode::MemUnmap, victim_device), "unmap the victim's memory");
    expect_refused(hostile->run(Opcode::IpcExport, victim_device), "export the victim's memory");
    // Kernels that write or read the victim's address: illegal addresses.
    std::vector<device::ParamLayout> layout;
    const uint64_t vec_add = hostile->function("vec_add", layout);
    const auto stray = hostile->launch(vec_add, 1, 32, pack(layout, own_device, own_device, victim_device, 32));
    EXPECT_EQ(stray.status, uint32_t(Status::IllegalAddress)) << status_text(stray);
    const auto peek = hostile->launch(vec_add, 1, 32, pack(layout, victim_device, victim_device, own_device, 32));
    EXPECT_EQ(peek.status, uint32_t(Status::IllegalAddress)) << status_text(peek);
    // Now the hostile maps memory over the victim's numbers and overwrites all of it, by copy,
    // memset and kernel: its own memory, not the victim's.
    const uint64_t cover = hostile->map(uint64_t{4} << 20);
    ASSERT_LE(cover, victim_device);
    ASSERT_GE(cover + (uint64_t{4} << 20), victim_device + bytes) << "the new mapping covers the victim's address";
    EXPECT_EQ(hostile->run(Opcode::Memset, cover, uint64_t{4} << 20, 0xEE).status, uint32_t(Status::Ok));
    EXPECT_EQ(hostile->run(Opcode::Memcpy, victim_device, own_host, bytes, kH2D).status, uint32_t(Status::Ok));
    const auto own_write = hostile->launch(vec_add, 1, 32, pack(layout, own_device, own_device, victim_device, 32));
    EXPECT_EQ(own_write.status, uint32_t(Status::Ok)) << status_text(own_write);
    EXPECT_EQ(hostile->run(Opcode::Nop).status, uint32_t(Status::Ok));
  });
  // Neither the victim's window nor its device memory changed.
  EXPECT_EQ(std::vector<uint8_t>(victim_bytes, victim_bytes + bytes), expected);
  const uint64_t check = v.allocate(bytes);
  ASSERT_EQ(victim->run(Opcode::Memcpy, check, victim_device, bytes, kD2H).status, uint32_t(Status::Ok));
  const auto* readback = static_cast<const uint8_t*>(v.at(check));
  EXPECT_EQ(std::vector<uint8_t>(readback, readback + bytes), expected);
}

// Ring indices far past what was written, and a completion head past the tail: the hostile
// channel is faulted with RingCorrupt; the victim is not touched.
TEST_F(Hostile, OutOfRangeRingIndicesFaultOnlyTheirChannel) {
  ASSERT_TRUE(victim && hostile);
  while_victim_computes([&] {
    RawClient& h = hostile->client();
    device::Channel& ch = h.channel();
    __atomic_store_n(&ch.queues[5].tail.value, device::kQueueEntries + 1, __ATOMIC_RELEASE);
    h.ring(device::kPlatformPeerId, device::kVectorCommand);
    const auto fault = h.wait(0, false);
    ASSERT_TRUE(fault.has_value());
    EXPECT_EQ(fault->status, uint32_t(Status::RingCorrupt)) << status_text(*fault);
    EXPECT_EQ(__atomic_load_n(&ch.control.state, __ATOMIC_ACQUIRE), uint32_t(device::ChannelState::Faulted));
  });
  // A second hostile client corrupts its completion head instead.
  auto second = connect_open(platform->socket_path());
  ASSERT_NE(second, nullptr);
  device::Channel& ch = second->channel();
  __atomic_store_n(&ch.completions.head.value, 0x8000'0000u, __ATOMIC_RELEASE);
  second->ring(device::kPlatformPeerId, device::kVectorCommand);
  EXPECT_TRUE(eventually([&] {
    return __atomic_load_n(&ch.control.state, __ATOMIC_ACQUIRE) == uint32_t(device::ChannelState::Faulted);
  }));
  std::atomic<bool> stop{false};
  EXPECT_GE(victim_rounds(*victim, 1, stop), 1);
}

// Doorbells rung as fast as a client can, on the platform and on the victim's own vectors.
TEST_F(Hostile, DoorbellFloodCostsNothingButTime) {
  ASSERT_TRUE(victim && hostile);
  const int64_t victim_peer = victim->client().peer_id();
  uint64_t rung = 0;
  while_victim_computes([&] {
    RawClient& h = hostile->client();
    for (int i = 0; i < 20000; ++i) {
      rung += h.ring(device::kPlatformPeerId, device::kVectorCommand);
      rung += h.ring(victim_peer, device::kVectorCompletion);
    }
    EXPECT_EQ(hostile->run(Opcode::Nop).status, uint32_t(Status::Ok));
  });
  EXPECT_EQ(rung, 40000u);
}

// A client that queues commands and never reads a completion: its rings fill and its queues pause;
// the victim is served throughout, and leaving frees the channel.
TEST_F(Hostile, NeverReadingCompletionsStallsOnlyThatClient) {
  ASSERT_TRUE(victim && hostile);
  const uint32_t channel = hostile->client().channel_index();
  while_victim_computes([&] {
    RawClient& h = hostile->client();
    device::Channel& ch = h.channel();
    uint32_t submitted = 0;
    // Commands run only while their client waits: each round fills every queue and ends queue 0
    // with a HostWaiting (for everything before it), then rings; the completion head never moves.
    for (int round = 0; round < 12; ++round) {
      for (uint32_t q = 0; q < device::kQueuesPerChannel; ++q) {
        device::CommandQueue& queue = ch.queues[q];
        const uint32_t head = __atomic_load_n(&queue.head.value, __ATOMIC_ACQUIRE);
        uint32_t tail = __atomic_load_n(&queue.tail.value, __ATOMIC_ACQUIRE);
        while (tail - head < device::kQueueEntries) {
          device::Command command{};
          const bool last = tail - head == device::kQueueEntries - 1;
          if (q == 0 && last) command.opcode = uint32_t(Opcode::HostWaiting);
          command.sequence = 1000 + ++submitted;
          std::memcpy(&queue.entries[tail % device::kQueueEntries], &command, sizeof command);
          ++tail;
        }
        __atomic_store_n(&queue.tail.value, tail, __ATOMIC_RELEASE);
      }
      h.ring(device::kPlatformPeerId, device::kVectorCommand);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GT(submitted, device::kCompletionEntries);
    // The platform never wrote past what the client read: the completion ring holds at most one lap.
    EXPECT_LE(__atomic_load_n(&ch.completions.tail.value, __ATOMIC_ACQUIRE) -
                  __atomic_load_n(&ch.completions.head.value, __ATOMIC_ACQUIRE),
              device::kCompletionEntries);
  });
  hostile.reset();  // leaves without Goodbye, completions unread
  // Two releases: the fresh client of while_victim_computes (a higher channel) and the hostile's.
  EXPECT_TRUE(eventually([&] { return platform->server().activity().channels_released >= 2; }));
  auto next = connect_open(platform->socket_path());
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->channel_index(), channel);
}

// A tail moved backwards (still within one ring of its head) after the platform looked at the
// entries beyond it: the platform neither walks the ring around (2^32 entries, which stalled every
// client for minutes; found by the command fuzzer) nor stalls anyone.
TEST_F(Hostile, TailMovedBackwardsStallsNoOne) {
  ASSERT_TRUE(victim && hostile);
  RawClient& h = hostile->client();
  device::CommandQueue& queue = h.channel().queues[3];
  // Blocks the client until the platform answers; returns once it runs again, so that commands
  // queued next are not handed to a queue's worker while the client still counts as waiting
  // (RawClient::execute returns on its command's completion, before its HostWaiting's).
  auto settle = [&] { return h.wait(h.submit(0, RawClient::command(Opcode::HostWaiting)), false).has_value(); };
  ASSERT_TRUE(settle());
  const auto start = std::chrono::steady_clock::now();
  // Three rounds (the old walk took seconds each, far more under load): a hundred Nops queued and
  // looked at, the tail moved back to the first, a Nop of queue 0 answered, the first one run.
  for (int round = 0; round < 3; ++round) {
    const uint32_t head = __atomic_load_n(&queue.head.value, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < 100; ++i) {
      device::Command command = RawClient::command(Opcode::Nop);
      command.sequence = 5000 + 100 * round + i;
      std::memcpy(&queue.entries[(head + i) % device::kQueueEntries], &command, sizeof command);
    }
    __atomic_store_n(&queue.tail.value, head + 100, __ATOMIC_RELEASE);
    const uint64_t rung = platform->server().activity().doorbells_received;
    h.ring(device::kPlatformPeerId, device::kVectorCommand);
    ASSERT_TRUE(eventually([&] { return platform->server().activity().doorbells_received > rung; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the platform looks at the hundred
    __atomic_store_n(&queue.tail.value, head + 1, __ATOMIC_RELEASE);
    h.ring(device::kPlatformPeerId, device::kVectorCommand);
    const uint64_t nop = h.submit(0, RawClient::command(Opcode::Nop));
    ASSERT_TRUE(settle()) << "round " << round << ": channel state "
                          << __atomic_load_n(&h.channel().control.state, __ATOMIC_ACQUIRE);
    const auto done = h.wait(nop, false);
    ASSERT_TRUE(done.has_value());
    EXPECT_EQ(done->status, uint32_t(Status::Ok)) << done->message;
    ASSERT_TRUE(eventually([&] { return __atomic_load_n(&queue.head.value, __ATOMIC_ACQUIRE) == head + 1; }));
  }
  // A liveness bound, not a speed figure: the fixed platform needs a fraction of a second here.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(12));
  std::atomic<bool> stop{false};
  EXPECT_GE(victim_rounds(*victim, 1, stop), 1);
}

// A client that disconnects while its kernel runs (no Goodbye): the kernel is cancelled, the
// channel freed; the victim's kernels run on, with correct results.
TEST_F(Hostile, LeavingMidKernelCancelsOnlyThatClientsWork) {
  ASSERT_TRUE(victim && hostile);
  // The hostile's endless kernel starts before the victim launches anything, so that the first
  // kernel started is surely the hostile's.
  RawClient& h = hostile->client();
  std::vector<device::ParamLayout> layout;
  const uint64_t spin = hostile->function("spin", layout);
  const uint64_t buffer = hostile->map(4096);
  device::Command command{};
  command.opcode = uint32_t(Opcode::Launch);
  command.body.launch.function = spin;
  command.body.launch.grid[0] = command.body.launch.grid[1] = command.body.launch.grid[2] = 1;
  command.body.launch.block[0] = 32;
  command.body.launch.block[1] = command.body.launch.block[2] = 1;
  const std::vector<uint8_t> args = pack(layout, buffer, static_cast<long long>(1) << 40);
  command.body.launch.args_address = h.allocate(args.size(), 16);
  std::memcpy(h.at(command.body.launch.args_address), args.data(), args.size());
  command.body.launch.args_bytes = args.size();
  h.submit(1, command);
  h.submit(0, RawClient::command(Opcode::HostWaiting));  // lets simulated time run the kernel
  ASSERT_TRUE(eventually([&] { return platform->server().activity().kernels_started >= 1; }));
  while_victim_computes([&] {
    hostile.reset();
    EXPECT_TRUE(eventually([&] { return platform->server().activity().channels_released >= 1; }));
  });
  platform->stop();
  EXPECT_EQ(platform->counter("gpu.command_processor", "kernels_cancelled"), 1u);
}

// More clients than channels: the extra one is told there is no free channel; the others keep
// working, and a channel given back is taken by the next client.
TEST_F(Hostile, MoreClientsThanChannelsAreRefusedClearly) {
  ASSERT_TRUE(victim && hostile);
  std::vector<std::unique_ptr<RawClient>> crowd;
  for (uint32_t i = 2; i < device::kMaxChannels; ++i) {
    crowd.push_back(connect_open(platform->socket_path()));
    ASSERT_NE(crowd.back(), nullptr);
  }
  std::string error;
  auto extra = RawClient::connect(platform->socket_path(), &error);
  ASSERT_NE(extra, nullptr) << error;
  EXPECT_FALSE(extra->open_channel(&error));
  EXPECT_EQ(error, "no free channel");
  std::atomic<bool> stop{false};
  EXPECT_GE(victim_rounds(*victim, 1, stop), 1);
  const uint32_t freed = crowd.back()->channel_index();
  crowd.pop_back();
  EXPECT_TRUE(eventually([&] { return platform->server().activity().channels_released >= 1; }));
  auto late = connect_open(platform->socket_path());
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->channel_index(), freed);
}

}  // namespace
}  // namespace gpuvp::test
