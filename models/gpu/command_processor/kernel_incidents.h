// Launches that did not run as asked, per kernel name: those whose registers were estimated (no
// resources told from the SASS), those that ran on the functional model although the timing
// model was selected (and why), and those that faulted (with the first fault's whole message: a
// completion record carries only device::kMessageBytes of it).
#pragma once

#include <cstdint>
#include <string>

namespace gpuvp::gpu {

struct KernelIncidents {
  std::string kernel;           // the kernel's name as the module declares it
  uint64_t estimated = 0;       // timed launches whose registers per thread were estimated from the PTX
  uint64_t fallbacks = 0;       // launches run on the functional model instead of the timing model
  std::string fallback_reason;  // why the first of them could not run on the timing model
  uint64_t faults = 0;          // launches that ended in a fault or trap
  std::string first_fault;      // the first fault's message
};

}  // namespace gpuvp::gpu
