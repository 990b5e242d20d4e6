#include "platform/sweep/sweep_spec.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "platform/config/value_parser.h"
#include "platform/platform_params.h"

namespace gpuvp::sweep {
namespace {

namespace fs = std::filesystem;
using config::KnobSpec;
using config::KnobType;
using config::KnobValue;

constexpr size_t kMaxPoints = 100000;

std::string join(const std::vector<std::string>& messages) {
  std::string out;
  for (const auto& m : messages) out += (out.empty() ? "" : "\n") + m;
  return out;
}

// FNV-1a, 64 bit: a point's id must not change between runs or hosts.
std::string stable_hash(const std::string& text) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4) out[static_cast<size_t>(i)] = digits[hash & 15];
  return out;
}

// One knob's list of values, with where each came from (for the platform's combination rules).
struct Axis {
  std::vector<size_t> knobs;                         // registry indices
  std::vector<std::vector<KnobSetting>> values;      // values[v][k]
  std::vector<std::string> where;                    // per value: spec location
};

class Parser {
 public:
  Parser(std::string file_name, fs::path base_dir, const config::ConfigLoader& loader, const Variables& variables)
      : file_(std::move(file_name)), base_dir_(std::move(base_dir)), loader_(loader), variables_(variables) {}

  SweepSpec parse(const std::string& text);

 private:
  std::string at(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.line < 0) return file_;
    return file_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  void error(const YAML::Node& node, const std::string& message) { errors_.push_back(at(node) + ": error: " + message); }
  std::string scalar(const YAML::Node& node, const std::string& what) {
    if (!node.IsScalar()) {
      error(node, what + " must be a single value");
      return {};
    }
    return node.Scalar();
  }
  std::string substitute(const YAML::Node& node, const std::string& text);
  const KnobSpec* knob(const YAML::Node& key_node, const std::string& name, size_t& index);
  std::vector<KnobSetting> values(const KnobSpec& spec, const YAML::Node& node, std::vector<std::string>& where);
  void parse_knobs(const YAML::Node& node);
  void parse_programs(const YAML::Node& node);
  void parse_metrics(const YAML::Node& node);
  void expand();

  std::string file_;
  fs::path base_dir_;
  const config::ConfigLoader& loader_;
  const Variables& variables_;
  std::vector<std::string> errors_;
  SweepSpec spec_;
  std::vector<Axis> axes_;
  YAML::Node base_node_;
};

std::string Parser::substitute(const YAML::Node& node, const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      const size_t end = text.find('}', i);
      if (end == std::string::npos) {
        error(node, "'${' without a closing '}' in '" + text + "'");
        return text;
      }
      const std::string name = text.substr(i + 2, end - i - 2);
      if (const auto found = variables_.find(name); found != variables_.end()) {
        out += found->second;
      } else if (const char* env = std::getenv(name.c_str()); env != nullptr) {
        out += env;
      } else {
        error(node, "${" + name + "} names neither a sweep variable (build, spec_dir) nor an environment variable");
      }
      i = end;
    } else {
      out += text[i];
    }
  }
  return out;
}

const KnobSpec* Parser::knob(const YAML::Node& key_node, const std::string& name, size_t& index) {
  const auto& registry = loader_.registry();
  if (const auto found = registry.find(name)) {
    index = *found;
    return &registry.at(*found);
  }
  std::string message = "unknown knob '" + name + "'";
  const auto suggestions = registry.suggest(name);
  if (!suggestions.empty()) message += " (did you mean '" + suggestions.front() + "'?)";
  error(key_node, message + "; `gpuvp config list` shows every knob");
  return nullptr;
}

