// What one sweep point produced, how it is kept on disk, and the result tables.
//
// A sweep's output folder holds one folder per point (points/<id>/: point.json, stats.json,
// stdout.txt, stderr.txt) and, once the points are done, results.csv and results.json with one
// row per point in sweep order. point.json is written last (atomically), so a point with a
// record is finished: a resumed sweep skips it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "platform/sweep/sweep_spec.h"

namespace gpuvp::sweep {

enum class PointStatus {
  Ok,       // the program exited 0 and every metric was found
  Failed,   // the program exited non-zero, or gpuvp rejected the run, or a metric is missing
  Crashed,  // a signal ended the program or gpuvp
  Timeout,  // killed at the spec's timeout
  Lost,     // the MPI rank running it died; rerun on resume
};
std::string_view status_name(PointStatus status);
std::optional<PointStatus> parse_status(std::string_view name);

struct PointRecord {
  std::string id;
  size_t index = 0;
  PointStatus status = PointStatus::Failed;
  int exit_code = 0;              // gpuvp run's exit code (128 + signal when a signal ended the program)
  double host_seconds = 0;        // wall time of the point's process
  std::vector<std::optional<double>> metrics;  // parallel to SweepSpec::metrics
  std::vector<std::string> metric_units;       // parallel; "" when unknown
  std::string message;            // why it is not Ok
  std::string stderr_tail;        // last lines of the point's stderr when not Ok
};

// A metric's value in a statistics JSON (gpuvp run --stats): the run scope's group and
// aggregate counters, ratios and histogram means (name.mean, .count, .sum, .min, .max also
// select a histogram field); per kernel name from "kernels" (time_ps and launches are the
// kernel entry's own). Sets `unit` when the statistic has one; nullopt with `problem` set when
// the statistic does not exist.
std::optional<double> extract_metric(const nlohmann::json& stats, const Metric& metric, std::string& unit,
                                     std::string& problem);

nlohmann::json record_to_json(const PointRecord& record, const SweepSpec& spec);
std::optional<PointRecord> record_from_json(const nlohmann::json& json, const SweepSpec& spec);

// Where a point's files live, and its record on disk (nullopt when missing, unreadable or of
// another point).
std::filesystem::path point_dir(const std::filesystem::path& out_dir, const Point& point);
std::optional<PointRecord> read_record(const std::filesystem::path& out_dir, const SweepSpec& spec, const Point& point);
// Writes point.json atomically (temporary file, then rename).
void write_record(const std::filesystem::path& out_dir, const SweepSpec& spec, const PointRecord& record);

// Whether a recorded point counts as finished for a resumed sweep: everything but Lost, and
// with retry_failed only Ok.
bool is_finished(const PointRecord& record, bool retry_failed);

// The tables, from the records of every point (missing points appear with status "missing").
// Returns the number of rows whose status is not ok.
struct WrittenResults {
  std::filesystem::path csv;
  std::filesystem::path json;
  size_t not_ok = 0;
  size_t missing = 0;
};
WrittenResults write_results(const std::filesystem::path& out_dir, const SweepSpec& spec,
                             const config::KnobRegistry& registry);

}  // namespace gpuvp::sweep
