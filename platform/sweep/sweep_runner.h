// Running sweep points: each point is one `gpuvp run` process (its own process group, its
// stdout, stderr and statistics in the point's folder), so a crash or a hang costs that point
// only. run_local keeps up to `jobs` of them running on this machine.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "platform/sweep/sweep_results.h"
#include "platform/sweep/sweep_spec.h"

namespace gpuvp::sweep {

struct RunOptions {
  std::filesystem::path out_dir;
  std::string gpuvp;           // the gpuvp executable that runs each point
  unsigned jobs = 1;
  bool quiet = false;          // no progress output, only the summary and errors
  bool retry_failed = false;   // rerun recorded points that are not ok
  bool progress_line = false;  // redraw one progress line (a terminal) instead of a line per point
};

// One point's process.
class PointProcess {
 public:
  PointProcess(const SweepSpec& spec, const Point& point, const RunOptions& options);
  ~PointProcess();  // kills the process group if still running
  PointProcess(const PointProcess&) = delete;
  PointProcess& operator=(const PointProcess&) = delete;

  // Starts it; false (with a Failed record ready from poll()) when it cannot be started.
  bool start();
  // The record once the process has ended (or hit the timeout, which kills it); nullopt while
  // it runs.
  std::optional<PointRecord> poll();
  // Ends the process group without a record (the sweep was interrupted).
  void abandon();
  const Point& point() const { return point_; }

 private:
  PointRecord finish(int wait_status, bool timed_out);

  const SweepSpec& spec_;
  const Point& point_;
  const RunOptions& options_;
  pid_t pid_ = -1;
  std::chrono::steady_clock::time_point started_;
  std::optional<PointRecord> early_;
};

// Runs a point to its end (blocking) and returns its record; used by MPI workers and SLURM tasks.
PointRecord run_point(const SweepSpec& spec, const Point& point, const RunOptions& options);

// Which points still have to run: those without a finished record (see is_finished).
std::vector<size_t> pending_points(const SweepSpec& spec, const RunOptions& options);

// The progress line: "sweep clocks: 12/36 done, 2 running, 1 failed, ETA 1m 23s".
class Progress {
 public:
  Progress(const SweepSpec& spec, const RunOptions& options, std::ostream& out, size_t already_done);
  void started();
  void finished(const PointRecord& record);
  void close();  // ends the progress line

 private:
  void draw();
  const SweepSpec& spec_;
  const RunOptions& options_;
  std::ostream& out_;
  size_t done_ = 0;
  size_t running_ = 0;
  size_t failed_ = 0;
  size_t ran_ = 0;
  double ran_seconds_ = 0;
  std::chrono::steady_clock::time_point start_;
};

struct RunSummary {
  size_t total = 0;
  size_t skipped = 0;      // finished before this run (resumed)
  size_t ran = 0;
  size_t not_ok = 0;       // of those that ran
  bool interrupted = false;  // SIGINT/SIGTERM: unfinished points left without a record
};

// Runs every pending point, up to options.jobs at a time; records each as it ends. SIGINT and
// SIGTERM stop the sweep: running points are killed and left unrecorded (a later run does them).
RunSummary run_local(const SweepSpec& spec, const RunOptions& options, std::ostream& log);

// Human text for a finished point: "nbody gpu.sm.clock=500 MHz: ok (3.1 s)".
std::string describe(const SweepSpec& spec, const PointRecord& record);

// A flag set by SIGINT/SIGTERM while a sweep runs (installed by run_local and the MPI driver).
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  static bool requested();
};

}  // namespace gpuvp::sweep

namespace gpuvp::sweep {

// A SLURM job-array script for clusters without MPI jobs: array task i runs point i
// (`gpuvp sweep SPEC -o OUT --point i`); `gpuvp sweep --merge SPEC -o OUT` then writes the tables.
std::string slurm_script(const SweepSpec& spec, const std::string& gpuvp, const std::filesystem::path& spec_path,
                         const std::filesystem::path& out_dir);

}  // namespace gpuvp::sweep
