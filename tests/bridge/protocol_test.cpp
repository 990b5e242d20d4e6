// The ivshmem server protocol as QEMU's docs/specs/ivshmem-spec.rst describes it, checked by a
// raw client, plus the region header a client finds in the shared memory.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "tests/bridge/platform_fixture.h"

namespace gpuvp::test {
namespace {

TEST(IvshmemProtocol, SocketLivesInAPrivateDirectory) {
  RunningPlatform platform;
  const std::string path = platform.socket_path();
  struct stat socket_info{};
  ASSERT_EQ(::stat(path.c_str(), &socket_info), 0);
  EXPECT_TRUE(S_ISSOCK(socket_info.st_mode));
  EXPECT_EQ(socket_info.st_mode & 0777, 0600u);
  struct stat dir_info{};
  ASSERT_EQ(::stat(path.substr(0, path.rfind('/')).c_str(), &dir_info), 0);
  EXPECT_EQ(dir_info.st_mode & 0777, 0700u);
}

TEST(IvshmemProtocol, SocketDirectoryIsRemovedWithTheServer) {
  std::string directory;
  {
    RunningPlatform platform;
    directory = platform.socket_path().substr(0, platform.socket_path().rfind('/'));
    ASSERT_EQ(::access(directory.c_str(), F_OK), 0);
  }
  EXPECT_NE(::access(directory.c_str(), F_OK), 0);
}

TEST(IvshmemProtocol, HandshakeComesInSpecOrder) {
  RunningPlatform platform;
  std::string error;
  auto client = RawClient::connect(platform.socket_path(), &error);
  ASSERT_NE(client, nullptr) << error;
  const auto& messages = client->handshake();
  // version, id, shm, platform x kVectors, own x kVectors
  ASSERT_EQ(messages.size(), 3u + 2 * device::kVectors);
  EXPECT_EQ(messages[0].value, 0);
  EXPECT_EQ(messages[0].fd, -1);
  EXPECT_GE(messages[1].value, 1);
  EXPECT_LE(messages[1].value, 65535);
  EXPECT_EQ(messages[1].fd, -1);
  EXPECT_EQ(messages[2].value, -1);
  EXPECT_GE(messages[2].fd, 0);
  for (uint32_t v = 0; v < device::kVectors; ++v) {
    EXPECT_EQ(messages[3 + v].value, device::kPlatformPeerId) << v;
    EXPECT_GE(messages[3 + v].fd, 0) << v;
    EXPECT_EQ(messages[3 + device::kVectors + v].value, client->peer_id()) << v;
    EXPECT_GE(messages[3 + device::kVectors + v].fd, 0) << v;
  }
  EXPECT_EQ(client->region_bytes(), platform.server().region_bytes());
  EXPECT_EQ(client->region_bytes(), uint64_t{64} << 20);
}

TEST(IvshmemProtocol, PeersLearnOfEachOtherAndOfDepartures) {
  RunningPlatform platform;
  std::string error;
  auto first = RawClient::connect(platform.socket_path(), &error);
  ASSERT_NE(first, nullptr) << error;
  auto second = RawClient::connect(platform.socket_path(), &error);
  ASSERT_NE(second, nullptr) << error;
  EXPECT_NE(first->peer_id(), second->peer_id());

  // The second client got the platform's and the first client's vectors, in that order.
  const auto& messages = second->handshake();
  ASSERT_EQ(messages.size(), 3u + 3 * device::kVectors);
  for (uint32_t v = 0; v < device::kVectors; ++v) {
    EXPECT_EQ(messages[3 + v].value, device::kPlatformPeerId);
    EXPECT_EQ(messages[3 + device::kVectors + v].value, first->peer_id());
    EXPECT_GE(messages[3 + device::kVectors + v].fd, 0);
  }
  // The first client is told of the new peer, once per vector, each with an fd.
  std::vector<int> announced;
  for (uint32_t v = 0; v < device::kVectors; ++v) {
    auto message = read_message(first->socket(), std::chrono::milliseconds(5000));
    ASSERT_TRUE(message.has_value());
    EXPECT_EQ(message->value, second->peer_id());
    ASSERT_GE(message->fd, 0);
    announced.push_back(message->fd);
  }
  // Those fds reach the second client's own vectors: a doorbell from first to second.
  const uint64_t one = 1;
  ASSERT_EQ(::write(announced[1], &one, sizeof one), static_cast<ssize_t>(sizeof one));
  EXPECT_TRUE(second->wait_own(1, std::chrono::milliseconds(5000)));
  for (int fd : announced) ::close(fd);

  // The second leaves: the first gets its id without an fd.
  const int64_t departed = second->peer_id();
  second.reset();
  auto message = read_message(first->socket(), std::chrono::milliseconds(5000));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->value, departed);
  EXPECT_EQ(message->fd, -1);
  EXPECT_TRUE(eventually([&] { return platform.server().activity().peers_connected == 1; }));
}

TEST(IvshmemProtocol, DoorbellsReachThePlatform) {
  RunningPlatform platform;
  std::string error;
  auto client = RawClient::connect(platform.socket_path(), &error);
  ASSERT_NE(client, nullptr) << error;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->ring(device::kPlatformPeerId, device::kVectorCommand));
  // A doorbell is an eventfd write: the platform counts every wake-up it drained.
  EXPECT_TRUE(eventually([&] { return platform.server().activity().doorbells_received >= 1; }));
  platform.stop();
  EXPECT_GE(platform.counter("bridge", "doorbells_received"), 1u);
  EXPECT_LE(platform.counter("bridge", "doorbells_received"), 3u);
}

