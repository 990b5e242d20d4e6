// gpuvp: the command line of the GPU virtual platform.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "platform/cli/output_file.h"
#include "platform/bridge/serve.h"
#include "platform/cli/boot_command.h"
#include "platform/cli/report_command.h"
#include "platform/cli/replay_command.h"
#include "platform/cli/run_command.h"
#include "platform/cli/topology_command.h"
#include "platform/cli/sweep_command.h"
#include "platform/cli/validate_command.h"
#include "platform/cli/config_options.h"
#include "platform/config/config.h"
#include "platform/config/value_parser.h"
#include "platform/config_report.h"
#include "platform/derived_figures.h"
#include "platform/pcie_sweep.h"
#include "platform/platform_params.h"
#include "platform/trace/trace_format.h"

namespace {

using gpuvp::cli::ConfigOptions;
using gpuvp::cli::kDefaultPreset;

void print_info(const gpuvp::config::Config& config, const gpuvp::PlatformParams& params, bool json) {
  const auto figures = gpuvp::derive_figures(params);
  if (json) {
    nlohmann::ordered_json out;
    out["config"] = config.source();
    out["device"] = params.device.name;
    for (const auto& figure : figures) {
      out["figures"][figure.key] = {{"value", figure.value}, {"unit", figure.unit}, {"formula", figure.formula}};
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << params.device.name << " (compute capability " << params.device.compute_capability / 10 << "."
            << params.device.compute_capability % 10 << "), configuration " << config.source() << "\n";
  for (const auto& figure : figures) {
    std::cout << "  " << std::left << std::setw(34) << figure.label << std::setw(16)
              << gpuvp::format_figure(figure) << figure.formula << "\n";
  }
}

int run_sweep(const gpuvp::config::Config& config, const gpuvp::PlatformParams& params,
              const std::string& bytes_text, const std::string& stats_path) {
  // The byte count is written like a size knob ("4 MiB") and checked the same way.
  gpuvp::config::KnobSpec bytes_spec;
  bytes_spec.name = "--bytes";
  bytes_spec.type = gpuvp::config::KnobType::Quantity;
  bytes_spec.dimension = gpuvp::config::Dimension::Size;
  bytes_spec.whole = true;
  bytes_spec.default_text = "4 MiB";
  bytes_spec.min = 4096;
  bytes_spec.max = 1024.0 * 1024 * 1024;
  const auto parsed = gpuvp::config::parse_knob_value(bytes_spec, bytes_text);
  if (const auto* message = std::get_if<std::string>(&parsed)) {
    std::cerr << "--bytes '" << bytes_text << "': error: " << *message << "\n";
    return 1;
  }
  const auto bytes = static_cast<uint64_t>(std::get<gpuvp::config::KnobValue>(parsed).number);
  std::vector<uint64_t> sizes;
  for (uint64_t size = 4096; size <= std::min<uint64_t>(bytes, 4u << 20); size *= 4) sizes.push_back(size);

  const auto wall_start = std::chrono::steady_clock::now();
  const auto result = gpuvp::run_pcie_sweep(params, sizes, bytes);
  spdlog::info("pcie-sweep: {} transfer sizes, {:.3f} ms simulated in {:.3f} s of wall time", sizes.size(),
               static_cast<double>(result.simulated_ps) * 1e-9,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count());
  std::cout << "PCIe copy-engine sweep on " << config.source() << ": "
            << gpuvp::config::format_quantity(static_cast<double>(bytes), gpuvp::config::Dimension::Size)
            << " per size and direction, latency "
            << gpuvp::config::format_quantity(params.pcie.latency_ps, gpuvp::config::Dimension::Time) << "\n";
  std::cout << "  transfer   count   host->device   device->host   link model   seed 003 Table 1\n";
  const std::map<uint64_t, const char*> measured = {
      {4096, "3.2219 GB/s"}, {16384, "6.4437 GB/s"}, {65536, "8.4771 GB/s"}, {262144, "10.508 GB/s"},
      {1048576, "11.223 GB/s"}};
  for (const auto& row : result.rows) {
    auto gbps = [](double bytes_per_second) {
      std::ostringstream text;
      text << std::fixed << std::setprecision(3) << bytes_per_second / 1e9 << " GB/s";
      return text.str();
    };
    const auto reference = measured.find(row.transfer_bytes);
    std::cout << "  " << std::left << std::setw(9)
              << gpuvp::config::format_quantity(static_cast<double>(row.transfer_bytes),
                                                gpuvp::config::Dimension::Size)
              << std::right << std::setw(7) << row.transfers << std::setw(15) << gbps(row.host_to_device)
              << std::setw(15) << gbps(row.device_to_host) << std::setw(13) << gbps(row.model) << "   "
              << (reference == measured.end() ? "-" : reference->second) << "\n";
  }
  std::cout << "simulated time " << std::fixed << std::setprecision(3)
            << static_cast<double>(result.simulated_ps) * 1e-9 << " ms\n\n"
            << result.stats_summary;
  if (!stats_path.empty()) {
    if (!gpuvp::cli::write_output_file(stats_path, result.stats_json, "statistics file")) return 1;
    std::cout << "statistics written to " << stats_path << "\n";
  }
  return 0;
}

// The first word of the command line that names no subcommand where one is expected (`gpuvp
// frobnicate --help`, `gpuvp config bogus`), with the command it was given to; CLI11 would answer
// --help with the enclosing command's help and exit 0 before it notices the stray word.
std::optional<std::pair<std::string, CLI::App*>> unknown_subcommand(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.size() > 1 && word[0] == '-') {
      // An option written apart from its value ("--log-level info") takes the next word.
      const CLI::Option* option = word.find('=') == std::string::npos ? current->get_option_no_throw(word) : nullptr;
      if (option != nullptr && option->get_type_size_min() > 0 && option->get_items_expected_min() > 0) ++i;
      continue;
    }
    const std::vector<CLI::App*> subcommands = current->get_subcommands([](CLI::App*) { return true; });
    if (subcommands.empty()) break;  // a command's own positional arguments from here on
    CLI::App* next = nullptr;
    for (CLI::App* sub : subcommands) {
      if (sub->check_name(word)) next = sub;
    }
    if (next == nullptr) return std::make_pair(word, current);
    current = next;
  }
  return std::nullopt;
}

}  // namespace

