// What libcudart does for the device-side runtime: the device heap behind in-kernel malloc/free
// (cudaLimitMallocHeapSize) and the limits of dynamic parallelism. The device serves the calls
// themselves (models/gpu/ptx/device_runtime.h); the host maps the heap, names it to the device,
// and makes sure every kernel a module may launch from the device is resolved.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sw/cudart/runtime.h"

namespace gpuvp::cudart {
namespace {

namespace dev = gpuvp::device;

constexpr uint32_t kControlQueue = dev::kQueuesPerChannel - 1;

dev::Command make_command(dev::Opcode opcode, uint64_t a, uint64_t b, uint64_t c) {
  dev::Command cmd{};
  cmd.opcode = static_cast<uint32_t>(opcode);
  cmd.body.generic.a = a;
  cmd.body.generic.b = b;
  cmd.body.generic.c = c;
  return cmd;
}

}  // namespace

void Runtime::scan_device_runtime_use(Module& module, const std::string& ptx) {
  // The names of the module's .extern functions: "<.extern .func> [(returns)] NAME" up to '('
  // or the end of the line.
  std::size_t at = 0;
  while ((at = ptx.find(".extern .func", at)) != std::string::npos) {
    std::size_t end = ptx.find('\n', at);
    if (end == std::string::npos) end = ptx.size();
    std::string line = ptx.substr(at, end - at);
    at = end;
    if (const std::size_t close = line.find(')'); close != std::string::npos && line.find('(') < close) {
      line = line.substr(close + 1);  // past the return value
    } else {
      line = line.substr(std::strlen(".extern .func"));
    }
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const std::string name = line.substr(first, line.find_first_of(" \t(", first) - first);
    if (name == "malloc" || name == "free" || name == "__nv_aligned_device_malloc" || name == "__cuda_syscall_aligned_malloc" ||
        name == "__cudaCDP2Malloc" || name == "__cudaCDP2Free") {
      module.uses_device_heap = true;
    }
    if (name == "__cudaCDP2LaunchDeviceV2" || name == "cudaLaunchDeviceV2") module.uses_device_launch = true;
  }
}

std::string Runtime::link_ptx_units(const Fatbin& fatbin, uint32_t arch) {
  std::vector<const FatbinEntry*> units;
  for (const FatbinEntry& entry : fatbin.entries) {
    if (entry.kind == FatbinKind::Ptx && entry.unit != 0 && entry.arch == arch) units.push_back(&entry);
  }
  if (units.size() < 2) return {};
  std::string linked;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const std::string& text = units[u]->payload;
    std::size_t at = 0;
    while (at < text.size()) {
      std::size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(at, end - at);
      at = end + 1;
      // One header for the module (a kernel another unit declares .extern keeps its declaration:
      // it matches the definition).
      const bool header = line.rfind(".version", 0) == 0 || line.rfind(".target", 0) == 0 ||
                          line.rfind(".address_size", 0) == 0;
      if (u != 0 && header) continue;
      // nvcc names each unit's string constants $str, $str$1, ...: keep them apart.
      if (u != 0) {
        for (std::size_t p = line.find("$str"); p != std::string::npos; p = line.find("$str", p + 4)) {
          const std::string tag = "$u" + std::to_string(u);
          line.insert(p + 4, tag);
          p += tag.size();
        }
      }
      linked += line;
      linked += '\n';
    }
  }
  return linked;
}

void Runtime::resolve_device_launch_targets(Module& module) {
  for (auto& entry : functions_) {
    Function& function = *entry.second;
    // A kernel the PTX does not have (another translation unit's) stays unresolved: the device
    // cannot launch it either.
    if (function.module == &module && !function.resolved) (void)resolve(function);
  }
}

cudaError_t Runtime::establish_device_heap() {
  const driver::Completion mapped =
      call(kControlQueue, make_command(dev::Opcode::MemMap, heap_limit_, static_cast<uint64_t>(dev::MemoryKind::Device), 4096));
  if (mapped.lost) return cudaErrorDevicesUnavailable;
  if (!mapped.ok()) return cudaErrorMemoryAllocation;
  const driver::Completion named = call(kControlQueue, make_command(dev::Opcode::DeviceHeap, mapped.value0, heap_limit_, 0));
  if (named.lost) return cudaErrorDevicesUnavailable;
  if (!named.ok()) {
    std::fprintf(stderr, "gpuvp: the platform refused the device heap: %s\n", named.message.c_str());
    (void)call(kControlQueue, make_command(dev::Opcode::MemUnmap, mapped.value0, 0, 0));
    return cudaErrorMemoryAllocation;
  }
  heap_address_ = mapped.value0;
  return cudaSuccess;
}

cudaError_t Runtime::set_limit(cudaLimit limit, std::size_t value) {
  switch (limit) {
    case cudaLimitStackSize: stack_limit_ = value; return cudaSuccess;
    case cudaLimitPrintfFifoSize: printf_fifo_limit_ = value; return cudaSuccess;
    case cudaLimitMallocHeapSize:
      // Fixed once a kernel that uses malloc/free has been launched (CUDA answers the same).
      if (heap_address_ != 0) return cudaErrorInvalidValue;
      if (value < 16) value = 16;
      heap_limit_ = (value + 15) / 16 * 16;
      return cudaSuccess;
    case cudaLimitDevRuntimeSyncDepth: sync_depth_limit_ = value; return cudaSuccess;
    case cudaLimitDevRuntimePendingLaunchCount: pending_launch_limit_ = value == 0 ? 1 : value; return cudaSuccess;
    default: return cudaErrorUnsupportedLimit;
  }
}

cudaError_t Runtime::get_limit(std::size_t* value, cudaLimit limit) {
  if (value == nullptr) return cudaErrorInvalidValue;
  switch (limit) {
    case cudaLimitStackSize: *value = stack_limit_; return cudaSuccess;
    case cudaLimitPrintfFifoSize: *value = printf_fifo_limit_; return cudaSuccess;
    case cudaLimitMallocHeapSize: *value = heap_limit_; return cudaSuccess;
    case cudaLimitDevRuntimeSyncDepth: *value = sync_depth_limit_; return cudaSuccess;
    case cudaLimitDevRuntimePendingLaunchCount: *value = pending_launch_limit_; return cudaSuccess;
    default: log_unsupported("cudaDeviceGetLimit"); return cudaErrorUnsupportedLimit;
  }
}

}  // namespace gpuvp::cudart
