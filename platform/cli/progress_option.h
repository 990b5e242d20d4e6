// `--progress` / `--no-progress` for the commands that run long simulations (run, boot,
// validate): the one-line progress display of platform/stats/progress.h, drawn by default only
// when stderr is a terminal.
#pragma once

#include <CLI/CLI.hpp>

#include "platform/stats/progress.h"

namespace gpuvp::cli {

struct ProgressOption {
  progress::Mode mode = progress::Mode::kAuto;

  void add_to(CLI::App& command) {
    CLI::Option* on = command.add_flag_callback(
        "--progress", [this] { mode = progress::Mode::kOn; },
        "show the one-line progress display on stderr even when it is not a terminal");
    CLI::Option* off = command.add_flag_callback(
        "--no-progress", [this] { mode = progress::Mode::kOff; },
        "never show the progress display (default: shown when stderr is a terminal)");
    on->excludes(off);
  }
};

}  // namespace gpuvp::cli
