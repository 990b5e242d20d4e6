// Identity of the modeled GPU, as the CUDA runtime reports it (cudaGetDeviceProperties) and as
// the PTX loader uses it to pick the best PTX in a fatbin.
#pragma once

#include <cstdint>
#include <string>

#include "platform/config/params.h"

namespace gpuvp::gpu {

struct DeviceParams {
  std::string name;
  uint32_t compute_capability = 0;  // major * 10 + minor: 70 for Volta

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    k.text(&DeviceParams::name, "gpu.name", "gpuvp V100", "device name reported to programs");
    k.integer(&DeviceParams::compute_capability, "gpu.compute_capability", 70, 30, 120,
              "compute capability reported to programs, major*10+minor (70 = sm_70)");
  }
};

}  // namespace gpuvp::gpu
