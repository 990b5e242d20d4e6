#include "platform/sweep/sweep_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

extern char** environ;

namespace gpuvp::sweep {
namespace {

namespace fs = std::filesystem;

// The one piece of process-wide state a signal handler may touch.
volatile sig_atomic_t g_stop_requested = 0;
void on_stop_signal(int) { g_stop_requested = 1; }

std::string tail_of_file(const fs::path& path, size_t max_chars) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(std::max<std::streamoff>(0, in.tellg()));
  const size_t start = size > max_chars ? size - max_chars : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (start > 0) {
    if (const size_t newline = text.find('\n'); newline != std::string::npos) text.erase(0, newline + 1);
    text = "...\n" + text;
  }
  return text;
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  std::ostringstream out;
  if (s >= 3600) out << s / 3600 << "h " << (s % 3600) / 60 << "m";
  else if (s >= 60) out << s / 60 << "m " << s % 60 << "s";
  else out << s << "s";
  return out.str();
}

constexpr size_t kStderrTail = 4000;

}  // namespace

StopSignals::StopSignals() {
  g_stop_requested = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

StopSignals::~StopSignals() {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
}

bool StopSignals::requested() { return g_stop_requested != 0; }

PointProcess::PointProcess(const SweepSpec& spec, const Point& point, const RunOptions& options)
    : spec_(spec), point_(point), options_(options) {}

PointProcess::~PointProcess() { abandon(); }

bool PointProcess::start() {
  const fs::path dir = point_dir(options_.out_dir, point_);
  std::error_code error;
  fs::create_directories(dir, error);
  fs::remove(dir / "stats.json", error);
  fs::remove(dir / "point.json", error);
  const Program& program = spec_.programs[point_.program];
  std::vector<std::string> argv = {options_.gpuvp};
  if (spec_.replay) {
    argv.insert(argv.end(), {"replay", program.path});
  } else {
    argv.push_back("run");
  }
  argv.insert(argv.end(), {"--config", spec_.base});
  for (const auto& set : spec_.overrides(point_)) {
    argv.push_back("--set");
    argv.push_back(set);
  }
  argv.insert(argv.end(), {"--stats", (dir / "stats.json").string()});
  if (!spec_.replay) {
    argv.insert(argv.end(), {"--", program.path});
    argv.insert(argv.end(), program.args.begin(), program.args.end());
  }
  {
    std::ofstream command(dir / "command.txt");
    for (const auto& a : argv) command << a << "\n";
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string out_path = (dir / "stdout.txt").string();
  const std::string err_path = (dir / "stderr.txt").string();
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own group: a timeout kills the program too
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  started_ = std::chrono::steady_clock::now();
  const int rc = posix_spawn(&pid_, options_.gpuvp.c_str(), &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    pid_ = -1;
    PointRecord record;
    record.id = point_.id;
    record.index = point_.index;
    record.status = PointStatus::Failed;
    record.exit_code = 127;
    record.metrics.assign(spec_.metrics.size(), std::nullopt);
    record.metric_units.assign(spec_.metrics.size(), "");
    record.message = "cannot start " + options_.gpuvp + ": " + std::strerror(rc);
    early_ = record;
    return false;
  }
  return true;
}

std::optional<PointRecord> PointProcess::poll() {
  if (early_) {
    auto record = early_;
    early_.reset();
    return record;
  }
  if (pid_ < 0) return std::nullopt;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    pid_ = -1;
    return finish(status, false);
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (spec_.timeout_s > 0 && elapsed > spec_.timeout_s) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return finish(status, true);
  }
  return std::nullopt;
}

void PointProcess::abandon() {
  if (pid_ < 0) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

PointRecord PointProcess::finish(int wait_status, bool timed_out) {
  const fs::path dir = point_dir(options_.out_dir, point_);
  PointRecord record;
  record.id = point_.id;
  record.index = point_.index;
  record.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  record.metrics.assign(spec_.metrics.size(), std::nullopt);
  record.metric_units.assign(spec_.metrics.size(), "");
  if (timed_out) {
    record.status = PointStatus::Timeout;
    record.exit_code = -1;
    std::ostringstream message;
    message << "killed at the timeout of " << spec_.timeout_s << " s";
    record.message = message.str();
  } else if (WIFSIGNALED(wait_status)) {
    record.status = PointStatus::Crashed;
    record.exit_code = 128 + WTERMSIG(wait_status);
    record.message = std::string("gpuvp was killed by signal ") + std::to_string(WTERMSIG(wait_status)) + " (" +
                     strsignal(WTERMSIG(wait_status)) + ")";
  } else {
    record.exit_code = WEXITSTATUS(wait_status);
    if (record.exit_code > 128 && record.exit_code < 128 + 65) {
      record.status = PointStatus::Crashed;
      const int signal = record.exit_code - 128;
      record.message = "the program was killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
    } else if (record.exit_code != 0) {
      record.status = PointStatus::Failed;
      record.message = std::string(spec_.replay ? "gpuvp replay" : "gpuvp run") + " exited with code " +
                       std::to_string(record.exit_code);
    } else {
      record.status = PointStatus::Ok;
      std::ifstream in(dir / "stats.json");
      const auto stats = nlohmann::json::parse(in, nullptr, false);
      if (!in || stats.is_discarded()) {
        record.status = PointStatus::Failed;
        record.message = "no readable statistics in " + (dir / "stats.json").string();
      } else {
        for (size_t m = 0; m < spec_.metrics.size(); ++m) {
          std::string problem;
          record.metrics[m] = extract_metric(stats, spec_.metrics[m], record.metric_units[m], problem);
          if (!problem.empty() && record.status == PointStatus::Ok) {
            record.status = PointStatus::Failed;
            record.message = "metric '" + spec_.metrics[m].column + "': " + problem;
          }
        }
      }
    }
  }
  if (record.status != PointStatus::Ok) record.stderr_tail = tail_of_file(dir / "stderr.txt", kStderrTail);
  return record;
}

PointRecord run_point(const SweepSpec& spec, const Point& point, const RunOptions& options) {
  PointProcess process(spec, point, options);
  process.start();
  for (;;) {
    if (auto record = process.poll()) return *record;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<size_t> pending_points(const SweepSpec& spec, const RunOptions& options) {
  std::vector<size_t> pending;
  for (const Point& point : spec.points) {
    const auto record = read_record(options.out_dir, spec, point);
    if (!record || !is_finished(*record, options.retry_failed)) pending.push_back(point.index);
  }
  return pending;
}

std::string describe(const SweepSpec& spec, const PointRecord& record) {
  const Point& point = spec.points.at(record.index);
  std::ostringstream out;
  out << "point " << point.index << " " << spec.programs[point.program].name;
  for (const auto& s : point.knobs) out << " " << s.knob << "=" << s.text;
  out << ": " << status_name(record.status);
  if (!record.message.empty()) out << " (" << record.message << ")";
  out << ", " << std::fixed << std::setprecision(1) << record.host_seconds << " s";
  return out.str();
}

Progress::Progress(const SweepSpec& spec, const RunOptions& options, std::ostream& out, size_t already_done)
    : spec_(spec), options_(options), out_(out), done_(already_done), start_(std::chrono::steady_clock::now()) {}

void Progress::started() {
  ++running_;
  if (options_.progress_line && !options_.quiet) draw();
}

void Progress::finished(const PointRecord& record) {
  --running_;
  ++done_;
  ++ran_;
  ran_seconds_ += record.host_seconds;
  if (record.status != PointStatus::Ok) ++failed_;
  if (options_.quiet) return;
  if (options_.progress_line) {
    if (record.status != PointStatus::Ok) out_ << "\r\033[K" << describe(spec_, record) << "\n";
    draw();
  } else {
    out_ << "[" << done_ << "/" << spec_.points.size() << "] " << describe(spec_, record) << std::endl;
  }
}

void Progress::draw() {
  std::ostringstream line;
  line << "sweep " << spec_.name << ": " << done_ << "/" << spec_.points.size() << " done, " << running_ << " running, "
       << failed_ << " failed";
  const size_t remaining = spec_.points.size() - done_;
  if (ran_ > 0 && remaining > 0) {
    // Points run `jobs` at a time; the mean point so far stands for the rest.
    const double per_point = ran_seconds_ / static_cast<double>(ran_);
    const double eta = per_point * static_cast<double>(remaining) / std::max(1u, options_.jobs);
    line << ", ETA " << format_duration(eta);
  }
  line << ", " << format_duration(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count())
       << " elapsed";
  out_ << "\r\033[K" << line.str() << std::flush;
}

void Progress::close() {
  if (options_.progress_line && !options_.quiet) out_ << "\n" << std::flush;
}

RunSummary run_local(const SweepSpec& spec, const RunOptions& options, std::ostream& log) {
  StopSignals stop;
  RunSummary summary;
  summary.total = spec.points.size();
  const std::vector<size_t> pending = pending_points(spec, options);
  summary.skipped = spec.points.size() - pending.size();
  if (!options.quiet && summary.skipped > 0) {
    log << "sweep " << spec.name << ": " << summary.skipped << " of " << summary.total
        << " points already finished in " << options.out_dir.string() << "; running the other " << pending.size() << "\n";
  }
  Progress progress(spec, options, log, summary.skipped);
  std::deque<size_t> queue(pending.begin(), pending.end());
  std::vector<std::unique_ptr<PointProcess>> running;
  const unsigned jobs = std::max(1u, options.jobs);
  while (!queue.empty() || !running.empty()) {
    if (StopSignals::requested()) {
      for (auto& process : running) process->abandon();
      running.clear();
      summary.interrupted = true;
      break;
    }
    while (running.size() < jobs && !queue.empty()) {
      auto process = std::make_unique<PointProcess>(spec, spec.points[queue.front()], options);
      queue.pop_front();
      process->start();
      progress.started();
      running.push_back(std::move(process));
    }
    bool any = false;
    for (size_t i = 0; i < running.size();) {
      if (auto record = running[i]->poll()) {
        write_record(options.out_dir, spec, *record);
        ++summary.ran;
        if (record->status != PointStatus::Ok) ++summary.not_ok;
        progress.finished(*record);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        any = true;
      } else {
        ++i;
      }
    }
    if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  progress.close();
  return summary;
}

}  // namespace gpuvp::sweep
