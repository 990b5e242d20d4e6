// The QEMU guest transport: inside a Linux guest whose GPU is QEMU's ivshmem-doorbell device
// (PCI 1af4:1110) connected to the platform's ivshmem server. BAR0 holds the registers (IntrMask
// 0, IntrStatus 4, IVPosition 8 = this guest's peer id, Doorbell 12 = (peer << 16) | vector),
// BAR2 the shared region. Two ways to reach them, chosen per device by plan_completions():
//   - MSI-X through vfio, when the device is bound to vfio-pci and its IOMMU group's
//     /dev/vfio/<group> exists (`gpuvp boot --interrupts msix`: q35 + intel-iommu, guest
//     intel_iommu=on, the vfio modules): a type1 container and the group, the device fd, BAR0
//     and BAR2 mapped through the vfio region offsets, Bus Master set in PCI_COMMAND through the
//     config region, and an eventfd on the completion vector's MSI-X interrupt
//     (VFIO_DEVICE_SET_IRQS). The driver's waits block on that eventfd. vfio lets one process
//     at a time hold the group: a second concurrent program gets a clear error.
//   - Polling through sysfs otherwise: the device is enabled (`enable`), BAR0 mapped from
//     `resource0` and the region from `resource2`; completions are found by polling the region
//     with back-off (interrupts never reach user space through sysfs).
// Either way a dead platform is noticed by the driver's heartbeat check, since QEMU tells the
// guest nothing when the platform goes. With GPUVP_VERBOSE set the transport says, when it
// closes, which path it used and (MSI-X) how many interrupts it received, on stderr:
//   gpuvp: completions by MSI-X (vfio group 3): 42 interrupts, 40 waits woken
//   gpuvp: completions by polling (sysfs): <why not MSI-X>
//
// Selected by GPUVP_SOCKET=pci (the first 1af4:1110 device) or GPUVP_SOCKET=pci:<domain:bus:
// dev.fn> (connect_ivshmem() hands such a "socket" to connect_guest()), so that an unmodified
// libcudart runs in the guest.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sw/driver/transport.h"

namespace gpuvp::driver {

struct GuestOptions {
  std::string pci_address;                  // "" = the first ivshmem-doorbell device
  std::string sysfs_root = "/sys/bus/pci";  // tests may point these elsewhere
  std::string dev_root = "/dev";            // /dev/vfio/vfio and /dev/vfio/<group>
};

// True when a GPUVP_SOCKET value names the guest's PCI device ("pci" or "pci:<address>"); fills
// `options` from it.
bool parse_guest_device(const std::string& socket, GuestOptions* options);

// Enables and maps the device and checks the region header (magic, version, size). nullptr and
// `error` (one line naming the cause) on failure.
std::unique_ptr<Transport> connect_guest(const GuestOptions& options, std::string* error);

// The sysfs directory of the ivshmem-doorbell device `options` names; "" and `error` if none.
std::string find_guest_device(const GuestOptions& options, std::string* error);

enum class Completions { Polling, Msix };

// How the transport will learn of completions for the device in sysfs directory `device`:
// Msix when vfio is available for it (bound to vfio-pci, an `iommu_group` link, and both
// <dev_root>/vfio/vfio and <dev_root>/vfio/<group> present), else Polling, with the reason.
struct CompletionPlan {
  Completions path = Completions::Polling;
  std::string iommu_group;  // the group's number (Msix)
  std::string why;          // one line: why this path
};
CompletionPlan plan_completions(const std::string& device, const GuestOptions& options);

// What a guest transport has done so far; nullopt for other transports.
struct CompletionReport {
  Completions path = Completions::Polling;
  std::string description;   // "MSI-X (vfio group 3)" or "polling (sysfs)"
  std::string why;           // CompletionPlan::why
  uint64_t interrupts = 0;   // MSI-X interrupts received on the completion vector
  uint64_t woken_waits = 0;  // waits that an interrupt ended
};
std::optional<CompletionReport> guest_completion_report(const Transport& transport);

}  // namespace gpuvp::driver
