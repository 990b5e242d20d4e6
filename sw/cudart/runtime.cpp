#include "sw/cudart/runtime.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sw/cudart/graph.h"
#include "gpuvp/occupancy.h"
#include "sw/driver/ivshmem_client.h"

namespace gpuvp::cudart {
namespace {

namespace dev = gpuvp::device;

constexpr uint32_t kControlQueue = dev::kQueuesPerChannel - 1;  // MemMap, modules, symbols
// Device addresses of mapped host memory as cudaHostGetDevicePointer answers them: this base plus
// the memory's offset in the channel's window slice (clear of device allocations, which start at
// 28 GiB, and of the host's usual user-space addresses).
constexpr uint64_t kHostMapBase = uint64_t{0x2000} << 32;
constexpr uint32_t kStreamQueues = dev::kQueuesPerChannel - 2;  // queues 1..6 for created streams
constexpr std::size_t kStagingBytes = std::size_t{4} << 20;
constexpr std::size_t kPrintfBytes = std::size_t{1} << 20;      // cudaLimitPrintfFifoSize default

dev::Command command(dev::Opcode opcode, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0) {
  dev::Command cmd{};
  cmd.opcode = static_cast<uint32_t>(opcode);
  cmd.body.generic.a = a;
  cmd.body.generic.b = b;
  cmd.body.generic.c = c;
  cmd.body.generic.d = d;
  return cmd;
}

bool is_sticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorDevicesUnavailable:
      return true;
    default:
      return false;
  }
}

uint64_t to_address(const void* p) { return reinterpret_cast<uint64_t>(p); }

std::chrono::milliseconds heartbeat_timeout() {
  const char* text = std::getenv("GPUVP_HEARTBEAT_TIMEOUT_MS");
  if (text != nullptr && *text != '\0') {
    const long ms = std::strtol(text, nullptr, 10);
    if (ms > 0) return std::chrono::milliseconds(ms);
  }
  return std::chrono::milliseconds(3000);
}

}  // namespace

Runtime& Runtime::instance() {
  static Runtime runtime;
  return runtime;
}

Runtime::~Runtime() {
  if (progress_thread_.joinable()) {
    {
      std::lock_guard<std::mutex> stop(progress_mutex_);
      progress_stopping_ = true;
    }
    progress_stop_.notify_all();
    progress_thread_.join();
  }
  // At exit: flush outstanding device printf, then say goodbye (the driver's destructor).
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (driver_ != nullptr && sticky_ != cudaErrorDevicesUnavailable) synchronize();
  callback_thread_.reset();
  driver_.reset();
}

// ---------------------------------------------------------------------------------------------
// Registration.

void** Runtime::register_fatbin(void* fat_cubin) {
  auto module = std::make_unique<Module>();
  std::string error;
  module->fatbin = parse_registered_fatbin(fat_cubin, &error);
  if (!module->fatbin) module->parse_error = error;
  modules_.push_back(std::move(module));
  // The handle nvcc keeps is a pointer to our Module.
  return reinterpret_cast<void**>(modules_.back().get());
}

void Runtime::unregister_fatbin(void** handle) {
  // Modules stay until the runtime is destroyed: kernels may still be running at exit.
  (void)handle;
}

void Runtime::register_function(void** handle, const char* host_function, const char* device_name) {
  auto function = std::make_unique<Function>();
  function->module = reinterpret_cast<Module*>(handle);
  function->host_function = host_function;
  function->name = device_name != nullptr ? device_name : "";
  functions_[host_function] = std::move(function);
}

void Runtime::register_variable(void** handle, const void* host_variable, const char* device_name, std::size_t size) {
  auto variable = std::make_unique<Variable>();
  variable->module = reinterpret_cast<Module*>(handle);
  variable->host_variable = host_variable;
  variable->name = device_name != nullptr ? device_name : "";
  variable->size = size;
  variables_[host_variable] = std::move(variable);
}

