#include "platform/cli/boot_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "gpuvp/device.h"
#include "platform/cli/output_file.h"
#include "platform/bridge/platform_server.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// x86 Linux keeps at most 2048 bytes of command line; leave room for the fixed part.
constexpr size_t kMaxRunListBytes = 1500;

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(v >> shift) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

fs::path executable_dir() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::current_path() : self.parent_path();
}

// The guest image: --image, else $GPUVP_GUEST_IMAGE, else guest/ next to the gpuvp executable,
// built there by sw/guest/build_image.sh when missing. Empty and `error` when unavailable.
fs::path guest_image(const std::string& requested, std::string* error) {
  const char* env = std::getenv("GPUVP_GUEST_IMAGE");
  const bool given = !requested.empty() || (env != nullptr && *env != '\0');
  const fs::path dir = !requested.empty() ? fs::path(requested) : given ? fs::path(env) : executable_dir() / "guest";
  auto complete = [&] { return fs::exists(dir / "vmlinux") && fs::exists(dir / "initramfs.cpio"); };
  if (complete()) return dir;
  if (given) {
    *error = "no guest image in " + dir.string() + " (needs vmlinux and initramfs.cpio; build the gpuvp_guest_image target)";
    return {};
  }
  const fs::path script = fs::path(GPUVP_SOURCE_DIR) / "sw/guest/build_image.sh";
  std::cerr << "gpuvp boot: building the guest image in " << dir.string() << "\n";
  const std::string command = "'" + script.string() + "' '" + dir.string() + "' '" + executable_dir().string() + "'";
  if (std::system(command.c_str()) != 0 || !complete()) {
    *error = "building the guest image failed (" + command + ")";
    return {};
  }
  return dir;
}

// What the guest's init reports on the console (sw/guest/init.sh), gathered by the reader.
struct GuestReport {
  std::mutex mutex;
  std::optional<Clock::time_point> ready;
  std::string ready_line;
  std::map<int, int> exit_codes;  // program index -> exit code
  bool done = false;
  bool driver_failed = false;
};

std::string printable(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b) {  // an escape sequence (the BIOS clears the screen): skip it
      ++i;
      if (i < line.size() && line[i] == '[') {
        while (i + 1 < line.size() && !std::isalpha(static_cast<unsigned char>(line[i + 1]))) ++i;
        ++i;
      }
      continue;
    }
    if (c >= 0x20 || c == '\t') out += static_cast<char>(c);
  }
  return out;
}

void read_console(int fd, GuestReport& report) {
  std::string pending;
  char buffer[4096];
  auto take_line = [&](const std::string& raw) {
    const std::string line = printable(raw);
    std::cout << line << "\n" << std::flush;
    std::lock_guard<std::mutex> lock(report.mutex);
    const size_t ready_at = line.find("GPUVP-READY");
    const size_t end_at = line.find("GPUVP-END ");
    if (ready_at != std::string::npos && !report.ready) {
      report.ready = Clock::now();
      report.ready_line = line.substr(ready_at);
    } else if (end_at != std::string::npos) {
      std::istringstream fields(line.substr(end_at + 10));
      int index = -1, code = -1;
      if (fields >> index >> code) report.exit_codes[index] = code;
    } else if (line.find("GPUVP-DONE") != std::string::npos) {
      report.done = true;
    } else if (line.find("GPUVP-FAILED") != std::string::npos) {
      report.driver_failed = true;
    }
  };
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    pending.append(buffer, static_cast<size_t>(got));
    for (size_t end; (end = pending.find('\n')) != std::string::npos;) {
      take_line(pending.substr(0, end));
      pending.erase(0, end + 1);
    }
  }
  if (!pending.empty()) take_line(pending);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

std::string format_seconds(double s) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(2) << s << " s";
  return text.str();
}

}  // namespace

std::vector<std::string> split_guest_run(const std::string& text) {
  std::vector<std::string> programs;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ';')) {
    const size_t first = item.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) continue;
    const size_t last = item.find_last_not_of(" \t\r\n");
    programs.push_back(item.substr(first, last - first + 1));
  }
  return programs;
}

