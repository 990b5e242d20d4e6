#include "platform/config/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "platform/config/value_parser.h"

#ifndef GPUVP_SOURCE_CONFIG_DIR
#define GPUVP_SOURCE_CONFIG_DIR ""
#endif

namespace gpuvp::config {
namespace {

constexpr int kMaxExtendsDepth = 8;

std::string join_messages(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    if (!out.empty()) out += "\n";
    out += d.to_string();
  }
  return out;
}

std::string location(const std::string& file, const YAML::Mark& mark) {
  if (mark.line < 0) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string node_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing";
    default: return "a value";
  }
}

std::string did_you_mean(const KnobRegistry& registry, const std::string& key) {
  const auto suggestions = registry.suggest(key, 1);
  if (suggestions.empty()) return {};
  return " (did you mean '" + suggestions.front() + "'?)";
}

}  // namespace

std::string Origin::describe() const {
  switch (kind) {
    case Kind::Default: return "default";
    case Kind::File: return file + ":" + std::to_string(line);
    case Kind::Override: return "--set";
  }
  return "?";
}

std::string Diagnostic::to_string() const {
  std::string out = where + ": error: ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_messages(diagnostics)), diagnostics_(std::move(diagnostics)) {}

Config::Config(const KnobRegistry& registry)
    : registry_(&registry), values_(registry.size()), origins_(registry.size()) {
  for (size_t i = 0; i < registry.size(); ++i) values_[i] = registry.at(i).default_value;
}

const KnobValue& Config::value(std::string_view name) const {
  const auto index = registry_->find(name);
  if (!index) throw std::logic_error("undeclared knob read: " + std::string(name));
  return values_[*index];
}

void Config::set(size_t index, KnobValue value, Origin origin) {
  values_.at(index) = std::move(value);
  origins_.at(index) = std::move(origin);
}

ConfigLoader::ConfigLoader(const KnobRegistry& registry, std::vector<std::filesystem::path> preset_dirs)
    : registry_(&registry), preset_dirs_(std::move(preset_dirs)) {}

std::vector<std::string> ConfigLoader::presets() const {
  std::set<std::string> names;
  for (const auto& dir : preset_dirs_) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

std::filesystem::path ConfigLoader::resolve(std::string_view preset_or_file) const {
  const std::filesystem::path as_path(preset_or_file);
  const bool looks_like_path = preset_or_file.find('/') != std::string_view::npos ||
                               as_path.has_extension();
  if (looks_like_path) {
    if (std::filesystem::is_regular_file(as_path)) return as_path;
    throw ConfigError({{std::string(preset_or_file), "", "no such config file"}});
  }
  for (const auto& dir : preset_dirs_) {
    const auto candidate = dir / (std::string(preset_or_file) + ".yaml");
    if (std::filesystem::is_regular_file(candidate)) return candidate;
  }
  if (std::filesystem::is_regular_file(as_path)) return as_path;
  std::string available;
  for (const auto& name : presets()) available += (available.empty() ? "" : ", ") + name;
  std::string message = "no preset or file named '" + std::string(preset_or_file) + "'";
  message += available.empty() ? " (no preset directory found; set GPUVP_CONFIG_DIR)"
                               : " (presets: " + available + ")";
  throw ConfigError({{std::string(preset_or_file), "", message}});
}

Config ConfigLoader::load(std::string_view preset_or_file, const std::vector<std::string>& overrides) const {
  const auto path = resolve(preset_or_file);
  Config config(*registry_);
  config.set_source(std::string(preset_or_file));
  std::vector<Diagnostic> errors;
  apply_file(config, path, errors, 0);
  apply_overrides(config, overrides, errors);
  if (!errors.empty()) throw ConfigError(std::move(errors));
  return config;
}

Config ConfigLoader::load_defaults(const std::vector<std::string>& overrides) const {
  Config config(*registry_);
  std::vector<Diagnostic> errors;
  apply_overrides(config, overrides, errors);
  if (!errors.empty()) throw ConfigError(std::move(errors));
  return config;
}

Config ConfigLoader::load_text(std::string_view text, std::string_view file_name,
                               const std::vector<std::string>& overrides) const {
  Config config(*registry_);
  config.set_source(std::string(file_name));
  std::vector<Diagnostic> errors;
  apply_text(config, text, std::string(file_name), std::filesystem::current_path(), errors, 0);
  apply_overrides(config, overrides, errors);
  if (!errors.empty()) throw ConfigError(std::move(errors));
  return config;
}

void ConfigLoader::apply_file(Config& config, const std::filesystem::path& path,
                              std::vector<Diagnostic>& errors, int depth) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.push_back({path.string(), "", "cannot read the file"});
    return;
  }
  std::ostringstream text;
  text << in.rdbuf();
  apply_text(config, text.str(), path.string(), path.parent_path(), errors, depth);
}

