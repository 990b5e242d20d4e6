// `gpuvp topology [--config v100] [--set k=v]... [-o platform.svg|.dot|.json] [--format F]`: the
// platform as a picture, drawn from the model itself. It builds the configured platform (as
// `gpuvp serve` would), elaborates it, walks the SystemC object hierarchy and follows every
// TLM socket binding: each sc_module is a block (a module with children is a box around them),
// each binding an arrow from the initiator's module to the target's, named by the two sockets.
// Output: Graphviz DOT, SVG (DOT laid out by Graphviz's `dot`), or JSON (modules and bindings,
// for scripts and tests).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "platform/cli/config_options.h"
#include "platform/config/config.h"
#include "platform/platform_params.h"

namespace gpuvp::cli {

// One module of the elaborated hierarchy and one socket binding, as the walk found them.
struct TopologyModule {
  std::string name;  // full hierarchical name: "command_processor.timing.l2_3"
  std::string kind;  // the C++ class (demangled), e.g. "gpuvp::memory::L2Slice"
};
struct TopologyBinding {
  std::string initiator;  // full socket names
  std::string target;
};
struct Topology {
  std::vector<TopologyModule> modules;    // in hierarchy order (parents before children)
  std::vector<TopologyBinding> bindings;  // sorted by initiator, then target
};

// Builds, elaborates and walks the platform of `params` (the one SystemC context of a platform).
Topology platform_topology(const PlatformParams& params);

class TopologyCommand {
 public:
  TopologyCommand(CLI::App& app, const config::ConfigLoader& loader);
  bool selected() const { return command_->parsed(); }
  int execute() const;

 private:
  CLI::App* command_;
  const config::ConfigLoader& loader_;
  ConfigOptions config_options_;
  std::string output_;
  std::string format_;
};

}  // namespace gpuvp::cli
