// What every workload's host code returns, and the one-line report the programs print.
#pragma once

#include <iosfwd>
#include <string>

#include "common/device_api.h"

namespace gpuvp::workloads {

struct WorkloadResult {
  bool passed = false;
  std::string summary;  // one line: what was run and how the check went
};

using WorkloadFunction = WorkloadResult (*)(Device&);

// Runs a workload, turning a DeviceError into a failed result, and prints
// "PASS <name>: <summary>" or "FAIL <name>: <summary>" on `out`.
WorkloadResult run_and_report(const std::string& name, WorkloadFunction run, Device& device,
                              std::ostream& out);

}  // namespace gpuvp::workloads