TEST(RegionHeader, DescribesGeometryAndDevice) {
  const PlatformParams params = test_params({"gpu.sm.count=80", "host.query_quantum=5 us"});
  RunningPlatform platform(params);
  std::string error;
  auto client = RawClient::connect(platform.socket_path(), &error);
  ASSERT_NE(client, nullptr) << error;
  const device::RegionHeader& h = client->header();
  EXPECT_EQ(h.magic, device::kMagic);
  EXPECT_EQ(h.version, device::kVersion);
  EXPECT_EQ(h.header_bytes, device::kHeaderBytes);
  EXPECT_EQ(h.region_bytes, client->region_bytes());
  EXPECT_EQ(h.channels_offset, device::kHeaderBytes);
  EXPECT_EQ(h.channel_bytes, sizeof(device::Channel));
  EXPECT_EQ(h.max_channels, device::kMaxChannels);
  EXPECT_EQ(h.queues_per_channel, device::kQueuesPerChannel);
  EXPECT_GE(h.window_offset, h.channels_offset + h.channel_bytes * h.max_channels);
  EXPECT_LE(h.window_offset + h.window_slice_bytes * h.max_channels, h.region_bytes);
  EXPECT_GE(h.window_slice_bytes, uint64_t{1} << 20);
  EXPECT_EQ(h.platform_state, static_cast<uint32_t>(device::PlatformState::Ready));
  EXPECT_EQ(h.platform_pid, static_cast<uint32_t>(::getpid()));
  EXPECT_STREQ(h.device.name, "gpuvp V100");
  EXPECT_EQ(h.device.compute_capability, 70u);
  EXPECT_EQ(h.device.sm_count, 80u);
  EXPECT_EQ(h.device.max_threads_per_block, 1024u);
  EXPECT_EQ(h.device.warp_size, 32u);
  EXPECT_EQ(h.device.max_threads_per_sm, 2048u);
  EXPECT_EQ(h.device.l2_bytes, 6u << 20);
  EXPECT_EQ(h.device.global_memory_bytes, uint64_t{16} << 30);
  EXPECT_EQ(h.device.core_clock_khz, 1312000u);
  EXPECT_EQ(h.device.memory_bus_width_bits, 4096u);
  EXPECT_EQ(h.query_quantum_ps, 5'000'000u);  // host.query_quantum
  // Every channel starts Free with zeroed rings.
  for (uint32_t i = 0; i < device::kMaxChannels; ++i) {
    const auto* ch = reinterpret_cast<const device::Channel*>(client->region() + h.channels_offset + h.channel_bytes * i);
    EXPECT_EQ(ch->control.state, static_cast<uint32_t>(device::ChannelState::Free));
    EXPECT_EQ(ch->completions.tail.value, 0u);
  }
}

TEST(RegionHeader, HeartbeatAdvancesWhileAlive) {
  RunningPlatform platform;
  std::string error;
  auto client = RawClient::connect(platform.socket_path(), &error);
  ASSERT_NE(client, nullptr) << error;
  const auto& heartbeat = client->header().heartbeat;
  const uint64_t first = __atomic_load_n(&heartbeat, __ATOMIC_ACQUIRE);
  // At least every 100 ms: three beats within a generous bound.
  EXPECT_TRUE(eventually([&] { return __atomic_load_n(&heartbeat, __ATOMIC_ACQUIRE) >= first + 3; },
                         std::chrono::milliseconds(3000)));
}

TEST(RegionHeader, SaysStoppingWhenThePlatformGoes) {
  std::string error;
  std::unique_ptr<RawClient> client;
  {
    RunningPlatform platform;
    client = RawClient::connect(platform.socket_path(), &error);
    ASSERT_NE(client, nullptr) << error;
  }
  EXPECT_EQ(client->header().platform_state, static_cast<uint32_t>(device::PlatformState::Stopping));
  // And the socket closes: the client sees EOF.
  EXPECT_FALSE(read_message(client->socket(), std::chrono::milliseconds(2000)).has_value());
}

}  // namespace
}  // namespace gpuvp::test