BootCommand::BootCommand(CLI::App& app, const config::ConfigLoader& loader)
    : command_(app.add_subcommand("boot", "boot a QEMU Linux guest whose GPU is the platform and run CUDA programs in it")),
      loader_(loader) {
  config_options_.add_to(*command_, false);
  command_->add_option("--guest-run", guest_run_,
                       "programs to run in the guest, ';'-separated (default: vector_add); workloads go by name");
  command_->add_flag("--interactive", interactive_, "leave a shell on the guest's console (after --guest-run)");
  command_->add_option("--stats", stats_path_, "write the platform's statistics JSON to this file when the guest ends");
  command_->add_flag("--stats-per-launch", stats_per_launch_,
                     "one statistics scope per kernel launch (default: one per kernel name)");
  command_->add_option("--image", image_dir_, "guest image folder (vmlinux, initramfs.cpio); default: guest/ next to gpuvp");
  command_->add_option("--platform", platform_socket_,
                       "use a running platform (`gpuvp serve`'s socket) instead of starting one");
  command_->add_option("--timeout", timeout_s_, "stop the guest after this many seconds")->check(CLI::PositiveNumber);
  command_->add_option("--memory", memory_mib_, "guest memory in MiB")->check(CLI::Range(64, 65536));
  command_->add_option("--interrupts", interrupts_,
                       "how the guest's driver learns of completions: poll (the shared region, with back-off) or "
                       "msix (MSI-X interrupts through vfio-pci: q35 with an emulated Intel IOMMU, the guest's "
                       "vfio modules; boots slower)")
      ->check(CLI::IsMember({"poll", "msix"}));
  progress_.add_to(*command_);
  command_->footer("Example: gpuvp boot --config v100 --guest-run \"vector_add; gemm\" --stats guest.json");
}

