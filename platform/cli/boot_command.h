// `gpuvp boot [--config v100] [--set k=v]... [--guest-run "prog args; prog2 args"] [--interactive]
//             [--stats out.json] [--image DIR] [--platform SOCKET] [--timeout S] [--interrupts poll|msix]`
//
// Hardware/software co-verification: boots a Linux guest in QEMU (TCG) whose GPU is this
// platform, attached as QEMU's ivshmem-doorbell PCI device on the platform's ivshmem socket, and
// runs unmodified CUDA programs in it with the same libcudart (its guest transport maps the
// device's BARs through sysfs). Starts the platform (or uses a running `gpuvp serve` given with
// --platform), builds or reuses the guest image (sw/guest), starts QEMU, streams the guest's
// serial console, reports boot time (QEMU start -> driver ready), each program's exit code, and
// writes the platform's statistics. With no programs it runs the vector_add demo.
// --interrupts msix boots q35 with QEMU's intel-iommu and the guest with intel_iommu=on and its
// vfio modules, so that the guest's driver takes completions as MSI-X interrupts through
// vfio-pci instead of polling the shared region (the default, poll, boots faster).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "platform/cli/config_options.h"
#include "platform/cli/progress_option.h"
#include "platform/config/config.h"

namespace gpuvp::cli {

class BootCommand {
 public:
  // Registers the `boot` subcommand on `app`.
  BootCommand(CLI::App& app, const config::ConfigLoader& loader);

  bool selected() const { return command_->parsed(); }
  // Boots, runs, shuts down. Returns 0 when every program exited 0, else the first non-zero
  // program exit code; 1 when the guest could not be booted or ended before its programs did.
  int execute() const;

 private:
  CLI::App* command_;
  ProgressOption progress_;
  const config::ConfigLoader& loader_;
  ConfigOptions config_options_;
  std::string guest_run_;
  bool interactive_ = false;
  std::string stats_path_;
  bool stats_per_launch_ = false;
  std::string image_dir_;
  std::string platform_socket_;
  double timeout_s_ = 600;
  int memory_mib_ = 512;
  std::string interrupts_ = "poll";
};

// The programs of a --guest-run list: split at ';', trimmed, empty ones dropped.
std::vector<std::string> split_guest_run(const std::string& text);

}  // namespace gpuvp::cli