std::vector<KnobSetting> Parser::values(const KnobSpec& spec, const YAML::Node& node, std::vector<std::string>& where) {
  std::vector<KnobSetting> out;
  auto add = [&](const YAML::Node& at_node, const KnobValue& value) {
    out.push_back({spec.name, spec.format(value), value.number});
    where.push_back(at(at_node));
  };
  auto parse_one = [&](const YAML::Node& value_node, const KnobSpec& as) -> std::optional<KnobValue> {
    if (!value_node.IsScalar()) {
      error(value_node, spec.name + ": a value must be a single value, e.g. '" + spec.default_text + "'");
      return std::nullopt;
    }
    const auto parsed = config::parse_knob_value(as, value_node.Scalar());
    if (const auto* message = std::get_if<std::string>(&parsed)) {
      error(value_node, spec.name + ": " + *message);
      return std::nullopt;
    }
    return std::get<KnobValue>(parsed);
  };

  if (node.IsSequence()) {
    if (node.size() == 0) error(node, spec.name + ": the list of values is empty");
    for (const auto& item : node) {
      if (const auto value = parse_one(item, spec)) add(item, *value);
    }
    return out;
  }
  if (node.IsScalar()) {
    if (const auto value = parse_one(node, spec)) add(node, *value);
    return out;
  }
  if (!node.IsMap()) {
    error(node, spec.name + ": write a list of values or a range {from: .., to: .., step: .. | factor: .. | count: ..}");
    return out;
  }
  // A range.
  const bool numeric = spec.type == KnobType::Integer || spec.type == KnobType::Real || spec.type == KnobType::Quantity;
  if (!numeric) {
    error(node, spec.name + ": a range needs a numeric knob; list the values of a " + spec.type_label() + " knob");
    return out;
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (key != "from" && key != "to" && key != "step" && key != "factor" && key != "count") {
      error(entry.first, spec.name + ": unknown range key '" + key + "' (from, to, step, factor, count)");
    }
  }
  if (!node["from"] || !node["to"]) {
    error(node, spec.name + ": a range needs 'from' and 'to'");
    return out;
  }
  const int ways = (node["step"] ? 1 : 0) + (node["factor"] ? 1 : 0) + (node["count"] ? 1 : 0);
  if (ways != 1) {
    error(node, spec.name + ": a range needs exactly one of 'step', 'factor' or 'count'");
    return out;
  }
  const auto from = parse_one(node["from"], spec);
  const auto to = parse_one(node["to"], spec);
  if (!from || !to) return out;
  if (to->number < from->number) {
    error(node["to"], spec.name + ": 'to' is below 'from'");
    return out;
  }
  std::vector<double> numbers;
  if (node["step"]) {
    KnobSpec step_spec = spec;  // same type and unit, any positive size
    step_spec.min = 0;
    step_spec.max = std::numeric_limits<double>::max();
    const auto step = parse_one(node["step"], step_spec);
    if (!step) return out;
    if (step->number <= 0) {
      error(node["step"], spec.name + ": 'step' must be positive");
      return out;
    }
    const double span = (to->number - from->number) / step->number;
    if (span > static_cast<double>(kMaxPoints)) {
      error(node["step"], spec.name + ": the range has more than " + std::to_string(kMaxPoints) + " values");
      return out;
    }
    for (size_t i = 0; i <= static_cast<size_t>(std::floor(span + 1e-9)); ++i) {
      numbers.push_back(from->number + static_cast<double>(i) * step->number);
    }
  } else if (node["factor"]) {
    double factor = 0;
    try {
      factor = node["factor"].as<double>();
    } catch (const YAML::Exception&) {
    }
    if (!(factor > 1)) {
      error(node["factor"], spec.name + ": 'factor' must be a number above 1");
      return out;
    }
    if (from->number <= 0) {
      error(node["from"], spec.name + ": a range with 'factor' must start above 0");
      return out;
    }
    for (double v = from->number; v <= to->number * (1 + 1e-9) && numbers.size() <= kMaxPoints; v *= factor) {
      numbers.push_back(v);
    }
  } else {
    int64_t count = 0;
    try {
      count = node["count"].as<int64_t>();
    } catch (const YAML::Exception&) {
    }
    if (count < 2 || count > static_cast<int64_t>(kMaxPoints)) {
      error(node["count"], spec.name + ": 'count' must be a whole number from 2 to " + std::to_string(kMaxPoints));
      return out;
    }
    for (int64_t i = 0; i < count; ++i) {
      numbers.push_back(from->number + (to->number - from->number) * static_cast<double>(i) / static_cast<double>(count - 1));
    }
  }
  const bool whole = spec.type == KnobType::Integer || spec.whole;
  for (double number : numbers) {
    if (whole) {
      if (std::fabs(number - std::round(number)) > 1e-6 * std::max(1.0, std::fabs(number))) {
        error(node, spec.name + ": the range reaches " + config::format_number(number) +
                        ", which is not a whole number of " + std::string(config::canonical_symbol(spec.dimension).empty()
                                                                               ? "units"
                                                                               : config::canonical_symbol(spec.dimension)));
        return out;
      }
      number = std::round(number);
    }
    if (const std::string problem = config::check_range(spec, number); !problem.empty()) {
      error(node, spec.name + ": " + problem);
      return out;
    }
    add(node, KnobValue{number, false, {}});
  }
  return out;
}

