// gpuvp-guest: the guest side's helper, run by the guest's init (sw/guest/init.sh).
//
//   gpuvp-guest probe     maps the ivshmem device (guest_transport.h), checks the region header
//                         and that the platform's heartbeat moves; prints "GPUVP-READY ..." (the
//                         driver is ready) or a one-line error and exits 1. Claims no channel, so
//                         that the platform's device statistics are those of the programs alone.
//                         The line names the completion path the driver will use: "completions
//                         msix" (vfio) or "completions polling" (sysfs).
//   gpuvp-guest reclaim   frees the channels of this guest's programs that died without Goodbye
//                         (killed mid-kernel): marks them Abandoned and rings the platform, which
//                         cancels their work, releases their memory and frees the channel.
//   gpuvp-guest roundtrip [N]  claims a channel and runs N (default 1000) Nop commands one at a
//                         time, each waited for (submit, doorbell, the platform's answer, the
//                         completion seen); prints "GPUVP-ROUNDTRIP ..." with the median, mean and
//                         90th percentile in microseconds, the completion path and the interrupts.
// Environment: GPUVP_SOCKET=pci[:address] picks the device (default: the first 1af4:1110).
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpuvp/device.h"
#include "sw/driver/driver.h"
#include "sw/driver/guest_transport.h"

namespace {

namespace dev = gpuvp::device;
using gpuvp::driver::GuestOptions;
using Clock = std::chrono::steady_clock;

template <typename T>
T load_acquire(const T& cell) {
  return __atomic_load_n(&cell, __ATOMIC_ACQUIRE);
}

double uptime_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_BOOTTIME, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) * 1e-6;
}

std::unique_ptr<gpuvp::driver::Transport> open_device() {
  GuestOptions options;
  const char* socket = std::getenv(dev::kSocketEnvironmentVariable);
  if (socket == nullptr || !gpuvp::driver::parse_guest_device(socket, &options)) options = GuestOptions{};
  std::string error;
  auto transport = gpuvp::driver::connect_guest(options, &error);
  if (transport == nullptr) std::fprintf(stderr, "gpuvp-guest: %s\n", error.c_str());
  return transport;
}

const dev::RegionHeader& header_of(const gpuvp::driver::Transport& t) {
  return *reinterpret_cast<const dev::RegionHeader*>(t.region());
}

// The heartbeat moves at least every 100 ms while the platform lives.
bool platform_alive(const dev::RegionHeader& h) {
  const uint64_t first = load_acquire(h.heartbeat);
  const auto deadline = Clock::now() + std::chrono::milliseconds(1500);
  while (Clock::now() < deadline) {
    if (load_acquire(h.heartbeat) != first) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

int probe() {
  auto transport = open_device();
  if (transport == nullptr) return 1;
  const dev::RegionHeader& h = header_of(*transport);
  // The platform is alive when its heartbeat moves and it says Ready.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!platform_alive(h) || load_acquire(h.platform_state) != static_cast<uint32_t>(dev::PlatformState::Ready)) {
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "gpuvp-guest: the platform is not alive (its heartbeat does not move, or it is not Ready)\n");
      return 1;
    }
  }
  const auto completions = gpuvp::driver::guest_completion_report(*transport);
  const bool msix = completions && completions->path == gpuvp::driver::Completions::Msix;
  std::printf("GPUVP-READY peer %u region %llu MiB device %.*s completions %s uptime_ms %.0f\n", transport->peer_id(),
              static_cast<unsigned long long>(transport->region_bytes() >> 20),
              static_cast<int>(sizeof h.device.name), h.device.name, msix ? "msix" : "polling", uptime_ms());
  std::fflush(stdout);
  return 0;
}

int reclaim() {
  auto transport = open_device();
  if (transport == nullptr) return 1;
  const dev::RegionHeader& h = header_of(*transport);
  for (uint32_t c = 0; c < h.max_channels && c < dev::kMaxChannels; ++c) {
    auto* control = reinterpret_cast<dev::ChannelControl*>(transport->region() + h.channels_offset + h.channel_bytes * c);
    const uint32_t state = load_acquire(control->state);
    if (state == static_cast<uint32_t>(dev::ChannelState::Free)) continue;
    if (load_acquire(control->owner_peer) != transport->peer_id()) continue;  // another guest's or program's
    const uint32_t pid = load_acquire(control->owner_pid);
    if (pid != 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;  // owner alive
    if (!platform_alive(h)) {
      // Nobody would free it: the driver of the dead program has already reported the loss.
      std::printf("gpuvp-guest: channel %u of process %u stays claimed: the platform is gone\n", c, pid);
      break;
    }
    uint32_t expected = state;
    if (!__atomic_compare_exchange_n(&control->state, &expected,
                                     static_cast<uint32_t>(dev::ChannelState::Abandoned), false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
      continue;  // changed under us (the platform freed it)
    }
    transport->ring_platform();
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (load_acquire(control->state) == static_cast<uint32_t>(dev::ChannelState::Abandoned)) {
      if (Clock::now() > deadline) {
        std::fprintf(stderr, "gpuvp-guest: the platform did not free channel %u within 10 s\n", c);
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::printf("gpuvp-guest: freed channel %u of process %u, which ended without releasing it\n", c, pid);
  }
  std::fflush(stdout);
  return 0;
}

int roundtrip(int count) {
  auto transport = open_device();
  if (transport == nullptr) return 1;
  const gpuvp::driver::Transport& guest = *transport;  // the driver owns it from here on
  std::string error;
  auto driver = gpuvp::driver::Driver::open(std::move(transport), gpuvp::driver::DriverOptions{}, &error);
  if (driver == nullptr) {
    std::fprintf(stderr, "gpuvp-guest: %s\n", error.c_str());
    return 1;
  }
  std::vector<double> us;
  us.reserve(static_cast<size_t>(count));
  dev::Command nop{};
  nop.opcode = static_cast<uint32_t>(dev::Opcode::Nop);
  for (int i = 0; i < count; ++i) {
    const auto start = Clock::now();
    const gpuvp::driver::Completion done = driver->execute(0, nop);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!done.ok()) {
      std::fprintf(stderr, "gpuvp-guest: Nop %d failed: %s\n", i, done.message.c_str());
      return 1;
    }
  }
  double sum = 0;
  for (double u : us) sum += u;
  std::sort(us.begin(), us.end());
  const auto report = gpuvp::driver::guest_completion_report(guest);
  std::printf("GPUVP-ROUNDTRIP n %d median_us %.1f mean_us %.1f p90_us %.1f completions %s interrupts %llu\n", count,
              us[us.size() / 2], sum / static_cast<double>(us.size()), us[us.size() * 9 / 10],
              report && report->path == gpuvp::driver::Completions::Msix ? "msix" : "polling",
              static_cast<unsigned long long>(report ? report->interrupts : 0));
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "probe" && argc == 2) return probe();
  if (command == "reclaim" && argc == 2) return reclaim();
  if (command == "roundtrip" && argc <= 3) {
    const int count = argc == 3 ? std::atoi(argv[2]) : 1000;
    if (count > 0) return roundtrip(count);
  }
  std::fprintf(stderr, "usage: gpuvp-guest probe | reclaim | roundtrip [N]\n");
  return 2;
}
