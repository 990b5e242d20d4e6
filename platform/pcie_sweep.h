// `gpuvp pcie-sweep`: a SystemC simulation of the GPU's copy engine moving data across the PCIe
// link model in transfers of each size, host->device and device->host, reporting the bandwidth
// achieved next to seed 003's measured Table 1. It is the platform's built-in default job until
// CUDA programs run end to end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/platform_params.h"

namespace gpuvp {

struct PcieSweepRow {
  uint64_t transfer_bytes = 0;
  uint32_t transfers = 0;
  double host_to_device = 0;  // achieved bytes/s
  double device_to_host = 0;
  double model = 0;           // the link model's effective bandwidth for this size
};

struct PcieSweepResult {
  std::vector<PcieSweepRow> rows;
  std::string stats_json;     // stats::Registry::json()
  std::string stats_summary;  // stats::Registry::summary()
  uint64_t simulated_ps = 0;
};

// Moves `bytes_per_size` in each direction for every transfer size. Runs one SystemC
// simulation; call at most once per process (SystemC elaborates once).
PcieSweepResult run_pcie_sweep(const PlatformParams& params, const std::vector<uint64_t>& transfer_sizes,
                               uint64_t bytes_per_size);

}  // namespace gpuvp