void Parser::parse_knobs(const YAML::Node& node) {
  if (!node.IsMap()) {
    error(node, "'knobs' must map knob names to their values");
    return;
  }
  std::set<std::string> seen;
  auto one_axis = [&](const YAML::Node& key, const YAML::Node& value, Axis& axis) -> bool {
    const std::string name = key.Scalar();
    if (!seen.insert(name).second) {
      error(key, "knob '" + name + "' is swept twice");
      return false;
    }
    size_t index = 0;
    const KnobSpec* spec = knob(key, name, index);
    if (spec == nullptr) return false;
    std::vector<std::string> where;
    auto list = values(*spec, value, where);
    if (list.empty()) return false;
    if (axis.knobs.empty()) {
      for (size_t v = 0; v < list.size(); ++v) {
        axis.values.push_back({list[v]});
        axis.where.push_back(where[v]);
      }
    } else if (list.size() != axis.values.size()) {
      error(value, "zipped knob '" + name + "' has " + std::to_string(list.size()) + " values, the first has " +
                       std::to_string(axis.values.size()) + "; zipped knobs need equally many");
      return false;
    } else {
      for (size_t v = 0; v < list.size(); ++v) axis.values[v].push_back(list[v]);
    }
    axis.knobs.push_back(index);
    spec_.knobs.push_back(name);
    return true;
  };
  for (const auto& entry : node) {
    if (entry.first.Scalar() == "zip") {
      if (!entry.second.IsMap() || entry.second.size() == 0) {
        error(entry.second, "'zip' must map two or more knob names to equally long lists of values");
        continue;
      }
      Axis axis;
      bool ok = true;
      for (const auto& zipped : entry.second) ok = one_axis(zipped.first, zipped.second, axis) && ok;
      if (ok) axes_.push_back(std::move(axis));
      continue;
    }
    Axis axis;
    if (one_axis(entry.first, entry.second, axis)) axes_.push_back(std::move(axis));
  }
}

void Parser::parse_programs(const YAML::Node& node) {
  if (!node.IsSequence() || node.size() == 0) {
    error(node, "'programs' must be a list of programs: {name: .., path: .., args: [..]} or paths");
    return;
  }
  std::set<std::string> names;
  for (const auto& item : node) {
    Program program;
    const YAML::Node path_node = item.IsMap() ? item["path"] : item;
    if (item.IsMap()) {
      for (const auto& entry : item) {
        const std::string key = entry.first.Scalar();
        if (key != "name" && key != "path" && key != "args") {
          error(entry.first, "unknown program key '" + key + "' (name, path, args)");
        }
      }
      if (!path_node) {
        error(item, "a program needs a 'path'");
        continue;
      }
      if (item["name"]) program.name = scalar(item["name"], "a program's name");
      if (const auto args = item["args"]) {
        if (args.IsSequence()) {
          for (const auto& arg : args) program.args.push_back(substitute(arg, scalar(arg, "an argument")));
        } else {
          error(args, "'args' must be a list, e.g. args: [1048576]");
        }
      }
    }
    const std::string path_text = substitute(path_node, scalar(path_node, "a program's path"));
    if (path_text.empty()) continue;
    fs::path path(path_text);
    if (path.is_relative()) path = base_dir_ / path;
    path = path.lexically_normal();
    // The non-throwing forms: a path the system cannot even look up (too long, say) is an error
    // of the spec like a missing one, with the system's reason.
    std::error_code lookup;
    auto reason = [&lookup] { return lookup ? ": " + lookup.message() : std::string(); };
    if (spec_.replay) {
      // A capture directory; gpuvp replay checks its trace when the point runs.
      if (!fs::is_directory(path, lookup)) {
        error(path_node, "mode replay: '" + path_text + "' is not a capture directory (gpuvp run --capture DIR) (" +
                             path.string() + ")" + reason());
        continue;
      }
      if (!program.args.empty()) {
        error(item["args"], "mode replay: a captured trace takes no arguments (they were the captured program's)");
        continue;
      }
    } else if (!fs::is_regular_file(path, lookup)) {
      error(path_node, "program '" + path_text + "' not found (" + path.string() + ")" + reason());
      continue;
    } else if (::access(path.c_str(), X_OK) != 0) {
      error(path_node, "program '" + path.string() + "' is not executable");
      continue;
    }
    program.path = path.string();
    if (program.name.empty()) program.name = path.filename().string();
    if (!names.insert(program.name).second) {
      error(item, "two programs are named '" + program.name + "'; give them distinct names");
      continue;
    }
    spec_.programs.push_back(std::move(program));
  }
}