int BootCommand::execute() const {
  std::vector<std::string> programs = split_guest_run(guest_run_);
  if (programs.empty() && !interactive_) programs.push_back("vector_add");
  std::string run_list;
  for (const std::string& program : programs) run_list += program + "\n";
  const std::string encoded = base64(run_list);
  if (encoded.size() > kMaxRunListBytes) {
    std::cerr << "gpuvp boot: --guest-run is too long (" << run_list.size()
              << " bytes; the guest's kernel command line carries at most about " << kMaxRunListBytes * 3 / 4
              << ")\n";
    return 1;
  }

  std::string error;
  const fs::path image = guest_image(image_dir_, &error);
  if (image.empty()) {
    std::cerr << "gpuvp boot: " << error << "\n";
    return 1;
  }

  std::optional<config::Config> config;
  std::optional<PlatformParams> params;
  stats::Registry stats;
  std::unique_ptr<bridge::PlatformServer> server;
  std::string socket = platform_socket_;
  if (socket.empty()) {
    config.emplace(config_options_.load(loader_));
    params.emplace(PlatformParams::load(*config));
    stats.set_kernel_detail(stats_per_launch_ ? stats::Registry::KernelDetail::PerLaunch
                                              : stats::Registry::KernelDetail::PerName);
    server = std::make_unique<bridge::PlatformServer>(*params, stats);
    socket = server->socket_path();
  } else if (!stats_path_.empty()) {
    std::cerr << "gpuvp boot: --stats needs the platform started here (the running platform writes its own)\n";
    return 1;
  } else if (::access(socket.c_str(), R_OK | W_OK) != 0) {
    std::cerr << "gpuvp boot: cannot use the platform socket " << socket << ": " << std::strerror(errno) << "\n";
    return 1;
  }

  const char* qemu_env = std::getenv("GPUVP_QEMU");
  const std::string qemu = qemu_env != nullptr && *qemu_env != '\0' ? qemu_env : "qemu-system-x86_64";
  const bool msix = interrupts_ == "msix";
  std::string append = "console=ttyS0 quiet panic=-1 gpuvp.run=" + encoded;
  if (interactive_) append += " gpuvp.interactive=1";
  // MSI-X reaches user space only through vfio-pci, which Debian's kernel (no no-IOMMU mode)
  // gives only behind an IOMMU: QEMU's intel-iommu (on q35) with interrupt remapping, which the
  // guest turns on with intel_iommu=on; init.sh loads vfio and binds the device.
  if (msix) append += " intel_iommu=on gpuvp.interrupts=msix";
  std::vector<std::string> arguments = {
      qemu, "-machine", msix ? "q35,accel=tcg" : "pc,accel=tcg", "-m", std::to_string(memory_mib_),
      "-smp", "1", "-nodefaults", "-no-reboot", "-kernel", (image / "vmlinux").string(), "-initrd",
      (image / "initramfs.cpio").string(), "-append", append};
  if (msix) arguments.insert(arguments.end(), {"-device", "intel-iommu,intremap=on"});
  arguments.insert(arguments.end(), {"-chardev", "socket,id=gpuvp,path=" + socket, "-device",
                                     "ivshmem-doorbell,chardev=gpuvp,vectors=" + std::to_string(device::kVectors)});
  if (interactive_) {
    // The console and QEMU's monitor share the terminal (Ctrl-A X quits, Ctrl-A C: monitor).
    arguments.insert(arguments.end(), {"-display", "none", "-serial", "mon:stdio"});
  } else {
    arguments.insert(arguments.end(), {"-display", "none", "-serial", "stdio", "-monitor", "none"});
  }
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  int console[2] = {-1, -1};
  if (!interactive_ && ::pipe2(console, O_CLOEXEC) != 0) {
    std::cerr << "gpuvp boot: pipe: " << std::strerror(errno) << "\n";
    return 1;
  }
  std::cout.flush();
  std::cerr.flush();
  const auto qemu_start = Clock::now();
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "gpuvp boot: fork: " << std::strerror(errno) << "\n";
    return 1;
  }
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // QEMU never outlives gpuvp (it would hold the guest)
    if (::getppid() != parent) ::_exit(127);
    if (!interactive_) {
      const int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0);
      ::dup2(console[1], 1);
      ::dup2(console[1], 2);
    }
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "gpuvp boot: cannot start %s: %s (apt-get install qemu-system-x86)\n", argv[0],
                 std::strerror(errno));
    ::_exit(127);
  }
  GuestReport report;
  std::thread reader;
  if (!interactive_) {
    ::close(console[1]);
    reader = std::thread([&] { read_console(console[0], report); });
  }
  // Ctrl-C belongs to QEMU (same process group): gpuvp keeps serving until QEMU has gone.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_int {};
  ::sigaction(SIGINT, &ignore, &old_int);

  int status = 0;
  bool exited = false;
  bool timed_out = false;
  const auto deadline = qemu_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
  auto qemu_gone = [&] {
    if (!exited && ::waitpid(child, &status, WNOHANG) == child) exited = true;
    if (!exited && !timed_out && Clock::now() > deadline) {
      timed_out = true;
      ::kill(child, SIGKILL);
    }
    return exited;
  };
  if (server != nullptr) {
    // An interactive shell owns the terminal: no progress line over it unless asked for.
    const progress::Mode mode =
        interactive_ && progress_.mode == progress::Mode::kAuto ? progress::Mode::kOff : progress_.mode;
    const progress::Display display(mode, "boot");
    server->run(qemu_gone);
  } else {
    while (!qemu_gone()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!exited) ::waitpid(child, &status, 0);
  ::sigaction(SIGINT, &old_int, nullptr);
  if (reader.joinable()) reader.join();
  if (console[0] >= 0) ::close(console[0]);

  int code = 0;
  std::ostringstream summary;
  summary << "\ngpuvp boot: QEMU " << describe_status(status) << " after "
          << format_seconds(std::chrono::duration<double>(Clock::now() - qemu_start).count()) << ".\n";
  if (!interactive_) {
    std::lock_guard<std::mutex> lock(report.mutex);
    if (report.ready) {
      summary << "gpuvp boot: boot time " << format_seconds(std::chrono::duration<double>(*report.ready - qemu_start).count())
              << " (QEMU start -> driver ready: " << report.ready_line << ")\n";
      const bool by_msix = report.ready_line.find(" completions msix ") != std::string::npos;
      summary << "gpuvp boot: the guest's driver takes completions by "
              << (by_msix ? "MSI-X interrupts (vfio-pci)" : "polling the shared region") << "\n";
      if (msix && !by_msix) {
        summary << "gpuvp boot: error: --interrupts msix, but the guest's driver polls (vfio-pci is not bound)\n";
        code = 1;
      }
    } else {
      summary << "gpuvp boot: error: the guest's driver never became ready"
              << (report.driver_failed ? " (the guest could not reach the platform or set up vfio; see the console above)" : "")
              << "\n";
      code = 1;
    }
    for (size_t i = 0; i < programs.size(); ++i) {
      const auto it = report.exit_codes.find(static_cast<int>(i));
      summary << "gpuvp boot: [" << i << "] " << programs[i] << ": "
              << (it == report.exit_codes.end() ? std::string("did not finish") : "exit " + std::to_string(it->second))
              << "\n";
      if (it != report.exit_codes.end() && it->second != 0 && code == 0) code = it->second;
    }
    if (timed_out) {
      summary << "gpuvp boot: error: stopped the guest after the --timeout of " << timeout_s_ << " s\n";
      code = code != 0 ? code : 1;
    } else if (report.ready && (!report.done || report.exit_codes.size() < programs.size())) {
      summary << "gpuvp boot: error: QEMU ended before the guest finished its programs ("
              << report.exit_codes.size() << " of " << programs.size() << " reported)\n";
      code = code != 0 ? code : 1;
    }
  } else {
    code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  if (server != nullptr) {
    const bridge::PlatformActivity activity = server->activity();
    summary << "gpuvp boot: " << activity.kernels_started << " kernel launch(es), " << activity.commands_completed
            << " device commands, simulated time " << std::fixed << std::setprecision(6)
            << static_cast<double>(server->simulated_ps()) * 1e-9 << " ms on " << params->device.name << " ("
            << config->source() << ").\n";
  }
  std::cerr << summary.str();
  if (server != nullptr) {
    const std::string text = server->stats_summary();
    if (!text.empty()) std::cerr << text;
    if (!stats_path_.empty()) {
      if (!write_output_file(stats_path_, server->stats_json(), "statistics file")) return code != 0 ? code : 1;
      std::cerr << "gpuvp boot: statistics written to " << stats_path_ << "\n";
    }
  }
  return code;
}

}  // namespace gpuvp::cli
