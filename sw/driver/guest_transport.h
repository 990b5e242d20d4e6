// The QEMU guest transport: inside a Linux guest whose GPU is QEMU's ivshmem-doorbell device
// (PCI 1af4:1110) connected to the platform's ivshmem server. Everything is done from user space
// through sysfs: the device is enabled (`enable`), BAR0's registers are mapped from `resource0`
// (IntrMask 0, IntrStatus 4, IVPosition 8 = this guest's peer id, Doorbell 12 = (peer << 16) |
// vector) and the shared region from `resource2`. Completions are found by polling the region
// with back-off (interrupts never reach user space through sysfs); a dead platform is noticed by
// the driver's heartbeat check, since QEMU tells the guest nothing when the platform goes.
//
// Selected by GPUVP_SOCKET=pci (the first 1af4:1110 device) or GPUVP_SOCKET=pci:<domain:bus:
// dev.fn> (connect_ivshmem() hands such a "socket" to connect_guest()), so that an unmodified
// libcudart runs in the guest.
#pragma once

#include <memory>
#include <string>

#include "sw/driver/transport.h"

namespace gpuvp::driver {

struct GuestOptions {
  std::string pci_address;                  // "" = the first ivshmem-doorbell device
  std::string sysfs_root = "/sys/bus/pci";  // tests may point this elsewhere
};

// True when a GPUVP_SOCKET value names the guest's PCI device ("pci" or "pci:<address>"); fills
// `options` from it.
bool parse_guest_device(const std::string& socket, GuestOptions* options);

// Enables and maps the device and checks the region header (magic, version, size). nullptr and
// `error` (one line naming the cause) on failure.
std::unique_ptr<Transport> connect_guest(const GuestOptions& options, std::string* error);

// The sysfs directory of the ivshmem-doorbell device `options` names; "" and `error` if none.
std::string find_guest_device(const GuestOptions& options, std::string* error);

}  // namespace gpuvp::driver
