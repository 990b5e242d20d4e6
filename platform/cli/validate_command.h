// `gpuvp validate [--config v100] [--set k=v]... [--json out.json]`: runs the microbenchmarks of
// sw/workloads/ubench on the GPU timing model (models/gpu/gpu_timing) and prints, per figure, the
// model's value beside the published V100 reference and the deviation: latencies both from
// kernel cycles (two chain lengths) and from clock64() read inside a timed kernel; then the
// application table (validate_applications.h).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "platform/cli/config_options.h"
#include "platform/cli/progress_option.h"
#include "platform/config/config.h"

namespace gpuvp::cli {

class ValidateCommand {
 public:
  // Registers the `validate` subcommand on `app`.
  ValidateCommand(CLI::App& app, const config::ConfigLoader& loader);

  bool selected() const { return command_->parsed(); }
  // Prints the table; 0 when every benchmark ran (deviations do not fail it), 1 otherwise.
  // Throws config::ConfigError for a bad configuration.
  int execute() const;

 private:
  CLI::App* command_;
  ProgressOption progress_;
  const config::ConfigLoader& loader_;
  ConfigOptions config_options_;
  std::string ptx_path_;
  std::string applications_ptx_path_;
  std::string cubin_path_;
  std::string applications_cubin_path_;
  bool quick_ = false;
};

}  // namespace gpuvp::cli
