// gpuvp: the command line of the GPU virtual platform.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "platform/config/config.h"
#include "platform/config_report.h"
#include "platform/derived_figures.h"
#include "platform/platform_params.h"

namespace {

constexpr const char* kDefaultPreset = "v100";

// Options shared by every command that needs a configuration.
struct ConfigOptions {
  std::string config;  // preset name or file
  std::vector<std::string> overrides;

  void add_to(CLI::App& command, bool positional) {
    if (positional) {
      command.add_option("preset", config, "preset name (configs/<name>.yaml) or config file")
          ->default_str(kDefaultPreset);
    }
    command.add_option("--config,-c", config, "preset name or config file (default: v100)");
    command.add_option("--set,-s", overrides, "override one knob: --set gpu.sm.count=80 (repeatable)")
        ->type_name("KEY=VALUE");
  }

  gpuvp::config::Config load(const gpuvp::config::ConfigLoader& loader) const {
    return loader.load(config.empty() ? kDefaultPreset : config, overrides);
  }
};

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuvp: a SystemC/TLM-2.0 virtual platform of a GPU with unified virtual memory"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpuvp 0.1.0");

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

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
