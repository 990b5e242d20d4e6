#include "platform/cli/topology_command.h"

#include <cxxabi.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <typeinfo>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_socket_bases.h>

#include "platform/bridge/platform_server.h"
#include "platform/cli/output_file.h"
#include "platform/stats/registry.h"

extern char** environ;

namespace gpuvp::cli {
namespace {

namespace fs = std::filesystem;
using FwIf = tlm::tlm_fw_transport_if<tlm::tlm_base_protocol_types>;

std::string demangle(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? name.get() : type.name();
}

bool is_initiator_socket(const sc_core::sc_object& object) {
  return std::strcmp(object.kind(), "tlm_initiator_socket") == 0;
}
bool is_target_socket(const sc_core::sc_object& object) {
  return std::strcmp(object.kind(), "tlm_target_socket") == 0;
}

// The forward interfaces an initiator socket calls, one per binding.
std::vector<const void*> bound_interfaces(sc_core::sc_object& socket) {
  std::vector<const void*> out;
  if (auto* multi = dynamic_cast<tlm_utils::multi_init_base_if<tlm::tlm_base_protocol_types>*>(&socket)) {
    for (FwIf* fw : multi->get_sockets()) out.push_back(static_cast<const FwIf*>(fw));
    return out;
  }
  if (auto* port = dynamic_cast<sc_core::sc_port_b<FwIf>*>(&socket)) {
    for (int i = 0; i < port->size(); ++i) out.push_back(static_cast<const FwIf*>((*port)[i]));
  }
  return out;
}

// The forward interfaces a target socket offers: its export's, or a multi-socket's binders.
std::vector<const void*> offered_interfaces(sc_core::sc_object& socket) {
  std::vector<const void*> out;
  if (auto* multi = dynamic_cast<tlm_utils::multi_target_base_if<tlm::tlm_base_protocol_types>*>(&socket)) {
    for (auto* binder : multi->get_binders()) out.push_back(static_cast<const FwIf*>(binder));
    return out;
  }
  if (auto* exported = dynamic_cast<sc_core::sc_export<FwIf>*>(&socket)) {
    if (const sc_core::sc_interface* i = exported->get_interface()) {
      out.push_back(static_cast<const void*>(dynamic_cast<const FwIf*>(i)));
    }
  }
  return out;
}

void walk(sc_core::sc_object& object, Topology& topology, std::vector<sc_core::sc_object*>& initiators,
          std::vector<sc_core::sc_object*>& targets) {
  if (dynamic_cast<sc_core::sc_module*>(&object) != nullptr) {
    topology.modules.push_back({object.name(), demangle(typeid(object))});
  } else if (is_initiator_socket(object)) {
    initiators.push_back(&object);
  } else if (is_target_socket(object)) {
    targets.push_back(&object);
  }
  for (sc_core::sc_object* child : object.get_child_objects()) walk(*child, topology, initiators, targets);
}

size_t depth(const std::string& name) { return static_cast<size_t>(std::count(name.begin(), name.end(), '.')); }

std::string parent_of(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? std::string() : name.substr(0, dot);
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string basename_of(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

std::string short_kind(const std::string& kind) {
  const size_t colon = kind.rfind("::");
  std::string k = colon == std::string::npos ? kind : kind.substr(colon + 2);
  const size_t angle = k.find('<');
  return angle == std::string::npos ? k : k.substr(0, angle);
}

// The clock domain a module's class runs in: the knob that clocks it and its colour. SystemC has
// no notion of a module's clock (each model holds its ClockDomain privately), so this table
// maps the classes; a class not in it is event-driven (the bridge, the PCIe link's transfers).
struct ClockOf {
  const char* knob;
  const char* colour;
};
const ClockOf* clock_of(const std::string& kind) {
  static const ClockOf core{"gpu.sm.clock", "#dbe9fb"}, crossbar{"gpu.crossbar.clock", "#fde7c8"},
      l2{"memory.l2.clock", "#dcf2dc"}, dram{"memory.hbm.clock", "#f6d8e4"};
  static const std::pair<const char*, const ClockOf*> classes[] = {
      {"Sm", &core},          {"SmCluster", &core}, {"CtaScheduler", &core}, {"SmStepper", &core},
      {"L1Tlb", &core},       {"Gmmu", &core},      {"CopyEngine", &core},   {"Crossbar", &crossbar},
      {"L2Slice", &l2},       {"HbmController", &dram}};
  const std::string k = short_kind(kind);
  for (const auto& [name, clock] : classes) {
    if (k == name) return clock;
  }
  return nullptr;
}

double clock_hz(const std::string& knob, const PlatformParams& params) {
  if (knob == "gpu.sm.clock") return params.sm.clock_hz;
  if (knob == "gpu.crossbar.clock") return params.crossbar.clock_hz;
  if (knob == "memory.l2.clock") return params.l2.clock_hz;
  if (knob == "memory.hbm.clock") return params.hbm.clock_hz;
  return 0;
}

std::string mhz(double hz) { return std::to_string(static_cast<long long>(hz / 1e6 + 0.5)) + " MHz"; }

// DOT: every module with children is a cluster around them; every leaf a box; every binding an
// arrow from the initiator socket's module to the target socket's module.
std::string to_dot(const Topology& topology, const std::string& title, const PlatformParams& params) {
  std::set<std::string> has_children;
  for (const TopologyModule& m : topology.modules) {
    const std::string parent = parent_of(m.name);
    if (!parent.empty()) has_children.insert(parent);
  }
  std::ostringstream dot;
  dot << "digraph gpuvp {\n  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=11, label=" << quoted(title)
      << ", labelloc=t, newrank=true, nodesep=0.08, ranksep=0.6];\n"
      << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", fontname=\"Helvetica\", fontsize=9, "
         "height=0.25];\n  edge [arrowsize=0.5, color=\"#5a6b82\"];\n";
  // Emit clusters by nesting: walk modules in hierarchy order, closing clusters as we leave them.
  std::vector<std::string> open;
  auto indent = [&] { return std::string(2 + 2 * open.size(), ' '); };
  for (const TopologyModule& m : topology.modules) {
    const std::string parent = parent_of(m.name);
    while (!open.empty() && open.back() != parent) {
      open.pop_back();
      dot << indent() << "}\n";
    }
    if (has_children.count(m.name) != 0) {
      dot << indent() << "subgraph " << quoted("cluster_" + m.name) << " {\n";
      open.push_back(m.name);
      dot << indent() << "label=" << quoted(basename_of(m.name) + " (" + short_kind(m.kind) + ")")
          << "; style=\"rounded\"; color=\"#9aa7b8\";\n";
      // A cluster also gets a node of its own, so bindings of its own sockets have an end.
      dot << indent() << quoted(m.name) << " [label=" << quoted(basename_of(m.name))
          << ", shape=point, width=0.05];\n";
    } else {
      const ClockOf* clock = clock_of(m.kind);
      dot << indent() << quoted(m.name) << " [label=" << quoted(basename_of(m.name)) << ", tooltip="
          << quoted(m.name + " : " + m.kind + (clock ? std::string(" : ") + clock->knob : std::string()))
          << ", fillcolor=" << quoted(clock ? clock->colour : "#f2f2f2") << "];\n";
    }
  }
  while (!open.empty()) {
    open.pop_back();
    dot << indent() << "}\n";
  }
  // The legend: one box per clock domain, with its knob and frequency.
  dot << "  subgraph cluster_legend {\n    label=\"clock domains\"; style=\"rounded\"; color=\"#9aa7b8\";\n";
  const char* legend[][2] = {{"gpu.sm.clock", "#dbe9fb"}, {"gpu.crossbar.clock", "#fde7c8"},
                             {"memory.l2.clock", "#dcf2dc"}, {"memory.hbm.clock", "#f6d8e4"}};
  for (const auto& [knob, colour] : legend) {
    dot << "    " << quoted(std::string("legend ") + knob) << " [label=" << quoted(std::string(knob) + " " + mhz(clock_hz(knob, params)))
        << ", fillcolor=" << quoted(colour) << "];\n";
  }
  dot << "    \"legend untimed\" [label=\"event-driven\", fillcolor=\"#f2f2f2\"];\n  }\n";
  for (const TopologyBinding& b : topology.bindings) {
    dot << "  " << quoted(parent_of(b.initiator)) << " -> " << quoted(parent_of(b.target)) << " [tooltip="
        << quoted(b.initiator + " -> " + b.target) << "];\n";
  }
  dot << "}\n";
  return dot.str();
}

std::string to_json(const Topology& topology, const std::string& config, const PlatformParams& params) {
  nlohmann::ordered_json out;
  out["config"] = config;
  out["sm_count"] = params.sm.count;
  out["l2_slices"] = params.l2.slices;
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  for (const TopologyModule& m : topology.modules) {
    nlohmann::ordered_json module = {{"name", m.name}, {"kind", m.kind}};
    if (const ClockOf* clock = clock_of(m.kind)) {
      module["clock"] = {{"knob", clock->knob}, {"hz", clock_hz(clock->knob, params)}};
    }
    modules.push_back(module);
  }
  out["modules"] = modules;
  nlohmann::ordered_json bindings = nlohmann::ordered_json::array();
  for (const TopologyBinding& b : topology.bindings) {
    bindings.push_back({{"initiator", b.initiator}, {"target", b.target}});
  }
  out["bindings"] = bindings;
  return out.dump(1) + "\n";
}

// Lays `dot_text` out with Graphviz's dot into `svg_path`; false (said on stderr) when it fails.
bool render_svg(const std::string& dot_text, const std::string& svg_path) {
  char dot_path[] = "/tmp/gpuvp-topology-XXXXXX";
  const int fd = ::mkstemp(dot_path);
  if (fd < 0) {
    std::cerr << "gpuvp topology: cannot create a temporary file: " << std::strerror(errno) << "\n";
    return false;
  }
  if (::write(fd, dot_text.data(), dot_text.size()) != static_cast<ssize_t>(dot_text.size())) {
    ::close(fd);
    ::unlink(dot_path);
    std::cerr << "gpuvp topology: cannot write the temporary DOT file\n";
    return false;
  }
  ::close(fd);
  std::string out_arg = "-o" + svg_path;
  std::vector<char*> argv = {const_cast<char*>("dot"), const_cast<char*>("-Tsvg"), out_arg.data(), dot_path, nullptr};
  pid_t child = -1;
  const int error = ::posix_spawnp(&child, "dot", nullptr, nullptr, argv.data(), environ);
  int status = 0;
  if (error == 0) ::waitpid(child, &status, 0);
  ::unlink(dot_path);
  if (error != 0) {
    std::cerr << "gpuvp topology: cannot run Graphviz's dot (" << std::strerror(error)
              << "); install the Debian package graphviz (scripts/setup.sh), or write -o FILE.dot\n";
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "gpuvp topology: dot failed to lay out the diagram (exit status " << status << ")\n";
    return false;
  }
  return true;
}

}  // namespace

Topology platform_topology(const PlatformParams& params) {
  stats::Registry stats;
  bridge::PlatformServer server(params, stats);  // builds every module and binds every socket
  sc_core::sc_start(sc_core::SC_ZERO_TIME);      // completes elaboration: multi-socket bindings resolve
  Topology topology;
  std::vector<sc_core::sc_object*> initiators, targets;
  for (sc_core::sc_object* top : sc_core::sc_get_top_level_objects()) walk(*top, topology, initiators, targets);

  // A hierarchical binding (a child's socket bound to its parent's) makes several sockets offer
  // or call the same interface: each arrow joins the deepest socket on either side.
  std::map<const void*, std::string> target_of;
  for (sc_core::sc_object* t : targets) {
    for (const void* i : offered_interfaces(*t)) {
      auto [it, inserted] = target_of.emplace(i, t->name());
      if (!inserted && depth(t->name()) > depth(it->second)) it->second = t->name();
    }
  }
  std::map<const void*, std::string> initiator_of;
  for (sc_core::sc_object* s : initiators) {
    for (const void* i : bound_interfaces(*s)) {
      auto [it, inserted] = initiator_of.emplace(i, s->name());
      if (!inserted && depth(s->name()) > depth(it->second)) it->second = s->name();
    }
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& [interface, initiator] : initiator_of) {
    const auto t = target_of.find(interface);
    const std::string target = t != target_of.end() ? t->second : std::string("(unbound)");
    if (seen.insert({initiator, target}).second) topology.bindings.push_back({initiator, target});
  }
  std::sort(topology.bindings.begin(), topology.bindings.end(), [](const TopologyBinding& a, const TopologyBinding& b) {
    return a.initiator != b.initiator ? a.initiator < b.initiator : a.target < b.target;
  });
  return topology;
}

TopologyCommand::TopologyCommand(CLI::App& app, const config::ConfigLoader& loader)
    : command_(app.add_subcommand(
          "topology", "draw the platform from the model: its modules and TLM socket bindings (Graphviz)")),
      loader_(loader) {
  config_options_.add_to(*command_, false);
  command_->add_option("-o,--output", output_,
                       "write to this file; .svg (laid out by Graphviz's dot), .dot or .json (default: DOT on stdout)");
  command_->add_option("--format", format_, "dot, svg or json (default: from the file's extension, else dot)")
      ->check(CLI::IsMember({"dot", "svg", "json"}));
  command_->footer("Example: gpuvp topology --config v100 -o platform.svg");
}

int TopologyCommand::execute() const {
  const config::Config config = config_options_.load(loader_);
  const PlatformParams params = PlatformParams::load(config);
  std::string format = format_;
  if (format.empty()) {
    const std::string extension = fs::path(output_).extension().string();
    format = extension == ".svg" ? "svg" : extension == ".json" ? "json" : "dot";
  }
  if (format == "svg" && output_.empty()) {
    std::cerr << "gpuvp topology: --format svg needs -o FILE.svg\n";
    return 1;
  }
  const Topology topology = platform_topology(params);
  const std::string title = params.device.name + " (" + config.source() + "): " +
                            std::to_string(topology.modules.size()) + " modules, " +
                            std::to_string(topology.bindings.size()) + " socket bindings";
  if (format == "json") {
    const std::string text = to_json(topology, config.source(), params);
    if (output_.empty()) {
      std::cout << text;
      return 0;
    }
    return write_output_file(output_, text, "topology") ? 0 : 1;
  }
  const std::string dot = to_dot(topology, title, params);
  if (format == "svg") {
    if (!render_svg(dot, output_)) return 1;
  } else if (output_.empty()) {
    std::cout << dot;
  } else if (!write_output_file(output_, dot, "topology")) {
    return 1;
  }
  if (!output_.empty()) std::cerr << "gpuvp topology: " << title << "; written to " << output_ << "\n";
  return 0;
}

}  // namespace gpuvp::cli
