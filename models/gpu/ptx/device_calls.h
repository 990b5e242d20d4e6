// Names of the device-runtime functions nvcc's PTX declares .extern, mapped to the executor's
// built-in externals (device_runtime.h). CUDA 12+ prefixes the device runtime's entry points with
// __cudaCDP2; the unprefixed names are what older toolkits emitted.
#pragma once

#include <optional>
#include <string_view>

#include "models/gpu/ptx/ir.h"

namespace gpuvp::ptx::ir {

inline std::optional<Function::External> device_runtime_external(std::string_view name) {
  using E = Function::External;
  struct Entry {
    std::string_view name;
    E external;
  };
  static constexpr Entry kEntries[] = {
      {"malloc", E::kMalloc},
      {"__nv_aligned_device_malloc", E::kAlignedMalloc},
      {"__cuda_syscall_aligned_malloc", E::kAlignedMalloc},  // what nvcc 13 calls for __nv_aligned_device_malloc
      {"free", E::kFree},
      {"__cudaCDP2GetParameterBufferV2", E::kCdpGetParameterBuffer},
      {"cudaGetParameterBufferV2", E::kCdpGetParameterBuffer},
      {"__cudaCDP2LaunchDeviceV2", E::kCdpLaunchDevice},
      {"cudaLaunchDeviceV2", E::kCdpLaunchDevice},
      {"__cudaCDP2StreamCreateWithFlags", E::kCdpStreamCreate},
      {"cudaStreamCreateWithFlags", E::kCdpStreamCreate},
      {"__cudaCDP2StreamDestroy", E::kCdpStreamDestroy},
      {"cudaStreamDestroy", E::kCdpStreamDestroy},
      {"__cudaCDP2GetLastError", E::kCdpGetLastError},
      {"cudaGetLastError", E::kCdpGetLastError},
      {"__cudaCDP2PeekAtLastError", E::kCdpPeekAtLastError},
      {"cudaPeekAtLastError", E::kCdpPeekAtLastError},
      {"__cudaCDP2GetDevice", E::kCdpGetDevice},
      {"cudaGetDevice", E::kCdpGetDevice},
      {"__cudaCDP2Malloc", E::kCdpMalloc},
      {"__cudaCDP2Free", E::kCdpFree},
      {"__cudaCDP2MemcpyAsync", E::kCdpMemcpyAsync},
      {"__cudaCDP2GetErrorString", E::kCdpGetErrorString},
  };
  for (const Entry& entry : kEntries) {
    if (entry.name == name) return entry.external;
  }
  return std::nullopt;
}

}  // namespace gpuvp::ptx::ir