void Parser::parse_metrics(const YAML::Node& node) {
  if (!node.IsSequence() || node.size() == 0) {
    error(node, "'metrics' must be a list of statistics by dotted name, e.g. [gpu.time_ps, gpu.cycles]");
    return;
  }
  std::set<std::string> columns;
  for (const auto& item : node) {
    Metric metric;
    if (item.IsMap()) {
      for (const auto& entry : item) {
        const std::string key = entry.first.Scalar();
        if (key != "stat" && key != "kernel" && key != "as") {
          error(entry.first, "unknown metric key '" + key + "' (stat, kernel, as)");
        }
      }
      if (!item["stat"]) {
        error(item, "a metric needs a 'stat': a statistic's dotted name, e.g. gpu.time_ps");
        continue;
      }
      metric.stat = scalar(item["stat"], "'stat'");
      if (item["kernel"]) metric.kernel = scalar(item["kernel"], "'kernel'");
      if (item["as"]) metric.column = scalar(item["as"], "'as'");
    } else {
      metric.stat = scalar(item, "a metric");
    }
    if (metric.stat.find('.') == std::string::npos || metric.stat.front() == '.' || metric.stat.back() == '.') {
      error(item, "metric '" + metric.stat + "' is not a dotted statistic name (group.stat, e.g. gpu.time_ps)");
      continue;
    }
    if (metric.column.empty()) {
      metric.column = metric.kernel.empty() ? metric.stat
                      : metric.kernel == "*" ? "kernels:" + metric.stat
                                             : metric.kernel + ":" + metric.stat;
    }
    if (!columns.insert(metric.column).second) {
      error(item, "two metrics give the column '" + metric.column + "'; name one with 'as'");
      continue;
    }
    spec_.metrics.push_back(std::move(metric));
  }
}

void Parser::expand() {
  size_t combinations = 1;
  for (const auto& axis : axes_) {
    combinations *= axis.values.size();
    if (combinations * std::max<size_t>(1, spec_.programs.size()) > kMaxPoints) {
      errors_.push_back(file_ + ": error: the sweep has more than " + std::to_string(kMaxPoints) + " points");
      return;
    }
  }
  // Every combination must satisfy the platform's rules (a slice size that is no whole number of
  // sets, say): checked once per combination, blamed on the values that make it.
  std::vector<std::vector<KnobSetting>> settings;
  std::vector<size_t> digit(axes_.size(), 0);
  for (size_t c = 0; c < combinations; ++c) {
    std::vector<KnobSetting> combination;
    std::string where;
    for (size_t a = 0; a < axes_.size(); ++a) {
      for (const auto& s : axes_[a].values[digit[a]]) combination.push_back(s);
      where += (where.empty() ? "" : ", ") + axes_[a].where[digit[a]];
    }
    std::vector<std::string> overrides = spec_.base_sets;
    for (const auto& s : combination) overrides.push_back(s.knob + "=" + s.text);
    try {
      PlatformParams::load(loader_.load(spec_.base, overrides));
    } catch (const config::ConfigError& e) {
      std::string message;
      for (const auto& d : e.diagnostics()) message += (message.empty() ? "" : "; ") + d.key + ": " + d.message;
      std::string values;
      for (const auto& s : combination) values += (values.empty() ? "" : ", ") + s.knob + " = " + s.text;
      errors_.push_back((where.empty() ? file_ : where) + ": error: the point " + values + " is not a valid platform: " +
                        message);
    }
    settings.push_back(std::move(combination));
    for (size_t a = axes_.size(); a-- > 0;) {  // last axis fastest
      if (++digit[a] < axes_[a].values.size()) break;
      digit[a] = 0;
    }
  }
  std::string base_key = spec_.base;
  for (const auto& s : spec_.base_sets) base_key += "\n" + s;
  for (size_t p = 0; p < spec_.programs.size(); ++p) {
    const Program& program = spec_.programs[p];
    for (auto& combination : settings) {
      Point point;
      point.index = spec_.points.size();
      point.program = p;
      point.knobs = combination;
      std::string key = base_key + "\nprogram=" + program.name + "\npath=" + program.path;
      for (const auto& arg : program.args) key += "\narg=" + arg;
      for (const auto& s : combination) key += "\n" + s.knob + "=" + s.text;
      point.id = stable_hash(key);
      spec_.points.push_back(std::move(point));
    }
  }
}

