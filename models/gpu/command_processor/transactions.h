// The transactions the GPU front end speaks:
//
//  * Command: the bridge (host interface) hands one device::Command to the command processor as
//    a TLM write of the 128-byte record to address channel * kQueuesPerChannel + queue, carrying a
//    CommandExtension. b_transport returns when the command has finished (it may wait in
//    simulated time); the outcome is in the extension, the TLM response is OK unless the payload
//    itself was malformed.
//  * DMA: the command processor's copy engine reads and writes host memory (shared-region
//    offsets, device.h "host addresses") through the PCIe link; each transaction carries a
//    DmaExtension naming the channel whose window slice it must stay in. The host memory target
//    answers TLM_ADDRESS_ERROR_RESPONSE outside that slice.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <tlm>

#include "gpuvp/device.h"

namespace gpuvp::gpu {

class CommandExtension : public tlm::tlm_extension<CommandExtension> {
 public:
  // Request.
  uint32_t channel = 0;
  uint32_t queue = 0;
  const std::atomic<bool>* cancelled = nullptr;  // becomes true when the channel's owner is gone
  // Response.
  device::Status status = device::Status::Ok;
  uint64_t value0 = 0;
  uint64_t value1 = 0;
  std::string message;

  tlm::tlm_extension_base* clone() const override { return new CommandExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const CommandExtension&>(other);
  }
};

class DmaExtension : public tlm::tlm_extension<DmaExtension> {
 public:
  uint32_t channel = 0;

  tlm::tlm_extension_base* clone() const override { return new DmaExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    channel = static_cast<const DmaExtension&>(other).channel;
  }
};

}  // namespace gpuvp::gpu
