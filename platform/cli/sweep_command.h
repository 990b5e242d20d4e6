// `gpuvp sweep SPEC [-o DIR] [-j N] [--quiet] [--retry-failed]`: run a design-space sweep
// (platform/sweep/sweep_spec.h) point by point, as parallel `gpuvp run` processes, resumably;
// `--mpi` under mpirun, `--emit-slurm` / `--point I` / `--merge` for SLURM job arrays,
// `--list` to print the points without running them.
// `gpuvp plot RESULTS [--x KNOB] [--y METRIC] [--baseline K=V,...] [-o PREFIX]`: PNG and SVG
// charts of a sweep's results (platform/sweep/plot_sweep.py, through Debian's matplotlib).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "platform/config/config.h"

namespace gpuvp::cli {

class SweepCommand {
 public:
  SweepCommand(CLI::App& app, const config::ConfigLoader& loader);
  bool selected() const { return command_->parsed(); }
  // Exit code: 0 every point ok, 2 some point not ok (or missing), 1 a bad spec or usage,
  // 130 interrupted.
  int execute() const;

 private:
  CLI::App* command_;
  const config::ConfigLoader& loader_;
  std::string spec_path_;
  std::string out_dir_;
  unsigned jobs_ = 1;
  bool quiet_ = false;
  bool retry_failed_ = false;
  bool mpi_ = false;
  double rank_timeout_s_ = 60;
  bool emit_slurm_ = false;
  bool merge_ = false;
  bool list_ = false;
  long point_ = -1;
};

class PlotCommand {
 public:
  PlotCommand(CLI::App& app, const config::ConfigLoader& loader);
  bool selected() const { return command_->parsed(); }
  int execute() const;

 private:
  CLI::App* command_;
  const config::ConfigLoader& loader_;
  std::string results_;
  std::string x_;
  std::string y_;
  std::string baseline_;
  std::string out_prefix_;
};

}  // namespace gpuvp::cli
