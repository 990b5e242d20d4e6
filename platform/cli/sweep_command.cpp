#include "platform/cli/sweep_command.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "platform/config/value_parser.h"
#include "platform/sweep/sweep_mpi.h"
#include "platform/sweep/sweep_runner.h"

extern char** environ;

namespace gpuvp::cli {
namespace {

namespace fs = std::filesystem;

std::string self_executable() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string("gpuvp") : self.string();
}

// Spawns argv with this process's stdio and waits; returns the exit code (128 + signal).
int run_and_wait(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return 127;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int report_results(const sweep::SweepSpec& spec, const fs::path& out_dir, const config::KnobRegistry& registry,
                   const sweep::RunSummary* summary, bool quiet) {
  const auto written = sweep::write_results(out_dir, spec, registry);
  if (!quiet || written.not_ok > 0) {
    std::cout << "sweep " << spec.name << ": " << spec.points.size() << " points";
    if (summary != nullptr) std::cout << " (" << summary->ran << " ran, " << summary->skipped << " already done)";
    std::cout << ", " << spec.points.size() - written.not_ok << " ok";
    if (written.not_ok > written.missing) std::cout << ", " << written.not_ok - written.missing << " not ok";
    if (written.missing > 0) std::cout << ", " << written.missing << " not run";
    std::cout << "\n  " << written.csv.string() << "\n  " << written.json.string() << "\n";
  }
  if (summary != nullptr && summary->interrupted) {
    std::cout << "sweep " << spec.name << ": interrupted; run the same command again to finish it\n";
    return 130;
  }
  return written.not_ok > 0 ? 2 : 0;
}

}  // namespace

SweepCommand::SweepCommand(CLI::App& app, const config::ConfigLoader& loader)
    : command_(app.add_subcommand("sweep",
                                  "run a design-space sweep (YAML spec: base config, knobs, programs, metrics) "
                                  "as parallel gpuvp run processes; results as CSV and JSON")),
      loader_(loader) {
  command_->add_option("spec", spec_path_, "sweep spec (YAML)")->required();
  command_->add_option("-o,--output", out_dir_, "output folder (default: <spec name>-sweep)");
  command_->add_option("-j,--jobs", jobs_, "points run at once on this machine")->check(CLI::Range(1u, 1024u));
  command_->add_flag("-q,--quiet", quiet_, "no progress output (for logs)");
  command_->add_flag("--retry-failed", retry_failed_, "rerun recorded points that are not ok (default: only unfinished)");
  command_->add_flag("--mpi", mpi_, "spread the points over MPI ranks (mpirun -np K gpuvp sweep --mpi SPEC)");
  command_->add_option("--rank-timeout", rank_timeout_s_,
                       "--mpi: seconds without word from a rank before its point is recorded as lost")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  command_->add_flag("--emit-slurm", emit_slurm_, "write <output>/sweep.slurm, a SLURM job array of the points");
  command_->add_option("--point", point_, "run this one point (a SLURM array task)")->check(CLI::NonNegativeNumber);
  command_->add_flag("--merge", merge_, "write results.csv and results.json from the points recorded so far");
  command_->add_flag("--list", list_, "print the points and exit");
}

int SweepCommand::execute() const {
  const std::string self = self_executable();
  sweep::Variables variables{{"build", fs::path(self).parent_path().string()}};
  sweep::SweepSpec spec;
  try {
    spec = sweep::load_spec(spec_path_, loader_, variables);
  } catch (const sweep::SpecError& e) {
    for (const auto& message : e.messages()) std::cerr << message << "\n";
    std::cerr << "gpuvp sweep: " << e.messages().size() << " error(s) in " << spec_path_ << "; nothing ran\n";
    return 1;
  }
  sweep::RunOptions options;
  options.out_dir = out_dir_.empty() ? fs::path(spec.name + "-sweep") : fs::path(out_dir_);
  options.gpuvp = self;
  options.jobs = jobs_;
  options.quiet = quiet_;
  options.retry_failed = retry_failed_;
  options.progress_line = !quiet_ && ::isatty(STDERR_FILENO) != 0;
  const auto& registry = loader_.registry();

  if (list_) {
    for (const auto& point : spec.points) {
      std::cout << point.index << " " << point.id << " " << spec.programs[point.program].name;
      for (const auto& s : point.knobs) std::cout << " " << s.knob << "=" << s.text;
      std::cout << "\n";
    }
    return 0;
  }
  if (emit_slurm_) {
    fs::create_directories(options.out_dir / "slurm");
    const fs::path script = options.out_dir / "sweep.slurm";
    std::ofstream out(script);
    out << sweep::slurm_script(spec, self, spec_path_, options.out_dir);
    out.close();
    if (!out) {
      std::cerr << script.string() << ": error: cannot write the SLURM script\n";
      return 1;
    }
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
    std::cout << "wrote " << script.string() << " (" << spec.points.size() << " array tasks)\n"
              << "  sbatch " << script.string() << "\n  then: " << self << " sweep --merge " << spec_path_ << " -o "
              << options.out_dir.string() << "\n";
    return 0;
  }
  if (merge_) return report_results(spec, options.out_dir, registry, nullptr, quiet_);
  if (point_ >= 0) {
    if (static_cast<size_t>(point_) >= spec.points.size()) {
      std::cerr << "gpuvp sweep --point " << point_ << ": error: the sweep has points 0 to " << spec.points.size() - 1
                << "\n";
      return 1;
    }
    const auto& point = spec.points[static_cast<size_t>(point_)];
    if (const auto record = sweep::read_record(options.out_dir, spec, point);
        record && sweep::is_finished(*record, retry_failed_)) {
      if (!quiet_) std::cout << "point " << point_ << " already finished (" << sweep::status_name(record->status) << ")\n";
      return 0;
    }
    const auto record = sweep::run_point(spec, point, options);
    sweep::write_record(options.out_dir, spec, record);
    if (!quiet_ || record.status != sweep::PointStatus::Ok) std::cout << sweep::describe(spec, record) << "\n";
    return record.status == sweep::PointStatus::Ok ? 0 : 2;
  }
  fs::create_directories(options.out_dir);
  if (mpi_) {
    return sweep::run_mpi(spec, options, rank_timeout_s_, std::cerr, [&](const sweep::RunSummary& summary) {
      return report_results(spec, options.out_dir, registry, &summary, quiet_);
    });
  }
  const auto summary = sweep::run_local(spec, options, std::cerr);
  return report_results(spec, options.out_dir, registry, &summary, quiet_);
}

PlotCommand::PlotCommand(CLI::App& app, const config::ConfigLoader& loader)
    : command_(app.add_subcommand("plot",
                                  "charts of a sweep's results as PNG and SVG: a metric against a knob per program, "
                                  "speedup over a baseline point, heat maps of two-knob sweeps")),
      loader_(loader) {
  command_->add_option("results", results_, "results.json of a sweep, or its output folder")->required();
  command_->add_option("--x", x_, "the knob along the x axis (default: the first swept knob; two knobs: a heat map)");
  command_->add_option("--y", y_, "the metric to plot (default: the first)");
  command_->add_option("--baseline", baseline_,
                       "plot speedup (baseline value / value) over the point with these knob values, e.g. "
                       "gpu.sm.clock=1312MHz,memory.hbm.clock=877MHz");
  command_->add_option("-o,--output", out_prefix_, "output file prefix (default: beside the results, named after the chart)");
}

int PlotCommand::execute() const {
  fs::path results = results_;
  if (fs::is_directory(results)) results /= "results.json";
  std::ifstream in(results);
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  // The knob and metric names, read strictly: a file that is not a sweep's results.json, or one
  // damaged by hand, is an error here rather than an exception out of the JSON library.
  std::vector<std::string> knobs;
  std::vector<std::string> columns;
  bool readable = in && !doc.is_discarded() && doc.is_object();
  try {
    readable = readable && doc.value("format", "") == "gpuvp-sweep-results";
    if (readable) {
      for (const auto& k : doc.at("knobs")) knobs.push_back(k.at("name").get<std::string>());
      for (const auto& m : doc.at("metrics")) columns.push_back(m.at("column").get<std::string>());
    }
  } catch (const nlohmann::json::exception&) {
    readable = false;
  }
  if (!readable) {
    std::cerr << results.string() << ": error: not the results.json of a gpuvp sweep\n";
    return 1;
  }
  const auto& registry = loader_.registry();
  auto listed = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? std::string("none") : out;
  };
  if (!x_.empty() && std::find(knobs.begin(), knobs.end(), x_) == knobs.end()) {
    std::cerr << "gpuvp plot --x: error: '" << x_ << "' is not a knob of this sweep (its knobs: " << listed(knobs)
              << ")\n";
    return 1;
  }
  if (!y_.empty() && std::find(columns.begin(), columns.end(), y_) == columns.end()) {
    std::cerr << "gpuvp plot --y: error: '" << y_ << "' is not a metric of this sweep (its metrics: "
              << listed(columns) << ")\n";
    return 1;
  }
  nlohmann::json baseline = nlohmann::json::object();
  if (!baseline_.empty()) {
    std::stringstream terms(baseline_);
    std::string term;
    while (std::getline(terms, term, ',')) {
      const size_t eq = term.find('=');
      const std::string name = term.substr(0, eq);
      if (eq == std::string::npos || std::find(knobs.begin(), knobs.end(), name) == knobs.end()) {
        std::cerr << "gpuvp plot --baseline: error: '" << term << "': write KNOB=VALUE with a swept knob ("
                  << listed(knobs) << ")\n";
        return 1;
      }
      const auto& spec = registry.at(*registry.find(name));
      const auto parsed = config::parse_knob_value(spec, term.substr(eq + 1));
      if (const auto* message = std::get_if<std::string>(&parsed)) {
        std::cerr << "gpuvp plot --baseline: error: " << name << ": " << *message << "\n";
        return 1;
      }
      const auto& value = std::get<config::KnobValue>(parsed);
      const bool numeric = spec.type == config::KnobType::Integer || spec.type == config::KnobType::Real ||
                           spec.type == config::KnobType::Quantity;
      baseline[name] = numeric ? nlohmann::json(value.number) : nlohmann::json(spec.format(value));
    }
  }
  // Debian's python3 has matplotlib (scripts/setup.sh); a python3 earlier on PATH may not.
  std::string python;
  if (const char* p = std::getenv("GPUVP_PYTHON"); p != nullptr && *p != '\0') python = p;
  else if (::access("/usr/bin/python3", X_OK) == 0) python = "/usr/bin/python3";
  else python = "python3";
  std::string script = GPUVP_SOURCE_DIR "/platform/sweep/plot_sweep.py";
  if (const char* s = std::getenv("GPUVP_PLOT_SCRIPT"); s != nullptr && *s != '\0') script = s;
  if (!fs::is_regular_file(script)) {
    std::cerr << "gpuvp plot: error: the chart script " << script
              << " is missing (it lives in the source tree; set GPUVP_PLOT_SCRIPT to its path)\n";
    return 1;
  }
  std::vector<std::string> argv = {python, script, results.string(), "--baseline-json", baseline.dump()};
  if (!x_.empty()) argv.insert(argv.end(), {"--x", x_});
  if (!y_.empty()) argv.insert(argv.end(), {"--y", y_});
  if (!baseline_.empty()) argv.insert(argv.end(), {"--baseline-text", baseline_});
  if (!out_prefix_.empty()) argv.insert(argv.end(), {"--out", out_prefix_});
  const int code = run_and_wait(argv);
  if (code == 127) std::cerr << "gpuvp plot: error: cannot run " << python << "\n";
  return code;
}

}  // namespace gpuvp::cli