Function* Runtime::function_of(const void* host_function_or_kernel) {
  const auto it = functions_.find(host_function_or_kernel);
  if (it != functions_.end()) return it->second.get();
  for (auto& entry : functions_) {
    if (entry.second.get() == host_function_or_kernel) return entry.second.get();
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Errors.

cudaError_t Runtime::record(cudaError_t error) {
  // cudaErrorNotReady (a query of unfinished work) is "not actually an error" (CUDA's own words):
  // it never becomes the last error, or a polling loop's next cudaGetLastError would fail.
  if (error != cudaSuccess && error != cudaErrorNotReady) last_error_ = error;
  return error;
}

cudaError_t Runtime::take_last_error() {
  if (sticky_ != cudaSuccess) return sticky_;
  const cudaError_t error = last_error_;
  last_error_ = cudaSuccess;
  return error;
}

void Runtime::log_unsupported(const char* name) {
  if (unsupported_logged_.insert(name).second) {
    std::fprintf(stderr, "gpuvp: %s is not supported by the gpuvp CUDA runtime; it returns cudaErrorNotSupported\n",
                 name);
  }
}

cudaError_t Runtime::status_error(const driver::Completion& completion, const std::string& what) {
  cudaError_t error = cudaErrorUnknown;
  if (completion.lost) {
    error = cudaErrorDevicesUnavailable;
  } else {
    switch (completion.status) {
      case dev::Status::Ok: return cudaSuccess;
      case dev::Status::InvalidCommand: error = cudaErrorInvalidValue; break;
      case dev::Status::InvalidHandle: error = cudaErrorInvalidResourceHandle; break;
      case dev::Status::InvalidAddress: error = cudaErrorInvalidValue; break;
      case dev::Status::OutOfMemory: error = cudaErrorMemoryAllocation; break;
      case dev::Status::InvalidLaunch: error = cudaErrorInvalidConfiguration; break;
      case dev::Status::LaunchOutOfResources: error = cudaErrorLaunchOutOfResources; break;
      case dev::Status::CooperativeLaunchTooLarge: error = cudaErrorCooperativeLaunchTooLarge; break;
      case dev::Status::IllegalAddress: error = cudaErrorIllegalAddress; break;
      case dev::Status::KernelTrap:
        error = completion.message.rfind(dev::kAssertMessagePrefix, 0) == 0 ? cudaErrorAssert : cudaErrorLaunchFailure;
        break;
      case dev::Status::ModuleLoadFailed: error = cudaErrorInvalidPtx; break;
      case dev::Status::NotSupported: error = cudaErrorNotSupported; break;
      case dev::Status::RingCorrupt:
      case dev::Status::ChannelUnavailable: error = cudaErrorDevicesUnavailable; break;
    }
  }
  if (is_sticky(error)) {
    if (sticky_ == cudaSuccess) {
      std::fprintf(stderr, "gpuvp: %s: %s (%s)\n", what.c_str(), completion.message.c_str(), error_name(error));
    }
    sticky_ = error;
  } else if (!completion.message.empty() && std::getenv("GPUVP_VERBOSE") != nullptr) {
    std::fprintf(stderr, "gpuvp: %s: %s\n", what.c_str(), completion.message.c_str());
  }
  return record(error);
}

// ---------------------------------------------------------------------------------------------
// Device.

cudaError_t Runtime::ensure_device() {
  if (sticky_ != cudaSuccess) return sticky_;
  if (driver_ != nullptr) return cudaSuccess;
  if (init_attempted_) return init_error_;
  init_attempted_ = true;
  const char* socket = std::getenv(dev::kSocketEnvironmentVariable);
  if (socket == nullptr || *socket == '\0') {
    std::fprintf(stderr, "gpuvp: %s is not set; run the program under `gpuvp run -- ./app` or `gpuvp serve`\n",
                 dev::kSocketEnvironmentVariable);
    return init_error_ = cudaErrorNoDevice;
  }
  std::string error;
  driver::IvshmemOptions options;
  options.socket_path = socket;
  auto transport = driver::connect_ivshmem(options, &error);
  if (transport != nullptr) {
    driver::DriverOptions driver_options;
    driver_options.heartbeat_timeout = heartbeat_timeout();
    driver_ = driver::Driver::open(std::move(transport), driver_options, &error);
  }
  if (driver_ == nullptr) {
    std::fprintf(stderr, "gpuvp: %s\n", error.c_str());
    return init_error_ = cudaErrorDevicesUnavailable;
  }
  const auto cells = driver_->allocate(16 * dev::kQueuesPerChannel, 64);
  if (!cells) return init_error_ = cudaErrorMemoryAllocation;
  queue_cells_ = *cells;
  std::memset(driver_->pointer(queue_cells_), 0, 16 * dev::kQueuesPerChannel);
  const auto release = driver_->allocate(16 * dev::kQueuesPerChannel, 64);
  if (!release) return init_error_ = cudaErrorMemoryAllocation;
  release_cells_ = *release;
  std::memset(driver_->pointer(release_cells_), 0, 16 * dev::kQueuesPerChannel);
  return cudaSuccess;
}

namespace {

// Limits that are architectural constants of compute capability 6.0 and later (CUDA C++
// Programming Guide, "Technical Specifications per Compute Capability"): textures and surfaces
// (gpuvp does not sample textures; the figures are what such a device reports), grid and block
// dimensions, constant memory, pitch.
constexpr int kMaxTexture1D = 131072, kMaxTexture1DMipmap = 32768, kMaxTexture1DLinear = 1 << 28;
constexpr int kMaxTexture2D[2] = {131072, 65536}, kMaxTexture2DMipmap[2] = {32768, 32768};
constexpr int kMaxTexture2DLinear[3] = {131072, 65000, 2097120}, kMaxTexture2DGather[2] = {32768, 32768};
constexpr int kMaxTexture3D[3] = {16384, 16384, 16384}, kMaxTexture3DAlt[3] = {8192, 8192, 32768};
constexpr int kMaxTextureCubemap = 32768, kMaxTextureCubemapLayered[2] = {32768, 2046};
constexpr int kMaxTexture1DLayered[2] = {32768, 2048}, kMaxTexture2DLayered[3] = {32768, 32768, 2048};
constexpr int kMaxSurface1D = 32768, kMaxSurface2D[2] = {131072, 65536}, kMaxSurface3D[3] = {16384, 16384, 16384};
constexpr int kMaxSurface1DLayered[2] = {32768, 2048}, kMaxSurface2DLayered[3] = {32768, 32768, 2048};
constexpr int kMaxSurfaceCubemap = 32768, kMaxSurfaceCubemapLayered[2] = {32768, 2046};
constexpr int kTextureAlignment = 512, kTexturePitchAlignment = 32, kSurfaceAlignment = 512;
constexpr int kMaxBlockDim[3] = {1024, 1024, 64};
constexpr int kMaxGridDim[3] = {2147483647, 65535, 65535};
constexpr int kConstantMemory = 65536;
constexpr int kMaxPitch = 2147483647;

// Shared memory a block may opt into (cudaFuncAttributeMaxDynamicSharedMemorySize): all of the
// SM's on Volta and Turing; the SM's less the 1 KiB the system reserves per block from Ampere
// on; none beyond the default 48 KiB before Volta.
uint64_t reserved_shared_per_block(const gpuvp::device::DeviceInfo& d) { return d.compute_capability >= 80 ? 1024 : 0; }
uint64_t shared_per_block_optin(const gpuvp::device::DeviceInfo& d) {
  if (d.compute_capability < 70) return d.shared_memory_per_block;
  return std::max<uint64_t>(d.shared_memory_per_block, d.shared_memory_per_sm - reserved_shared_per_block(d));
}

}  // namespace

// Every cudaDeviceAttr of the CUDA 13 headers, from the platform's DeviceInfo (the preset) and
// from what this runtime implements; cudaGetDeviceProperties is built from the same answers.
cudaError_t Runtime::device_attribute(int* value, cudaDeviceAttr attr) {
  if (value == nullptr) return cudaErrorInvalidValue;
  const dev::DeviceInfo& d = info();
  auto clamp = [](uint64_t v) { return static_cast<int>(std::min<uint64_t>(v, 2147483647)); };
  int v = 0;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: v = static_cast<int>(d.max_threads_per_block); break;
    case cudaDevAttrMaxBlockDimX: v = std::min<int>(kMaxBlockDim[0], static_cast<int>(d.max_threads_per_block)); break;
    case cudaDevAttrMaxBlockDimY: v = std::min<int>(kMaxBlockDim[1], static_cast<int>(d.max_threads_per_block)); break;
    case cudaDevAttrMaxBlockDimZ: v = std::min<int>(kMaxBlockDim[2], static_cast<int>(d.max_threads_per_block)); break;
    case cudaDevAttrMaxGridDimX: v = kMaxGridDim[0]; break;
    case cudaDevAttrMaxGridDimY: v = kMaxGridDim[1]; break;
    case cudaDevAttrMaxGridDimZ: v = kMaxGridDim[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: v = clamp(d.shared_memory_per_block); break;
    case cudaDevAttrTotalConstantMemory: v = kConstantMemory; break;
    case cudaDevAttrWarpSize: v = static_cast<int>(d.warp_size); break;
    case cudaDevAttrMaxPitch: v = kMaxPitch; break;
    case cudaDevAttrMaxRegistersPerBlock: v = clamp(std::min<uint64_t>(d.registers_per_sm, 65536)); break;
    case cudaDevAttrClockRate: v = clamp(d.core_clock_khz); break;
    case cudaDevAttrTextureAlignment: v = kTextureAlignment; break;
    case cudaDevAttrGpuOverlap: v = 1; break;  // the copy engine runs beside kernels
    case cudaDevAttrMultiProcessorCount: v = static_cast<int>(d.sm_count); break;
    case cudaDevAttrKernelExecTimeout: v = 0; break;
    case cudaDevAttrIntegrated: v = 0; break;
    case cudaDevAttrCanMapHostMemory: v = 1; break;  // zero copy: MemMapHost
    case cudaDevAttrComputeMode: v = cudaComputeModeDefault; break;
    case cudaDevAttrMaxTexture1DWidth: v = kMaxTexture1D; break;
    case cudaDevAttrMaxTexture2DWidth: v = kMaxTexture2D[0]; break;
    case cudaDevAttrMaxTexture2DHeight: v = kMaxTexture2D[1]; break;
    case cudaDevAttrMaxTexture3DWidth: v = kMaxTexture3D[0]; break;
    case cudaDevAttrMaxTexture3DHeight: v = kMaxTexture3D[1]; break;
    case cudaDevAttrMaxTexture3DDepth: v = kMaxTexture3D[2]; break;
    case cudaDevAttrMaxTexture2DLayeredWidth: v = kMaxTexture2DLayered[0]; break;
    case cudaDevAttrMaxTexture2DLayeredHeight: v = kMaxTexture2DLayered[1]; break;
    case cudaDevAttrMaxTexture2DLayeredLayers: v = kMaxTexture2DLayered[2]; break;
    case cudaDevAttrSurfaceAlignment: v = kSurfaceAlignment; break;
    case cudaDevAttrConcurrentKernels: v = 1; break;
    case cudaDevAttrEccEnabled: v = 0; break;
    case cudaDevAttrPciBusId: v = 0; break;  // no PCI identity: the device is a model
    case cudaDevAttrPciDeviceId: v = 0; break;
    case cudaDevAttrTccDriver: v = 0; break;
    case cudaDevAttrMemoryClockRate: v = clamp(d.memory_clock_khz); break;
    case cudaDevAttrGlobalMemoryBusWidth: v = static_cast<int>(d.memory_bus_width_bits); break;
    case cudaDevAttrL2CacheSize: v = clamp(d.l2_bytes); break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: v = static_cast<int>(d.max_threads_per_sm); break;
    case cudaDevAttrAsyncEngineCount: v = 1; break;  // one copy engine
    case cudaDevAttrUnifiedAddressing: v = 1; break;
    case cudaDevAttrMaxTexture1DLayeredWidth: v = kMaxTexture1DLayered[0]; break;
    case cudaDevAttrMaxTexture1DLayeredLayers: v = kMaxTexture1DLayered[1]; break;
    case cudaDevAttrMaxTexture2DGatherWidth: v = kMaxTexture2DGather[0]; break;
    case cudaDevAttrMaxTexture2DGatherHeight: v = kMaxTexture2DGather[1]; break;
    case cudaDevAttrMaxTexture3DWidthAlt: v = kMaxTexture3DAlt[0]; break;
    case cudaDevAttrMaxTexture3DHeightAlt: v = kMaxTexture3DAlt[1]; break;
    case cudaDevAttrMaxTexture3DDepthAlt: v = kMaxTexture3DAlt[2]; break;
    case cudaDevAttrPciDomainId: v = 0; break;
    case cudaDevAttrTexturePitchAlignment: v = kTexturePitchAlignment; break;
    case cudaDevAttrMaxTextureCubemapWidth: v = kMaxTextureCubemap; break;
    case cudaDevAttrMaxTextureCubemapLayeredWidth: v = kMaxTextureCubemapLayered[0]; break;
    case cudaDevAttrMaxTextureCubemapLayeredLayers: v = kMaxTextureCubemapLayered[1]; break;
    case cudaDevAttrMaxSurface1DWidth: v = kMaxSurface1D; break;
    case cudaDevAttrMaxSurface2DWidth: v = kMaxSurface2D[0]; break;
    case cudaDevAttrMaxSurface2DHeight: v = kMaxSurface2D[1]; break;
    case cudaDevAttrMaxSurface3DWidth: v = kMaxSurface3D[0]; break;
    case cudaDevAttrMaxSurface3DHeight: v = kMaxSurface3D[1]; break;
    case cudaDevAttrMaxSurface3DDepth: v = kMaxSurface3D[2]; break;
    case cudaDevAttrMaxSurface1DLayeredWidth: v = kMaxSurface1DLayered[0]; break;
    case cudaDevAttrMaxSurface1DLayeredLayers: v = kMaxSurface1DLayered[1]; break;
    case cudaDevAttrMaxSurface2DLayeredWidth: v = kMaxSurface2DLayered[0]; break;
    case cudaDevAttrMaxSurface2DLayeredHeight: v = kMaxSurface2DLayered[1]; break;
    case cudaDevAttrMaxSurface2DLayeredLayers: v = kMaxSurface2DLayered[2]; break;
    case cudaDevAttrMaxSurfaceCubemapWidth: v = kMaxSurfaceCubemap; break;
    case cudaDevAttrMaxSurfaceCubemapLayeredWidth: v = kMaxSurfaceCubemapLayered[0]; break;
    case cudaDevAttrMaxSurfaceCubemapLayeredLayers: v = kMaxSurfaceCubemapLayered[1]; break;
    case cudaDevAttrMaxTexture1DLinearWidth: v = kMaxTexture1DLinear; break;
    case cudaDevAttrMaxTexture2DLinearWidth: v = kMaxTexture2DLinear[0]; break;
    case cudaDevAttrMaxTexture2DLinearHeight: v = kMaxTexture2DLinear[1]; break;
    case cudaDevAttrMaxTexture2DLinearPitch: v = kMaxTexture2DLinear[2]; break;
    case cudaDevAttrMaxTexture2DMipmappedWidth: v = kMaxTexture2DMipmap[0]; break;
    case cudaDevAttrMaxTexture2DMipmappedHeight: v = kMaxTexture2DMipmap[1]; break;
    case cudaDevAttrComputeCapabilityMajor: v = static_cast<int>(d.compute_capability / 10); break;
    case cudaDevAttrComputeCapabilityMinor: v = static_cast<int>(d.compute_capability % 10); break;
    case cudaDevAttrMaxTexture1DMipmappedWidth: v = kMaxTexture1DMipmap; break;
    case cudaDevAttrStreamPrioritiesSupported: v = 0; break;  // priorities are accepted and ignored
    case cudaDevAttrGlobalL1CacheSupported: v = 1; break;
    case cudaDevAttrLocalL1CacheSupported: v = 1; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = clamp(d.shared_memory_per_sm); break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: v = clamp(d.registers_per_sm); break;
    case cudaDevAttrManagedMemory: v = 1; break;
    case cudaDevAttrIsMultiGpuBoard: v = 0; break;
    case cudaDevAttrMultiGpuBoardGroupID: v = 0; break;
    case cudaDevAttrHostNativeAtomicSupported: v = 0; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio:
      v = d.fp64_lanes_per_sm == 0 ? 0 : static_cast<int>(d.fp32_lanes_per_sm / d.fp64_lanes_per_sm);
      break;
    case cudaDevAttrPageableMemoryAccess: v = 0; break;
    case cudaDevAttrConcurrentManagedAccess: v = 1; break;  // on-demand paging of managed memory
    case cudaDevAttrComputePreemptionSupported: v = 0; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: v = 1; break;  // mapped at the host's address
    case cudaDevAttrCooperativeLaunch: v = 1; break;  // cudaLaunchCooperativeKernel, grid-wide sync
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = clamp(shared_per_block_optin(d)); break;
    case cudaDevAttrCanFlushRemoteWrites: v = 0; break;
    case cudaDevAttrHostRegisterSupported: v = 1; break;  // cudaHostRegister (copies are staged)
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: v = 0; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: v = 0; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: v = static_cast<int>(d.max_ctas_per_sm); break;
    case cudaDevAttrMaxPersistingL2CacheSize: v = 0; break;  // no persisting-access L2 partition
    case cudaDevAttrMaxAccessPolicyWindowSize: v = 0; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: v = clamp(reserved_shared_per_block(d)); break;
    case cudaDevAttrSparseCudaArraySupported: v = 0; break;
    case cudaDevAttrHostRegisterReadOnlySupported: v = 0; break;
    case cudaDevAttrTimelineSemaphoreInteropSupported: v = 0; break;
    case cudaDevAttrMemoryPoolsSupported: v = 1; break;  // cudaMallocAsync, cudaMemPool*
    case cudaDevAttrGPUDirectRDMASupported: v = 0; break;
    case cudaDevAttrGPUDirectRDMAFlushWritesOptions: v = 0; break;
    case cudaDevAttrGPUDirectRDMAWritesOrdering: v = cudaGPUDirectRDMAWritesOrderingNone; break;
    case cudaDevAttrMemoryPoolSupportedHandleTypes: v = cudaMemHandleTypeNone; break;
    case cudaDevAttrClusterLaunch: v = 0; break;
    case cudaDevAttrDeferredMappingCudaArraySupported: v = 0; break;
    case cudaDevAttrIpcEventSupport: v = 1; break;
    case cudaDevAttrMemSyncDomainCount: v = 1; break;
    case cudaDevAttrNumaConfig: v = cudaDeviceNumaConfigNone; break;
    case cudaDevAttrNumaId: v = -1; break;
    case cudaDevAttrMpsEnabled: v = 0; break;
    case cudaDevAttrHostNumaId: v = -1; break;
    case cudaDevAttrD3D12CigSupported: v = 0; break;
    case cudaDevAttrVulkanCigSupported: v = 0; break;
    case cudaDevAttrGpuPciDeviceId: v = 0; break;
    case cudaDevAttrGpuPciSubsystemId: v = 0; break;
    case cudaDevAttrHostNumaMemoryPoolsSupported: v = 0; break;
    case cudaDevAttrHostNumaMultinodeIpcSupported: v = 0; break;
    case cudaDevAttrHostMemoryPoolsSupported: v = 0; break;
    case cudaDevAttrOnlyPartialHostNativeAtomicSupported: v = 0; break;
    case cudaDevAttrReserved92:
    case cudaDevAttrReserved93:
    case cudaDevAttrReserved94:
    case cudaDevAttrReserved96:
    case cudaDevAttrReserved122:
    case cudaDevAttrReserved123:
    case cudaDevAttrReserved124:
    case cudaDevAttrReserved127:
    case cudaDevAttrReserved128:
    case cudaDevAttrReserved129:
    case cudaDevAttrReserved132:
    case cudaDevAttrReserved141:
    case cudaDevAttrReserved145: v = 0; break;
    default: return cudaErrorInvalidValue;  // not an attribute (cudaDevAttrMax, gaps, negative)
  }
  *value = v;
  return cudaSuccess;
}

cudaError_t Runtime::device_properties(cudaDeviceProp* prop) {
  if (prop == nullptr) return cudaErrorInvalidValue;
  const dev::DeviceInfo& d = info();
  std::memset(prop, 0, sizeof *prop);
  std::snprintf(prop->name, sizeof prop->name, "%.*s", static_cast<int>(sizeof d.name), d.name);
  prop->uuid = device_uuid();
  auto a = [&](cudaDeviceAttr attr) {
    int v = 0;
    device_attribute(&v, attr);
    return v;
  };
  prop->totalGlobalMem = d.global_memory_bytes;
  prop->sharedMemPerBlock = d.shared_memory_per_block;
  prop->regsPerBlock = a(cudaDevAttrMaxRegistersPerBlock);
  prop->warpSize = a(cudaDevAttrWarpSize);
  prop->memPitch = static_cast<std::size_t>(a(cudaDevAttrMaxPitch));
  prop->maxThreadsPerBlock = a(cudaDevAttrMaxThreadsPerBlock);
  prop->maxThreadsDim[0] = a(cudaDevAttrMaxBlockDimX);
  prop->maxThreadsDim[1] = a(cudaDevAttrMaxBlockDimY);
  prop->maxThreadsDim[2] = a(cudaDevAttrMaxBlockDimZ);
  prop->maxGridSize[0] = a(cudaDevAttrMaxGridDimX);
  prop->maxGridSize[1] = a(cudaDevAttrMaxGridDimY);
  prop->maxGridSize[2] = a(cudaDevAttrMaxGridDimZ);
  prop->totalConstMem = static_cast<std::size_t>(a(cudaDevAttrTotalConstantMemory));
  prop->major = a(cudaDevAttrComputeCapabilityMajor);
  prop->minor = a(cudaDevAttrComputeCapabilityMinor);
  prop->textureAlignment = static_cast<std::size_t>(a(cudaDevAttrTextureAlignment));
  prop->texturePitchAlignment = static_cast<std::size_t>(a(cudaDevAttrTexturePitchAlignment));
  prop->multiProcessorCount = a(cudaDevAttrMultiProcessorCount);
  prop->integrated = a(cudaDevAttrIntegrated);
  prop->canMapHostMemory = a(cudaDevAttrCanMapHostMemory);
  prop->maxTexture1D = a(cudaDevAttrMaxTexture1DWidth);
  prop->maxTexture1DMipmap = a(cudaDevAttrMaxTexture1DMipmappedWidth);
  prop->maxTexture2D[0] = a(cudaDevAttrMaxTexture2DWidth);
  prop->maxTexture2D[1] = a(cudaDevAttrMaxTexture2DHeight);
  prop->maxTexture2DMipmap[0] = a(cudaDevAttrMaxTexture2DMipmappedWidth);
  prop->maxTexture2DMipmap[1] = a(cudaDevAttrMaxTexture2DMipmappedHeight);
  prop->maxTexture2DLinear[0] = a(cudaDevAttrMaxTexture2DLinearWidth);
  prop->maxTexture2DLinear[1] = a(cudaDevAttrMaxTexture2DLinearHeight);
  prop->maxTexture2DLinear[2] = a(cudaDevAttrMaxTexture2DLinearPitch);
  prop->maxTexture2DGather[0] = a(cudaDevAttrMaxTexture2DGatherWidth);
  prop->maxTexture2DGather[1] = a(cudaDevAttrMaxTexture2DGatherHeight);
  prop->maxTexture3D[0] = a(cudaDevAttrMaxTexture3DWidth);
  prop->maxTexture3D[1] = a(cudaDevAttrMaxTexture3DHeight);
  prop->maxTexture3D[2] = a(cudaDevAttrMaxTexture3DDepth);
  prop->maxTexture3DAlt[0] = a(cudaDevAttrMaxTexture3DWidthAlt);
  prop->maxTexture3DAlt[1] = a(cudaDevAttrMaxTexture3DHeightAlt);
  prop->maxTexture3DAlt[2] = a(cudaDevAttrMaxTexture3DDepthAlt);
  prop->maxTextureCubemap = a(cudaDevAttrMaxTextureCubemapWidth);
  prop->maxTexture1DLayered[0] = a(cudaDevAttrMaxTexture1DLayeredWidth);
  prop->maxTexture1DLayered[1] = a(cudaDevAttrMaxTexture1DLayeredLayers);
  prop->maxTexture2DLayered[0] = a(cudaDevAttrMaxTexture2DLayeredWidth);
  prop->maxTexture2DLayered[1] = a(cudaDevAttrMaxTexture2DLayeredHeight);
  prop->maxTexture2DLayered[2] = a(cudaDevAttrMaxTexture2DLayeredLayers);
  prop->maxTextureCubemapLayered[0] = a(cudaDevAttrMaxTextureCubemapLayeredWidth);
  prop->maxTextureCubemapLayered[1] = a(cudaDevAttrMaxTextureCubemapLayeredLayers);
  prop->maxSurface1D = a(cudaDevAttrMaxSurface1DWidth);
  prop->maxSurface2D[0] = a(cudaDevAttrMaxSurface2DWidth);
  prop->maxSurface2D[1] = a(cudaDevAttrMaxSurface2DHeight);
  prop->maxSurface3D[0] = a(cudaDevAttrMaxSurface3DWidth);
  prop->maxSurface3D[1] = a(cudaDevAttrMaxSurface3DHeight);
  prop->maxSurface3D[2] = a(cudaDevAttrMaxSurface3DDepth);
  prop->maxSurface1DLayered[0] = a(cudaDevAttrMaxSurface1DLayeredWidth);
  prop->maxSurface1DLayered[1] = a(cudaDevAttrMaxSurface1DLayeredLayers);
  prop->maxSurface2DLayered[0] = a(cudaDevAttrMaxSurface2DLayeredWidth);
  prop->maxSurface2DLayered[1] = a(cudaDevAttrMaxSurface2DLayeredHeight);
  prop->maxSurface2DLayered[2] = a(cudaDevAttrMaxSurface2DLayeredLayers);
  prop->maxSurfaceCubemap = a(cudaDevAttrMaxSurfaceCubemapWidth);
  prop->maxSurfaceCubemapLayered[0] = a(cudaDevAttrMaxSurfaceCubemapLayeredWidth);
  prop->maxSurfaceCubemapLayered[1] = a(cudaDevAttrMaxSurfaceCubemapLayeredLayers);
  prop->surfaceAlignment = static_cast<std::size_t>(a(cudaDevAttrSurfaceAlignment));
  prop->concurrentKernels = a(cudaDevAttrConcurrentKernels);
  prop->ECCEnabled = a(cudaDevAttrEccEnabled);
  prop->pciBusID = a(cudaDevAttrPciBusId);
  prop->pciDeviceID = a(cudaDevAttrPciDeviceId);
  prop->pciDomainID = a(cudaDevAttrPciDomainId);
  prop->tccDriver = a(cudaDevAttrTccDriver);
  prop->asyncEngineCount = a(cudaDevAttrAsyncEngineCount);
  prop->unifiedAddressing = a(cudaDevAttrUnifiedAddressing);
  prop->memoryBusWidth = a(cudaDevAttrGlobalMemoryBusWidth);
  prop->l2CacheSize = a(cudaDevAttrL2CacheSize);
  prop->persistingL2CacheMaxSize = a(cudaDevAttrMaxPersistingL2CacheSize);
  prop->maxThreadsPerMultiProcessor = a(cudaDevAttrMaxThreadsPerMultiProcessor);
  prop->streamPrioritiesSupported = a(cudaDevAttrStreamPrioritiesSupported);
  prop->globalL1CacheSupported = a(cudaDevAttrGlobalL1CacheSupported);
  prop->localL1CacheSupported = a(cudaDevAttrLocalL1CacheSupported);
  prop->sharedMemPerMultiprocessor = d.shared_memory_per_sm;
  prop->regsPerMultiprocessor = a(cudaDevAttrMaxRegistersPerMultiprocessor);
  prop->managedMemory = a(cudaDevAttrManagedMemory);
  prop->isMultiGpuBoard = a(cudaDevAttrIsMultiGpuBoard);
  prop->multiGpuBoardGroupID = a(cudaDevAttrMultiGpuBoardGroupID);
  prop->hostNativeAtomicSupported = a(cudaDevAttrHostNativeAtomicSupported);
  prop->pageableMemoryAccess = a(cudaDevAttrPageableMemoryAccess);
  prop->concurrentManagedAccess = a(cudaDevAttrConcurrentManagedAccess);
  prop->computePreemptionSupported = a(cudaDevAttrComputePreemptionSupported);
  prop->canUseHostPointerForRegisteredMem = a(cudaDevAttrCanUseHostPointerForRegisteredMem);
  prop->cooperativeLaunch = a(cudaDevAttrCooperativeLaunch);
  prop->sharedMemPerBlockOptin = shared_per_block_optin(d);
  prop->pageableMemoryAccessUsesHostPageTables = a(cudaDevAttrPageableMemoryAccessUsesHostPageTables);
  prop->directManagedMemAccessFromHost = a(cudaDevAttrDirectManagedMemAccessFromHost);
  prop->maxBlocksPerMultiProcessor = a(cudaDevAttrMaxBlocksPerMultiprocessor);
  prop->accessPolicyMaxWindowSize = a(cudaDevAttrMaxAccessPolicyWindowSize);
  prop->reservedSharedMemPerBlock = reserved_shared_per_block(d);
  prop->hostRegisterSupported = a(cudaDevAttrHostRegisterSupported);
  prop->sparseCudaArraySupported = a(cudaDevAttrSparseCudaArraySupported);
  prop->hostRegisterReadOnlySupported = a(cudaDevAttrHostRegisterReadOnlySupported);
  prop->timelineSemaphoreInteropSupported = a(cudaDevAttrTimelineSemaphoreInteropSupported);
  prop->memoryPoolsSupported = a(cudaDevAttrMemoryPoolsSupported);
  prop->gpuDirectRDMASupported = a(cudaDevAttrGPUDirectRDMASupported);
  prop->gpuDirectRDMAFlushWritesOptions = static_cast<unsigned>(a(cudaDevAttrGPUDirectRDMAFlushWritesOptions));
  prop->gpuDirectRDMAWritesOrdering = a(cudaDevAttrGPUDirectRDMAWritesOrdering);
  prop->memoryPoolSupportedHandleTypes = static_cast<unsigned>(a(cudaDevAttrMemoryPoolSupportedHandleTypes));
  prop->deferredMappingCudaArraySupported = a(cudaDevAttrDeferredMappingCudaArraySupported);
  prop->ipcEventSupported = a(cudaDevAttrIpcEventSupport);
  prop->clusterLaunch = a(cudaDevAttrClusterLaunch);
  prop->unifiedFunctionPointers = 0;
  prop->deviceNumaConfig = a(cudaDevAttrNumaConfig);
  prop->deviceNumaId = a(cudaDevAttrNumaId);
  prop->mpsEnabled = a(cudaDevAttrMpsEnabled);
  prop->hostNumaId = a(cudaDevAttrHostNumaId);
  prop->gpuPciDeviceID = static_cast<unsigned>(a(cudaDevAttrGpuPciDeviceId));
  prop->gpuPciSubsystemID = static_cast<unsigned>(a(cudaDevAttrGpuPciSubsystemId));
  prop->hostNumaMultinodeIpcSupported = a(cudaDevAttrHostNumaMultinodeIpcSupported);
  return cudaSuccess;
}

cudaError_t Runtime::reset() {
  ++reset_count_;
  if (driver_ != nullptr && sticky_ != cudaErrorDevicesUnavailable) synchronize();
  for (auto& module : modules_) {
    module->loaded = false;
    module->load_error = cudaSuccess;
  }
  for (auto& entry : functions_) entry.second->resolved = false;
  for (auto& entry : variables_) entry.second->resolved = false;
  allocations_.clear();
  heap_address_ = 0;
  host_allocations_.clear();
  host_alloc_flags_.clear();
  registered_.clear();
  host_pages_.clear();
  pending_.clear();
  streams_.clear();
  per_thread_streams_.clear();
  events_.clear();
  host_callbacks_.clear();
  pools_.clear();
  pool_allocations_.clear();
  default_pool_ = MemPool{};
  current_pool_ = &default_pool_;
  std::fill(std::begin(last_on_queue_), std::end(last_on_queue_), 0);
  std::fill(std::begin(queue_signal_), std::end(queue_signal_), 0);
  std::fill(std::begin(release_value_), std::end(release_value_), 0);
  driver_.reset();  // Goodbye frees everything the channel owned
  init_attempted_ = false;
  init_error_ = cudaSuccess;
  sticky_ = cudaSuccess;
  last_error_ = cudaSuccess;
  deferred_ = cudaSuccess;
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------------
// Command plumbing.

std::size_t Runtime::printf_bytes() const {
  return std::min<std::size_t>(kPrintfBytes, driver_->window_capacity() / 8);
}

uint64_t Runtime::submit_raw(uint32_t queue, dev::Command cmd, Pending pending) {
  const uint64_t sequence = driver_->submit(queue, cmd);
  if (sequence == 0) {
    status_error(driver::Completion{0, queue, dev::Status::ChannelUnavailable, true, 0, 0, 0, driver_->lost_reason()},
                 pending.what);
    for (uint64_t block : pending.release) {
      if (block != 0) driver_->release(block);
    }
    return 0;
  }
  ++activity_;
  pending.queue = queue;
  pending_[sequence] = std::move(pending);
  last_on_queue_[queue] = sequence;
  return sequence;
}

cudaError_t Runtime::queue_dependencies(Stream& stream) {
  reap();
  auto busy = [&](uint32_t queue) { return last_on_queue_[queue] != 0 && pending_.count(last_on_queue_[queue]) != 0; };
  auto order = [&](uint32_t before, uint32_t after) {
    const uint64_t cell = queue_cells_ + 16 * before;
    const uint64_t value = ++queue_signal_[before];
    if (submit_raw(before, command(dev::Opcode::SemaphoreSignal, cell, value), Pending{0, {0, 0}, 0, "stream order"}) == 0 ||
        submit_raw(after, command(dev::Opcode::SemaphoreWait, cell, value), Pending{0, {0, 0}, 0, "stream order"}) == 0) {
      return cudaErrorDevicesUnavailable;
    }
    return cudaSuccess;
  };
  if (stream.queue == 0) {
    for (uint32_t q = 1; q <= kStreamQueues; ++q) {
      if (busy(q)) {
        if (const cudaError_t e = order(q, 0); e != cudaSuccess) return e;
      }
    }
  } else if (stream.blocking && busy(0)) {
    return order(0, stream.queue);
  }
  return cudaSuccess;
}

uint64_t Runtime::submit(Stream& stream, dev::Command cmd, Pending pending) {
  if (!host_callbacks_.empty()) {
    // A queue that fills up behind a host function that has not run would wait for room forever
    // (the driver waits for the queue's oldest command): run the queued host functions first.
    std::size_t queued = 0;
    for (const auto& entry : pending_) queued += entry.second.queue == stream.queue ? 1 : 0;
    if (queued + 8 >= dev::kQueueEntries) run_host_functions(UINT64_MAX, false);
  }
  if (has_managed_) {
    // Device work may read or write managed memory: the host gives up the pages it may touch.
    const auto& g = cmd.body.generic;
    cudaError_t revoked = cudaSuccess;
    switch (static_cast<dev::Opcode>(cmd.opcode)) {
      case dev::Opcode::Launch:
      case dev::Opcode::Prefetch: revoked = revoke_host_access(0, ~uint64_t{0}); break;
      case dev::Opcode::Memset: revoked = revoke_host_access(g.a, g.a + g.b); break;
      case dev::Opcode::Memcpy:
        if (g.d != static_cast<uint64_t>(dev::CopyDirection::DeviceToHost)) revoked = revoke_host_access(g.a, g.a + g.c);
        if (revoked == cudaSuccess && g.d != static_cast<uint64_t>(dev::CopyDirection::HostToDevice)) {
          revoked = revoke_host_access(g.b, g.b + g.c);
        }
        break;
      default: break;
    }
    if (revoked != cudaSuccess) {
      for (uint64_t block : pending.release) {
        if (block != 0) driver_->release(block);
      }
      return 0;
    }
  }
  if (queue_dependencies(stream) != cudaSuccess) {
    for (uint64_t block : pending.release) {
      if (block != 0) driver_->release(block);
    }
    return 0;
  }
  return submit_raw(stream.queue, cmd, std::move(pending));
}

void Runtime::flush_printf(uint64_t address, const driver::Completion& completion) {
  if (address == 0 || completion.lost) return;
  const uint64_t bytes = std::min<uint64_t>(completion.value0, printf_bytes());
  if (bytes > 0) {
    std::fwrite(driver_->pointer(address), 1, bytes, stdout);
    std::fflush(stdout);
  }
  if (completion.value1 > 0) {
    std::fprintf(stderr, "gpuvp: device printf buffer full: %llu bytes dropped\n",
                 static_cast<unsigned long long>(completion.value1));
  }
}

cudaError_t Runtime::complete(uint64_t sequence, const driver::Completion& completion) {
  const auto it = pending_.find(sequence);
  if (it == pending_.end()) return cudaSuccess;
  Pending pending = std::move(it->second);
  pending_.erase(it);
  flush_printf(pending.printf_address, completion);
  if (!completion.lost) {
    for (uint64_t block : pending.release) {
      if (block != 0) driver_->release(block);
    }
  }
  return completion.ok() ? cudaSuccess : status_error(completion, pending.what);
}

void Runtime::reap() {
  if (driver_ == nullptr) return;
  std::vector<uint64_t> sequences;
  for (const auto& entry : pending_) sequences.push_back(entry.first);
  for (uint64_t sequence : sequences) {
    if (auto done = driver_->take(sequence); done && !done->lost) {
      const cudaError_t error = complete(sequence, *done);
      if (error != cudaSuccess && deferred_ == cudaSuccess && !is_sticky(error)) deferred_ = error;
    }
  }
}

cudaError_t Runtime::wait_for(uint64_t sequence) {
  if (sequence != 0 && !host_callbacks_.empty()) {
    if (const cudaError_t e = run_host_functions(sequence, false); e != cudaSuccess) return e;
  }
  return wait_without_host_functions(sequence);
}

cudaError_t Runtime::wait_without_host_functions(uint64_t sequence) {
  ++activity_;
  if (sequence == 0) return sticky_ != cudaSuccess ? sticky_ : cudaErrorDevicesUnavailable;
  reap();
  if (pending_.count(sequence) == 0) return cudaSuccess;
  const driver::Completion done = driver_->wait(sequence);
  const cudaError_t error = complete(sequence, done);
  reap();
  if (done.lost) {
    // Nothing else will complete either.
    pending_.clear();
  }
  return error;
}

driver::Completion Runtime::call(uint32_t queue, const dev::Command& cmd) {
  const uint64_t sequence = driver_->submit(queue, cmd);
  driver::Completion done = driver_->wait(sequence);
  if (done.lost) status_error(done, "device call");
  return done;
}

std::optional<uint64_t> Runtime::copy_into_window(const void* data, std::size_t bytes) {
  const auto address = driver_->allocate(bytes + 1, 16);
  if (!address) return std::nullopt;
  auto* target = static_cast<uint8_t*>(driver_->pointer(*address));
  std::memcpy(target, data, bytes);
  target[bytes] = 0;
  return address;
}

// ---------------------------------------------------------------------------------------------
// Modules, functions, symbols.

cudaError_t Runtime::load_module(Module& module) {
  if (module.loaded) return cudaSuccess;
  if (module.load_error != cudaSuccess) return module.load_error;
  if (!module.fatbin) {
    std::fprintf(stderr, "gpuvp: cannot read the program's fatbin: %s\n", module.parse_error.c_str());
    return module.load_error = cudaErrorInvalidKernelImage;
  }
  const uint32_t cc = info().compute_capability;
  const FatbinEntry* ptx = module.fatbin->best_ptx(cc);
  if (ptx == nullptr) {
    // nvcc 13 cannot target below compute_75, so a cc 7.0 preset (V100) gets the lowest PTX the
    // program carries: the functional model executes it all the same.
    ptx = module.fatbin->lowest_ptx();
    if (ptx != nullptr && std::getenv("GPUVP_VERBOSE") != nullptr) {
      std::fprintf(stderr, "gpuvp: no PTX for compute capability %u.%u or lower; using compute_%u\n", cc / 10,
                   cc % 10, ptx->arch);
    }
  }
  if (ptx == nullptr) {
    std::fprintf(stderr, "gpuvp: the program carries no PTX (build without code=sm_XX-only -gencode options)\n");
    module.load_message = "the image carries no PTX (gpuvp runs PTX; build without code=sm_XX-only -gencode options)";
    return module.load_error = cudaErrorNoKernelImageForDevice;
  }
  // An -rdc=true program with several translation units: their PTX linked into one module.
  const std::string linked = ptx->unit != 0 ? link_ptx_units(*module.fatbin, ptx->arch) : std::string();
  const std::string& ptx_text = linked.empty() ? ptx->payload : linked;
  module.uses_printf = ptx_text.find("vprintf") != std::string::npos;
  scan_device_runtime_use(module, ptx_text);
  module.ptx_arch = ptx->arch;
  // Kernel resources (registers, shared and local memory) come from the SASS ptxas produced, as
  // a driver reads them: the device's own architecture, else the nearest of its major. Without
  // one the platform estimates registers from the PTX and warns per kernel.
  if (const FatbinEntry* elf = module.fatbin->best_cubin(cc); elf != nullptr) {
    std::string error;
    module.cubin = cubin::parse_cubin(elf->payload.data(), elf->payload.size(), &error);
    if (module.cubin) {
      module.cubin_source = cubin::arch_match(elf->arch, cc) == cubin::ArchMatch::kExact
                                ? dev::ResourceSource::CubinExact
                                : dev::ResourceSource::CubinNearest;
    } else {
      std::fprintf(stderr, "gpuvp: warning: the program's sm_%u cubin is unreadable (%s); kernel registers "
                   "will be estimated\n", elf->arch, error.c_str());
    }
  }
  const auto text = copy_into_window(ptx_text.data(), ptx_text.size());
  if (!text) return cudaErrorMemoryAllocation;
  const driver::Completion done = call(kControlQueue, command(dev::Opcode::LoadModule, *text, ptx_text.size()));
  driver_->release(*text);
  if (!done.ok()) {
    if (done.lost) return cudaErrorDevicesUnavailable;
    std::fprintf(stderr, "gpuvp: the platform rejected the program's PTX: %s\n", done.message.c_str());
    module.load_message = done.message;
    return module.load_error = cudaErrorInvalidPtx;
  }
  module.handle = done.value0;
  module.loaded = true;
  if (module.uses_device_launch) resolve_device_launch_targets(module);
  return cudaSuccess;
}

cudaError_t Runtime::resolve(Function& function) {
  if (function.resolved) return cudaSuccess;
  if (const cudaError_t e = load_module(*function.module); e != cudaSuccess) return e;
  const auto name = copy_into_window(function.name.data(), function.name.size());
  const auto layout = driver_->allocate(dev::kParamLayoutBytes, 16);
  if (!name || !layout) {
    if (name) driver_->release(*name);
    return cudaErrorMemoryAllocation;
  }
  dev::Command get = command(dev::Opcode::GetFunction, function.module->handle, *name, function.name.size(), *layout);
  if (function.module->cubin) function.sass = function.module->cubin->find(function.name);
  if (const cubin::KernelResources* sass = function.sass; sass != nullptr) {
    dev::KernelResources& told = get.body.get_function.resources;
    told.source = static_cast<uint32_t>(function.module->cubin_source);
    told.sass_arch = function.module->cubin->arch;
    told.registers_per_thread = sass->registers;
    told.static_shared_bytes = sass->static_shared_bytes;
    told.local_bytes_per_thread = sass->local_bytes;
    told.max_threads_per_block = sass->required_threads != 0 ? sass->required_threads : sass->max_threads;
  }
  const driver::Completion done = call(kControlQueue, get);
  driver_->release(*name);
  if (done.ok()) {
    const uint32_t count = static_cast<uint32_t>(done.value1 >> 32);
    function.param_bytes = static_cast<uint32_t>(done.value1 & 0xffffffffu);
    function.params.resize(std::min<uint64_t>(count, dev::kParamLayoutBytes / sizeof(dev::ParamLayout)));
    std::memcpy(function.params.data(), driver_->pointer(*layout), function.params.size() * sizeof(dev::ParamLayout));
    function.handle = done.value0;
    function.resolved = true;
  }
  driver_->release(*layout);
  if (done.lost) return cudaErrorDevicesUnavailable;
  if (!done.ok() && !function.refusal_told) {
    function.refusal_told = true;
    // The program only sees cudaErrorInvalidDeviceFunction; say once why the platform refused it.
    std::fprintf(stderr, "gpuvp: kernel %s: the platform did not resolve it: %s\n", function.name.c_str(),
                 done.message.c_str());
  }
  return done.ok() ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

cudaError_t Runtime::resolve(Variable& variable) {
  if (variable.resolved) return cudaSuccess;
  if (const cudaError_t e = load_module(*variable.module); e != cudaSuccess) return e;
  const auto name = copy_into_window(variable.name.data(), variable.name.size());
  if (!name) return cudaErrorMemoryAllocation;
  const driver::Completion done =
      call(kControlQueue, command(dev::Opcode::GetSymbol, variable.module->handle, *name, variable.name.size()));
  driver_->release(*name);
  if (done.lost) return cudaErrorDevicesUnavailable;
  if (!done.ok()) return cudaErrorInvalidSymbol;
  variable.address = done.value0;
  if (done.value1 != 0) variable.size = done.value1;
  variable.resolved = true;
  return cudaSuccess;
}

cudaError_t Runtime::symbol_address(void** address, std::size_t* size, const void* symbol) {
  Variable* variable = nullptr;
  if (const auto it = variables_.find(symbol); it != variables_.end()) variable = it->second.get();
  // Host code names a __managed__ variable through its mirror (`cudaGetSymbolAddress(&p, v)`
  // passes &v, the mirror's address), not through the slot it was registered with.
  for (auto it = variables_.begin(); variable == nullptr && it != variables_.end(); ++it) {
    if (it->second->managed_ready && reinterpret_cast<const void*>(it->second->address) == symbol) {
      variable = it->second.get();
    }
  }
  if (variable == nullptr) return cudaErrorInvalidSymbol;
  if (const cudaError_t e = resolve(*variable); e != cudaSuccess) return e;
  if (address != nullptr) *address = reinterpret_cast<void*>(variable->address);
  if (size != nullptr) *size = variable->size;
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------------
// Memory.

bool Runtime::is_device_range(uint64_t address, std::size_t bytes) const {
  auto it = allocations_.upper_bound(address);
  if (it != allocations_.begin()) {
    --it;
    if (address >= it->first && address - it->first <= it->second.bytes && bytes <= it->second.bytes - (address - it->first)) {
      return true;
    }
  }
  if (is_device_heap(address, bytes)) return true;  // pointers kernels got from malloc
  // Another program's memory opened through IPC, and module variables (__device__ globals).
  for (const auto& [pointer, opened] : ipc_opened_) {
    if (address >= opened.base && address - opened.base <= opened.bytes &&
        bytes <= opened.bytes - (address - opened.base)) {
      return true;
    }
  }
  for (const auto& entry : variables_) {
    const Variable& v = *entry.second;
    if (v.resolved && address >= v.address && address - v.address <= v.size && bytes <= v.size - (address - v.address)) {
      return true;
    }
  }
  return false;
}

cudaError_t Runtime::malloc_device(void** ptr, std::size_t bytes) {
  if (ptr == nullptr) return cudaErrorInvalidValue;
  if (capture_active_) {
    if (const cudaError_t e = GraphAccess::forbids(*this); e != cudaSuccess) return e;
  }
  if (bytes == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  const driver::Completion done =
      call(kControlQueue, command(dev::Opcode::MemMap, bytes, static_cast<uint64_t>(dev::MemoryKind::Device), 256));
  if (done.lost) return cudaErrorDevicesUnavailable;
  if (!done.ok()) return cudaErrorMemoryAllocation;
  allocations_[done.value0] = Allocation{bytes, false};
  *ptr = reinterpret_cast<void*>(done.value0);
  return cudaSuccess;
}

cudaError_t Runtime::malloc_host(void** ptr, std::size_t bytes, unsigned flags) {
  if (ptr == nullptr) return cudaErrorInvalidValue;
  constexpr unsigned kKnownFlags = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
  if ((flags & ~kKnownFlags) != 0) return cudaErrorInvalidValue;
  const auto address = driver_->allocate(bytes == 0 ? 1 : bytes, 4096);
  if (address) {
    host_allocations_[*address] = bytes;
    *ptr = driver_->pointer(*address);
    host_alloc_flags_[to_address(*ptr)] = HostRange{bytes, flags};
    // Unified addressing: every pinned allocation is reachable by kernels at its host address,
    // mapped or not (a kernel spinning on a cudaMallocHost flag, as UnifiedMemoryPerf does).
    if (const cudaError_t e = map_for_device(to_address(*ptr), bytes == 0 ? 1 : bytes); e != cudaSuccess) {
      host_allocations_.erase(*address);
      host_alloc_flags_.erase(to_address(*ptr));
      driver_->release(*address);
      *ptr = nullptr;
      return e;
    }
    return cudaSuccess;
  }
  // Mapped memory must be where the device can reach it: the window.
  if ((flags & cudaHostAllocMapped) != 0) return cudaErrorMemoryAllocation;
  // The window is full: ordinary host memory works for every copy (staged through the window),
  // only slower and synchronous. Said once.
  void* host = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (host == MAP_FAILED) return cudaErrorMemoryAllocation;
  if (!pageable_pinned_logged_) {
    pageable_pinned_logged_ = true;
    std::fprintf(stderr,
                 "gpuvp: pinned host memory beyond the channel's DMA window (%llu of %llu bytes in use) is pageable "
                 "memory: copies from and to it are staged through the window and synchronous\n",
                 static_cast<unsigned long long>(driver_->window_used()),
                 static_cast<unsigned long long>(driver_->window_capacity()));
  }
  pageable_pinned_[to_address(host)] = bytes;
  host_alloc_flags_[to_address(host)] = HostRange{bytes, flags};
  *ptr = host;
  return cudaSuccess;
}

cudaError_t Runtime::host_register(void* ptr, std::size_t bytes, unsigned flags) {
  if (ptr == nullptr || bytes == 0) return cudaErrorInvalidValue;
  constexpr unsigned kKnownFlags =
      cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;
  if ((flags & ~kKnownFlags) != 0) return cudaErrorInvalidValue;
  if ((flags & (cudaHostRegisterIoMemory | cudaHostRegisterReadOnly)) != 0) return cudaErrorNotSupported;
  const uint64_t lo = to_address(ptr);
  // Overlapping an existing registration (or pinned allocation) is an error, as in CUDA.
  auto overlaps = [&](const std::map<uint64_t, HostRange>& ranges) {
    auto it = ranges.upper_bound(lo + bytes - 1);
    if (it == ranges.begin()) return false;
    --it;
    return it->first + std::max<uint64_t>(it->second.bytes, 1) > lo;
  };
  if (overlaps(registered_) || overlaps(host_alloc_flags_)) return cudaErrorHostMemoryAlreadyRegistered;
  // Registration changes nothing for the copies: pageable memory is staged through the window.
  registered_[lo] = HostRange{bytes, flags};
  if ((flags & cudaHostRegisterMapped) != 0) {
    if (const cudaError_t e = map_for_device(lo, bytes); e != cudaSuccess) {
      registered_.erase(lo);
      return e;
    }
  }
  return cudaSuccess;
}

cudaError_t Runtime::host_unregister(void* ptr) {
  const auto it = registered_.find(to_address(ptr));
  if (ptr == nullptr || it == registered_.end()) return cudaErrorHostMemoryNotRegistered;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (const auto mapping = host_mappings_.find(it->first / page * page); mapping != host_mappings_.end()) {
    if (const cudaError_t e = unmap_for_device(mapping->first); e != cudaSuccess) return e;
  }
  registered_.erase(it);
  return cudaSuccess;
}

cudaError_t Runtime::map_for_device(uint64_t pointer, uint64_t bytes) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t base = pointer / page * page;
  const uint64_t span = (pointer + bytes + page - 1) / page * page - base;
  // One mapping per page: a range sharing a page with a mapped one cannot be mapped apart.
  auto it = host_mappings_.upper_bound(base + span - 1);
  if (it != host_mappings_.begin() && std::prev(it)->first + std::prev(it)->second.bytes > base) {
    std::fprintf(stderr, "gpuvp: host memory at %p shares a page with memory already mapped for the device; "
                 "it is not mapped\n", reinterpret_cast<void*>(pointer));
    return cudaErrorInvalidValue;
  }
  HostMapping mapping;
  mapping.bytes = span;
  if (const auto window = driver_->host_address(reinterpret_cast<void*>(base), span); window) {
    mapping.window = *window;  // pinned memory: already in the window
  } else {
    // Registered memory: its pages move into a window block, and the program's addresses become
    // a second mapping of that block (the data stays where the program put it, in one copy).
    const auto block = driver_->allocate(span, page);
    if (!block) {
      std::fprintf(stderr, "gpuvp: no room in the channel's DMA window (%llu of %llu bytes in use) to map %llu bytes "
                   "of registered host memory for the device\n",
                   static_cast<unsigned long long>(driver_->window_used()),
                   static_cast<unsigned long long>(driver_->window_capacity()), static_cast<unsigned long long>(span));
      return cudaErrorMemoryAllocation;
    }
    void* shared = driver_->pointer(*block);
    std::memcpy(shared, reinterpret_cast<void*>(base), span);
    void* alias = ::mremap(shared, 0, span, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(base));
    if (alias == MAP_FAILED) {
      std::fprintf(stderr, "gpuvp: registered host memory at %p cannot be mapped for the device: this transport's "
                   "shared region cannot be mapped a second time (%s)\n", reinterpret_cast<void*>(pointer),
                   std::strerror(errno));
      driver_->release(*block);
      return cudaErrorNotSupported;
    }
    mapping.window = *block;
    mapping.registered = true;
  }
  // Twice: at the host's own address (unified addressing: kernels may take the host pointer; where
  // the OS put it varies from run to run, and so do the L2 and DRAM addresses of such accesses), and
  // at an address fixed by the memory's place in the channel's window, which
  // cudaHostGetDevicePointer answers (statistics then repeat exactly).
  mapping.device = kHostMapBase + (mapping.window - driver_->window_base());
  driver::Completion done = call(kControlQueue, command(dev::Opcode::MemMapHost, mapping.window, span, base));
  if (!done.lost && done.ok()) {
    done = call(kControlQueue, command(dev::Opcode::MemMapHost, mapping.window, span, mapping.device));
    if (!done.lost && !done.ok()) call(kControlQueue, command(dev::Opcode::MemUnmap, base));
  }
  if (done.lost) return cudaErrorDevicesUnavailable;
  if (!done.ok()) {
    std::fprintf(stderr, "gpuvp: mapping host memory at %p for the device failed: %s\n",
                 reinterpret_cast<void*>(base), done.message.c_str());
    mapping.device = 0;  // nothing is mapped on the device
    host_mappings_[base] = mapping;
    unmap_for_device(base);
    return cudaErrorInvalidValue;
  }
  host_mappings_[base] = mapping;
  return cudaSuccess;
}

cudaError_t Runtime::unmap_for_device(uint64_t base) {
  const auto it = host_mappings_.find(base);
  if (it == host_mappings_.end()) return cudaSuccess;
  const HostMapping mapping = it->second;
  host_mappings_.erase(it);
  if (const cudaError_t e = synchronize(); e != cudaSuccess && is_sticky(e)) return e;
  if (mapping.device != 0) {
    const driver::Completion host_view = call(kControlQueue, command(dev::Opcode::MemUnmap, base));
    const driver::Completion fixed_view = call(kControlQueue, command(dev::Opcode::MemUnmap, mapping.device));
    if (host_view.lost || fixed_view.lost) return cudaErrorDevicesUnavailable;
  }
  if (mapping.registered) {
    // The program's pages become its own again, with the values they hold now.
    std::vector<uint8_t> values(mapping.bytes);
    std::memcpy(values.data(), reinterpret_cast<void*>(base), mapping.bytes);
    void* own = ::mmap(reinterpret_cast<void*>(base), mapping.bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (own == MAP_FAILED) return cudaErrorUnknown;
    std::memcpy(own, values.data(), mapping.bytes);
    driver_->release(mapping.window);
  }
  return cudaSuccess;
}

namespace {
// What a cudaIpcMemHandle_t holds: the platform's export id and the pointer's offset in its
// allocation, behind a magic that tells gpuvp's handles from anything else.
struct IpcMemHandle {
  uint64_t magic;
  uint64_t export_id;
  uint64_t offset;
};
constexpr uint64_t kIpcMagic = 0x4350'4950'5655'5047ull;  // "GPUVPIPC"
static_assert(sizeof(IpcMemHandle) <= sizeof(cudaIpcMemHandle_t), "fits CUDA's handle");
}  // namespace

cudaError_t Runtime::ipc_get_mem_handle(cudaIpcMemHandle_t* handle, void* device) {
  if (handle == nullptr || device == nullptr) return cudaErrorInvalidValue;
  const driver::Completion done = call(kControlQueue, command(dev::Opcode::IpcExport, to_address(device)));
  if (done.lost) return cudaErrorDevicesUnavailable;
  if (!done.ok()) return cudaErrorInvalidValue;
  IpcMemHandle h{kIpcMagic, done.value0, to_address(device) - done.value1};
  std::memset(handle, 0, sizeof *handle);
  std::memcpy(handle, &h, sizeof h);
  return cudaSuccess;
}

cudaError_t Runtime::ipc_open_mem_handle(void** device, const cudaIpcMemHandle_t& handle, unsigned flags) {
  if (device == nullptr || (flags & ~cudaIpcMemLazyEnablePeerAccess) != 0) return cudaErrorInvalidValue;
  IpcMemHandle h;
  std::memcpy(&h, &handle, sizeof h);
  if (h.magic != kIpcMagic) return cudaErrorInvalidResourceHandle;
  const driver::Completion done = call(kControlQueue, command(dev::Opcode::IpcImport, h.export_id));
  if (done.lost) return cudaErrorDevicesUnavailable;
  if (!done.ok()) {
    std::fprintf(stderr, "gpuvp: cudaIpcOpenMemHandle: %s\n", done.message.c_str());
    return cudaErrorInvalidResourceHandle;
  }
  const uint64_t pointer = done.value0 + h.offset;
  ipc_opened_[pointer] = IpcOpened{done.value0, done.value1};
  *device = reinterpret_cast<void*>(pointer);
  return cudaSuccess;
}

namespace {
// What a cudaIpcEventHandle_t holds: the platform's export id behind its own magic.
struct IpcEventHandle {
  uint64_t magic;
  uint64_t export_id;
};
constexpr uint64_t kIpcEventMagic = 0x5645'4950'5655'5047ull;  // "GPUVPIEV"
static_assert(sizeof(IpcEventHandle) <= sizeof(cudaIpcEventHandle_t), "fits CUDA's handle");
}  // namespace

cudaError_t Runtime::ipc_get_event_handle(cudaIpcEventHandle_t* handle, cudaEvent_t event_handle) {
  if (handle == nullptr) return cudaErrorInvalidValue;
  Event* event = event_of(event_handle);
  if (event == nullptr || !event->interprocess) return cudaErrorInvalidResourceHandle;
  if (event->ipc_id == 0) {
    const driver::Completion done = call(kControlQueue, command(dev::Opcode::IpcEventExport, event->cell, event->value));
    if (done.lost) return cudaErrorDevicesUnavailable;
    if (!done.ok()) {
      std::fprintf(stderr, "gpuvp: cudaIpcGetEventHandle: %s\n", done.message.c_str());
      return cudaErrorInvalidResourceHandle;
    }
    event->ipc_id = done.value0;
  }
  IpcEventHandle h{kIpcEventMagic, event->ipc_id};
  std::memset(handle, 0, sizeof *handle);
  std::memcpy(handle, &h, sizeof h);
  return cudaSuccess;
}

cudaError_t Runtime::ipc_open_event_handle(cudaEvent_t* event, const cudaIpcEventHandle_t& handle) {
  if (event == nullptr) return cudaErrorInvalidValue;
  IpcEventHandle h;
  std::memcpy(&h, &handle, sizeof h);
  if (h.magic != kIpcEventMagic) return cudaErrorInvalidResourceHandle;
  const driver::Completion done = call(kControlQueue, command(dev::Opcode::IpcEventImport, h.export_id));
  if (done.lost) return cudaErrorDevicesUnavailable;
  if (!done.ok()) {
    std::fprintf(stderr, "gpuvp: cudaIpcOpenEventHandle: %s\n", done.message.c_str());
    return cudaErrorInvalidResourceHandle;
  }
  auto opened = std::make_unique<Event>();
  opened->disable_timing = true;
  opened->interprocess = true;
  opened->ipc_id = h.export_id;
  opened->value = done.value0;
  *event = reinterpret_cast<cudaEvent_t>(opened.get());
  events_[opened.get()] = std::move(opened);
  return cudaSuccess;
}

cudaError_t Runtime::ipc_close_mem_handle(void* device) {
  const auto it = ipc_opened_.find(to_address(device));
  if (it == ipc_opened_.end()) return cudaErrorInvalidResourceHandle;
  if (const cudaError_t e = synchronize(); e != cudaSuccess && is_sticky(e)) return e;
  const uint64_t base = it->second.base;
  ipc_opened_.erase(it);
  const driver::Completion done = call(kControlQueue, command(dev::Opcode::MemUnmap, base));
  if (done.lost) return cudaErrorDevicesUnavailable;
  // An import whose exporter already freed the memory or exited is gone on the device already.
  return cudaSuccess;
}

cudaError_t Runtime::host_device_pointer(void** device, void* host, unsigned flags) {
  if (device == nullptr || host == nullptr || flags != 0) return cudaErrorInvalidValue;
  const uint64_t address = to_address(host);
  auto covered = [&]() {
    auto it = host_mappings_.upper_bound(address);
    if (it == host_mappings_.begin()) return false;
    --it;
    return address - it->first < it->second.bytes;
  };
  if (!covered()) {
    // Registered memory not mapped yet (or pinned memory beyond the window, which cannot be):
    // map the whole allocation or registration holding `host`.
    bool found = false;
    for (const auto* ranges : {&host_alloc_flags_, &registered_}) {
      auto it = ranges->upper_bound(address);
      if (it == ranges->begin()) continue;
      --it;
      if (address - it->first >= std::max<uint64_t>(it->second.bytes, 1)) continue;
      if (ranges == &host_alloc_flags_ && pageable_pinned_.count(it->first) != 0) {
        std::fprintf(stderr, "gpuvp: cudaHostGetDevicePointer: %p is pinned memory beyond the DMA window, which the "
                     "device cannot map\n", host);
        return cudaErrorMemoryAllocation;
      }
      if (const cudaError_t e = map_for_device(it->first, std::max<uint64_t>(it->second.bytes, 1)); e != cudaSuccess) {
        return e;
      }
      found = true;
      break;
    }
    if (!found) return cudaErrorInvalidValue;
  }
  auto it = host_mappings_.upper_bound(address);
  --it;  // covered now
  *device = reinterpret_cast<void*>(it->second.device + (address - it->first));
  return cudaSuccess;
}

cudaError_t Runtime::host_flags(unsigned* flags, void* ptr) {
  if (flags == nullptr || ptr == nullptr) return cudaErrorInvalidValue;
  for (const auto* ranges : {&host_alloc_flags_, &registered_}) {
    auto it = ranges->upper_bound(to_address(ptr));
    if (it == ranges->begin()) continue;
    --it;
    if (to_address(ptr) - it->first < std::max<uint64_t>(it->second.bytes, 1)) {
      *flags = it->second.flags;
      return cudaSuccess;
    }
  }
  return cudaErrorInvalidValue;
}

void Runtime::register_managed_variable(void** handle, void** slot, const char* device_name, std::size_t size) {
  register_variable(handle, slot, device_name, size);
  variables_[slot]->managed_slot = slot;
}

bool Runtime::map_host_mirror(uint64_t address, std::size_t bytes) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t first = address / page * page;
  const uint64_t end = (address + bytes + page - 1) / page * page;
  std::vector<uint64_t> mapped_now;
  for (uint64_t p = first; p < end; p += page) {
    if (mirrored_pages_.count(p) != 0) continue;
    void* host = ::mmap(reinterpret_cast<void*>(p), page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (host != reinterpret_cast<void*>(p)) {
      if (host != MAP_FAILED) ::munmap(host, page);
      for (uint64_t undo : mapped_now) {
        ::munmap(reinterpret_cast<void*>(undo), page);
        mirrored_pages_.erase(undo);
      }
      return false;
    }
    mirrored_pages_.insert(p);
    mapped_now.push_back(p);
  }
  return true;
}

cudaError_t Runtime::init_managed_variables(void** handle) {
  for (auto& entry : variables_) {
    Variable& variable = *entry.second;
    if (variable.managed_slot == nullptr || variable.managed_ready ||
        variable.module != reinterpret_cast<Module*>(handle)) {
      continue;
    }
    if (const cudaError_t e = resolve(variable); e != cudaSuccess) return e;
    // A mirror page may already hold another managed variable: the host gives it up first.
    const uint64_t page = page_bytes();
    const uint64_t lo = variable.address / page * page;
    const uint64_t hi = (variable.address + variable.size + page - 1) / page * page;
    if (const cudaError_t e = revoke_host_access(lo, hi); e != cudaSuccess) return e;
    if (!map_host_mirror(variable.address, variable.size)) {
      std::fprintf(stderr, "gpuvp: __managed__ %s: the device address 0x%llx is taken in this process\n",
                   variable.name.c_str(), static_cast<unsigned long long>(variable.address));
      return cudaErrorMemoryAllocation;
    }
    // The device holds the initial value (the module's initializer): the host's first access
    // faults it over.
    install_fault_handler();
    protect(lo, hi, PROT_NONE);
    allocations_[variable.address] = Allocation{variable.size, true, false};
    *variable.managed_slot = reinterpret_cast<void*>(variable.address);
    variable.managed_ready = true;
    has_managed_ = true;
  }
  return cudaSuccess;
}

cudaError_t Runtime::malloc_managed(void** ptr, std::size_t bytes) {
  // Managed memory: device memory (the GMMU tracks its pages), mirrored by a host mapping at the
  // same virtual address (so one pointer works on both sides). The mapping starts read-write
  // and pristine (both copies zero); after device work, host accesses fault page by page
  // (host_fault).
  if (ptr == nullptr) return cudaErrorInvalidValue;
  if (bytes == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const driver::Completion done =
      call(kControlQueue, command(dev::Opcode::MemMap, bytes, static_cast<uint64_t>(dev::MemoryKind::Managed), page));
  if (done.lost) return cudaErrorDevicesUnavailable;
  if (!done.ok()) return cudaErrorMemoryAllocation;
  const uint64_t mapped = (bytes + page - 1) / page * page;
  void* host = ::mmap(reinterpret_cast<void*>(done.value0), mapped, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (host != reinterpret_cast<void*>(done.value0)) {
    if (host != MAP_FAILED) ::munmap(host, mapped);
    call(kControlQueue, command(dev::Opcode::MemUnmap, done.value0));
    std::fprintf(stderr, "gpuvp: cudaMallocManaged: the device address 0x%llx is taken in this process\n",
                 static_cast<unsigned long long>(done.value0));
    return cudaErrorMemoryAllocation;
  }
  install_fault_handler();
  allocations_[done.value0] = Allocation{bytes, true, true};
  has_managed_ = true;
  *ptr = host;
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------------
// Host access to managed memory: page-granular, through the host's page faults.

namespace {

struct sigaction previous_segv;  // the handler before ours: faults that are not ours go there

void on_segv(int signal, siginfo_t* info, void* context) {
  bool write = false;
#if defined(__x86_64__)
  // x86-64 page-fault error code: bit 1 = the access was a write.
  write = (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#endif
  if (info != nullptr && info->si_code > 0 &&
      Runtime::instance().host_fault(reinterpret_cast<uint64_t>(info->si_addr), write)) {
    return;  // the page is mapped now: the access runs again
  }
  // Not ours: the previous handler, or the default action (returning re-runs the fault).
  if ((previous_segv.sa_flags & SA_SIGINFO) != 0 && previous_segv.sa_sigaction != nullptr) {
    previous_segv.sa_sigaction(signal, info, context);
  } else if (previous_segv.sa_handler != SIG_DFL && previous_segv.sa_handler != SIG_IGN) {
    previous_segv.sa_handler(signal);
  } else {
    ::signal(SIGSEGV, SIG_DFL);
    if (info == nullptr || info->si_code <= 0) ::raise(SIGSEGV);  // sent, not a fault: deliver it again
  }
}

}  // namespace

uint64_t Runtime::page_bytes() const {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

void Runtime::install_fault_handler() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction action {};
  action.sa_sigaction = on_segv;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGSEGV, &action, &previous_segv);
}

template <typename F>
void Runtime::for_managed_in(uint64_t lo, uint64_t hi, F&& f) {
  if (lo >= hi) return;
  auto it = allocations_.upper_bound(lo);
  if (it != allocations_.begin()) --it;
  for (; it != allocations_.end() && it->first < hi; ++it) {
    if (!it->second.managed) continue;
    const uint64_t a = std::max(lo, it->first);
    const uint64_t b = std::min(hi, it->first + it->second.bytes);
    if (a < b) f(a, b, it->second);
  }
}

void Runtime::protect(uint64_t page_lo, uint64_t page_hi, int protection) {
  if (page_lo < page_hi) ::mprotect(reinterpret_cast<void*>(page_lo), page_hi - page_lo, protection);
}

void Runtime::wait_idle() {
  for (uint32_t q = 0; q < dev::kQueuesPerChannel; ++q) {
    const uint64_t last = last_on_queue_[q];
    if (last == 0 || pending_.count(last) == 0) continue;
    const cudaError_t error = wait_for(last);
    if (error != cudaSuccess && !is_sticky(error) && deferred_ == cudaSuccess) deferred_ = error;
  }
  reap();
}

bool Runtime::host_fault(uint64_t address, bool write) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (driver_ == nullptr || !has_managed_) return false;
  const uint64_t page = page_bytes();
  const uint64_t lo = address / page * page;
  bool managed = false;
  bool pristine = true;
  for_managed_in(lo, lo + page, [&](uint64_t, uint64_t, const Allocation& a) {
    managed = true;
    pristine = pristine && a.pristine;
  });
  if (!managed || pristine) return false;  // pristine pages are mapped read-write: not our fault
  const auto it = host_pages_.find(lo);
  if (it != host_pages_.end()) {
    // Another thread may have brought the page over while this one waited for the lock.
    if (it->second == kHostDirty) {
      protect(lo, lo + page, PROT_READ | PROT_WRITE);
      return true;
    }
#if defined(__x86_64__)
    if (!write) {  // a read of a page the host already holds: run it again
      protect(lo, lo + page, PROT_READ);
      return true;
    }
#endif
    write = true;  // a write to a read-only (clean) page
  }
  const cudaError_t error = make_host_accessible(lo, lo + page, write);
  if (error != cudaSuccess) {
    std::fprintf(stderr, "gpuvp: host access to managed memory at 0x%llx: the device could not provide the page (%s)\n",
                 static_cast<unsigned long long>(address), error_name(error));
    std::abort();
  }
  return true;
}

cudaError_t Runtime::make_host_accessible(uint64_t lo, uint64_t hi, bool write) {
  const uint64_t page = page_bytes();
  lo = lo / page * page;
  hi = (hi + page - 1) / page * page;
  bool waited = false;
  const uint64_t most = std::max<uint64_t>(page, std::min<uint64_t>(kStagingBytes, driver_->window_capacity() / 4) / page * page);
  for (uint64_t p = lo; p < hi;) {
    // A run of pages with the same need: fetch (not held), or upgrade (held clean, now written).
    auto state_of = [&](uint64_t q) -> int {
      bool managed = false, pristine = true;
      for_managed_in(q, q + page, [&](uint64_t, uint64_t, const Allocation& a) {
        managed = true;
        pristine = pristine && a.pristine;
      });
      if (!managed || pristine) return 0;  // nothing to do
      const auto it = host_pages_.find(q);
      if (it == host_pages_.end()) return 1;                   // fetch
      return it->second == kHostClean && write ? 2 : 0;        // upgrade / held
    };
    const int need = state_of(p);
    if (need == 0) {
      p += page;
      continue;
    }
    uint64_t end = p + page;
    while (end < hi && end - p < most && state_of(end) == need) end += page;
    if (!waited) {  // the host waits for outstanding work before it takes pages from the device
      wait_idle();
      waited = true;
      if (sticky_ == cudaErrorDevicesUnavailable) return sticky_;
    }
    std::optional<uint64_t> staging;
    if (need == 1) {
      staging = driver_->allocate(end - p, 256);
      if (!staging) return cudaErrorMemoryAllocation;
    }
    cudaError_t error = cudaSuccess;
    for_managed_in(p, end, [&](uint64_t a, uint64_t b, const Allocation&) {
      if (error != cudaSuccess) return;
      const uint64_t kind = static_cast<uint64_t>(write ? dev::HostAccessKind::Write : dev::HostAccessKind::Read);
      const driver::Completion done =
          call(kControlQueue, command(dev::Opcode::HostAccess, a, b - a, kind, staging ? *staging + (a - p) : 0));
      if (!done.ok()) error = done.lost ? cudaErrorDevicesUnavailable : status_error(done, "host access");
    });
    if (error != cudaSuccess) {
      if (staging && sticky_ != cudaErrorDevicesUnavailable) driver_->release(*staging);
      return error;
    }
    if (need == 1) {
      protect(p, end, PROT_READ | PROT_WRITE);
      const auto* values = static_cast<const uint8_t*>(driver_->pointer(*staging));
      for_managed_in(p, end, [&](uint64_t a, uint64_t b, const Allocation&) {
        std::memcpy(reinterpret_cast<void*>(a), values + (a - p), b - a);
      });
      driver_->release(*staging);
    }
    protect(p, end, write ? PROT_READ | PROT_WRITE : PROT_READ);
    for (uint64_t q = p; q < end; q += page) host_pages_[q] = write ? kHostDirty : kHostClean;
    p = end;
  }
  return cudaSuccess;
}

cudaError_t Runtime::revoke_host_access(uint64_t lo, uint64_t hi) {
  if (revoking_ || lo >= hi) return cudaSuccess;
  const uint64_t page = page_bytes();
  revoking_ = true;
  cudaError_t error = cudaSuccess;
  // Pristine allocations the work may touch: the pages the host made non-zero go over.
  std::vector<std::pair<uint64_t, uint64_t>> pristine;  // allocation base, bytes
  for_managed_in(lo, hi, [&](uint64_t, uint64_t, Allocation& a) {
    if (!a.pristine) return;
    a.pristine = false;
    for (const auto& [base, allocation] : allocations_) {
      if (&allocation == &a) pristine.emplace_back(base, allocation.bytes);
    }
  });
  auto push = [&](uint64_t a, uint64_t b) {
    if (error == cudaSuccess) error = stage_copy(a, reinterpret_cast<const void*>(a), nullptr, 0, b - a, legacy_);
  };
  // Each range is made read-only before its values are copied (another host thread's write
  // meanwhile faults and waits for the runtime), then PROT_NONE.
  for (const auto& [base, bytes] : pristine) {
    const uint64_t end = base + bytes;
    protect(base, (end + page - 1) / page * page, PROT_READ);
    uint64_t run = 0;  // start of a run of non-zero pages, 0: none
    for (uint64_t p = base; p < end; p += page) {
      const uint64_t n = std::min(page, end - p);
      const auto* bytes_at = reinterpret_cast<const uint8_t*>(p);
      const bool zero = bytes_at[0] == 0 && std::memcmp(bytes_at, bytes_at + 1, n - 1) == 0;
      if (!zero && run == 0) run = p;
      if (zero && run != 0) {
        push(run, p);
        run = 0;
      }
    }
    if (run != 0) push(run, end);
    protect(base, (end + page - 1) / page * page, PROT_NONE);
  }
  // Host-held pages in the range: dirty runs go to the device, then all are protected.
  const uint64_t first = lo / page * page;
  auto begin = host_pages_.lower_bound(first);
  auto stop = hi >= ~uint64_t{0} - page ? host_pages_.end() : host_pages_.lower_bound(hi);
  uint64_t run_lo = 0, run_hi = 0;  // consecutive held pages
  bool run_dirty = false;
  auto flush = [&]() {
    if (run_lo == run_hi) return;
    if (run_dirty) {
      protect(run_lo, run_hi, PROT_READ);
      // Dirty pages: only their managed bytes go (a page may hold other device data too).
      for (uint64_t p = run_lo; p < run_hi; p += page) {
        const auto it = host_pages_.find(p);
        if (it == host_pages_.end() || it->second != kHostDirty) continue;
        uint64_t q = p + page;
        while (q < run_hi) {
          const auto next = host_pages_.find(q);
          if (next == host_pages_.end() || next->second != kHostDirty) break;
          q += page;
        }
        for_managed_in(p, q, [&](uint64_t a, uint64_t b, const Allocation&) { push(a, b); });
        p = q - page;
      }
    }
    protect(run_lo, run_hi, PROT_NONE);
  };
  for (auto it = begin; it != stop; ++it) {
    if (it->first != run_hi) {
      flush();
      run_lo = it->first;
      run_dirty = false;
    }
    run_hi = it->first + page;
    run_dirty = run_dirty || it->second == kHostDirty;
  }
  flush();
  host_pages_.erase(begin, stop);
  revoking_ = false;
  return error;
}

cudaError_t Runtime::mem_advise(const void* ptr, std::size_t bytes, int advice, cudaMemLocation location) {
  if (advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy) return cudaErrorInvalidValue;
  if (ptr == nullptr || bytes == 0) return cudaErrorInvalidValue;
  const uint64_t address = to_address(ptr);
  // The range must lie in one managed allocation.
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin()) return cudaErrorInvalidValue;
  --it;
  if (!it->second.managed || address - it->first >= it->second.bytes || bytes > it->second.bytes - (address - it->first)) {
    return cudaErrorInvalidValue;
  }
  uint64_t where = static_cast<uint64_t>(dev::AdviceLocation::Device);
  if (advice != cudaMemAdviseSetReadMostly && advice != cudaMemAdviseUnsetReadMostly) {
    if (location.type == cudaMemLocationTypeHost ||
        (location.type == cudaMemLocationTypeDevice && location.id == cudaCpuDeviceId)) {
      where = static_cast<uint64_t>(dev::AdviceLocation::Host);
    } else if (location.type == cudaMemLocationTypeDevice) {
      if (location.id != 0) return cudaErrorInvalidDevice;
    } else {
      return cudaErrorInvalidValue;
    }
  }
  const driver::Completion done =
      call(kControlQueue, command(dev::Opcode::MemAdvise, address, bytes, static_cast<uint64_t>(advice), where));
  if (done.lost) return cudaErrorDevicesUnavailable;
  return done.ok() ? cudaSuccess : status_error(done, "cudaMemAdvise");
}

cudaError_t Runtime::free_device(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  if (capture_active_) {
    if (const cudaError_t e = GraphAccess::forbids(*this); e != cudaSuccess) return e;
  }
  if (graphs_ != nullptr && GraphAccess::graph_memory(*this, ptr)) return cudaSuccess;  // freed with its graph
  const auto it = allocations_.find(to_address(ptr));
  if (it == allocations_.end()) return cudaErrorInvalidValue;
  if (const cudaError_t e = synchronize(); e != cudaSuccess && is_sticky(e)) return e;
  const driver::Completion done = call(kControlQueue, command(dev::Opcode::MemUnmap, it->first));
  if (it->second.managed) {
    const uint64_t page = page_bytes();
    const uint64_t end = it->first + (it->second.bytes + page - 1) / page * page;
    ::munmap(ptr, end - it->first);
    host_pages_.erase(host_pages_.lower_bound(it->first), host_pages_.lower_bound(end));
  }
  if (const auto pooled = pool_allocations_.find(it->first); pooled != pool_allocations_.end()) {
    pooled->second->live.erase(it->first);  // cudaFree of a cudaMallocAsync block: gone from its pool
    pool_allocations_.erase(pooled);
  }
  allocations_.erase(it);
  if (done.lost) return cudaErrorDevicesUnavailable;
  return done.ok() ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t Runtime::free_host(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  if (const auto pageable = pageable_pinned_.find(to_address(ptr)); pageable != pageable_pinned_.end()) {
    if (const cudaError_t e = synchronize(); e != cudaSuccess && is_sticky(e)) return e;
    ::munmap(ptr, pageable->second);
    pageable_pinned_.erase(pageable);
    host_alloc_flags_.erase(to_address(ptr));
    return cudaSuccess;
  }
  const auto address = driver_->host_address(ptr);
  if (!address || host_allocations_.count(*address) == 0) return cudaErrorInvalidValue;
  if (const cudaError_t e = synchronize(); e != cudaSuccess && is_sticky(e)) return e;
  if (const cudaError_t e = unmap_for_device(to_address(ptr)); e != cudaSuccess) return e;
  host_allocations_.erase(*address);
  host_alloc_flags_.erase(to_address(ptr));
  driver_->release(*address);
  return cudaSuccess;
}

cudaError_t Runtime::stage_copy(uint64_t dst, const void* src, void* host_dst, uint64_t device_src, std::size_t bytes,
                                Stream& stream) {
  // Pageable host memory goes through a staging block of the window, chunk by chunk.
  const std::size_t chunk = std::min<std::size_t>({bytes, kStagingBytes, driver_->window_capacity() / 4});
  const auto staging = driver_->allocate(chunk, 256);
  if (!staging) return cudaErrorMemoryAllocation;
  cudaError_t error = cudaSuccess;
  for (std::size_t done = 0; done < bytes && error == cudaSuccess; done += chunk) {
    const std::size_t n = std::min(chunk, bytes - done);
    dev::Command cmd{};
    if (src != nullptr) {  // host -> device
      std::memcpy(driver_->pointer(*staging), static_cast<const uint8_t*>(src) + done, n);
      cmd = command(dev::Opcode::Memcpy, dst + done, *staging, n, static_cast<uint64_t>(dev::CopyDirection::HostToDevice));
    } else {  // device -> host
      cmd = command(dev::Opcode::Memcpy, *staging, device_src + done, n,
                    static_cast<uint64_t>(dev::CopyDirection::DeviceToHost));
    }
    error = wait_for(submit(stream, cmd, Pending{0, {0, 0}, 0, "cudaMemcpy"}));
    if (error == cudaSuccess && host_dst != nullptr) {
      std::memcpy(static_cast<uint8_t*>(host_dst) + done, driver_->pointer(*staging), n);
    }
  }
  if (sticky_ != cudaErrorDevicesUnavailable) driver_->release(*staging);
  return error;
}

cudaError_t Runtime::memcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream_handle,
                            bool async) {
  if (capture_active_) {
    if (async && GraphAccess::captured(*this, stream_handle)) {
      return GraphAccess::capture_memcpy(*this, dst, src, bytes, kind, stream_handle);
    }
    if (const cudaError_t e = async ? cudaSuccess : GraphAccess::forbids(*this); e != cudaSuccess) return e;
  }
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  const bool dst_device = is_device_range(to_address(dst), bytes);
  const bool src_device = is_device_range(to_address(src), bytes);
  if (kind == cudaMemcpyDefault) {
    kind = dst_device ? (src_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                      : (src_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  const auto dst_window = driver_->host_address(dst, bytes);
  const auto src_window = driver_->host_address(src, bytes);
  auto run = [&](dev::Command cmd) {
    const uint64_t sequence = submit(*stream, cmd, Pending{0, {0, 0}, 0, "cudaMemcpy"});
    if (sequence == 0) return cudaErrorDevicesUnavailable;
    return async ? cudaSuccess : wait_for(sequence);
  };
  // Managed memory is device memory to the copy engine, whichever side the caller named it.
  if ((kind == cudaMemcpyHostToDevice && dst_device && src_device) ||
      (kind == cudaMemcpyDeviceToHost && src_device && dst_device)) {
    kind = cudaMemcpyDeviceToDevice;
  }
  switch (kind) {
    case cudaMemcpyHostToHost:
      if (!async || stream->queue == 0) {
        if (const cudaError_t e = async ? cudaSuccess : synchronize(); e != cudaSuccess) return e;
      }
      if (has_managed_) {  // the runtime's own access must not fault: bring managed pages over first
        const uint64_t page = page_bytes();
        const uint64_t s0 = to_address(src) / page * page, d0 = to_address(dst) / page * page;
        if (const cudaError_t e = make_host_accessible(s0, to_address(src) + bytes, false); e != cudaSuccess) return e;
        if (const cudaError_t e = make_host_accessible(d0, to_address(dst) + bytes, true); e != cudaSuccess) return e;
      }
      std::memmove(dst, src, bytes);
      return cudaSuccess;
    case cudaMemcpyHostToDevice:
      if (!dst_device || src_device) return cudaErrorInvalidValue;
      if (src_window) {
        return run(command(dev::Opcode::Memcpy, to_address(dst), *src_window, bytes,
                           static_cast<uint64_t>(dev::CopyDirection::HostToDevice)));
      }
      return stage_copy(to_address(dst), src, nullptr, 0, bytes, *stream);
    case cudaMemcpyDeviceToHost:
      if (!src_device || dst_device) return cudaErrorInvalidValue;
      if (dst_window) {
        return run(command(dev::Opcode::Memcpy, *dst_window, to_address(src), bytes,
                           static_cast<uint64_t>(dev::CopyDirection::DeviceToHost)));
      }
      return stage_copy(0, nullptr, dst, to_address(src), bytes, *stream);
    case cudaMemcpyDeviceToDevice:
      if (!src_device || !dst_device) return cudaErrorInvalidValue;
      return run(command(dev::Opcode::Memcpy, to_address(dst), to_address(src), bytes,
                         static_cast<uint64_t>(dev::CopyDirection::DeviceToDevice)));
    default:
      return cudaErrorInvalidMemcpyDirection;
  }
}

cudaError_t Runtime::memset(void* dst, int value, std::size_t bytes, cudaStream_t stream_handle, bool async) {
  if (capture_active_) {
    if (async && GraphAccess::captured(*this, stream_handle)) {
      return GraphAccess::capture_memset(*this, dst, value, bytes, stream_handle);
    }
    if (const cudaError_t e = async ? cudaSuccess : GraphAccess::forbids(*this); e != cudaSuccess) return e;
  }
  if (bytes == 0) return cudaSuccess;
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (!is_device_range(to_address(dst), bytes)) return cudaErrorInvalidValue;
  const uint64_t sequence = submit(*stream, command(dev::Opcode::Memset, to_address(dst), bytes,
                                                    static_cast<uint64_t>(value) & 0xffu),
                                   Pending{0, {0, 0}, 0, "cudaMemset"});
  if (sequence == 0) return cudaErrorDevicesUnavailable;
  return async ? cudaSuccess : wait_for(sequence);
}

cudaError_t Runtime::prefetch(const void* ptr, std::size_t bytes, bool to_device, cudaStream_t stream_handle) {
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  const auto it = allocations_.find(to_address(ptr));
  if (!is_device_range(to_address(ptr), bytes)) return cudaErrorInvalidValue;
  if (it == allocations_.end() || !it->second.managed) return cudaSuccess;  // nothing to migrate
  const uint64_t sequence =
      submit(*stream, command(dev::Opcode::Prefetch, to_address(ptr), bytes, to_device ? 0 : 1),
             Pending{0, {0, 0}, 0, "cudaMemPrefetchAsync"});
  return sequence == 0 ? cudaErrorDevicesUnavailable : cudaSuccess;
}

cudaError_t Runtime::pointer_attributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return cudaErrorInvalidValue;
  std::memset(attributes, 0, sizeof *attributes);
  unsigned flags_unused = 0;
  bool managed = false;
  for_managed_in(to_address(ptr), to_address(ptr) + 1, [&](uint64_t, uint64_t, const Allocation&) { managed = true; });
  if (managed) {
    attributes->type = cudaMemoryTypeManaged;
    attributes->devicePointer = const_cast<void*>(ptr);
    attributes->hostPointer = const_cast<void*>(ptr);
  } else if (is_device_range(to_address(ptr), 1)) {
    attributes->type = cudaMemoryTypeDevice;
    attributes->devicePointer = const_cast<void*>(ptr);
  } else if (driver_->host_address(ptr) || host_flags(&flags_unused, const_cast<void*>(ptr)) == cudaSuccess) {
    attributes->type = cudaMemoryTypeHost;
    attributes->hostPointer = const_cast<void*>(ptr);
  } else {
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = -2;
    return cudaSuccess;
  }
  attributes->device = 0;
  return cudaSuccess;
}

cudaError_t Runtime::attach_memory(cudaStream_t stream_handle, void* ptr, std::size_t bytes, unsigned flags) {
  if (stream_of(stream_handle) == nullptr) return cudaErrorInvalidResourceHandle;
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle) {
    return cudaErrorInvalidValue;
  }
  const auto it = allocations_.find(to_address(ptr));
  if (it == allocations_.end() || !it->second.managed) return cudaErrorInvalidValue;
  if (bytes != 0 && bytes != it->second.bytes) return cudaErrorInvalidValue;  // all of it, as CUDA requires
  return cudaSuccess;
}

cudaError_t Runtime::mem_info(std::size_t* free_bytes, std::size_t* total_bytes) {
  uint64_t used = 0;
  for (const auto& entry : allocations_) used += entry.second.bytes;
  const uint64_t total = info().global_memory_bytes;
  if (free_bytes != nullptr) *free_bytes = total > used ? total - used : 0;
  if (total_bytes != nullptr) *total_bytes = total;
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------------
// Launch.

std::vector<Runtime::LaunchConfig>& Runtime::configurations() {
  thread_local std::vector<LaunchConfig> pushed;
  return pushed;
}

void Runtime::push_configuration(dim3 grid, dim3 block, std::size_t shared, void* stream) {
  configurations().push_back(LaunchConfig{grid, block, shared, stream});
}

cudaError_t Runtime::pop_configuration(dim3* grid, dim3* block, std::size_t* shared, void* stream) {
  std::vector<LaunchConfig>& pushed = configurations();
  if (pushed.empty()) return cudaErrorMissingConfiguration;
  const LaunchConfig config = pushed.back();
  pushed.pop_back();
  if (grid != nullptr) *grid = config.grid;
  if (block != nullptr) *block = config.block;
  if (shared != nullptr) *shared = config.shared;
  if (stream != nullptr) *static_cast<void**>(stream) = config.stream;
  return cudaSuccess;
}

cudaError_t Runtime::launch(const void* host_function, dim3 grid, dim3 block, void** args, std::size_t shared,
                            cudaStream_t stream, const LaunchOptions& options) {
  Function* function = function_of(host_function);
  if (function == nullptr) return cudaErrorInvalidDeviceFunction;
  return launch_kernel(function, grid, block, args, shared, stream, options);
}

namespace {
// The device's occupancy rule with what the runtime knows of a kernel: the SM's limits from
// DeviceInfo, registers and static shared memory from its SASS (none known without a cubin of
// the device's major: the device then estimates registers and may refuse what this allowed).
dev::Occupancy occupancy_of(const dev::DeviceInfo& d, const Function& function, uint64_t threads,
                            uint64_t dynamic_shared) {
  dev::CtaDemand cta{static_cast<uint32_t>(threads), 0, dynamic_shared};
  if (const cubin::KernelResources* sass = function.sass; sass != nullptr) {
    cta.registers_per_thread = sass->registers;
    cta.shared_bytes += sass->static_shared_bytes;
  }
  return dev::occupancy(dev::SmCapacity{d.max_ctas_per_sm, d.max_threads_per_sm, d.registers_per_sm,
                                        d.shared_memory_per_sm},
                        cta);
}
}  // namespace

cudaError_t Runtime::launch_kernel(Function* function, dim3 grid, dim3 block, void** args, std::size_t shared,
                                   cudaStream_t stream_handle, const LaunchOptions& options) {
  if (capture_active_ && GraphAccess::captured(*this, stream_handle)) {
    return GraphAccess::capture_kernel(*this, function, grid, block, args, shared, stream_handle);
  }
  const dev::DeviceInfo& d = info();
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0 ||
      block.x > 1024 || block.y > 1024 || block.z > 64 || threads > d.max_threads_per_block || grid.x > 2147483647u ||
      grid.y > 65535 || grid.z > 65535 ||
      shared > std::max<uint64_t>(d.shared_memory_per_block, function->max_dynamic_shared)) {
    return cudaErrorInvalidConfiguration;
  }
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (const cudaError_t e = resolve(*function); e != cudaSuccess) return e;
  if (options.cooperative) {
    // The whole grid must be resident at once (the device checks this too, by its own figures).
    const dev::Occupancy fit = occupancy_of(d, *function, threads, shared);
    if (uint64_t{grid.x} * grid.y * grid.z > uint64_t{fit.ctas_per_sm} * d.sm_count) {
      return cudaErrorCooperativeLaunchTooLarge;
    }
  }
  std::vector<uint8_t> packed(function->param_bytes, 0);
  for (std::size_t i = 0; i < function->params.size(); ++i) {
    const dev::ParamLayout& p = function->params[i];
    if (args == nullptr || args[i] == nullptr || uint64_t{p.offset} + p.size > packed.size()) return cudaErrorInvalidValue;
    std::memcpy(packed.data() + p.offset, args[i], p.size);
  }
  Pending pending;
  pending.what = "kernel " + function->name;
  uint64_t args_address = 0;
  if (!packed.empty()) {
    const auto block_address = copy_into_window(packed.data(), packed.size());
    if (!block_address) return cudaErrorMemoryAllocation;
    args_address = *block_address;
    pending.release[0] = args_address;
  }
  if (function->module->uses_device_heap && heap_address_ == 0) {
    if (const cudaError_t e = establish_device_heap(); e != cudaSuccess) return e;
  }
  if (function->module->uses_printf) {
    if (const auto buffer = driver_->allocate(printf_bytes(), 256); buffer) {
      pending.printf_address = *buffer;
      pending.release[1] = *buffer;
    }
  }
  dev::Command cmd{};
  cmd.opcode = static_cast<uint32_t>(dev::Opcode::Launch);
  dev::LaunchArgs& launch = cmd.body.launch;
  launch.function = function->handle;
  launch.grid[0] = grid.x;
  launch.grid[1] = grid.y;
  launch.grid[2] = grid.z;
  launch.block[0] = block.x;
  launch.block[1] = block.y;
  launch.block[2] = block.z;
  launch.dynamic_shared_bytes = static_cast<uint32_t>(shared);
  launch.max_dynamic_shared_bytes = function->max_dynamic_shared;
  launch.shared_carveout =
      static_cast<uint32_t>((options.shared_carveout != -2 ? options.shared_carveout : function->shared_carveout) + 1);
  launch.launch_flags = (options.cooperative ? uint32_t{dev::kLaunchCooperative} : 0u) |
                        (options.graph_node ? uint32_t{dev::kLaunchGraphNode} : 0u);
  launch.args_address = args_address;
  launch.args_bytes = packed.size();
  launch.printf_address = pending.printf_address;
  launch.printf_bytes = pending.printf_address != 0 ? printf_bytes() : 0;
  const uint64_t sequence = submit(*stream, cmd, std::move(pending));
  return sequence == 0 ? cudaErrorDevicesUnavailable : cudaSuccess;
}

cudaError_t Runtime::function_attributes(cudaFuncAttributes* attributes, const void* host_function) {
  if (attributes == nullptr) return cudaErrorInvalidValue;
  Function* function = function_of(host_function);
  if (function == nullptr) return cudaErrorInvalidDeviceFunction;
  if (const cudaError_t e = resolve(*function); e != cudaSuccess) return e;
  std::memset(attributes, 0, sizeof *attributes);
  const dev::DeviceInfo& d = info();
  attributes->maxThreadsPerBlock = static_cast<int>(d.max_threads_per_block);
  attributes->ptxVersion = static_cast<int>(function->module->ptx_arch);
  attributes->maxDynamicSharedSizeBytes = static_cast<int>(d.shared_memory_per_block);
  if (const cubin::KernelResources* sass = function->sass; sass != nullptr) {
    // What the driver answers from the SASS: ptxas's figures.
    attributes->numRegs = static_cast<int>(sass->registers);
    attributes->sharedSizeBytes = sass->static_shared_bytes;
    attributes->localSizeBytes = sass->local_bytes;
    attributes->constSizeBytes = 0;  // user __constant__ data is per module, not per kernel
    attributes->binaryVersion = static_cast<int>(function->module->cubin->arch);
    const uint32_t limit = sass->required_threads != 0 ? sass->required_threads : sass->max_threads;
    if (limit != 0 && limit < d.max_threads_per_block) attributes->maxThreadsPerBlock = static_cast<int>(limit);
    // Registers are allocated per warp in units of 256: the block size whose warps all fit.
    const uint64_t per_warp = (uint64_t{sass->registers} * d.warp_size + 255) / 256 * 256;
    const uint64_t warps = per_warp != 0 ? d.registers_per_sm / per_warp : 0;
    if (warps * d.warp_size < static_cast<uint64_t>(attributes->maxThreadsPerBlock)) {
      attributes->maxThreadsPerBlock = static_cast<int>(warps * d.warp_size);
    }
  } else {
    // No cubin of the device's major: the PTX is what runs, its registers are not known here.
    attributes->numRegs = 0;
    attributes->binaryVersion = static_cast<int>(function->module->ptx_arch);
  }
  return cudaSuccess;
}

cudaError_t Runtime::occupancy(int* blocks, const void* host_function, int block_size, std::size_t shared) {
  if (blocks == nullptr || block_size <= 0) return cudaErrorInvalidValue;
  Function* function = function_of(host_function);
  if (function == nullptr) return cudaErrorInvalidDeviceFunction;
  if (const cudaError_t e = resolve(*function); e != cudaSuccess) return e;
  const dev::DeviceInfo& d = info();
  if (static_cast<uint32_t>(block_size) > d.max_threads_per_block) {
    *blocks = 0;
    return cudaSuccess;
  }
  *blocks = static_cast<int>(occupancy_of(d, *function, static_cast<uint64_t>(block_size), shared).ctas_per_sm);
  return cudaSuccess;
}

cudaError_t Runtime::available_dynamic_shared(std::size_t* shared, const void* host_function, int blocks,
                                              int block_size) {
  if (shared == nullptr || blocks <= 0 || block_size <= 0) return cudaErrorInvalidValue;
  Function* function = function_of(host_function);
  if (function == nullptr) return cudaErrorInvalidDeviceFunction;
  if (const cudaError_t e = resolve(*function); e != cudaSuccess) return e;
  const dev::DeviceInfo& d = info();
  *shared = 0;
  if (static_cast<uint32_t>(block_size) > d.max_threads_per_block) return cudaSuccess;
  // Without shared memory, do `blocks` CTAs fit at all (threads, warps, registers, CTA limit)?
  if (occupancy_of(d, *function, static_cast<uint64_t>(block_size), 0).ctas_per_sm < static_cast<uint32_t>(blocks)) {
    return cudaSuccess;
  }
  const uint64_t static_shared = function->sass != nullptr ? function->sass->static_shared_bytes : 0;
  const uint64_t per_block = d.shared_memory_per_sm / static_cast<uint64_t>(blocks);
  if (per_block <= static_shared) return cudaSuccess;
  // A CTA may use at most the per-block limit (48 KiB) without the opt-in attribute, at most the
  // attribute's value with it.
  const uint64_t dynamic_limit =
      function->max_dynamic_shared != 0 ? function->max_dynamic_shared
                                        : (d.shared_memory_per_block > static_shared ? d.shared_memory_per_block - static_shared : 0);
  *shared = std::min<uint64_t>(per_block - static_shared, dynamic_limit);
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------------
// Streams and events.

Stream* Runtime::stream_of(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy) return &legacy_;
  if (stream == cudaStreamPerThread) return &per_thread_stream();
  const auto it = streams_.find(reinterpret_cast<Stream*>(stream));
  return it == streams_.end() ? nullptr : it->second.get();
}

Event* Runtime::event_of(cudaEvent_t event) {
  const auto it = events_.find(reinterpret_cast<Event*>(event));
  return it == events_.end() ? nullptr : it->second.get();
}

cudaError_t Runtime::stream_create(cudaStream_t* stream, unsigned flags) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  auto created = std::make_unique<Stream>();
  created->queue = 1 + (next_queue_++ - 1) % kStreamQueues;
  created->blocking = (flags & cudaStreamNonBlocking) == 0;
  created->flags = flags & cudaStreamNonBlocking;
  created->id = next_stream_id_++;
  *stream = reinterpret_cast<cudaStream_t>(created.get());
  streams_[created.get()] = std::move(created);
  return cudaSuccess;
}

cudaError_t Runtime::stream_destroy(cudaStream_t stream) {
  const auto it = streams_.find(reinterpret_cast<Stream*>(stream));
  if (it == streams_.end()) return cudaErrorInvalidResourceHandle;
  if (capture_active_) GraphAccess::forget_stream(*this, it->first);
  streams_.erase(it);  // its queued work still completes
  return cudaSuccess;
}

cudaError_t Runtime::stream_synchronize(cudaStream_t stream_handle) {
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_) {
    if (const cudaError_t e = GraphAccess::forbids_wait(*this, stream_handle); e != cudaSuccess) return e;
  }
  if (stream->queue == 0) return synchronize();
  const uint64_t last = last_on_queue_[stream->queue];
  const cudaError_t error = last == 0 ? cudaSuccess : wait_for(last);
  if (error != cudaSuccess) return error;
  release_pool_blocks(default_pool_, default_pool_.release_threshold);
  for (auto& entry : pools_) release_pool_blocks(*entry.second, entry.second->release_threshold);
  const cudaError_t deferred = deferred_;
  deferred_ = cudaSuccess;
  return deferred;
}

cudaError_t Runtime::stream_query(cudaStream_t stream_handle) {
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_) {
    if (const cudaError_t e = GraphAccess::forbids_wait(*this, stream_handle); e != cudaSuccess) return e;
  }
  return query(last_on_queue_[stream->queue]);
}

cudaError_t Runtime::query(uint64_t sequence) {
  ++activity_;
  reap();
  if (sequence == 0 || pending_.count(sequence) == 0) return cudaSuccess;
  if (!host_callbacks_.empty()) {
    if (const cudaError_t e = run_host_functions(sequence, true); e != cudaSuccess) return e;
    if (pending_.count(sequence) == 0) return cudaSuccess;
  }
  // Simulated time advances only while the host waits: a query that finds the work unfinished
  // lets the platform run for one quantum (host.query_quantum), or until the work completes, so a
  // program that polls without ever synchronizing still gets its work done (device.h HostWaiting).
  driver_->query(sequence);
  if (!driver_->alive()) return wait_for(sequence);  // the platform is gone: its error, not NotReady forever
  reap();
  return pending_.count(sequence) != 0 ? cudaErrorNotReady : cudaSuccess;
}

cudaError_t Runtime::stream_wait_event(cudaStream_t stream_handle, cudaEvent_t event_handle) {
  Stream* stream = stream_of(stream_handle);
  Event* event = event_of(event_handle);
  if (stream == nullptr || event == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_ && (GraphAccess::captured(*this, stream_handle) || GraphAccess::event_captured(*this, event))) {
    return GraphAccess::capture_event_wait(*this, stream_handle, event_handle);
  }
  if (event->ipc_id != 0) {
    // The latest record by any program holding the handle.
    const driver::Completion state = ipc_event_state(*event);
    if (state.lost) return cudaErrorDevicesUnavailable;
    if (!state.ok()) return cudaErrorInvalidResourceHandle;
    if (state.value0 == 0 || state.value1 >= state.value0) return cudaSuccess;
    const uint64_t sequence = submit_raw(stream->queue, command(dev::Opcode::IpcEventWait, event->ipc_id, state.value0),
                                         Pending{0, {0, 0}, 0, "cudaStreamWaitEvent (IPC event)"});
    return sequence == 0 ? cudaErrorDevicesUnavailable : cudaSuccess;
  }
  if (event->value == 0) return cudaSuccess;
  const uint64_t sequence = submit_raw(stream->queue, command(dev::Opcode::SemaphoreWait, event->cell, event->value),
                                       Pending{0, {0, 0}, 0, "cudaStreamWaitEvent"});
  return sequence == 0 ? cudaErrorDevicesUnavailable : cudaSuccess;
}

cudaError_t Runtime::event_create(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr) return cudaErrorInvalidValue;
  if ((flags & ~(cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess)) != 0) return cudaErrorInvalidValue;
  // An interprocess event carries no timing (CUDA requires cudaEventDisableTiming with it).
  if ((flags & cudaEventInterprocess) != 0 && (flags & cudaEventDisableTiming) == 0) return cudaErrorInvalidValue;
  const auto cell = driver_->allocate(16, 16);
  if (!cell) return cudaErrorMemoryAllocation;
  std::memset(driver_->pointer(*cell), 0, 16);
  auto created = std::make_unique<Event>();
  created->cell = *cell;
  created->disable_timing = (flags & cudaEventDisableTiming) != 0;
  created->interprocess = (flags & cudaEventInterprocess) != 0;
  *event = reinterpret_cast<cudaEvent_t>(created.get());
  events_[created.get()] = std::move(created);
  return cudaSuccess;
}

cudaError_t Runtime::event_destroy(cudaEvent_t event_handle) {
  const auto it = events_.find(reinterpret_cast<Event*>(event_handle));
  if (it == events_.end()) return cudaErrorInvalidResourceHandle;
  if (capture_active_) GraphAccess::forget_event(*this, it->first);
  if (it->second->ipc_id != 0) {
    // An exported event's cell stays while this program runs: other programs may still record and
    // wait on it (the platform ends the export when the program leaves). An opened one has no cell.
    events_.erase(it);
    return cudaSuccess;
  }
  // The cell may still be signalled by queued work: keep it until that work completes.
  if (it->second->sequence != 0 && pending_.count(it->second->sequence) != 0) {
    pending_[it->second->sequence].release[1] = it->second->cell;
  } else {
    driver_->release(it->second->cell);
  }
  events_.erase(it);
  return cudaSuccess;
}

cudaError_t Runtime::event_record(cudaEvent_t event_handle, cudaStream_t stream_handle) {
  Event* event = event_of(event_handle);
  Stream* stream = stream_of(stream_handle);
  if (event == nullptr || stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_ && GraphAccess::captured(*this, stream_handle)) {
    return GraphAccess::capture_event_record(*this, event_handle, stream_handle);
  }
  if (event->ipc_id != 0) {
    // Records of all programs holding the handle are ordered by the platform's tickets.
    const driver::Completion ticket = call(kControlQueue, command(dev::Opcode::IpcEventTicket, event->ipc_id, 1));
    if (ticket.lost) return cudaErrorDevicesUnavailable;
    if (!ticket.ok()) return cudaErrorInvalidResourceHandle;
    const uint64_t sequence = submit(*stream, command(dev::Opcode::IpcEventSignal, event->ipc_id, ticket.value0),
                                     Pending{0, {0, 0}, 0, "cudaEventRecord (IPC event)"});
    if (sequence == 0) return cudaErrorDevicesUnavailable;
    event->value = ticket.value0;
    event->sequence = sequence;
    return cudaSuccess;
  }
  const uint64_t value = event->value + 1;
  const uint64_t sequence = submit(*stream, command(dev::Opcode::SemaphoreSignal, event->cell, value),
                                   Pending{0, {0, 0}, 0, "cudaEventRecord"});
  if (sequence == 0) return cudaErrorDevicesUnavailable;
  event->value = value;
  event->sequence = sequence;
  return cudaSuccess;
}

cudaError_t Runtime::event_synchronize(cudaEvent_t event_handle) {
  Event* event = event_of(event_handle);
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_ && GraphAccess::event_captured(*this, event)) return cudaErrorCapturedEvent;
  if (event->ipc_id != 0) {
    const std::optional<uint64_t> wait = ipc_event_wait(*event);
    if (!wait) return cudaErrorInvalidResourceHandle;
    return *wait == 0 ? cudaSuccess : wait_for(*wait);
  }
  if (event->sequence == 0) return cudaSuccess;
  return wait_for(event->sequence);
}

cudaError_t Runtime::event_query(cudaEvent_t event_handle) {
  Event* event = event_of(event_handle);
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_ && GraphAccess::event_captured(*this, event)) return cudaErrorCapturedEvent;
  if (event->ipc_id != 0) {
    const std::optional<uint64_t> wait = ipc_event_wait(*event);
    if (!wait) return cudaErrorInvalidResourceHandle;
    return *wait == 0 ? cudaSuccess : query(*wait);
  }
  return query(event->sequence);
}

driver::Completion Runtime::ipc_event_state(const Event& event) {
  return call(kControlQueue, command(dev::Opcode::IpcEventTicket, event.ipc_id, 0));
}

std::optional<uint64_t> Runtime::ipc_event_wait(Event& event) {
  const driver::Completion state = ipc_event_state(event);
  if (state.lost || !state.ok()) return std::nullopt;
  if (state.value0 == 0 || state.value1 >= state.value0) return uint64_t{0};
  // One wait per ticket: a program polling with cudaEventQuery does not queue a wait per poll. It
  // holds the control queue until the record it waits for is signalled.
  if (event.ipc_wait == 0 || event.ipc_wait_value != state.value0 || pending_.count(event.ipc_wait) == 0) {
    event.ipc_wait = submit_raw(kControlQueue, command(dev::Opcode::IpcEventWait, event.ipc_id, state.value0),
                                Pending{0, {0, 0}, 0, "IPC event wait"});
    if (event.ipc_wait == 0) return std::nullopt;
    event.ipc_wait_value = state.value0;
  }
  return event.ipc_wait;
}

cudaError_t Runtime::event_elapsed(float* ms, cudaEvent_t start_handle, cudaEvent_t end_handle) {
  Event* start = event_of(start_handle);
  Event* end = event_of(end_handle);
  if (ms == nullptr) return cudaErrorInvalidValue;
  if (start == nullptr || end == nullptr) return cudaErrorInvalidResourceHandle;
  if (start->disable_timing || end->disable_timing || start->value == 0 || end->value == 0) {
    return cudaErrorInvalidResourceHandle;
  }
  // Unfinished events: like a query, the platform runs one quantum, so polling for the time ends.
  for (const Event* event : {start, end}) {
    if (const cudaError_t e = query(event->sequence); e != cudaSuccess) return e;
  }
  uint64_t start_ps = 0;
  uint64_t end_ps = 0;
  std::memcpy(&start_ps, static_cast<uint8_t*>(driver_->pointer(start->cell)) + 8, 8);
  std::memcpy(&end_ps, static_cast<uint8_t*>(driver_->pointer(end->cell)) + 8, 8);
  *ms = static_cast<float>((static_cast<double>(end_ps) - static_cast<double>(start_ps)) / 1e9);
  return cudaSuccess;
}

cudaError_t Runtime::synchronize() {
  if (driver_ == nullptr) return cudaSuccess;
  if (capture_active_) {
    if (const cudaError_t e = GraphAccess::forbids(*this); e != cudaSuccess) return e;
  }
  cudaError_t first = run_host_functions(UINT64_MAX, false);
  for (uint32_t q = 0; q < dev::kQueuesPerChannel; ++q) {
    const uint64_t last = last_on_queue_[q];
    if (last == 0 || pending_.count(last) == 0) continue;
    const cudaError_t error = wait_for(last);
    if (error != cudaSuccess && first == cudaSuccess) first = error;
  }
  reap();
  if (sticky_ != cudaSuccess) return sticky_;
  // A synchronization point: pools give memory above their release threshold back.
  release_pool_blocks(default_pool_, default_pool_.release_threshold);
  for (auto& entry : pools_) release_pool_blocks(*entry.second, entry.second->release_threshold);
  const cudaError_t deferred = deferred_;
  deferred_ = cudaSuccess;
  return first != cudaSuccess ? first : deferred;
}


Stream& Runtime::per_thread_stream() {
  // The per-thread default stream: one ordinary blocking stream per host thread, created on the
  // thread's first use (it synchronizes with the legacy default stream like any blocking stream).
  auto& stream = per_thread_streams_[std::this_thread::get_id()];
  if (stream == nullptr) {
    stream = std::make_unique<Stream>();
    stream->queue = 1 + (next_queue_++ - 1) % kStreamQueues;
    stream->id = next_stream_id_++;
  }
  return *stream;
}

cudaError_t Runtime::stream_flags(cudaStream_t stream_handle, unsigned* flags) {
  if (flags == nullptr) return cudaErrorInvalidValue;
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  *flags = stream->flags;
  return cudaSuccess;
}

cudaError_t Runtime::stream_priority(cudaStream_t stream_handle, int* priority) {
  if (priority == nullptr) return cudaErrorInvalidValue;
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  *priority = stream->priority;
  return cudaSuccess;
}

cudaError_t Runtime::stream_id(cudaStream_t stream_handle, unsigned long long* id) {
  if (id == nullptr) return cudaErrorInvalidValue;
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  *id = stream->id;
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------------
// Host functions in stream order.

namespace {
thread_local bool on_callback_thread_now = false;
}

CallbackThread::CallbackThread() : thread_([this] { loop(); }) {}

CallbackThread::~CallbackThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

bool CallbackThread::on_callback_thread() { return on_callback_thread_now; }

void CallbackThread::run(const std::function<void()>& job) {
  std::unique_lock<std::mutex> lock(mutex_);
  job_ = &job;
  changed_.notify_all();
  changed_.wait(lock, [&] { return job_ == nullptr; });
}

void CallbackThread::loop() {
  on_callback_thread_now = true;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || job_ != nullptr; });
    if (job_ == nullptr) return;  // stopping, nothing left to run
    const std::function<void()>* job = job_;
    lock.unlock();
    (*job)();
    lock.lock();
    job_ = nullptr;
    changed_.notify_all();
  }
}

