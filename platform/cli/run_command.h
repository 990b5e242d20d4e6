// `gpuvp run [--config v100] [--set k=v]... [--stats out.json] -- ./app args...`: starts the
// platform, runs an unmodified CUDA program (built with `nvcc -cudart shared`, or a driver-API
// program) against gpuvp's libcudart.so.13 and libcuda.so.1, preserves the program's stdout, stderr and exit code, and writes statistics.
// The program starts once the platform's socket listens, while the GPU model is being built.
// Tracing: `--trace out.json` (Chrome/Perfetto trace-event JSON; any other extension: compact
// binary, see `gpuvp trace-convert`), `--trace-filter TERM` (platform/trace/trace_filter.h),
// `--trace-summary FILE|-` (per-link counts, bytes, latency histograms), `--trace-vcd out.vcd`
// (busy flags and levels through SystemC's sc_trace).
// `--capture DIR` writes an elastic trace of every SM's memory traffic for `gpuvp replay`.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "platform/cli/config_options.h"
#include "platform/cli/progress_option.h"
#include "platform/config/config.h"

namespace gpuvp::cli {

class RunCommand {
 public:
  // Registers the `run` subcommand on `app`.
  RunCommand(CLI::App& app, const config::ConfigLoader& loader);

  bool selected() const { return command_->parsed(); }
  // Runs the program; returns its exit code (128 + signal when a signal killed it), or 1 when
  // gpuvp itself could not run it. Throws config::ConfigError for a bad configuration.
  int execute() const;

 private:
  CLI::App* command_;
  const config::ConfigLoader& loader_;
  ConfigOptions config_options_;
  ProgressOption progress_;
  std::string stats_path_;
  bool stats_per_launch_ = false;
  std::string trace_path_;
  std::vector<std::string> trace_filters_;
  std::string trace_summary_path_;
  std::string trace_vcd_path_;
  double trace_window_ns_ = 1000;
  bool mpi_ = false;          // --mpi: this process is one rank stepping its share of the SMs
  std::string capture_dir_;  // --capture: elastic trace directory (platform/elastic_trace)
  std::vector<std::string> program_;
};

// How a program links CUDA, read from its ELF file: the shared runtime (libcudart.so), the
// static runtime (a fatbin but no libcudart.so), the driver API alone (libcuda.so, no fatbin), or
// none of them.
enum class CudartLinkage { Shared, Static, Driver, None, NotElf };
CudartLinkage cudart_linkage(const std::string& path);

// The directory holding gpuvp's libcudart.so.13: $GPUVP_CUDART_DIR, else lib/ next to the gpuvp
// executable. Empty when neither has the library.
std::string cudart_directory();

}  // namespace gpuvp::cli
