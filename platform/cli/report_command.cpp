#include "platform/cli/report_command.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/platform_params.h"

extern char** environ;

namespace gpuvp::cli {
namespace {

namespace fs = std::filesystem;

// The report script: $GPUVP_REPORT_SCRIPT, else the source tree's copy.
std::string report_script() {
  if (const char* path = std::getenv("GPUVP_REPORT_SCRIPT"); path != nullptr && *path != '\0') return path;
  return std::string(GPUVP_SOURCE_DIR) + "/platform/report/gpuvp_report.py";
}

// Debian's python3 (where python3-matplotlib is installed), unless $GPUVP_PYTHON names another.
std::string python() {
  if (const char* path = std::getenv("GPUVP_PYTHON"); path != nullptr && *path != '\0') return path;
  return "/usr/bin/python3";
}

}  // namespace

ReportCommand::ReportCommand(CLI::App& app, const config::ConfigLoader& loader)
    : command_(app.add_subcommand("report", "an HTML page of charts from a statistics file (gpuvp run --stats)")),
      loader_(loader) {
  command_->add_option("stats", stats_path_, "statistics JSON written by gpuvp run/serve/boot --stats")->required();
  command_->add_option("-o,--output", output_, "HTML file to write (default: STATS with .html)");
  config_options_.add_to(*command_, false);
  command_->footer("Example: gpuvp run --stats s.json -- ./app && gpuvp report s.json -o report.html\n"
                   "The page is self-contained (inline SVG charts): open it in any browser, offline.");
}

int ReportCommand::execute() const {
  const config::Config config = config_options_.load(loader_);
  const PlatformParams p = PlatformParams::load(config);
  if (!fs::is_regular_file(stats_path_)) {
    std::cerr << "gpuvp report: " << stats_path_ << ": no such file\n";
    return 1;
  }
  std::string output = output_;
  if (output.empty()) output = fs::path(stats_path_).replace_extension(".html").string();

  // Peaks of the configured machine. L1: one 128 B line per SM per core cycle (the report says
  // that this is its assumption); L2: every slice moving data_width bytes per L2 cycle.
  nlohmann::ordered_json peaks;
  peaks["config"] = config.source();
  peaks["sm_count"] = p.sm.count;
  peaks["subcores"] = p.sm.subcores;
  peaks["l1_bandwidth"] = static_cast<double>(p.sm.count) * 128.0 * p.sm.clock_hz;
  peaks["l2_bandwidth"] = static_cast<double>(p.l2.slices) * p.l2.data_width * p.l2.clock_hz;
  peaks["hbm_bandwidth"] = p.hbm.peak_bandwidth();
  const std::string peaks_text = peaks.dump();

  const std::string interpreter = python();
  const std::string script = report_script();
  std::vector<std::string> arguments = {interpreter, script, stats_path_, output, "--peaks", peaks_text};
  std::vector<char*> argv;
  for (std::string& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t child = -1;
  if (const int error = ::posix_spawn(&child, interpreter.c_str(), nullptr, nullptr, argv.data(), environ);
      error != 0) {
    std::cerr << "gpuvp report: cannot run " << interpreter << ": " << std::strerror(error)
              << " (Debian's python3 with python3-matplotlib: scripts/setup.sh; or set GPUVP_PYTHON)\n";
    return 1;
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;  // the script said why
  std::cerr << "gpuvp report: written to " << output << "\n";
  return 0;
}

}  // namespace gpuvp::cli