cudaError_t Runtime::launch_host_function(cudaStream_t stream_handle, HostCallback callback) {
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_ && GraphAccess::captured(*this, stream_handle)) {
    return GraphAccess::capture_host_function(*this, stream_handle, callback);
  }
  // The marker completes once the stream's earlier work has (submit() orders it after the legacy
  // stream as usual); the SemaphoreWait behind it holds the stream's later work until the host
  // function has returned and the runtime has written the release value.
  const uint64_t trigger = submit(*stream, command(dev::Opcode::Nop), Pending{0, {0, 0}, 0, "host function"});
  if (trigger == 0) return cudaErrorDevicesUnavailable;
  const uint32_t queue = stream->queue;
  const uint64_t value = ++release_value_[queue];
  if (submit_raw(queue, command(dev::Opcode::SemaphoreWait, release_cells_ + 16 * queue, value),
                 Pending{0, {0, 0}, 0, "host function"}) == 0) {
    return cudaErrorDevicesUnavailable;
  }
  callback.trigger = trigger;
  callback.queue = queue;
  callback.release_value = value;
  host_callbacks_.push_back(callback);
  if (!progress_thread_.joinable()) progress_thread_ = std::thread([this] { progress_loop(); });
  return cudaSuccess;
}

void Runtime::progress_loop() {
  constexpr auto kProgressTick = std::chrono::milliseconds(50);
  uint64_t seen = ~uint64_t{0};
  std::unique_lock<std::mutex> stop(progress_mutex_);
  while (!progress_stop_.wait_for(stop, kProgressTick, [&] { return progress_stopping_; })) {
    std::unique_lock<std::recursive_mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) continue;  // a program thread is in the runtime: it makes progress
    if (host_callbacks_.empty() || driver_ == nullptr) {
      seen = ~uint64_t{0};
      continue;
    }
    if (activity_ != seen) {  // the program submitted or waited since the last tick
      seen = activity_;
      continue;
    }
    if (!progress_logged_) {
      progress_logged_ = true;
      std::fprintf(stderr,
                   "gpuvp: host functions are queued and the program has stopped calling CUDA: the runtime waits "
                   "for them itself (simulated time then depends on when the program calls again)\n");
    }
    const cudaError_t error = run_host_functions(UINT64_MAX, false);
    if (error != cudaSuccess && !is_sticky(error) && deferred_ == cudaSuccess) deferred_ = error;
    seen = activity_;
  }
}

