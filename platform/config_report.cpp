#include "platform/config_report.h"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gpuvp {
namespace {

std::vector<std::string> split_path(const std::string& name) {
  std::vector<std::string> parts;
  std::stringstream in(name);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  return parts;
}

std::string yaml_value(const config::KnobSpec& spec, const config::KnobValue& value) {
  if (spec.type != config::KnobType::Text) return spec.format(value);
  std::string quoted = "\"";
  for (char c : value.text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

nlohmann::json json_value(const config::KnobSpec& spec, const config::KnobValue& value) {
  switch (spec.type) {
    case config::KnobType::Integer: return static_cast<long long>(value.number);
    case config::KnobType::Real: return value.number;
    case config::KnobType::Quantity: return spec.format(value);
    case config::KnobType::Flag: return value.flag;
    case config::KnobType::Choice:
    case config::KnobType::Text: return value.text;
  }
  return nullptr;
}

}  // namespace

void print_knob_table(const config::KnobRegistry& registry, std::ostream& out) {
  size_t name_width = 4;
  size_t default_width = 7;
  for (const auto& knob : registry.knobs()) {
    name_width = std::max(name_width, knob.name.size());
    default_width = std::max(default_width, knob.default_text.size());
  }
  out << std::left << std::setw(static_cast<int>(name_width)) << "NAME" << "  " << std::setw(9) << "TYPE" << "  "
      << std::setw(6) << "UNIT" << "  " << std::setw(static_cast<int>(default_width)) << "DEFAULT" << "  "
      << std::setw(26) << "RANGE" << "  DOC\n";
  for (const auto& knob : registry.knobs()) {
    out << std::setw(static_cast<int>(name_width)) << knob.name << "  " << std::setw(9) << knob.type_label() << "  "
        << std::setw(6) << knob.unit_label() << "  " << std::setw(static_cast<int>(default_width))
        << knob.default_text << "  " << std::setw(26) << knob.range_label() << "  " << knob.doc << "\n";
  }
  out << registry.size() << " knobs\n";
}

void print_knob_json(const config::KnobRegistry& registry, std::ostream& out) {
  nlohmann::ordered_json knobs = nlohmann::ordered_json::array();
  for (const auto& knob : registry.knobs()) {
    nlohmann::ordered_json entry;
    entry["name"] = knob.name;
    entry["type"] = knob.type_label();
    entry["unit"] = knob.unit_label();
    entry["default"] = knob.default_text;
    entry["range"] = knob.range_label();
    if (knob.type == config::KnobType::Choice) entry["choices"] = knob.choices;
    entry["doc"] = knob.doc;
    knobs.push_back(std::move(entry));
  }
  out << knobs.dump(2) << "\n";
}

void print_resolved_yaml(const config::Config& config, std::ostream& out) {
  const auto& registry = config.registry();
  out << "# resolved configuration: " << config.source() << "\n";
  std::vector<std::string> open;  // sections currently open
  for (size_t i = 0; i < registry.size(); ++i) {
    const auto& spec = registry.at(i);
    const auto path = split_path(spec.name);
    size_t common = 0;
    while (common < open.size() && common + 1 < path.size() && open[common] == path[common]) ++common;
    open.resize(common);
    for (size_t depth = common; depth + 1 < path.size(); ++depth) {
      out << std::string(2 * depth, ' ') << path[depth] << ":\n";
      open.push_back(path[depth]);
    }
    std::string line = std::string(2 * (path.size() - 1), ' ') + path.back() + ": " +
                       yaml_value(spec, config.value(i));
    if (line.size() < 48) line.resize(48, ' ');
    out << line << "  # " << config.origin(i).describe() << "\n";
  }
}

void print_resolved_json(const config::Config& config, std::ostream& out) {
  nlohmann::json root = nlohmann::json::object();
  const auto& registry = config.registry();
  for (size_t i = 0; i < registry.size(); ++i) {
    const auto& spec = registry.at(i);
    nlohmann::json* node = &root;
    const auto path = split_path(spec.name);
    for (size_t depth = 0; depth + 1 < path.size(); ++depth) node = &(*node)[path[depth]];
    (*node)[path.back()] = json_value(spec, config.value(i));
  }
  out << root.dump(2) << "\n";
}

}  // namespace gpuvp