// libsystemc defines main() to call sc_main(); gpuvp has its own main, so this is never called,
// but the library needs the symbol.
extern "C" int sc_main(int, char**) { return 1; }

// Sanitizer builds (GPUVP_SANITIZE): SystemC 2.3.4 never frees the event list of a process that
// still waits on `a | b` when its simulation context is deleted (a 20-line SystemC program without
// gpuvp shows it, docs/hardening.md); the platform's service thread waits so whenever the platform
// ends. LeakSanitizer skips exactly the allocations made by SystemC's event-list expression.
// Unused in normal builds.
extern "C" const char* __lsan_default_suppressions();
extern "C" const char* __lsan_default_suppressions() {
  return "leak:sc_core::sc_event_expr<sc_core::sc_event_or_list>::sc_event_expr\n";
}
extern "C" const char* __lsan_default_options();
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }

int main(int argc, char** argv) {
  setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // keep gpuvp's output its own
  CLI::App app{"gpuvp: a SystemC/TLM-2.0 virtual platform of a GPU with unified virtual memory"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpuvp 0.1.0");
  std::string log_level = "warning";
  app.add_option("--log-level", log_level, "log to stderr from this level on")
      ->check(CLI::IsMember({"trace", "debug", "info", "warning", "error", "off"}))
      ->capture_default_str();

  const gpuvp::config::KnobRegistry registry = gpuvp::build_knob_registry();
  const gpuvp::config::ConfigLoader loader(registry, gpuvp::config::default_preset_dirs());

  // gpuvp config ...
  CLI::App* config_command = app.add_subcommand("config", "list knobs, show or check configurations");
  config_command->require_subcommand(1);

  bool list_json = false;
  CLI::App* list = config_command->add_subcommand("list", "every knob: name, type, unit, default, range, doc");
  list->add_flag("--json", list_json, "print JSON instead of a table");

  ConfigOptions show_options;
  bool show_json = false;
  CLI::App* show = config_command->add_subcommand("show", "the resolved configuration of a preset or file");
  show_options.add_to(*show, true);
  show->add_flag("--json", show_json, "print JSON instead of YAML");

  ConfigOptions check_options;
  CLI::App* check = config_command->add_subcommand("check", "validate a config file; exit 1 on any error");
  check->add_option("file", check_options.config, "config file or preset to check")->required();
  check->add_option("--set,-s", check_options.overrides, "override one knob (repeatable)")->type_name("KEY=VALUE");

  CLI::App* presets = config_command->add_subcommand("presets", "the preset names gpuvp knows");

  // gpuvp info ...
  ConfigOptions info_options;
  bool info_json = false;
  CLI::App* info = app.add_subcommand("info", "derived figures of a configuration: SMs, peak FLOP/s, bandwidths");
  info_options.add_to(*info, true);
  info->add_flag("--json", info_json, "print JSON");

  // gpuvp pcie-sweep ...
  ConfigOptions sweep_options;
  std::string sweep_stats_path;
  std::string sweep_bytes_text = "4 MiB";
  CLI::App* sweep = app.add_subcommand(
      "pcie-sweep", "simulate copy-engine transfers of 4 KiB..4 MiB over the PCIe link model; print bandwidths");
  sweep_options.add_to(*sweep, false);
  sweep->add_option("--stats", sweep_stats_path, "write the statistics JSON to this file");
  sweep->add_option("--bytes", sweep_bytes_text, "bytes moved per transfer size and direction (default 4 MiB)");

  // gpuvp serve ...
  ConfigOptions serve_options;
  std::string serve_stats_path;
  CLI::App* serve = app.add_subcommand(
      "serve", "keep a platform up for programs started separately (prints GPUVP_SOCKET); Ctrl-C stops it");
  serve_options.add_to(*serve, false);
  serve->add_option("--stats", serve_stats_path, "write the statistics JSON to this file when stopped");
  bool serve_stats_per_launch = false;
  serve->add_flag("--stats-per-launch", serve_stats_per_launch,
                  "one statistics scope per kernel launch (default: one per kernel name)");

  // gpuvp run [--config ...] [--set ...] [--stats ...] -- ./app args...
  gpuvp::cli::RunCommand run_command(app, loader);
  gpuvp::cli::ValidateCommand validate_command(app, loader);
  gpuvp::cli::BootCommand boot_command(app, loader);
  gpuvp::cli::ReportCommand report_command(app, loader);
  gpuvp::cli::TopologyCommand topology_command(app, loader);
  gpuvp::cli::SweepCommand sweep_command(app, loader);
  gpuvp::cli::PlotCommand plot_command(app, loader);
  gpuvp::cli::ReplayCommand replay_command(app, loader);
  gpuvp::cli::TraceInspectCommand trace_inspect_command(app);

  // gpuvp trace-convert in.gvtrace out.json
  std::string convert_in;
  std::string convert_out;
  CLI::App* convert = app.add_subcommand(
      "trace-convert", "convert a compact trace (gpuvp run --trace out.gvtrace) to Chrome/Perfetto JSON");
  convert->add_option("input", convert_in, "compact trace file")->required();
  convert->add_option("output", convert_out, "JSON file to write")->required();

  if (const auto unknown = unknown_subcommand(app, argc, argv)) {
    const auto& [word, parent] = *unknown;
    std::string command = "gpuvp";
    for (const CLI::App* a = parent; a != &app; a = a->get_parent()) command.insert(5, " " + a->get_name());
    std::string known;
    for (const CLI::App* sub : parent->get_subcommands([](CLI::App*) { return true; })) {
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    std::cerr << command << ": unknown subcommand '" << word << "' (the subcommands are: " << known << "; see `"
              << command << " --help`)\n";
    return static_cast<int>(CLI::ExitCodes::ExtrasError);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  // Logs go to stderr so that stdout stays the command's own output.
  spdlog::set_default_logger(spdlog::stderr_color_st("gpuvp"));
  spdlog::set_level(spdlog::level::from_str(log_level == "warning" ? "warn" : log_level));

  try {
    if (*list) {
      if (list_json) {
        gpuvp::print_knob_json(registry, std::cout);
      } else {
        gpuvp::print_knob_table(registry, std::cout);
      }
    } else if (*show) {
      const auto config = show_options.load(loader);
      gpuvp::PlatformParams::load(config);
      if (show_json) {
        gpuvp::print_resolved_json(config, std::cout);
      } else {
        gpuvp::print_resolved_yaml(config, std::cout);
      }
    } else if (*check) {
      const auto config = check_options.load(loader);
      gpuvp::PlatformParams::load(config);
      size_t from_file = 0;
      for (size_t i = 0; i < registry.size(); ++i) {
        if (config.origin(i).kind != gpuvp::config::Origin::Kind::Default) ++from_file;
      }
      std::cout << check_options.config << ": ok (" << from_file << " of " << registry.size()
                << " knobs set, the rest at their defaults)\n";
    } else if (*presets) {
      for (const auto& name : loader.presets()) std::cout << name << "\n";
    } else if (run_command.selected()) {
      return run_command.execute();
    } else if (replay_command.selected()) {
      return replay_command.execute();
    } else if (trace_inspect_command.selected()) {
      return trace_inspect_command.execute();
    } else if (validate_command.selected()) {
      return validate_command.execute();
    } else if (boot_command.selected()) {
      return boot_command.execute();
    } else if (report_command.selected()) {
      return report_command.execute();
    } else if (topology_command.selected()) {
      return topology_command.execute();
    } else if (sweep_command.selected()) {
      return sweep_command.execute();
    } else if (plot_command.selected()) {
      return plot_command.execute();
    } else if (*serve) {
      const auto config = serve_options.load(loader);
      return gpuvp::bridge::serve(gpuvp::PlatformParams::load(config), config.source(), serve_stats_path,
                                  serve_stats_per_launch);
    } else if (*sweep) {
      const auto config = sweep_options.load(loader);
      return run_sweep(config, gpuvp::PlatformParams::load(config), sweep_bytes_text, sweep_stats_path);
    } else if (*convert) {
      try {
        const auto writer = gpuvp::trace::make_json_writer(convert_out);
        gpuvp::trace::convert_compact_trace(convert_in, *writer);
      } catch (const gpuvp::trace::TraceError& e) {
        std::cerr << "gpuvp trace-convert: " << e.what() << "\n";
        return 1;
      }
    } else if (*info) {
      const auto config = info_options.load(loader);
      print_info(config, gpuvp::PlatformParams::load(config), info_json);
    }
  } catch (const gpuvp::config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