cudaError_t Runtime::run_host_functions(uint64_t before, bool poll) {
  bool polled = false;
  for (;;) {
    reap();
    if (host_callbacks_.empty() || host_callbacks_.front().trigger >= before) return cudaSuccess;
    // Run every host function (queued before `before`) whose marker has completed, oldest first.
    // One queued later on a queue never completes before an earlier one of the same queue has run
    // (that one's semaphore holds the queue).
    auto ready = host_callbacks_.end();
    bool several_queues = false;
    for (auto it = host_callbacks_.begin(); it != host_callbacks_.end() && it->trigger < before; ++it) {
      several_queues = several_queues || it->queue != host_callbacks_.front().queue;
      if (ready == host_callbacks_.end() && pending_.count(it->trigger) == 0) ready = it;
    }
    if (ready != host_callbacks_.end()) {
      const HostCallback callback = *ready;
      host_callbacks_.erase(ready);
      if (const cudaError_t e = run_host_function(callback); e != cudaSuccess) return e;
      continue;
    }
    // None is ready: let the device run. The oldest one's marker is waited for; when host
    // functions of several queues wait, in steps of at most one query quantum, so that each runs
    // within a quantum of its marker rather than behind older ones of other streams.
    const uint64_t oldest = host_callbacks_.front().trigger;
    if (poll) {
      if (polled) return cudaErrorNotReady;  // a query lets time run for one quantum, no more
      polled = true;
    }
    if (poll || several_queues) {
      driver_->query(oldest);
      if (!driver_->alive()) {
        host_callbacks_.clear();  // nothing will run on the device any more
        return wait_without_host_functions(oldest);
      }
      continue;
    }
    if (const cudaError_t e = wait_without_host_functions(oldest); e != cudaSuccess) {
      if (sticky_ == cudaErrorDevicesUnavailable) {
        host_callbacks_.clear();
        return e;
      }
    }
  }
}

