#include "platform/bridge/serve.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "gpuvp/device.h"
#include "platform/bridge/platform_server.h"
#include "platform/stats/registry.h"

namespace gpuvp::bridge {
namespace {

// SIGINT/SIGTERM as readable events instead of asynchronous handlers: blocked in this thread
// (before the platform starts its I/O thread, which inherits the mask) and read from a signalfd.
class SignalFd {
 public:
  SignalFd() {
    sigemptyset(&mask_);
    sigaddset(&mask_, SIGINT);
    sigaddset(&mask_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &mask_, &previous_);
    fd_ = ::signalfd(-1, &mask_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~SignalFd() {
    if (fd_ >= 0) ::close(fd_);
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  bool valid() const { return fd_ >= 0; }
  // The signal number if one arrived, else 0.
  int poll() const {
    signalfd_siginfo info{};
    if (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) return static_cast<int>(info.ssi_signo);
    return 0;
  }

 private:
  sigset_t mask_{};
  sigset_t previous_{};
  int fd_ = -1;
};

}  // namespace

int serve(const PlatformParams& params, const std::string& config_name, const std::string& stats_path,
          bool stats_per_launch) {
  SignalFd signals;
  if (!signals.valid()) {
    std::cerr << "gpuvp serve: error: cannot create a signalfd\n";
    return 1;
  }
  stats::Registry stats;
  stats.set_kernel_detail(stats_per_launch ? stats::Registry::KernelDetail::PerLaunch
                                           : stats::Registry::KernelDetail::PerName);
  PlatformServer server(params, stats);
  ::setenv(device::kSocketEnvironmentVariable, server.socket_path().c_str(), 1);
  std::cout << "gpuvp serve: " << params.device.name << " (configuration " << config_name << ") on "
            << server.socket_path() << "\n"
            << "export " << device::kSocketEnvironmentVariable << "=" << server.socket_path() << "\n"
            << "Ctrl-C or SIGTERM stops the platform." << std::endl;

  int signal_number = 0;
  server.run([&] {
    signal_number = signals.poll();
    return signal_number != 0;
  });
  std::cout << "gpuvp serve: stopped by signal " << signal_number << " after "
            << static_cast<double>(server.simulated_ps()) * 1e-6 << " us of simulated time\n"
            << server.kernel_report("gpuvp serve: ") << "\n"
            << stats.summary();
  if (!stats_path.empty()) {
    std::ofstream out(stats_path, std::ios::binary);
    out << stats.json();
    if (!out) {
      std::cerr << stats_path << ": error: cannot write the statistics file\n";
      return 1;
    }
    std::cout << "statistics written to " << stats_path << "\n";
  }
  return 0;
}

}  // namespace gpuvp::bridge
