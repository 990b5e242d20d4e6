#include "platform/cli/run_command.h"

#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "gpuvp/device.h"
#include "platform/cli/output_file.h"
#include "platform/bridge/platform_server.h"
#include "platform/config_report.h"
#include "platform/elastic_trace/trace_capture.h"
#include "platform/parallel/rank_exchange.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"
#include "platform/trace/trace_recorder.h"

extern char** environ;

namespace gpuvp::cli {
namespace {

template <typename T>
bool read_at(const std::vector<char>& bytes, uint64_t offset, T& value) {
  if (offset > bytes.size() || sizeof(T) > bytes.size() - offset) return false;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return true;
}

// PATH lookup as execvp does it, so that the linkage check sees the file that will run.
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

std::string format_ms(uint64_t ps) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(6) << static_cast<double>(ps) * 1e-9 << " ms";
  return text.str();
}

}  // namespace

CudartLinkage cudart_linkage(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> elf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (elf.size() < 64 || std::memcmp(elf.data(), "\x7f" "ELF", 4) != 0 || elf[4] != 2) return CudartLinkage::NotElf;
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  read_at(elf, 0x28, shoff);
  read_at(elf, 0x3A, shentsize);
  read_at(elf, 0x3C, shnum);
  read_at(elf, 0x3E, shstrndx);
  if (shentsize < 64) return CudartLinkage::NotElf;
  auto section = [&](uint16_t index, uint32_t& type, uint64_t& offset, uint64_t& size, uint32_t& link, uint32_t& name) {
    const uint64_t header = shoff + uint64_t{index} * shentsize;
    return read_at(elf, header, name) && read_at(elf, header + 4, type) && read_at(elf, header + 0x18, offset) &&
           read_at(elf, header + 0x20, size) && read_at(elf, header + 0x28, link);
  };
  uint32_t type = 0, link = 0, name = 0;
  uint64_t strtab = 0, size = 0;
  if (!section(shstrndx, type, strtab, size, link, name)) return CudartLinkage::NotElf;
  bool has_fatbin = false;
  bool needs_cudart = false;
  bool needs_driver = false;
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t offset = 0;
    if (!section(i, type, offset, size, link, name)) break;
    if (strtab + name < elf.size() && std::strcmp(elf.data() + strtab + name, ".nv_fatbin") == 0) has_fatbin = true;
    if (type == 6 /* SHT_DYNAMIC */) {
      uint32_t str_type = 0, str_link = 0, str_name = 0;
      uint64_t dynstr = 0, dynstr_size = 0;
      if (!section(static_cast<uint16_t>(link), str_type, dynstr, dynstr_size, str_link, str_name)) continue;
      for (uint64_t entry = offset; entry + 16 <= offset + size; entry += 16) {
        int64_t tag = 0;
        uint64_t value = 0;
        if (!read_at(elf, entry, tag) || !read_at(elf, entry + 8, value)) break;
        if (tag == 1 /* DT_NEEDED */ && value < dynstr_size && dynstr + value < elf.size()) {
          if (std::strncmp(elf.data() + dynstr + value, "libcudart.so", 12) == 0) needs_cudart = true;
          if (std::strncmp(elf.data() + dynstr + value, "libcuda.so", 10) == 0) needs_driver = true;
        }
      }
    }
  }
  if (needs_cudart) return CudartLinkage::Shared;
  if (has_fatbin) return CudartLinkage::Static;
  return needs_driver ? CudartLinkage::Driver : CudartLinkage::None;
}

std::string cudart_directory() {
  namespace fs = std::filesystem;
  if (const char* dir = std::getenv("GPUVP_CUDART_DIR"); dir != nullptr && *dir != '\0') {
    return fs::exists(fs::path(dir) / "libcudart.so.13") ? std::string(dir) : std::string();
  }
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) return {};
  const fs::path lib = self.parent_path() / "lib";
  return fs::exists(lib / "libcudart.so.13") ? lib.string() : std::string();
}