cudaError_t Runtime::run_host_function(const HostCallback& callback) {
  // Simulated time stands still while the host function runs: the platform advances it only
  // while this client waits, and it waits for nothing until the release value is written.
  if (callback_thread_ == nullptr) callback_thread_ = std::make_unique<CallbackThread>();
  const cudaError_t status = sticky_;
  callback_thread_->run([&] {
    if (callback.host_fn != nullptr) callback.host_fn(callback.user_data);
    if (callback.callback != nullptr) callback.callback(callback.stream, status, callback.user_data);
  });
  // The device writes the release value (a SemaphoreSignal on the control queue), so the stream
  // moves on at a simulated time fixed by the command stream, not by when the host's own write
  // would happen to be seen.
  if (submit_raw(kControlQueue,
                 command(dev::Opcode::SemaphoreSignal, release_cells_ + 16 * callback.queue, callback.release_value),
                 Pending{0, {0, 0}, 0, "host function"}) == 0) {
    return cudaErrorDevicesUnavailable;
  }
  return cudaSuccess;
}

// ---------------------------------------------------------------------------------------------
// Stream-ordered allocation.

uint64_t MemPool::reserved() const {
  uint64_t bytes = 0;
  for (const auto& entry : live) bytes += entry.second;
  for (const FreeBlock& block : free_blocks) bytes += block.bytes;
  return bytes;
}

