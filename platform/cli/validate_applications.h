// The application table of `gpuvp validate`: whole programs (every launch, back to back on one
// GPU, warm caches between launches as on hardware) whose summed kernel cycles on a real V100
// are published. Kernels: sw/workloads/ubench/correlation_kernels.cu. Each program's result is
// checked against a CPU reference before its cycles are reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/cli/validation_kernels.h"
#include "platform/platform_params.h"

namespace gpuvp::cli {

struct KernelCycles {
  std::string name;
  uint64_t launches = 0;
  uint64_t cycles = 0;
  double reference_share = 0;  // published share of the program's time; 0: none
};

struct ApplicationFigure {
  std::string name;
  uint64_t launches = 0;
  uint64_t cycles = 0;     // summed kernel cycles of every launch (core clock; launch accepted -> completion)
  uint64_t reference = 0;  // published real-V100 cycles
  std::string source;
  std::vector<KernelCycles> kernels;  // the breakdown, in order of first launch
};

// Runs every application of the table on the timing model of `params`. Throws
// std::runtime_error when a program's result differs from its CPU reference or a kernel fails.
std::vector<ApplicationFigure> run_application_table(const PlatformParams& params, const ValidationKernels& kernels);

}  // namespace gpuvp::cli