RunCommand::RunCommand(CLI::App& app, const config::ConfigLoader& loader)
    : command_(app.add_subcommand(
          "run", "run a CUDA program (built with nvcc -cudart shared, or using the driver API) on the platform")),
      loader_(loader) {
  config_options_.add_to(*command_, false);
  command_->add_option("--stats", stats_path_, "write the statistics JSON to this file when the program ends");
  command_->add_flag("--stats-per-launch", stats_per_launch_,
                     "one statistics scope per kernel launch in --stats and the summary (default: one per kernel "
                     "name, with launch count, sums and per-launch min/max; a few MB for thousands of launches)");
  command_->add_option("--trace", trace_path_,
                       "trace TLM transactions, kernels and CTAs to this file (.json: Chrome/Perfetto trace "
                       "events; other names: compact binary for `gpuvp trace-convert`)");
  command_->add_option("--trace-filter", trace_filters_,
                       "keep only some of the trace (repeatable, or comma-separated): module=GLOB, addr=LO-HI, "
                       "kernel=ID|GLOB, time=BEGIN-END (e.g. 10us-20us), every=N")
      ->type_name("TERM");
  command_->add_option("--trace-summary", trace_summary_path_,
                       "write per-link transaction counts, bytes and latency histograms to this file ('-': stderr)");
  command_->add_option("--trace-vcd", trace_vcd_path_,
                       "write a VCD file (name ending .vcd) of kernel running, CTAs resident and per-link busy/in "
                       "flight, through SystemC's sc_trace");
  command_->add_option("--trace-window", trace_window_ns_, "simulated ns per sample of the trace's counter tracks")
      ->default_val(1000)
      ->check(CLI::Range(0.001, 1e9));
  progress_.add_to(*command_);
  command_->add_option("--capture", capture_dir_,
                       "write an elastic trace of every SM's memory requests, CTAs and kernels to this directory "
                       "(for `gpuvp replay` and `gpuvp trace inspect`)")
      ->type_name("DIR");
  command_->add_flag("--mpi", mpi_,
                     "step the SMs in several processes: mpirun -np K gpuvp run --mpi ... runs the platform and the "
                     "program in each rank, each rank steps every K-th SM, and the ranks exchange the SMs' windows "
                     "(the windowed model, e.g. --config v100_windowed; the same statistics as one process). Rank 0 "
                     "alone prints the program's output and the report and writes --stats");
  command_->add_option("program", program_, "-- ./app args...")->required();
  command_->footer("Example: gpuvp run --config v100 --stats stats.json -- ./vector_add 1024\n"
                   "         gpuvp run --trace trace.json --trace-filter module=*l2_0* -- ./vector_add 1024\n"
                   "         (open trace.json in https://ui.perfetto.dev or chrome://tracing)");
}