uint64_t MemPool::used() const {
  uint64_t bytes = 0;
  for (const auto& entry : live) bytes += entry.second;
  return bytes;
}

MemPool* Runtime::pool_of(cudaMemPool_t handle) {
  auto* pool = reinterpret_cast<MemPool*>(handle);
  if (pool == &default_pool_) return pool;
  return pools_.count(pool) != 0 ? pool : nullptr;
}

cudaError_t Runtime::pool_create(cudaMemPool_t* handle, const cudaMemPoolProps* props) {
  if (handle == nullptr || props == nullptr) return cudaErrorInvalidValue;
  if (props->allocType != cudaMemAllocationTypePinned) return cudaErrorInvalidValue;
  if (props->location.type != cudaMemLocationTypeDevice) return cudaErrorNotSupported;  // host pools
  if (props->location.id != 0) return cudaErrorInvalidDevice;
  if (props->handleTypes != cudaMemHandleTypeNone) return cudaErrorNotSupported;  // no IPC
  auto pool = std::make_unique<MemPool>();
  *handle = reinterpret_cast<cudaMemPool_t>(pool.get());
  pools_[pool.get()] = std::move(pool);
  return cudaSuccess;
}

cudaError_t Runtime::pool_destroy(cudaMemPool_t handle) {
  MemPool* pool = pool_of(handle);
  if (pool == nullptr || pool == &default_pool_) return cudaErrorInvalidValue;
  // Free blocks go back once the work before their frees is done; blocks still allocated stay
  // valid, as ordinary device allocations that cudaFree releases.
  for (const MemPool::FreeBlock& block : pool->free_blocks) {
    if (block.ready != 0) wait_for(block.ready);
  }
  release_pool_blocks(*pool, 0);
  for (const auto& entry : pool->live) pool_allocations_.erase(entry.first);
  if (current_pool_ == pool) current_pool_ = &default_pool_;
  pools_.erase(pool);
  return cudaSuccess;
}

