// PTX functional model: run kernels from nvcc's PTX on a functional GPU, warp by warp.
//
// Intended use from a test harness or the runtime:
//
//   using namespace gpuvp::ptx;
//   Module module = Module::parse(ptx_text, "vecadd.ptx");      // throws ParseError
//   DeviceMemory memory;                                        // sparse, paged
//   LoadedModule loaded(module, memory);                        // places .global/.const vars
//   uint64_t d_x = memory.allocate(n * sizeof(float));
//   memory.copy_to_device(d_x, host_x.data(), n * sizeof(float));
//   memory.copy_to_device(loaded.symbol("coeffs")->address, c, sizeof c);  // MemcpyToSymbol
//   const Kernel& kernel = loaded.kernel("_Z6vecAddPKfS0_Pfi"); // throws std::out_of_range
//   std::vector<uint8_t> params = pack_params(kernel, d_x, d_y, d_z, n);
//   Executor executor(memory, ExecutorOptions{printf_to(std::cout)});
//   LaunchResult result = executor.launch(loaded, kernel, {Dim3{blocks}, Dim3{256}, 0}, params);
//   if (!result.ok()) std::cerr << result.message << "\n";      // e.g. illegal address
//   memory.copy_from_device(host_z.data(), d_z, n * sizeof(float));
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "models/gpu/ptx/memory.h"
#include "models/gpu/ptx/module.h"

namespace gpuvp::ptx {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  constexpr Dim3() = default;
  constexpr Dim3(uint32_t x_, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT: like CUDA's dim3
  constexpr uint64_t count() const { return uint64_t{x} * y * z; }
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_shared_bytes = 0;
  // cudaFuncAttributePreferredSharedMemoryCarveout: percent of the most shared memory per SM the
  // kernel prefers (-1: no preference). A timing hint (L1/shared split), no functional effect.
  int32_t shared_carveout_percent = -1;
  // A cooperative launch (cudaLaunchCooperativeKernel): every CTA is resident at once, and
  // %envreg1:%envreg2 hold the device address of its grid workspace (cooperative_groups'
  // grid_workspace: u32 size, u32 barrier), which grid-wide sync counts on.
  bool cooperative = false;
  uint64_t grid_workspace = 0;
};

// Address and size of a module variable placed in device memory.
struct Symbol {
  uint64_t address = 0;
  uint64_t size = 0;
  ModuleVariable::Space space = ModuleVariable::Space::kGlobal;
};

// A Module whose .global/.const variables have been allocated (and initialised) in a
// DeviceMemory. Launches go through a LoadedModule so kernels can reach those variables.
class LoadedModule {
 public:
  LoadedModule(Module module, DeviceMemory& memory);
  const Module& module() const { return module_; }
  std::optional<Symbol> symbol(std::string_view name) const;
  const Kernel& kernel(std::string_view entry_name) const;  // throws std::out_of_range
  // Device address of each module variable, indexed like module().variables().
  const std::vector<uint64_t>& variable_addresses() const { return variable_addresses_; }

 private:
  Module module_;
  std::vector<uint64_t> variable_addresses_;
};

// Builds a kernel's parameter buffer: each argument lands at its PTX .param offset.
// Throws std::invalid_argument when an argument's size differs from the parameter's size
// or when there are too many / too few arguments.
class ParamPacker {
 public:
  explicit ParamPacker(const Kernel& kernel);
  ParamPacker& add_bytes(const void* data, size_t size);
  template <typename T>
  ParamPacker& add(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are copied bytewise");
    return add_bytes(&value, sizeof(T));
  }
  std::vector<uint8_t> finish() const;

 private:
  const Kernel& kernel_;
  size_t next_param_ = 0;
  std::vector<uint8_t> buffer_;
};

template <typename... Args>
std::vector<uint8_t> pack_params(const Kernel& kernel, const Args&... args) {
  ParamPacker packer(kernel);
  (packer.add(args), ...);
  return packer.finish();
}

enum class LaunchStatus {
  kSuccess,
  kInvalidLaunch,      // bad grid/block/shared size or parameter buffer
  kIllegalAddress,     // out-of-range access in any state space
  kMisalignedAddress,  // address not aligned to the access size
  kTrap,               // trap instruction
  kAssertFailed,       // device-side assert (__assertfail)
  kBarrierDeadlock,    // threads wait at a barrier no one else will reach
  kInstructionLimit,   // ExecutorOptions::instruction_limit reached (runaway kernel)
  kInvalidInstruction, // e.g. an operand outside what PTX defines, seen at run time
};

struct LaunchResult {
  LaunchStatus status = LaunchStatus::kSuccess;
  // Human-readable: for faults names kernel, PTX file:line, CTA and thread.
  std::string message;
  uint64_t warp_instructions = 0;    // instructions issued per warp (one per warp step)
  uint64_t thread_instructions = 0;  // sum of active lanes over those instructions
  bool ok() const { return status == LaunchStatus::kSuccess; }
};

// Receives device printf output, one formatted printf call at a time, in CUDA order.
using PrintfSink = std::function<void(std::string_view text)>;
inline PrintfSink printf_to(std::ostream& stream) {
  return [&stream](std::string_view text) { stream << text; };
}

// One memory access of one thread, for timing models and tracing. Addresses are in the
// access's state space after generic-address resolution: device addresses for global and
// const, byte offsets for shared (per CTA), local (per thread) and param (kernel buffer or
// the thread's call frame). Atomics report a read and then a write.
struct MemoryAccess {
  enum class Space : uint8_t { kGlobal, kShared, kLocal, kConst, kParam };
  Space space = Space::kGlobal;
  bool is_write = false;
  uint64_t address = 0;
  uint32_t size = 0;
  Dim3 cta;
  uint32_t warp = 0;  // warp index within the CTA
  uint32_t lane = 0;
  uint32_t ptx_line = 0;
};
using MemoryObserver = std::function<void(const MemoryAccess& access)>;

class DeviceRuntime;  // device_runtime.h

struct ExecutorOptions {
  PrintfSink printf_sink;               // empty: printf output is discarded
  MemoryObserver memory_observer;       // empty: no per-access callback (no cost)
  uint64_t instruction_limit = 0;       // warp instructions per launch; 0 = unlimited
  uint32_t sm_count = 80;               // reported by %nsmid; %smid = cta index % sm_count
  uint32_t local_bytes_per_thread = 64 * 1024;  // call stack + .local depots
  // Serves in-kernel malloc/free and child launches (device_runtime.h); null: malloc returns
  // NULL, a child launch answers an error code (executor_device_calls.inc).
  DeviceRuntime* device_runtime = nullptr;
};

class Executor {
 public:
  explicit Executor(MemoryInterface& global_memory, ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs the whole grid functionally (CTAs in linear order, warps round-robin within a
  // CTA; a cooperative launch's CTAs all at once, their warps round-robin). Kernel faults are reported in the result, never thrown.
  LaunchResult launch(const LoadedModule& module, const Kernel& kernel, const LaunchConfig& config,
                      const std::vector<uint8_t>& params);

 private:
  MemoryInterface& global_memory_;
  ExecutorOptions options_;
};

}  // namespace gpuvp::ptx