int RunCommand::execute() const {
  const config::Config config = config_options_.load(loader_);
  const PlatformParams params = PlatformParams::load(config);
  const std::string program = resolve_program(program_.front());
  if (::access(program.c_str(), X_OK) != 0) {
    std::cerr << "gpuvp run: " << program_.front() << ": not an executable file\n";
    return 127;
  }
  // A program without libcudart may start one that has it (env, stdbuf, a shell script): whether
  // any process used the platform is told when the program ends.
  if (cudart_linkage(program) == CudartLinkage::Static) {
    std::cerr << "gpuvp run: " << program_.front()
              << " is linked with the static CUDA runtime (nvcc's default), which gpuvp cannot replace: it "
                 "authenticates the driver through a private integrity check that gpuvp's libcuda.so.1 cannot answer "
                 "(sw/cuda_driver_api/README.md).\n"
                 "  Rebuild it with `nvcc -cudart shared ...` and run it again.\n";
    return 1;
  }
  const std::string library_dir = cudart_directory();
  if (library_dir.empty()) {
    std::cerr << "gpuvp run: cannot find gpuvp's libcudart.so.13 (looked in lib/ next to the gpuvp executable; "
                 "set GPUVP_CUDART_DIR)\n";
    return 1;
  }

  // --mpi: the exchange outlives the platform (MPI ends when it is destroyed).
  std::unique_ptr<parallel::RankExchange> ranks;
  if (mpi_) {
    if (!trace_path_.empty() || !trace_summary_path_.empty() || !trace_vcd_path_.empty() || !capture_dir_.empty()) {
      std::cerr << "gpuvp run: --mpi: tracing and trace capture need one process (run without --mpi)\n";
      return 1;
    }
    try {
      ranks = parallel::make_mpi_exchange();
    } catch (const std::runtime_error& e) {
      std::cerr << "gpuvp run: --mpi: " << e.what() << "\n";
      return 1;
    }
  }
  const bool leader = ranks == nullptr || ranks->rank() == 0;

  // The recorder outlives the platform (its monitors report to it until the end).
  std::unique_ptr<trace::TraceRecorder> recorder;
  const bool tracing = !trace_path_.empty() || !trace_summary_path_.empty() || !trace_vcd_path_.empty();
  if (!trace_filters_.empty() && !tracing) {
    std::cerr << "gpuvp run: --trace-filter needs --trace FILE, --trace-summary FILE or --trace-vcd FILE\n";
    return 1;
  }
  if (tracing) {
    try {
      trace::TraceOptions options;
      options.path = trace_path_;
      options.filter = trace::TraceFilter::parse(trace_filters_);
      options.counter_window_ps = static_cast<uint64_t>(trace_window_ns_ * 1000.0 + 0.5);
      options.vcd_path = trace_vcd_path_;
      recorder = std::make_unique<trace::TraceRecorder>(std::move(options));
    } catch (const trace::TraceError& e) {
      std::cerr << "gpuvp run: " << e.what() << "\n";
      return 1;
    }
  }

  // The capture rides on the tracer's monitors (it forwards every event to the recorder).
  std::unique_ptr<elastic::TraceCapture> capture;
  if (!capture_dir_.empty()) {
    elastic::CaptureHeader header;
    header.gpuvp_version = GPUVP_VERSION;
    header.program = program_;
    header.config_source = config.source();
    std::ostringstream yaml;
    print_resolved_yaml(config, yaml);
    header.config_yaml = yaml.str();
    header.sm_count = params.sm.count;
    header.core_clock_hz = static_cast<uint64_t>(params.sm.clock_hz + 0.5);
    try {
      capture = std::make_unique<elastic::TraceCapture>(capture_dir_, header, recorder.get());
    } catch (const elastic::TraceFormatError& e) {
      std::cerr << "gpuvp run: --capture: " << e.what() << "\n";
      return 1;
    }
  }
  TraceObserver* observer = capture ? static_cast<TraceObserver*>(capture.get()) : recorder.get();

  stats::Registry stats;
  stats.set_kernel_detail(stats_per_launch_ ? stats::Registry::KernelDetail::PerLaunch
                                            : stats::Registry::KernelDetail::PerName);
  // The program starts as soon as the platform's socket accepts connections: it loads and
  // prepares its data while the GPU model is built, and its handshake waits for the platform.
  pid_t child = -1;
  int spawn_error = 0;
  struct sigaction old_int {};
  auto start_program = [&](const std::string& socket_path) {
    // The program's environment: ours, plus the socket and the library path.
    std::vector<std::string> environment;
    std::string library_path = library_dir;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      const std::string variable = *entry;
      if (variable.rfind("LD_LIBRARY_PATH=", 0) == 0) {
        if (variable.size() > 16) library_path += ":" + variable.substr(16);
      } else if (variable.rfind(std::string(device::kSocketEnvironmentVariable) + "=", 0) != 0) {
        environment.push_back(variable);
      }
    }
    environment.push_back("LD_LIBRARY_PATH=" + library_path);
    environment.push_back(std::string(device::kSocketEnvironmentVariable) + "=" + socket_path);
    std::vector<char*> envp;
    for (std::string& variable : environment) envp.push_back(variable.data());
    envp.push_back(nullptr);
    std::vector<std::string> arguments = program_;
    std::vector<char*> argv;
    for (std::string& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);

    std::cout.flush();
    std::cerr.flush();
    // --mpi: every rank runs the program; the other ranks' copies print nothing on stdout.
    posix_spawn_file_actions_t quiet;
    ::posix_spawn_file_actions_init(&quiet);
    if (!leader) ::posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    spawn_error = ::posix_spawnp(&child, argv[0], &quiet, nullptr, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&quiet);
    if (spawn_error != 0) {
      child = -1;
      return;
    }
    // The program owns the terminal's Ctrl-C: it reaches the program (same process group); gpuvp
    // keeps serving until the program has gone.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &old_int);
  };
  auto stop_program = [&] {  // the platform cannot serve it
    if (child <= 0) return;
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::sigaction(SIGINT, &old_int, nullptr);
  };
  std::unique_ptr<bridge::PlatformServer> server;
  try {
    server = std::make_unique<bridge::PlatformServer>(params, stats, observer, start_program);
  } catch (...) {
    stop_program();
    throw;
  }
  if (spawn_error != 0) {
    std::cerr << "gpuvp run: cannot start " << program_.front() << ": " << std::strerror(spawn_error) << "\n";
    return 127;
  }
  if (ranks != nullptr) {
    try {
      server->set_rank_exchange(ranks.get());
    } catch (const std::invalid_argument& e) {  // the same configuration, so every rank stops here
      stop_program();
      if (leader) std::cerr << "gpuvp run: --mpi: " << e.what() << "\n";
      return 1;
    }
  }

  int status = 0;
  bool exited = false;
  {
    const progress::Display display(leader ? progress_.mode : progress::Mode::kOff, "run");
    try {
      server->run([&] {
        if (!exited && ::waitpid(child, &status, WNOHANG) == child) exited = true;
        return exited;
      });
    } catch (const std::exception& e) {
      // A model stopped the simulation (--mpi: something the ranks cannot repeat; every rank
      // stops at the same point with the same message). SystemC wraps the model's message.
      std::string what = e.what();
      const std::string wrapper = "uncaught exception: ";
      if (const size_t at = what.find(wrapper); at != std::string::npos) what = what.substr(at + wrapper.size());
      what = what.substr(0, what.find('\n'));
      if (leader) std::cerr << "gpuvp run: error: the simulation stopped: " << what << "\n";
      if (!exited) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
      }
      ::sigaction(SIGINT, &old_int, nullptr);
      return 1;
    }
    if (!exited) ::waitpid(child, &status, 0);
  }
  ::sigaction(SIGINT, &old_int, nullptr);

  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  // Reading the statistics gathers the SMs' from every rank (--mpi): every rank reads them.
  const std::string summary = server->stats_summary();
  const std::string stats_json = stats_path_.empty() ? std::string() : server->stats_json();
  if (!leader) return code;
  const bridge::PlatformActivity activity = server->activity();
  std::cerr << "\ngpuvp run: " << program_.front()
            << (WIFSIGNALED(status) ? " was killed by signal " + std::to_string(WTERMSIG(status))
                                    : " exited with code " + std::to_string(code))
            << "; " << activity.kernels_started << " kernel launch(es), " << activity.commands_completed
            << " device commands, simulated time " << format_ms(server->simulated_ps()) << " on "
            << params.device.name << " (" << config.source() << ").\n"
            << server->kernel_report("gpuvp run: ");
  if (activity.peers_seen == 0) {
    std::cerr << "gpuvp run: note: no program connected to the platform, so nothing ran on the GPU model (a program "
                 "connects when it calls the CUDA runtime through gpuvp's libcudart.so.13, built with `nvcc -cudart "
                 "shared`, not nvcc's default static runtime; or the driver API through gpuvp's libcuda.so.1)\n";
  }
  if (activity.kernels_started == 0) {
    // A wrapped program (env VAR=x ./app) is one of the arguments: name it if it is the cause. A
    // static-runtime program connects (its runtime calls cuInit of gpuvp's libcuda.so.1) but
    // stops at the driver's integrity check before any kernel.
    for (size_t i = 1; i < program_.size(); ++i) {
      const std::string candidate = resolve_program(program_[i]);
      if (::access(candidate.c_str(), X_OK) == 0 && cudart_linkage(candidate) == CudartLinkage::Static) {
        std::cerr << "gpuvp run: note: " << program_[i]
                  << " is linked with the static CUDA runtime; rebuild it with `nvcc -cudart shared ...`\n";
      }
    }
  }
  if (!summary.empty()) std::cerr << summary;
  if (recorder) {
    try {
      recorder->finish();
    } catch (const trace::TraceError& e) {
      std::cerr << "gpuvp run: " << e.what() << "\n";
      return code != 0 ? code : 1;
    }
    uint64_t transactions = 0;
    for (const auto& link : recorder->links()) transactions += link.transactions;
    if (!trace_path_.empty()) {
      std::cerr << "gpuvp run: trace written to " << trace_path_ << " (" << recorder->links().size() << " link(s), "
                << transactions << " transaction(s), " << recorder->kernels() << " kernel(s), " << recorder->ctas()
                << " CTA(s))\n";
    }
    if (!trace_vcd_path_.empty()) std::cerr << "gpuvp run: VCD written to " << trace_vcd_path_ << "\n";
    if (trace_summary_path_ == "-") {
      std::cerr << recorder->summary();
    } else if (!trace_summary_path_.empty()) {
      if (!write_output_file(trace_summary_path_, recorder->summary(), "trace summary")) return code != 0 ? code : 1;
    }
  }
  if (capture) {
    try {
      capture->finish();
    } catch (const elastic::TraceFormatError& e) {
      std::cerr << "gpuvp run: --capture: " << e.what() << "\n";
      return code != 0 ? code : 1;
    }
    std::cerr << "gpuvp run: elastic trace written to " << capture->path() << " (" << capture->kernels()
              << " kernel(s), " << capture->requests() << " request(s), " << capture->file_bytes() << " bytes)\n";
  }
  if (!stats_path_.empty()) {
    if (!write_output_file(stats_path_, stats_json, "statistics file")) return code != 0 ? code : 1;
    std::cerr << "gpuvp run: statistics written to " << stats_path_ << "\n";
  }
  return code;
}

}  // namespace gpuvp::cli
