// `gpuvp replay DIR [--config X] [--set k=v]... [--stats s.json] [--trace t.json]` replays an
// elastic trace captured by `gpuvp run --capture DIR` on the memory system of a configuration
// (default: the captured one) and prints, per kernel, the captured and replayed cycles;
// `--replicate K [--offset-stride BYTES]` (weak scaling) and `--tasks dynamic|MAP
// [--task-sms M] [--cta-slots N]` (strong scaling) select the modes of
// platform/trace_replay/trace_replay.h.
// `gpuvp trace inspect DIR [--records] [--kernel N] [--limit N]` prints a trace's summary and
// records.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "platform/cli/config_options.h"
#include "platform/config/config.h"

namespace gpuvp::cli {

class ReplayCommand {
 public:
  ReplayCommand(CLI::App& app, const config::ConfigLoader& loader);
  bool selected() const { return command_->parsed(); }
  // 0 on success, 1 for a bad trace or options (the message names what and where).
  int execute() const;

 private:
  CLI::App* command_;
  const config::ConfigLoader& loader_;
  ConfigOptions config_options_;
  std::string dir_;
  std::string stats_path_;
  std::string trace_path_;
  std::vector<std::string> trace_filters_;
  uint32_t replicas_ = 1;
  std::string offset_stride_text_ = "0 B";
  std::string tasks_;
  uint32_t task_sms_ = 0;
  uint32_t cta_slots_ = 0;
  std::string l1_mode_ = "captured";
};

class TraceInspectCommand {
 public:
  TraceInspectCommand(CLI::App& app);
  bool selected() const { return command_->parsed(); }
  int execute() const;

 private:
  CLI::App* command_;
  std::string dir_;
  bool records_ = false;
  int64_t kernel_ = -1;
  uint64_t limit_ = 200;
};

}  // namespace gpuvp::cli