cudaError_t Runtime::set_current_pool(cudaMemPool_t handle) {
  MemPool* pool = pool_of(handle);
  if (pool == nullptr) return cudaErrorInvalidValue;
  current_pool_ = pool;
  return cudaSuccess;
}

cudaError_t Runtime::malloc_async(void** ptr, std::size_t bytes, MemPool& pool, cudaStream_t stream_handle) {
  if (ptr == nullptr) return cudaErrorInvalidValue;
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_ && GraphAccess::captured(*this, stream_handle)) {
    return GraphAccess::capture_malloc(*this, ptr, bytes, stream_handle);
  }
  if (bytes == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  reap();
  // Reuse the smallest free block that fits and that the stream may use now: freed on the same
  // queue (the queue orders this stream's later work after the free), or, with opportunistic
  // reuse, its free known complete.
  auto usable = [&](const MemPool::FreeBlock& block) {
    if (block.bytes < bytes) return false;
    if (block.queue == stream->queue) return true;
    return pool.reuse_allow_opportunistic != 0 && (block.ready == 0 || pending_.count(block.ready) == 0);
  };
  auto best = pool.free_blocks.end();
  for (auto it = pool.free_blocks.begin(); it != pool.free_blocks.end(); ++it) {
    if (usable(*it) && (best == pool.free_blocks.end() || it->bytes < best->bytes)) best = it;
  }
  if (best != pool.free_blocks.end()) {
    const uint64_t address = best->address;
    pool.live[address] = best->bytes;
    pool.free_blocks.erase(best);
    pool.used_high = std::max(pool.used_high, pool.used());
    *ptr = reinterpret_cast<void*>(address);
    return cudaSuccess;
  }
  void* mapped = nullptr;
  cudaError_t error = malloc_device(&mapped, bytes);
  if (error == cudaErrorMemoryAllocation) {
    // Out of device memory: give back every pool's unused blocks, then try once more.
    release_pool_blocks(default_pool_, 0);
    for (auto& entry : pools_) release_pool_blocks(*entry.second, 0);
    error = malloc_device(&mapped, bytes);
  }
  if (error != cudaSuccess) return error;
  pool.live[to_address(mapped)] = bytes;
  pool_allocations_[to_address(mapped)] = &pool;
  pool.used_high = std::max(pool.used_high, pool.used());
  pool.reserved_high = std::max(pool.reserved_high, pool.reserved());
  *ptr = mapped;
  return cudaSuccess;
}

