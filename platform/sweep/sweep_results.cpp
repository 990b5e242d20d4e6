#include "platform/sweep/sweep_results.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

namespace gpuvp::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ordered = nlohmann::ordered_json;

std::string number_text(double value) {
  if (std::fabs(value) < 9007199254740992.0 && value == std::floor(value)) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  return json(value).dump();  // shortest round-trip form
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::optional<double> json_number(const json& node) {
  if (node.is_number()) return node.get<double>();
  return std::nullopt;
}

// A statistics file is outside input: `node[key]` only when node is an object holding it, else
// null (nlohmann's const operator[] on a missing key is undefined behaviour, and value() throws
// on a non-object; found by the stats fuzzer).
const json& member(const json& node, const std::string& key) {
  static const json null_value;
  if (!node.is_object()) return null_value;
  const auto it = node.find(key);
  return it != node.end() ? *it : null_value;
}
std::string text_member(const json& node, const std::string& key) {
  const json& value = member(node, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

// Looks `name` up among one group's stats (run-scope layout when `full`, else kernel-compact).
std::optional<double> stat_in_group(const json& group, const std::string& name, bool full, std::string& unit,
                                    bool& exists) {
  exists = false;
  if (const auto c = group.find("counters"); c != group.end()) {
    if (const auto s = c->find(name); s != c->end()) {
      exists = true;
      if (full) {
        unit = text_member(*s, "unit");
        return json_number(member(*s, "value"));
      }
      return json_number(*s);
    }
  }
  if (const auto r = group.find("ratios"); r != group.end()) {
    if (const auto s = r->find(name); s != r->end()) {
      exists = true;
      return full ? json_number(member(*s, "value")) : json_number(*s);
    }
  }
  // histogram: "name" is its mean; "name.field" a field of it
  std::string hist = name;
  std::string field = "mean";
  if (const size_t dot = name.rfind('.'); dot != std::string::npos) {
    hist = name.substr(0, dot);
    field = name.substr(dot + 1);
  }
  for (const auto& [h, f] : {std::pair{name, std::string("mean")}, std::pair{hist, field}}) {
    if (const auto hs = group.find("histograms"); hs != group.end()) {
      if (const auto s = hs->find(h); s != hs->end() && s->contains(f)) {
        exists = true;
        if (full) unit = text_member(*s, "unit");
        return json_number(member(*s, f));
      }
    }
  }
  return std::nullopt;
}

// Finds the statistic `dotted` in a scope's groups and aggregates: the group is the longest
// prefix that names one.
std::optional<double> stat_in_scope(const json& scope, const std::string& dotted, bool full, std::string& unit,
                                    bool& exists) {
  exists = false;
  for (size_t dot = dotted.rfind('.'); dot != std::string::npos && dot > 0; dot = dotted.rfind('.', dot - 1)) {
    const std::string group = dotted.substr(0, dot);
    const std::string rest = dotted.substr(dot + 1);
    for (const char* section : {"groups", "aggregates"}) {
      const auto groups = scope.find(section);
      if (groups == scope.end()) continue;
      const auto g = groups->find(group);
      if (g == groups->end()) continue;
      auto value = stat_in_group(*g, rest, full, unit, exists);
      if (exists) return value;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view status_name(PointStatus status) {
  switch (status) {
    case PointStatus::Ok: return "ok";
    case PointStatus::Failed: return "failed";
    case PointStatus::Crashed: return "crashed";
    case PointStatus::Timeout: return "timeout";
    case PointStatus::Lost: return "lost";
  }
  return "failed";
}

std::optional<PointStatus> parse_status(std::string_view name) {
  for (auto s : {PointStatus::Ok, PointStatus::Failed, PointStatus::Crashed, PointStatus::Timeout, PointStatus::Lost}) {
    if (status_name(s) == name) return s;
  }
  return std::nullopt;
}

std::optional<double> extract_metric(const json& stats, const Metric& metric, std::string& unit, std::string& problem) {
  unit.clear();
  problem.clear();
  bool exists = false;
  if (metric.kernel.empty()) {
    const auto run = stats.find("run");
    if (run == stats.end()) {
      problem = "the statistics have no run scope";
      return std::nullopt;
    }
    auto value = stat_in_scope(*run, metric.stat, true, unit, exists);
    if (!exists) problem = "no statistic '" + metric.stat + "' in the run scope";
    return value;
  }
  // Units are declared in the run scope only; kernel scopes hold bare numbers.
  std::string run_unit;
  bool run_exists = false;
  if (const auto run = stats.find("run"); run != stats.end()) stat_in_scope(*run, metric.stat, true, run_unit, run_exists);
  const auto kernels = stats.find("kernels");
  if (kernels == stats.end() || !kernels->is_array()) {
    problem = "the statistics have no kernel scopes";
    return std::nullopt;
  }
  const bool all = metric.kernel == "*";
  std::optional<double> sum;
  bool matched = false;
  for (const auto& kernel : *kernels) {
    if (!all && text_member(kernel, "name") != metric.kernel) continue;
    matched = true;
    std::optional<double> value;
    if (metric.stat == "kernel.time_ps") {
      value = json_number(member(member(kernel, "time_ps"), "sum"));
      exists = value.has_value();
      run_unit = "ps";
    } else if (metric.stat == "kernel.launches") {
      value = json_number(member(kernel, "launches"));
      exists = value.has_value();
      run_unit = "launch";
    } else {
      std::string ignored;
      value = stat_in_scope(kernel, metric.stat, false, ignored, exists);
    }
    if (!exists) {
      problem = "no statistic '" + metric.stat + "' in kernel '" + text_member(kernel, "name") + "'";
      return std::nullopt;
    }
    if (!value) return std::nullopt;  // a ratio without a denominator: null
    sum = sum.value_or(0) + *value;
  }
  if (!matched) {
    problem = all ? "no kernel ran" : "no kernel named '" + metric.kernel + "' ran";
    return std::nullopt;
  }
  unit = run_unit;
  return sum;
}

json record_to_json(const PointRecord& record, const SweepSpec& spec) {
  ordered out;
  out["id"] = record.id;
  out["index"] = record.index;
  out["status"] = std::string(status_name(record.status));
  out["exit_code"] = record.exit_code;
  out["host_seconds"] = record.host_seconds;
  ordered metrics = ordered::object();
  ordered units = ordered::object();
  for (size_t m = 0; m < spec.metrics.size() && m < record.metrics.size(); ++m) {
    metrics[spec.metrics[m].column] = record.metrics[m] ? ordered(*record.metrics[m]) : ordered();
    units[spec.metrics[m].column] = m < record.metric_units.size() ? record.metric_units[m] : "";
  }
  out["metrics"] = metrics;
  out["metric_units"] = units;
  out["message"] = record.message;
  out["stderr_tail"] = record.stderr_tail;
  return json::parse(out.dump());
}

namespace {

// An integer of a point record as written: a JSON integer within T's range. A float, a string or
// an integer out of range makes the record unreadable (nlohmann's conversion of 1e60 to an int
// is undefined behaviour; found by the stats fuzzer).
template <class T>
std::optional<T> integer_field(const json& in, const char* name, std::optional<T> missing) {
  const auto it = in.find(name);
  if (it == in.end()) return missing;
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if (v <= static_cast<uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(v);
  } else if (it->is_number_integer()) {
    const int64_t v = it->get<int64_t>();
    if (v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
        (v < 0 || static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
      return static_cast<T>(v);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<PointRecord> record_from_json(const json& in, const SweepSpec& spec) {
  try {
    PointRecord record;
    record.id = in.at("id").get<std::string>();
    const auto index = integer_field<size_t>(in, "index", std::nullopt);
    const auto exit_code = integer_field<int>(in, "exit_code", 0);
    if (!index || !exit_code) return std::nullopt;
    record.index = *index;
    const auto status = parse_status(in.at("status").get<std::string>());
    if (!status) return std::nullopt;
    record.status = *status;
    record.exit_code = *exit_code;
    record.host_seconds = in.value("host_seconds", 0.0);
    const auto& metrics = in.at("metrics");
    const json units = in.value("metric_units", json::object());
    for (const auto& metric : spec.metrics) {
      const auto found = metrics.find(metric.column);
      record.metrics.push_back(found != metrics.end() && found->is_number() ? std::optional<double>(found->get<double>())
                                                                           : std::nullopt);
      record.metric_units.push_back(units.value(metric.column, ""));
    }
    record.message = in.value("message", "");
    record.stderr_tail = in.value("stderr_tail", "");
    return record;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

fs::path point_dir(const fs::path& out_dir, const Point& point) { return out_dir / "points" / point.id; }

std::optional<PointRecord> read_record(const fs::path& out_dir, const SweepSpec& spec, const Point& point) {
  std::ifstream in(point_dir(out_dir, point) / "point.json");
  if (!in) return std::nullopt;
  const json parsed = json::parse(in, nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  auto record = record_from_json(parsed, spec);
  if (!record || record->id != point.id) return std::nullopt;
  record->index = point.index;  // the spec may have been reordered; the id is what counts
  return record;
}

void write_record(const fs::path& out_dir, const SweepSpec& spec, const PointRecord& record) {
  const Point& point = spec.points.at(record.index);
  const fs::path dir = point_dir(out_dir, point);
  fs::create_directories(dir);
  const fs::path temporary = dir / "point.json.tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out << record_to_json(record, spec).dump(2) << "\n";
    if (!out) throw std::runtime_error(temporary.string() + ": error: cannot write the point record");
  }
  fs::rename(temporary, dir / "point.json");
}

bool is_finished(const PointRecord& record, bool retry_failed) {
  if (record.status == PointStatus::Lost) return false;
  return !retry_failed || record.status == PointStatus::Ok;
}

WrittenResults write_results(const fs::path& out_dir, const SweepSpec& spec, const config::KnobRegistry& registry) {
  WrittenResults written;
  written.csv = out_dir / "results.csv";
  written.json = out_dir / "results.json";

  std::vector<std::optional<PointRecord>> records;
  std::vector<std::string> metric_units(spec.metrics.size());
  for (const Point& point : spec.points) {
    records.push_back(read_record(out_dir, spec, point));
    if (!records.back()) continue;
    for (size_t m = 0; m < spec.metrics.size(); ++m) {
      if (metric_units[m].empty() && m < records.back()->metric_units.size()) metric_units[m] = records.back()->metric_units[m];
    }
  }

  ordered doc;
  doc["format"] = "gpuvp-sweep-results";
  doc["version"] = 1;
  doc["name"] = spec.name;
  doc["spec"] = spec.file;
  doc["base"] = spec.base;
  doc["set"] = spec.base_sets;
  ordered knobs = ordered::array();
  for (const auto& name : spec.knobs) {
    const auto& knob = registry.at(*registry.find(name));
    knobs.push_back({{"name", name},
                     {"type", knob.type_label()},
                     {"dimension", std::string(config::dimension_name(knob.dimension))},
                     {"unit", std::string(config::canonical_symbol(knob.dimension))},
                     {"doc", knob.doc}});
  }
  doc["knobs"] = knobs;
  doc["axes"] = spec.axes;
  ordered metrics = ordered::array();
  for (size_t m = 0; m < spec.metrics.size(); ++m) {
    const Metric& metric = spec.metrics[m];
    metrics.push_back({{"column", metric.column},
                       {"stat", metric.stat},
                       {"kernel", metric.kernel.empty() ? ordered() : ordered(metric.kernel)},
                       {"unit", metric_units[m]}});
  }
  doc["metrics"] = metrics;
  ordered programs = ordered::array();
  for (const auto& program : spec.programs) {
    programs.push_back({{"name", program.name}, {"path", program.path}, {"args", program.args}});
  }
  doc["programs"] = programs;

  std::ostringstream csv;
  csv << "point,id,program,args";
  for (const auto& name : spec.knobs) csv << "," << csv_field(name);
  for (const auto& metric : spec.metrics) csv << "," << csv_field(metric.column);
  csv << ",host_seconds,status,message\n";

  ordered rows = ordered::array();
  for (size_t i = 0; i < spec.points.size(); ++i) {
    const Point& point = spec.points[i];
    const Program& program = spec.programs[point.program];
    const auto& record = records[i];
    std::string args;
    for (const auto& a : program.args) args += (args.empty() ? "" : " ") + a;
    ordered row;
    row["point"] = point.index;
    row["id"] = point.id;
    row["program"] = program.name;
    row["args"] = program.args;
    ordered knob_values = ordered::object();
    ordered knob_text = ordered::object();
    csv << point.index << "," << point.id << "," << csv_field(program.name) << "," << csv_field(args);
    for (const auto& s : point.knobs) {
      const auto& knob = registry.at(*registry.find(s.knob));
      const bool numeric = knob.type == config::KnobType::Integer || knob.type == config::KnobType::Real ||
                           knob.type == config::KnobType::Quantity;
      knob_values[s.knob] = numeric ? ordered(s.value) : ordered(s.text);
      knob_text[s.knob] = s.text;
      csv << "," << csv_field(s.text);
    }
    row["knobs"] = knob_values;
    row["knob_text"] = knob_text;
    ordered metric_values = ordered::object();
    for (size_t m = 0; m < spec.metrics.size(); ++m) {
      const std::optional<double> value = record && m < record->metrics.size() ? record->metrics[m] : std::nullopt;
      metric_values[spec.metrics[m].column] = value ? ordered(*value) : ordered();
      csv << "," << (value ? number_text(*value) : "");
    }
    row["metrics"] = metric_values;
    const std::string status = record ? std::string(status_name(record->status)) : "missing";
    row["host_seconds"] = record ? ordered(record->host_seconds) : ordered();
    row["status"] = status;
    row["message"] = record ? record->message : "no record: the point has not run";
    if (record && !record->stderr_tail.empty()) row["stderr"] = record->stderr_tail;
    char seconds[32] = "";
    if (record) std::snprintf(seconds, sizeof seconds, "%.3f", record->host_seconds);
    csv << "," << seconds << "," << status << "," << csv_field(row["message"].get<std::string>()) << "\n";
    rows.push_back(row);
    if (!record) ++written.missing;
    if (!record || record->status != PointStatus::Ok) ++written.not_ok;
  }
  doc["rows"] = rows;

  fs::create_directories(out_dir);
  for (const auto& [path, text] : {std::pair{written.csv, csv.str()}, std::pair{written.json, doc.dump(2) + "\n"}}) {
    const fs::path temporary = path.string() + ".tmp";
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw std::runtime_error(temporary.string() + ": error: cannot write the results");
    fs::rename(temporary, path);
  }
  return written;
}

}  // namespace gpuvp::sweep
