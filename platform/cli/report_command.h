// `gpuvp report STATS.json [-o report.html] [--config v100] [--set k=v]...`: a self-contained
// HTML page of charts from a statistics file (platform/report/gpuvp_report.py, matplotlib):
// per kernel a speed-of-light bar (achieved vs peak issue, L1, L2 and HBM bandwidth), the issue
// slots and warp stalls, occupancy and its limiter, cache and TLB hit rates; the unified-memory
// fault and migration timeline when there is one; the run's kernel timeline. The peaks come from
// the configuration, which should be the one the statistics were taken with (default v100).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "platform/cli/config_options.h"
#include "platform/config/config.h"

namespace gpuvp::cli {

class ReportCommand {
 public:
  ReportCommand(CLI::App& app, const config::ConfigLoader& loader);
  bool selected() const { return command_->parsed(); }
  int execute() const;

 private:
  CLI::App* command_;
  const config::ConfigLoader& loader_;
  ConfigOptions config_options_;
  std::string stats_path_;
  std::string output_;
};

}  // namespace gpuvp::cli