cudaError_t Runtime::free_async(void* ptr, cudaStream_t stream_handle) {
  Stream* stream = stream_of(stream_handle);
  if (stream == nullptr) return cudaErrorInvalidResourceHandle;
  if (capture_active_ && GraphAccess::captured(*this, stream_handle)) {
    return GraphAccess::capture_free(*this, ptr, stream_handle);
  }
  if (ptr == nullptr) return cudaSuccess;
  if (graphs_ != nullptr && GraphAccess::graph_memory(*this, ptr)) return cudaSuccess;  // freed with its graph
  const auto pooled = pool_allocations_.find(to_address(ptr));
  if (pooled == pool_allocations_.end()) {
    // Memory from cudaMalloc: freed at once, after the work that may use it.
    return allocations_.count(to_address(ptr)) != 0 ? free_device(ptr) : cudaErrorInvalidValue;
  }
  MemPool& pool = *pooled->second;
  const auto live = pool.live.find(to_address(ptr));
  if (live == pool.live.end()) return cudaErrorInvalidValue;  // freed twice
  // The block is free once the stream's earlier work is done: a marker says when.
  const uint64_t marker = submit(*stream, command(dev::Opcode::Nop), Pending{0, {0, 0}, 0, "cudaFreeAsync"});
  if (marker == 0) return cudaErrorDevicesUnavailable;
  pool.free_blocks.push_back(MemPool::FreeBlock{live->first, live->second, marker, stream->queue});
  pool.live.erase(live);
  return cudaSuccess;
}

void Runtime::release_pool_blocks(MemPool& pool, uint64_t keep_bytes) {
  if (driver_ == nullptr || pool.free_blocks.empty()) return;
  reap();
  uint64_t reserved = pool.reserved();
  for (auto it = pool.free_blocks.begin(); it != pool.free_blocks.end() && reserved > keep_bytes;) {
    if (it->ready != 0 && pending_.count(it->ready) != 0) {  // work before its free still queued
      ++it;
      continue;
    }
    const uint64_t address = it->address;
    reserved -= it->bytes;
    it = pool.free_blocks.erase(it);
    pool_allocations_.erase(address);
    const auto allocation = allocations_.find(address);
    if (allocation == allocations_.end()) continue;
    allocations_.erase(allocation);
    const driver::Completion done = call(kControlQueue, command(dev::Opcode::MemUnmap, address));
    if (!done.ok()) status_error(done, "memory pool release");
  }
}

cudaError_t Runtime::pool_trim(MemPool& pool, std::size_t keep_bytes) {
  release_pool_blocks(pool, keep_bytes);
  return cudaSuccess;
}

cudaError_t Runtime::pool_attribute(MemPool& pool, cudaMemPoolAttr attr, void* value, bool set) {
  if (value == nullptr) return cudaErrorInvalidValue;
  auto flag = [&](int& field) {
    if (set) {
      field = *static_cast<const int*>(value) != 0 ? 1 : 0;
    } else {
      *static_cast<int*>(value) = field;
    }
    return cudaSuccess;
  };
  auto figure = [&](uint64_t current, uint64_t* high) {
    if (set) {
      // Only the high-water marks may be set, and only to 0: they restart from the current figure.
      if (high == nullptr || *static_cast<const uint64_t*>(value) != 0) return cudaErrorInvalidValue;
      *high = current;
    } else {
      *static_cast<uint64_t*>(value) = high != nullptr ? *high : current;
    }
    return cudaSuccess;
  };
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: return flag(pool.reuse_follow_event_dependencies);
    case cudaMemPoolReuseAllowOpportunistic: return flag(pool.reuse_allow_opportunistic);
    case cudaMemPoolReuseAllowInternalDependencies: return flag(pool.reuse_allow_internal_dependencies);
    case cudaMemPoolAttrReleaseThreshold:
      if (set) {
        pool.release_threshold = *static_cast<const uint64_t*>(value);
      } else {
        *static_cast<uint64_t*>(value) = pool.release_threshold;
      }
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent: return set ? cudaErrorInvalidValue : figure(pool.reserved(), nullptr);
    case cudaMemPoolAttrReservedMemHigh:
      pool.reserved_high = std::max(pool.reserved_high, pool.reserved());
      return figure(pool.reserved(), &pool.reserved_high);
    case cudaMemPoolAttrUsedMemCurrent: return set ? cudaErrorInvalidValue : figure(pool.used(), nullptr);
    case cudaMemPoolAttrUsedMemHigh:
      pool.used_high = std::max(pool.used_high, pool.used());
      return figure(pool.used(), &pool.used_high);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace gpuvp::cudart

namespace gpuvp::cudart {

int report_unimplemented(const char* name) {
  if (CallbackThread::on_callback_thread()) return static_cast<int>(cudaErrorNotPermitted);
  Runtime& runtime = Runtime::instance();
  std::lock_guard<std::recursive_mutex> lock(runtime.mutex());
  runtime.log_unsupported(name);
  return static_cast<int>(runtime.record(cudaErrorNotSupported));
}

}  // namespace gpuvp::cudart
