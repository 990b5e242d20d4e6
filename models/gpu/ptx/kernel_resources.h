// A kernel's machine resources as the host told them with the launch (read from the SASS that
// ptxas produced, the way a driver fills a launch descriptor). The functional model does not use
// them; the CTA scheduler sizes occupancy by them and the SM takes local memory per thread from
// them. Not told (kEstimate): the CTA scheduler estimates registers from the PTX, and says so.
#pragma once

#include <cstdint>

namespace gpuvp::ptx {

enum class ResourceSource : uint8_t {
  kEstimate,      // nothing told: registers estimated from the PTX, shared memory from the PTX
  kCubinExact,    // the cubin of the device's own architecture
  kCubinNearest,  // a cubin of another minor version of the device's major architecture
};

constexpr const char* to_string(ResourceSource source) noexcept {
  switch (source) {
    case ResourceSource::kEstimate: return "estimate";
    case ResourceSource::kCubinExact: return "cubin exact";
    case ResourceSource::kCubinNearest: return "cubin nearest";
  }
  return "?";
}

struct KernelResources {
  ResourceSource source = ResourceSource::kEstimate;
  uint32_t sass_arch = 0;               // the cubin's architecture, major*10+minor (0: none)
  uint32_t registers_per_thread = 0;    // as ptxas allocated them
  uint32_t static_shared_bytes = 0;     // the cubin's .nv.shared size
  uint32_t local_bytes_per_thread = 0;  // stack frame and spills
};

}  // namespace gpuvp::ptx
