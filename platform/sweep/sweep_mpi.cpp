#include "platform/sweep/sweep_mpi.h"

#include <mpi.h>

#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

namespace gpuvp::sweep {
namespace {

using Clock = std::chrono::steady_clock;

enum Tag : int {
  kRequest = 1,    // worker -> 0: the record of its last point (empty the first time); wants work
  kHeartbeat = 2,  // worker -> 0: still running its point
  kWork = 3,       // 0 -> worker: one int, the point's index
  kStop = 4,       // 0 -> worker: nothing left
};

constexpr double kHeartbeatSeconds = 1.0;

struct Worker {
  int assigned = -1;
  Clock::time_point last_seen = Clock::now();
  bool stopped = false;
  bool dead = false;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int coordinate(const SweepSpec& spec, const RunOptions& options, double rank_timeout_s, std::ostream& log, int ranks,
               const std::function<int(const RunSummary&)>& report) {
  RunSummary summary;
  summary.total = spec.points.size();
  const std::vector<size_t> pending = pending_points(spec, options);
  summary.skipped = spec.points.size() - pending.size();
  if (!options.quiet) {
    log << "sweep " << spec.name << ": " << pending.size() << " of " << summary.total << " points to run on " << ranks
        << " MPI rank(s)\n";
  }
  Progress progress(spec, options, log, summary.skipped);
  std::deque<size_t> queue(pending.begin(), pending.end());
  std::vector<Worker> workers(static_cast<size_t>(ranks));
  std::unique_ptr<PointProcess> local;
  size_t dead = 0;

  auto record_done = [&](const PointRecord& record) {
    write_record(options.out_dir, spec, record);
    ++summary.ran;
    if (record.status != PointStatus::Ok) ++summary.not_ok;
    progress.finished(record);
  };

  for (;;) {
    if (StopSignals::requested()) {
      if (local) local->abandon();
      summary.interrupted = true;
      progress.close();
      report(summary);
      MPI_Abort(MPI_COMM_WORLD, 130);
    }
    bool busy = false;
    if (!local && !queue.empty()) {
      local = std::make_unique<PointProcess>(spec, spec.points[queue.front()], options);
      queue.pop_front();
      local->start();
      progress.started();
    }
    if (local) {
      if (auto record = local->poll()) {
        record_done(*record);
        local.reset();
        busy = true;
      }
    }
    int flag = 0;
    MPI_Status status;
    while (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status) == MPI_SUCCESS && flag) {
      busy = true;
      const int source = status.MPI_SOURCE;
      int count = 0;
      MPI_Get_count(&status, MPI_CHAR, &count);
      std::string payload(static_cast<size_t>(count), '\0');
      MPI_Recv(payload.data(), count, MPI_CHAR, source, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      Worker& worker = workers[static_cast<size_t>(source)];
      worker.last_seen = Clock::now();
      if (status.MPI_TAG != kRequest) continue;
      if (!payload.empty()) {
        const auto parsed = nlohmann::json::parse(payload, nullptr, false);
        auto record = parsed.is_discarded() ? std::nullopt : record_from_json(parsed, spec);
        if (record && record->index < spec.points.size()) {
          record_done(*record);
        } else {
          log << "sweep: rank " << source << " sent an unreadable record; its point stays unfinished\n";
        }
        worker.assigned = -1;
      }
      if (worker.dead) continue;
      if (!queue.empty()) {
        int index = static_cast<int>(queue.front());
        queue.pop_front();
        MPI_Send(&index, 1, MPI_INT, source, kWork, MPI_COMM_WORLD);
        worker.assigned = index;
        progress.started();
      } else {
        MPI_Send(nullptr, 0, MPI_INT, source, kStop, MPI_COMM_WORLD);
        worker.stopped = true;
      }
    }
    for (size_t r = 1; r < workers.size(); ++r) {
      Worker& worker = workers[r];
      if (worker.dead || worker.assigned < 0 || seconds_since(worker.last_seen) <= rank_timeout_s) continue;
      PointRecord lost;
      lost.index = static_cast<size_t>(worker.assigned);
      lost.id = spec.points[lost.index].id;
      lost.status = PointStatus::Lost;
      lost.exit_code = -1;
      lost.metrics.assign(spec.metrics.size(), std::nullopt);
      lost.metric_units.assign(spec.metrics.size(), "");
      lost.message = "MPI rank " + std::to_string(r) + " stopped responding while running this point (silent for " +
                     std::to_string(static_cast<int>(rank_timeout_s)) + " s); rerun the sweep to run it again";
      record_done(lost);
      log << (options.progress_line ? "\r\033[K" : "") << "sweep: " << lost.message << "\n";
      worker.dead = true;
      worker.assigned = -1;
      ++dead;
      busy = true;
    }
    bool all_done = queue.empty() && !local;
    for (size_t r = 1; r < workers.size(); ++r) all_done = all_done && (workers[r].stopped || workers[r].dead);
    if (all_done) break;
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  progress.close();
  const int code = report(summary);
  if (dead > 0) {
    // MPI_Finalize would wait for the dead rank forever; the results are written, so end the job.
    std::cout << std::flush;
    log << std::flush;
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, code == 0 ? 2 : code);
  }
  return code;
}

void work(const SweepSpec& spec, const RunOptions& options) {
  MPI_Send(nullptr, 0, MPI_CHAR, 0, kRequest, MPI_COMM_WORLD);
  for (;;) {
    MPI_Status status;
    int index = -1;
    MPI_Recv(&index, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    if (status.MPI_TAG == kStop) return;
    if (index < 0 || static_cast<size_t>(index) >= spec.points.size()) return;
    PointProcess process(spec, spec.points[static_cast<size_t>(index)], options);
    process.start();
    auto beat = Clock::now();
    std::optional<PointRecord> record;
    while (!(record = process.poll())) {
      if (StopSignals::requested()) {
        process.abandon();
        MPI_Abort(MPI_COMM_WORLD, 130);
      }
      if (seconds_since(beat) >= kHeartbeatSeconds) {
        MPI_Send(nullptr, 0, MPI_CHAR, 0, kHeartbeat, MPI_COMM_WORLD);
        beat = Clock::now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::string payload = record_to_json(*record, spec).dump();
    MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, kRequest, MPI_COMM_WORLD);
  }
}

}  // namespace

bool mpi_available() { return true; }

int run_mpi(const SweepSpec& spec, const RunOptions& options, double rank_timeout_s, std::ostream& log,
            const std::function<int(const RunSummary&)>& report) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    log << "gpuvp sweep --mpi: error: MPI_Init failed\n";
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // Points learn which rank runs them (a point's program may log it).
  ::setenv("GPUVP_SWEEP_RANK", std::to_string(rank).c_str(), 1);
  StopSignals stop;
  int code = 0;
  if (rank == 0) {
    code = coordinate(spec, options, rank_timeout_s, log, ranks, report);
  } else {
    work(spec, options);
  }
  MPI_Finalize();
  return code;
}

}  // namespace gpuvp::sweep