void ConfigLoader::apply_text(Config& config, std::string_view text, const std::string& file_name,
                              const std::filesystem::path& base_dir, std::vector<Diagnostic>& errors,
                              int depth) const {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    errors.push_back({location(file_name, e.mark), "", "malformed YAML: " + e.msg});
    return;
  }
  if (root.IsNull()) return;  // an empty file sets nothing
  if (!root.IsMap()) {
    errors.push_back({location(file_name, root.Mark()), "",
                      "expected a mapping of sections (gpu:, memory:, ...), got " + node_kind(root)});
    return;
  }

  // `extends` first, so the file's own values win whatever the key order.
  for (const auto& entry : root) {
    if (!entry.first.IsScalar() || entry.first.Scalar() != "extends") continue;
    const YAML::Node& base = entry.second;
    if (!base.IsScalar() || base.Scalar().empty()) {
      errors.push_back({location(file_name, base.Mark()), "extends",
                        "expected a preset name or a file path, got " + node_kind(base)});
      continue;
    }
    if (depth >= kMaxExtendsDepth) {
      errors.push_back({location(file_name, base.Mark()), "extends",
                        "presets extend each other more than " + std::to_string(kMaxExtendsDepth) +
                            " levels deep (a cycle?)"});
      continue;
    }
    try {
      std::filesystem::path base_path = base.Scalar();
      const bool is_path = base.Scalar().find('/') != std::string::npos || base_path.has_extension();
      if (is_path && base_path.is_relative()) base_path = base_dir / base_path;
      apply_file(config, is_path ? base_path : resolve(base.Scalar()), errors, depth + 1);
    } catch (const ConfigError& e) {
      for (const Diagnostic& d : e.diagnostics()) {
        errors.push_back({location(file_name, base.Mark()), "extends", d.message});
      }
    }
  }

  // Walk the nested mappings; a leaf's dotted path names a knob.
  struct Frame {
    YAML::Node node;
    std::string prefix;
  };
  std::vector<Frame> stack{{root, ""}};
  std::set<std::string> seen;
  while (!stack.empty()) {
    Frame frame = stack.back();
    stack.pop_back();
    // Children are pushed in reverse so diagnostics come out in file order.
    std::vector<Frame> children;
    for (const auto& entry : frame.node) {
      const YAML::Node& key_node = entry.first;
      const YAML::Node& value_node = entry.second;
      const std::string where = location(file_name, key_node.Mark());
      if (!key_node.IsScalar()) {
        errors.push_back({where, frame.prefix, "keys must be plain names"});
        continue;
      }
      const std::string key = frame.prefix.empty() ? key_node.Scalar()
                                                    : frame.prefix + "." + key_node.Scalar();
      if (key == "extends") continue;
      if (!seen.insert(key).second) {
        errors.push_back({where, key, "duplicate key"});
        continue;
      }
      const auto index = registry_->find(key);
      if (index) {
        const KnobSpec& spec = registry_->at(*index);
        if (!value_node.IsScalar()) {
          errors.push_back({where, key, "expected " + spec.type_label() + " value, got " + node_kind(value_node)});
          continue;
        }
        ParseOutcome parsed = parse_knob_value(spec, value_node.Scalar());
        if (auto* message = std::get_if<std::string>(&parsed)) {
          errors.push_back({location(file_name, value_node.Mark()), key, *message});
          continue;
        }
        const YAML::Mark mark = value_node.Mark();
        config.set(*index, std::get<KnobValue>(std::move(parsed)),
                   Origin{Origin::Kind::File, file_name, mark.line + 1, mark.column + 1});
      } else if (registry_->is_section(key)) {
        if (!value_node.IsMap()) {
          errors.push_back({where, key, "is a section; expected a mapping of its keys, got " +
                                            node_kind(value_node)});
          continue;
        }
        children.push_back({value_node, key});
      } else {
        errors.push_back({where, key, "unknown key" + did_you_mean(*registry_, key)});
      }
    }
    stack.insert(stack.end(), children.rbegin(), children.rend());
  }
}

void ConfigLoader::apply_overrides(Config& config, const std::vector<std::string>& overrides,
                                   std::vector<Diagnostic>& errors) const {
  for (const std::string& override_text : overrides) {
    const std::string where = "--set '" + override_text + "'";
    const size_t equals = override_text.find('=');
    if (equals == std::string::npos || equals == 0) {
      errors.push_back({where, "", "expected key=value, e.g. --set gpu.sm.count=80"});
      continue;
    }
    const std::string key = override_text.substr(0, equals);
    const std::string value_text = override_text.substr(equals + 1);
    const auto index = registry_->find(key);
    if (!index) {
      const std::string what = registry_->is_section(key) ? "is a section, not a knob"
                                                          : "unknown key" + did_you_mean(*registry_, key);
      errors.push_back({where, key, what});
      continue;
    }
    ParseOutcome parsed = parse_knob_value(registry_->at(*index), value_text);
    if (auto* message = std::get_if<std::string>(&parsed)) {
      errors.push_back({where, key, *message});
      continue;
    }
    config.set(*index, std::get<KnobValue>(std::move(parsed)), Origin{Origin::Kind::Override, {}, 0, 0});
  }
}

std::vector<std::filesystem::path> default_preset_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("GPUVP_CONFIG_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  if (std::string(GPUVP_SOURCE_CONFIG_DIR).size() > 0) dirs.emplace_back(GPUVP_SOURCE_CONFIG_DIR);
  return dirs;
}

}  // namespace gpuvp::config
