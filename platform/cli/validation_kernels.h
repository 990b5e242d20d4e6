// The kernels of a `gpuvp validate` table: the PTX the functional model runs and the cubin nvcc
// built from the same source, whose registers, static shared and local memory per kernel size
// occupancy as a driver's launch descriptor would (sw/cubin/cubin.h). A cubin of another major
// architecture than the configured device, or one without the kernel, leaves that kernel's
// registers to the timing model's estimate, with one warning per kernel on stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "models/gpu/ptx/kernel_resources.h"
#include "sw/cubin/cubin.h"

namespace gpuvp::cli {

class ValidationKernels {
 public:
  // Reads both files; throws std::runtime_error naming the file when one is unreadable or the
  // cubin is malformed.
  ValidationKernels(const std::string& ptx_path, const std::string& cubin_path, uint32_t device_cc);

  const std::string& ptx() const { return ptx_; }
  // What the launch of `kernel` tells the timing model (source kEstimate when nothing matches).
  ptx::KernelResources resources(const std::string& kernel) const;

 private:
  std::string ptx_;
  std::string cubin_path_;
  std::optional<cubin::Cubin> cubin_;  // only when its architecture serves the device
  ptx::ResourceSource source_ = ptx::ResourceSource::kEstimate;
  mutable std::set<std::string> warned_;
};

}  // namespace gpuvp::cli