SweepSpec Parser::parse(const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw SpecError({file_ + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": error: " + e.msg});
  }
  if (!root.IsMap()) throw SpecError({file_ + ": error: a sweep spec is a mapping (name, base, knobs, programs, metrics)"});
  spec_.file = file_;
  spec_.name = fs::path(file_).stem().string();
  spec_.base = "v100";
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    static const std::set<std::string> known = {"name", "base", "set", "mode", "timeout", "knobs", "programs", "metrics"};
    if (known.count(key) == 0) {
      error(entry.first, "unknown key '" + key + "' (name, base, set, mode, timeout, knobs, programs, metrics)");
    }
  }
  if (root["name"]) spec_.name = scalar(root["name"], "'name'");
  if (const auto base = root["base"]) {
    std::string name = scalar(base, "'base'");
    const bool is_path = name.find('/') != std::string::npos || fs::path(name).has_extension();
    if (is_path && fs::path(name).is_relative()) name = (base_dir_ / name).lexically_normal().string();
    try {
      loader_.resolve(name);
      spec_.base = name;
    } catch (const config::ConfigError& e) {
      error(base, "base configuration: " + e.diagnostics().front().message);
    }
  }
  if (const auto mode = root["mode"]) {
    const std::string m = scalar(mode, "'mode'");
    if (m == "replay") {
      spec_.replay = true;
    } else if (m != "execution") {
      error(mode, "unknown mode '" + m + "' (execution, replay)");
    }
  }
  if (const auto timeout = root["timeout"]) {
    KnobSpec time_spec;
    time_spec.name = "timeout";
    time_spec.type = KnobType::Quantity;
    time_spec.dimension = config::Dimension::Time;
    time_spec.min = 1e12;  // 1 s
    time_spec.max = 1e12 * 86400 * 7;
    const auto parsed = config::parse_knob_value(time_spec, scalar(timeout, "'timeout'"));
    if (const auto* message = std::get_if<std::string>(&parsed)) {
      error(timeout, "timeout: " + *message);
    } else {
      spec_.timeout_s = std::get<KnobValue>(parsed).number * 1e-12;
    }
  }
  if (const auto set = root["set"]) {
    if (!set.IsMap()) {
      error(set, "'set' must map knob names to values");
    } else {
      for (const auto& entry : set) {
        size_t index = 0;
        const KnobSpec* spec = knob(entry.first, entry.first.Scalar(), index);
        if (spec == nullptr) continue;
        std::vector<std::string> where;
        const auto list = values(*spec, entry.second, where);
        if (list.size() > 1) error(entry.second, spec->name + ": 'set' takes one value; sweep it under 'knobs'");
        if (list.size() == 1) spec_.base_sets.push_back(spec->name + "=" + list.front().text);
      }
    }
  }
  if (const auto knobs = root["knobs"]) parse_knobs(knobs);
  if (const auto programs = root["programs"]) {
    parse_programs(programs);
  } else {
    errors_.push_back(file_ + ": error: the spec names no 'programs'");
  }
  if (const auto metrics = root["metrics"]) {
    parse_metrics(metrics);
  } else {
    errors_.push_back(file_ + ": error: the spec names no 'metrics'");
  }
  for (const auto& s : spec_.base_sets) {
    const std::string knob_name = s.substr(0, s.find('='));
    for (const auto& swept : spec_.knobs) {
      if (swept == knob_name) errors_.push_back(file_ + ": error: knob '" + swept + "' is both set and swept");
    }
  }
  for (const auto& axis : axes_) {
    std::vector<std::string> names;
    for (size_t index : axis.knobs) names.push_back(loader_.registry().at(index).name);
    spec_.axes.push_back(std::move(names));
  }
  if (errors_.empty()) expand();
  if (!errors_.empty()) throw SpecError(errors_);
  return spec_;
}

}  // namespace

SpecError::SpecError(std::vector<std::string> messages) : std::runtime_error(join(messages)), messages_(std::move(messages)) {}

std::vector<std::string> SweepSpec::overrides(const Point& point) const {
  std::vector<std::string> out = base_sets;
  for (const auto& s : point.knobs) out.push_back(s.knob + "=" + s.text);
  return out;
}

SweepSpec load_spec_text(const std::string& text, const std::string& file_name, const fs::path& base_dir,
                         const config::ConfigLoader& loader, const Variables& variables) {
  Variables all = variables;
  all.emplace("spec_dir", base_dir.string());
  return Parser(file_name, base_dir, loader, all).parse(text);
}

SweepSpec load_spec(const fs::path& file, const config::ConfigLoader& loader, const Variables& variables) {
  std::ifstream in(file);
  if (!in) throw SpecError({file.string() + ": error: cannot read the sweep spec"});
  std::stringstream text;
  text << in.rdbuf();
  const fs::path dir = fs::absolute(file).parent_path();
  return load_spec_text(text.str(), file.string(), dir, loader, variables);
}

}  // namespace gpuvp::sweep
