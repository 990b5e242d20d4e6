// `gpuvp serve`: keep a platform up for programs started separately.
#pragma once

#include <string>

#include "platform/platform_params.h"

namespace gpuvp::bridge {

// Starts a PlatformServer, prints the socket path (and an `export GPUVP_SOCKET=...` line), sets
// GPUVP_SOCKET for child processes, and serves until SIGINT or SIGTERM (taken through a signalfd
// owned here). Then prints the statistics summary and writes the JSON to `stats_path` (if not
// empty). Returns the process exit code.
int serve(const PlatformParams& params, const std::string& config_name, const std::string& stats_path);

}  // namespace gpuvp::bridge
