// PlatformServer: the whole gpuvp platform behind one ivshmem socket — the bridge (ivshmem server,
// shared region, channel service), the PCIe link model and the GPU's command processor.
//
//   gpuvp::stats::Registry stats;
//   gpuvp::bridge::PlatformServer server(params, stats);   // creates socket + shared region
//   setenv(gpuvp::device::kSocketEnvironmentVariable, server.socket_path().c_str(), 1);
//   std::thread app(...);                                   // programs connect as ivshmem peers
//   server.run([&] { return app_finished.load(); });        // simulate until the predicate holds
//   // ...or from any thread (or a signal handler's self-pipe owner): server.stop();
//   std::ofstream("stats.json") << stats.json();            // after run() returns
//
// One PlatformServer per process at a time (it owns a fresh SystemC context); run() may be
// called again after it returned. Everything is torn down (socket directory removed) by the
// destructor.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "platform/platform_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::parallel {
class RankExchange;
}

namespace gpuvp {
class TraceObserver;
}

namespace gpuvp::bridge {

// Thread-safe counters for monitoring a running platform (tests, `gpuvp serve`).
struct PlatformActivity {
  uint64_t peers_connected = 0;     // ivshmem peers connected now (the platform not included)
  uint64_t peers_seen = 0;          // peers that ever connected
  uint64_t channels_active = 0;     // channels Claimed or Active now
  uint64_t channels_released = 0;   // channels returned to Free since start
  uint64_t commands_completed = 0;  // completion records posted since start
  uint64_t kernels_started = 0;     // launches handed to the executor since start
  uint64_t doorbells_received = 0;  // command doorbells rung on the platform since start
};

class PlatformServer {
 public:
  // Builds the platform and starts serving the socket (clients may connect before run(); their
  // commands execute once run() is called). Throws std::runtime_error when the socket or the
  // shared region cannot be created.
  // `tracer` (optional, outlives the server): transactions, kernels and CTAs are traced to it.
  // `listening` (optional) is called with the socket's path as soon as the socket accepts
  // connections, before the GPU model is built: a program started there loads and prepares its
  // data while the platform is built (its handshake completes once the platform serves).
  PlatformServer(const PlatformParams& params, stats::Registry& stats, TraceObserver* tracer = nullptr,
                 const std::function<void(const std::string& socket_path)>& listening = {});
  ~PlatformServer();
  PlatformServer(const PlatformServer&) = delete;
  PlatformServer& operator=(const PlatformServer&) = delete;

  // Absolute path of the UNIX socket (inside a private 0700 directory; the socket is 0600).
  const std::string& socket_path() const;
  // Bytes of the shared region (a power of two).
  uint64_t region_bytes() const;

  // Runs the simulation in the calling thread until stop() is called or `stop_when` returns
  // true. `stop_when` is evaluated in the calling thread whenever the platform wakes and at
  // least every 100 ms. While no client work is pending the thread sleeps (no spinning).
  void run(std::function<bool()> stop_when = {});
  // Asks run() to return as soon as possible. Thread-safe; async-signal-safe (writes an eventfd).
  void stop();

  // Simulated time now, in picoseconds (only meaningful from the run() thread or after run()).
  uint64_t simulated_ps() const;
  PlatformActivity activity() const;  // thread-safe
  // The end-of-run report on kernels, lines starting with `prefix`: which model ran the launches
  // (those that fell back to the functional model counted and listed per kernel name with the
  // reason) and the launches that faulted, per kernel name with the first message (call when
  // run() is not running). Each fallback and fault is also told on stderr the first time per
  // kernel name.
  std::string kernel_report(const std::string& prefix) const;

  // SM partitions in several ranks (platform/parallel/rank_exchange.h; before run()): this
  // process steps the SMs `exchange` gives its rank and exchanges their windows with the other
  // ranks, each of which runs the same platform and host program. Throws std::invalid_argument
  // without the windowed timing model.
  void set_rank_exchange(parallel::RankExchange* exchange);

  // Convenience: the registry's JSON and summary (call when run() is not running).
  std::string stats_json() const;
  std::string stats_summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuvp::bridge
