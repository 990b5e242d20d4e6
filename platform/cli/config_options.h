// The --config/--set options every gpuvp command that needs a configuration shares, and the one
// way they are resolved (default preset v100).
#pragma once

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "platform/config/config.h"

namespace gpuvp::cli {

inline constexpr const char* kDefaultPreset = "v100";

struct ConfigOptions {
  std::string config;  // preset name or file
  std::vector<std::string> overrides;
  unsigned threads = 0;  // --threads: sim.threads (0: as configured)

  void add_to(CLI::App& command, bool positional) {
    if (positional) {
      command.add_option("preset", config, "preset name (configs/<name>.yaml) or config file")
          ->default_str(kDefaultPreset);
    }
    command.add_option("--config,-c", config, "preset name or config file (default: v100)");
    command.add_option("--set,-s", overrides, "override one knob: --set gpu.sm.count=80 (repeatable)")
        ->type_name("KEY=VALUE")
        ->allow_extra_args(false);  // one value per --set, so `--set k=v -- ./app -x` ends at `--`
    command.add_option("--threads", threads,
                       "host threads stepping the SMs (same as --set sim.threads=N; results never depend on it)")
        ->check(CLI::Range(1u, 256u));
  }

  config::Config load(const config::ConfigLoader& loader) const {
    const std::string name = config.empty() ? kDefaultPreset : config;
    std::vector<std::string> all = overrides;
    if (threads != 0) all.push_back("sim.threads=" + std::to_string(threads));
    auto resolved = loader.load(name, all);
    spdlog::info("configuration {} from {} with {} override(s)", name, loader.resolve(name).string(), all.size());
    return resolved;
  }
};

}  // namespace gpuvp::cli
