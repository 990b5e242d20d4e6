// `gpuvp serve`: keep a platform up for programs started separately.
#pragma once

#include <string>

#include "platform/platform_params.h"

namespace gpuvp::bridge {

// Starts a PlatformServer, prints the socket path (and an `export GPUVP_SOCKET=...` line), sets
// GPUVP_SOCKET for child processes, and serves until SIGINT or SIGTERM (taken through a signalfd
// owned here). Then prints the statistics summary and writes the JSON to `stats_path` (if not
// empty), with one statistics scope per kernel name, or per launch with `stats_per_launch`.
// Returns the process exit code.
int serve(const PlatformParams& params, const std::string& config_name, const std::string& stats_path,
          bool stats_per_launch = false);

}  // namespace gpuvp::bridge
