// A running PlatformServer for a test: built from the v100 preset (plus overrides), simulated on
// a background thread, stopped and joined at the end. Tests talk to it as ivshmem clients.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "platform/bridge/platform_server.h"
#include "platform/config/config.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"
#include "tests/bridge/test_client.h"

namespace gpuvp::test {

inline PlatformParams test_params(const std::vector<std::string>& overrides = {}) {
  const config::KnobRegistry registry = build_knob_registry();
  const config::ConfigLoader loader(registry, config::default_preset_dirs());
  std::vector<std::string> all = {"platform.bridge.region_size=64 MiB"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return PlatformParams::load(loader.load("v100", all));
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Polls `condition` every 5 ms until it holds or `timeout` passes (for effects that have no
// event a test can wait on, such as the platform's own bookkeeping).
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class RunningPlatform {
 public:
  explicit RunningPlatform(const PlatformParams& params = test_params())
      : server_(std::make_unique<bridge::PlatformServer>(params, stats_)), thread_([this] { server_->run(); }) {}
  ~RunningPlatform() { stop(); }

  // Stops the simulation thread (idempotent); statistics are safe to read afterwards.
  void stop() {
    if (thread_.joinable()) {
      server_->stop();
      thread_.join();
    }
  }
  bridge::PlatformServer& server() { return *server_; }
  stats::Registry& stats() { return stats_; }
  const std::string& socket_path() const { return server_->socket_path(); }
  uint64_t counter(const std::string& group, const std::string& name) const {
    const stats::Group* g = stats_.find_group(group);
    const stats::Counter* c = g != nullptr ? g->find_counter(name) : nullptr;
    return c != nullptr ? c->value() : ~uint64_t{0};
  }

 private:
  stats::Registry stats_;
  std::unique_ptr<bridge::PlatformServer> server_;
  std::thread thread_;
};

inline std::unique_ptr<RawClient> connect_open(const std::string& socket_path) {
  std::string error;
  auto client = RawClient::connect(socket_path, &error);
  EXPECT_NE(client, nullptr) << error;
  if (client == nullptr) return nullptr;
  EXPECT_TRUE(client->open_channel(&error)) << error;
  return client;
}

}  // namespace gpuvp::test
