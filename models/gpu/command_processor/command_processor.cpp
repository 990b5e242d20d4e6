#include "models/gpu/command_processor/command_processor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <utility>

#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/gpu_timing/gpu_timing.h"
#include "models/uvm/uvm_system.h"
#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/ir.h"
#include "models/gpu/ptx/kernel_run.h"
#include "platform/clock_domains.h"
#include "platform/stats/progress.h"

namespace gpuvp::gpu {
namespace {

using device::Opcode;
using device::Status;

constexpr uint64_t kModuleTag = uint64_t{1} << 40;
constexpr uint64_t kFunctionTag = uint64_t{2} << 40;
constexpr uint64_t kMaxModuleBytes = uint64_t{64} << 20;
// What one context may hold loaded at once: a client that loads modules without end runs out
// here, with an error, before the platform's memory does (the parsed form of a module is a few
// times its text).
constexpr uint64_t kMaxModulesPerContext = 4096;
constexpr uint64_t kMaxModuleBytesPerContext = uint64_t{512} << 20;
constexpr uint64_t kMaxNameBytes = 4096;
constexpr uint64_t kMaxAlignment = uint64_t{1} << 30;
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint32_t kMaxBlockX = 1024, kMaxBlockY = 1024, kMaxBlockZ = 64;
constexpr uint32_t kMaxGridX = 0x7fffffffu, kMaxGridYZ = 65535;

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// Global memory as a launch sees it: the channel's address space, cut off once the channel's
// owner is gone so that a kernel of a dead program stops at its next memory access.
class LaunchMemory final : public ptx::MemoryInterface {
 public:
  LaunchMemory(ptx::DeviceMemory& memory, const std::atomic<bool>* cancelled)
      : memory_(memory), cancelled_(cancelled) {}
  bool read(uint64_t address, void* destination, uint64_t size) override {
    return !is_cancelled() && memory_.read(address, destination, size);
  }
  bool write(uint64_t address, const void* source, uint64_t size) override {
    return !is_cancelled() && memory_.write(address, source, size);
  }
  uint8_t* direct_page(uint64_t address) override { return is_cancelled() ? nullptr : memory_.direct_page(address); }
  bool is_cancelled() const { return cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed); }

 private:
  ptx::DeviceMemory& memory_;
  const std::atomic<bool>* cancelled_;
};

// Whether a module's kernels may call malloc/free (so it needs the device heap).
bool module_uses_heap(const ptx::LoadedModule& module) {
  using E = ptx::ir::Function::External;
  for (const auto& function : module.module().program().functions) {
    if (function.external == E::kMalloc || function.external == E::kAlignedMalloc || function.external == E::kFree ||
        function.external == E::kCdpMalloc || function.external == E::kCdpFree) {
      return true;
    }
  }
  return false;
}

}  // namespace

struct CommandProcessor::Result {
  Status status = Status::Ok;
  uint64_t value0 = 0;
  uint64_t value1 = 0;
  std::string message;

  static Result ok(uint64_t v0 = 0, uint64_t v1 = 0) { return Result{Status::Ok, v0, v1, {}}; }
  static Result error(Status status, std::string message) { return Result{status, 0, 0, std::move(message)}; }
};

// Cells of grid workspace per context: more cooperative kernels than a channel has queues
// never run at once.
constexpr uint64_t kGridWorkspaces = 64;
static_assert(kGridWorkspaces >= device::kQueuesPerChannel, "a cooperative kernel per queue at least");

struct CommandProcessor::Context {
  struct Module {
    std::unique_ptr<ptx::LoadedModule> loaded;
    uint64_t text_bytes = 0;
  };
  struct Function {
    uint64_t module = 0;
    const ptx::Kernel* kernel = nullptr;
    ptx::KernelResources resources;  // as the host told them with GetFunction
    uint32_t max_threads = 0;        // told thread limit (0: none)
  };
  ptx::DeviceMemory memory;
  std::unique_ptr<DeviceRuntimeService> runtime;  // malloc/free and child launches of its kernels
  std::map<uint64_t, uint64_t> allocations;  // base -> bytes (MemMap)
  std::map<uint64_t, uint64_t> managed;      // the Managed ones the GMMU tracks (timing model)
  std::map<uint64_t, uint64_t> variables;    // base -> bytes (module .global/.const variables)
  std::map<uint64_t, uint64_t> host_mapped;  // base -> bytes (MemMapHost: host memory, zero copy)
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> imports;  // base -> (export id, bytes): IpcImport
  std::map<uint64_t, Module> modules;
  std::map<uint64_t, Function> functions;
  uint64_t next_handle = 1;
  uint64_t module_text_bytes = 0;  // of the modules loaded now
  uint64_t mapped_bytes = 0;
  // Grid workspaces of cooperative launches: kGridWorkspaces 8-byte cells, allocated at the
  // first cooperative launch; a bit per cell in use by a running kernel.
  uint64_t grid_workspaces = 0;
  uint64_t grid_workspaces_in_use = 0;
};

struct CommandProcessor::Stats {
  stats::Counter* contexts_created;
  stats::Counter* contexts_released;
  stats::Counter* bytes_mapped;
  stats::Counter* bytes_unmapped;
  stats::Counter* modules_loaded;
  stats::Counter* modules_unloaded;
  stats::Counter* module_load_failures;
  stats::Counter* kernels_launched;
  stats::Counter* kernel_faults;
  stats::Counter* kernels_cancelled;
  stats::Counter* invalid_launches;
  stats::Counter* warp_instructions;
  stats::Counter* thread_instructions;
  stats::Counter* kernel_time;
  stats::Counter* timing_fallbacks;
  stats::Counter* texture_launches;
  stats::Counter* printf_bytes;
  stats::Counter* printf_dropped;
  stats::Counter* rejected;
  stats::Counter* dma_h2d;
  stats::Counter* dma_d2h;
  stats::Counter* copy_d2d;
  stats::Counter* memset_bytes;
  stats::Counter* dma_transactions;
  stats::Counter* dma_address_errors;

  explicit Stats(stats::Registry& registry) {
    stats::Group& g = registry.group("gpu.command_processor");
    contexts_created = &g.counter("contexts_created", "context", "channels opened by Hello");
    contexts_released = &g.counter("contexts_released", "context",
                                   "contexts freed (Goodbye or the client disconnected), with all they owned");
    bytes_mapped = &g.counter("bytes_mapped", "B", "device memory mapped by MemMap");
    bytes_unmapped = &g.counter("bytes_unmapped", "B", "device memory unmapped (MemUnmap or context release)");
    modules_loaded = &g.counter("modules_loaded", "module", "PTX modules parsed and placed");
    modules_unloaded = &g.counter("modules_unloaded", "module", "modules unloaded (explicitly or with a context)");
    module_load_failures = &g.counter("module_load_failures", "module", "LoadModule rejected as malformed PTX");
    kernels_launched = &g.counter("kernels_launched", "kernel", "kernel launches run");
    kernel_faults = &g.counter("kernel_faults", "kernel", "launches that ended in a fault or trap");
    kernels_cancelled = &g.counter("kernels_cancelled", "kernel",
                                   "launches stopped because their program disconnected mid-kernel");
    invalid_launches = &g.counter("invalid_launches", "launch", "launches refused (configuration, handle, arguments)");
    warp_instructions = &g.counter("warp_instructions", "warp-instr", "warp instructions executed");
    thread_instructions = &g.counter("thread_instructions", "thread-instr", "thread instructions executed");
    kernel_time = &g.counter("kernel_time", "ps",
                             "simulated time of kernels (timing model; estimated with sim.kernel_model=functional)");
    timing_fallbacks = &g.counter("timing_fallbacks", "kernel",
                                  "launches run on the functional model because a CTA did not fit the timing model's SM");
    texture_launches = &g.counter("texture_launches", "kernel",
                                  "launches of kernels with texture/surface instructions; each lane's fetch is timed as one "
                                  "L1 request at its footprint's first texel (approximation: the other texels of a "
                                  "filtered footprint are not requested)");
    printf_bytes = &g.counter("printf_bytes", "B", "device printf output delivered to printf buffers");
    printf_dropped = &g.counter("printf_dropped", "B", "device printf output dropped (buffer full or absent)");
    rejected = &g.counter("rejected_commands", "command", "commands answered with an error status");
    g.ratio("thread_instructions_per_warp_instruction", "SIMD efficiency: active lanes per warp instruction",
            *thread_instructions, *warp_instructions);

    stats::Group& d = registry.group("gpu.dma");
    dma_h2d = &d.counter("host_to_device_bytes", "B", "bytes the copy engine read from host memory");
    dma_d2h = &d.counter("device_to_host_bytes", "B", "bytes the copy engine wrote to host memory");
    copy_d2d = &d.counter("device_to_device_bytes", "B", "bytes copied within device memory");
    memset_bytes = &d.counter("memset_bytes", "B", "bytes set by Memset");
    dma_transactions = &d.counter("transactions", "transaction", "PCIe transactions issued by the copy engine");
    dma_address_errors = &d.counter("address_errors", "transaction",
                                    "DMA transactions refused by host memory (outside the channel's window)");
  }
};

CommandProcessor::CommandProcessor(sc_core::sc_module_name name, const PlatformParams& params, stats::Registry& stats,
                                   TraceObserver* tracer)
    : sc_module(name), command_in("command_in"), dma_out("dma_out"), params_(params), registry_(stats),
      stats_(std::make_unique<Stats>(stats)), runtime_stats_(std::make_unique<DeviceRuntimeStats>(stats)) {
  command_in.register_b_transport(this, &CommandProcessor::b_transport);
  if (params_.command_processor.kernel_model == KernelModel::kTiming) {
    timing_ = std::make_unique<GpuTiming>("timing", params_, ClockDomains::from(params_), stats, tracer);
  }
}

CommandProcessor::~CommandProcessor() = default;

size_t CommandProcessor::live_contexts() const {
  return static_cast<size_t>(std::count_if(contexts_.begin(), contexts_.end(), [](const auto& c) { return c != nullptr; }));
}

void CommandProcessor::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  CommandExtension* extension = nullptr;
  payload.get_extension(extension);
  if (extension == nullptr || !payload.is_write() || payload.get_data_length() != sizeof(device::Command) ||
      payload.get_byte_enable_ptr() != nullptr || extension->channel >= device::kMaxChannels) {
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  // Commands run in simulated time: catch up with the initiator's annotation first.
  if (delay != sc_core::SC_ZERO_TIME) {
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  device::Command command;
  std::memcpy(&command, payload.get_data_ptr(), sizeof command);
  Result result;
  try {
    result = execute(extension->channel, command, extension->cancelled);
  } catch (const std::exception& e) {
    // A bug must not take the platform down: report it on the command.
    result = Result::error(Status::InvalidCommand, std::string("internal error: ") + e.what());
  }
  if (result.status != Status::Ok) ++*stats_->rejected;
  extension->status = result.status;
  extension->value0 = result.value0;
  extension->value1 = result.value1;
  extension->message = std::move(result.message);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

CommandProcessor::Result CommandProcessor::execute(uint32_t channel, const device::Command& command,
                                                   const std::atomic<bool>* cancelled) {
  if (command.flags != 0) return Result::error(Status::InvalidCommand, "flags must be 0");
  const auto opcode = static_cast<Opcode>(command.opcode);
  if (opcode == Opcode::Hello) return hello(channel);
  if (opcode == Opcode::Goodbye) return goodbye(channel);
  Context* context = contexts_[channel].get();
  if (context == nullptr) return Result::error(Status::ChannelUnavailable, "channel not open (no Hello)");
  switch (opcode) {
    case Opcode::Nop: return Result::ok();
    case Opcode::MemMap: return mem_map(*context, command);
    case Opcode::MemUnmap: return mem_unmap(*context, command);
    case Opcode::MemMapHost: return mem_map_host(*context, channel, command);
    case Opcode::IpcExport: return ipc_export(*context, channel, command);
    case Opcode::IpcImport: return ipc_import(*context, channel, command);
    case Opcode::Memcpy: return memcpy(*context, channel, command);
    case Opcode::Memset: return memset(*context, command);
    case Opcode::LoadModule: return load_module(*context, channel, command);
    case Opcode::UnloadModule: return unload_module(*context, command);
    case Opcode::GetFunction: return get_function(*context, channel, command);
    case Opcode::GetSymbol: return get_symbol(*context, channel, command);
    case Opcode::Launch: return launch(*context, channel, command, cancelled);
    case Opcode::Prefetch: return prefetch(*context, command);
    case Opcode::MemAdvise: return mem_advise(*context, command);
    case Opcode::HostAccess: return host_access(*context, channel, command);
    case Opcode::SemaphoreSignal: return semaphore_signal(channel, command);
    case Opcode::DeviceHeap: return device_heap(*context, command);
    case Opcode::SemaphoreWait:
    case Opcode::HostWaiting:
      return Result::error(Status::NotSupported, "queue-level command: the host interface handles it");
    default: break;
  }
  return Result::error(Status::InvalidCommand, "unknown opcode " + std::to_string(command.opcode));
}

CommandProcessor::Result CommandProcessor::hello(uint32_t channel) {
  if (contexts_[channel] != nullptr) goodbye(channel);  // a stale context never leaks into a new one
  contexts_[channel] = std::make_unique<Context>();
  Context& context = *contexts_[channel];
  context.memory.set_before_change([this] { quiesce(); });
  context.runtime = std::make_unique<DeviceRuntimeService>(context.memory, params_.command_processor, *runtime_stats_);
  ++*stats_->contexts_created;
  return Result::ok(channel);
}

void CommandProcessor::quiesce() {
  if (timing_ != nullptr) timing_->quiesce();
}

void CommandProcessor::set_rank_exchange(parallel::RankExchange* exchange) {
  if (timing_ == nullptr) {
    throw std::invalid_argument("SM partitions in several ranks need the timing model (sim.kernel_model = timing)");
  }
  timing_->set_rank_exchange(exchange);
}

CommandProcessor::Result CommandProcessor::goodbye(uint32_t channel) {
  if (contexts_[channel] == nullptr) return Result::ok();
  quiesce();  // the context's memory goes
  drop_exports(channel, 0);  // other programs' imports of its memory go before its pages do
  std::unique_ptr<Context> context = std::move(contexts_[channel]);
  *stats_->bytes_unmapped += context->mapped_bytes;
  *stats_->modules_unloaded += context->modules.size();
  for (const auto& [base, bytes] : context->managed) timing_->uvm().unmap_managed(base);
  mapped_bytes_ -= context->mapped_bytes;
  ++*stats_->contexts_released;
  return Result::ok();  // the context's memory, modules and functions go with it
}

bool CommandProcessor::owns_range(const Context& context, uint64_t address, uint64_t bytes) const {
  auto inside = [&](const std::map<uint64_t, uint64_t>& ranges) {
    auto it = ranges.upper_bound(address);
    if (it == ranges.begin()) return false;
    --it;
    const uint64_t offset = address - it->first;
    return offset < it->second && bytes <= it->second - offset;
  };
  if (inside(context.allocations) || inside(context.variables)) return true;
  auto imported = context.imports.upper_bound(address);  // another program's memory (IPC)
  if (imported == context.imports.begin()) return false;
  --imported;
  const uint64_t offset = address - imported->first;
  return offset < imported->second.second && bytes <= imported->second.second - offset;
}

CommandProcessor::Result CommandProcessor::mem_map(Context& context, const device::Command& command) {
  const uint64_t size = command.body.generic.a;
  const uint64_t kind = command.body.generic.b;
  uint64_t alignment = command.body.generic.c == 0 ? 256 : command.body.generic.c;
  if (kind != static_cast<uint64_t>(device::MemoryKind::Device) &&
      kind != static_cast<uint64_t>(device::MemoryKind::Managed)) {
    return Result::error(Status::InvalidCommand, "MemMap: unknown memory kind " + std::to_string(kind));
  }
  if (size == 0) return Result::error(Status::InvalidCommand, "MemMap: size 0");
  if ((alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment) {
    return Result::error(Status::InvalidCommand, "MemMap: alignment " + std::to_string(alignment) +
                                                     " is not a power of two up to 1 GiB");
  }
  const uint64_t capacity = params_.hbm.capacity_bytes;
  if (size > capacity || mapped_bytes_ > capacity - size) {
    return Result::error(Status::OutOfMemory, "MemMap: " + std::to_string(size) + " bytes requested, " +
                                                  std::to_string(capacity - mapped_bytes_) + " of " +
                                                  std::to_string(capacity) + " free");
  }
  alignment = std::max<uint64_t>(alignment, 256);
  const uint64_t address = context.memory.allocate(size, alignment);
  context.allocations[address] = size;
  if (kind == static_cast<uint64_t>(device::MemoryKind::Managed) && timing_ != nullptr) {
    // Unified memory: the pages start on the host; the GMMU migrates them on first touch. Two
    // channels may hand out the same address; only the first is tracked (the other, like an
    // allocation that is not 4 KB aligned, behaves as device memory).
    try {
      timing_->uvm().map_managed(address, size);
      context.managed[address] = size;
    } catch (const std::invalid_argument&) {  // overlaps another channel's, or not page aligned
    }
  }
  context.mapped_bytes += size;
  mapped_bytes_ += size;
  *stats_->bytes_mapped += size;
  return Result::ok(address);
}

CommandProcessor::Result CommandProcessor::mem_map_host(Context& context, uint32_t channel,
                                                        const device::Command& command) {
  const uint64_t host_address = command.body.generic.a;
  const uint64_t bytes = command.body.generic.b;
  const uint64_t address = command.body.generic.c;
  constexpr uint64_t kPage = ptx::DeviceMemory::kPageBytes;
  if (bytes == 0 || host_address % kPage != 0 || address % kPage != 0 || address == 0) {
    return Result::error(Status::InvalidCommand, "MemMapHost: host " + hex(host_address) + ", device " + hex(address) +
                                                     ", " + std::to_string(bytes) + " bytes: want page-aligned, non-zero");
  }
  const uint64_t span = (bytes + kPage - 1) / kPage * kPage;
  if (address + span < address || host_address + span < host_address || !host_window_holds(channel, host_address, span)) {
    return Result::error(Status::InvalidAddress,
                         "MemMapHost: " + hex(host_address) + " + " + std::to_string(span) + " is outside the channel's window");
  }
  // A direct pointer to the channel's window slice: kernels read and write the host's bytes.
  DmaExtension extension;
  extension.channel = channel;
  tlm::tlm_generic_payload payload;
  payload.set_command(tlm::TLM_READ_COMMAND);
  payload.set_address(host_address);
  payload.set_data_length(static_cast<unsigned>(std::min<uint64_t>(span, 1u << 30)));
  payload.set_streaming_width(payload.get_data_length());
  payload.set_byte_enable_ptr(nullptr);
  payload.set_extension(&extension);
  tlm::tlm_dmi dmi;
  const bool direct = dma_out->get_direct_mem_ptr(payload, dmi);
  payload.clear_extension(&extension);
  if (!direct || dmi.get_start_address() > host_address || dmi.get_end_address() < host_address + span - 1 ||
      !dmi.is_read_write_allowed()) {
    return Result::error(Status::NotSupported, "MemMapHost: no direct access to the host memory at " + hex(host_address));
  }
  try {
    context.memory.map_foreign(address, span, dmi.get_dmi_ptr() + (host_address - dmi.get_start_address()));
  } catch (const std::invalid_argument& e) {
    return Result::error(Status::InvalidAddress, std::string("MemMapHost: ") + e.what());
  }
  context.host_mapped[address] = span;
  if (timing_ != nullptr) {
    // Timing: pages that live on the host and stay there, mapped by the device: every access
    // crosses the GMMU's PCIe link (a read's round trip, a posted write).
    try {
      timing_->uvm().map_managed(address, span);
      timing_->uvm().advise(address, span, static_cast<uint32_t>(device::MemAdvice::SetPreferredLocation),
                            static_cast<uint32_t>(device::AdviceLocation::Host));
      timing_->uvm().advise(address, span, static_cast<uint32_t>(device::MemAdvice::SetAccessedBy),
                            static_cast<uint32_t>(device::AdviceLocation::Device));
      context.managed[address] = span;
    } catch (const std::invalid_argument&) {
      // Another program maps memory at these addresses already (the GMMU tracks one owner per
      // address): this mapping's accesses are timed as device memory. Said, not silent.
      if (notice_) {
        notice_("warning: host memory mapped at " + hex(address) + " overlaps another program's mapping on the GMMU; "
                "its device accesses are timed as device memory, not over PCIe");
      }
    }
  }
  return Result::ok(address);
}

CommandProcessor::Result CommandProcessor::ipc_export(Context& context, uint32_t channel,
                                                      const device::Command& command) {
  const uint64_t address = command.body.generic.a;
  auto it = context.allocations.upper_bound(address);
  if (it == context.allocations.begin() || address - std::prev(it)->first >= std::prev(it)->second) {
    return Result::error(Status::InvalidAddress, "IpcExport: " + hex(address) + " is not in a device allocation of this channel");
  }
  --it;
  if (context.managed.count(it->first) != 0) {
    return Result::error(Status::InvalidCommand, "IpcExport: " + hex(address) + " is managed memory, which has no IPC handle");
  }
  for (const auto& [id, e] : exports_) {
    if (e.channel == channel && e.base == it->first) return Result::ok(id, e.base);  // one id per allocation
  }
  const uint64_t id = next_export_id_++;
  exports_[id] = Export{channel, it->first, it->second};
  return Result::ok(id, it->first);
}

CommandProcessor::Result CommandProcessor::ipc_import(Context& context, uint32_t channel,
                                                      const device::Command& command) {
  const uint64_t id = command.body.generic.a;
  const auto e = exports_.find(id);
  if (e == exports_.end()) {
    return Result::error(Status::InvalidHandle, "IpcImport: handle " + std::to_string(id) +
                                                    " names no memory: its program freed it or exited");
  }
  if (e->second.channel == channel) {
    return Result::error(Status::InvalidHandle, "IpcImport: handle " + std::to_string(id) + " was made by this program");
  }
  Context& owner = *contexts_[e->second.channel];
  const uint64_t bytes = e->second.bytes;
  const uint64_t span = (bytes + ptx::DeviceMemory::kPageBytes - 1) / ptx::DeviceMemory::kPageBytes * ptx::DeviceMemory::kPageBytes;
  const uint64_t address = context.memory.reserve(span);
  // The importer's pages are the exporter's pages: one copy of the data.
  for (uint64_t offset = 0; offset < span; offset += ptx::DeviceMemory::kPageBytes) {
    context.memory.map_foreign(address + offset, ptx::DeviceMemory::kPageBytes,
                               owner.memory.direct_page(e->second.base + offset));
  }
  context.imports[address] = {id, span};
  return Result::ok(address, bytes);
}

void CommandProcessor::drop_exports(uint32_t channel, uint64_t base) {
  for (auto e = exports_.begin(); e != exports_.end();) {
    if (e->second.channel != channel || (base != 0 && e->second.base != base)) {
      ++e;
      continue;
    }
    // Every import of it goes: later accesses through it fault.
    for (auto& other : contexts_) {
      if (other == nullptr) continue;
      for (auto i = other->imports.begin(); i != other->imports.end();) {
        if (i->second.first == e->first) {
          other->memory.unmap_foreign(i->first, i->second.second);
          i = other->imports.erase(i);
        } else {
          ++i;
        }
      }
    }
    e = exports_.erase(e);
  }
}

CommandProcessor::Result CommandProcessor::mem_unmap(Context& context, const device::Command& command) {
  const uint64_t address = command.body.generic.a;
  if (const auto imported = context.imports.find(address); imported != context.imports.end()) {
    context.memory.unmap_foreign(address, imported->second.second);
    context.imports.erase(imported);
    return Result::ok();
  }
  if (const auto host = context.host_mapped.find(address); host != context.host_mapped.end()) {
    if (context.managed.erase(address) != 0) timing_->uvm().unmap_managed(address);
    context.memory.unmap_foreign(address, host->second);
    context.host_mapped.erase(host);
    return Result::ok();
  }
  const auto it = context.allocations.find(address);
  if (it == context.allocations.end()) {
    return Result::error(Status::InvalidAddress, "MemUnmap: " + hex(address) + " is not a mapping of this channel");
  }
  if (context.managed.erase(address) != 0) timing_->uvm().unmap_managed(address);
  for (uint32_t c = 0; c < device::kMaxChannels; ++c) {
    if (contexts_[c].get() == &context) drop_exports(c, address);  // before its pages go
  }
  context.memory.release(address);
  context.mapped_bytes -= it->second;
  mapped_bytes_ -= it->second;
  *stats_->bytes_unmapped += it->second;
  context.allocations.erase(it);
  return Result::ok();
}

void CommandProcessor::wait_ps(double ps) {
  const auto rounded = static_cast<uint64_t>(std::llround(ps));
  if (rounded > 0) sc_core::wait(sc_core::sc_time::from_value(rounded));
}

bool CommandProcessor::dma(uint32_t channel, tlm::tlm_command command, uint64_t host_address, uint8_t* data,
                           uint64_t bytes) {
  const uint64_t chunk = std::max<uint64_t>(params_.command_processor.dma_transfer_bytes, 1);
  DmaExtension extension;
  extension.channel = channel;
  uint64_t done = 0;
  bool ok = true;
  do {
    const uint64_t length = std::min(chunk, bytes - done);
    if (host_address + done < host_address) return false;  // wraps
    tlm::tlm_generic_payload payload;
    payload.set_command(command);
    payload.set_address(host_address + done);
    payload.set_data_ptr(data + done);
    payload.set_data_length(static_cast<unsigned>(length));
    payload.set_streaming_width(static_cast<unsigned>(length));
    payload.set_byte_enable_ptr(nullptr);
    payload.set_dmi_allowed(false);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    payload.set_extension(&extension);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    dma_out->b_transport(payload, delay);
    payload.clear_extension(&extension);  // stack-owned: must not be freed by the payload
    ++*stats_->dma_transactions;
    if (!payload.is_response_ok()) {
      ++*stats_->dma_address_errors;
      ok = false;
    }
    if (delay != sc_core::SC_ZERO_TIME) sc_core::wait(delay);
    done += length;
  } while (ok && done < bytes);
  return ok;
}

bool CommandProcessor::dma_read(uint32_t channel, uint64_t host_address, void* data, uint64_t bytes) {
  const bool ok = dma(channel, tlm::TLM_READ_COMMAND, host_address, static_cast<uint8_t*>(data), bytes);
  if (ok) *stats_->dma_h2d += bytes;
  return ok;
}

bool CommandProcessor::host_window_holds(uint32_t channel, uint64_t host_address, uint64_t bytes) {
  if (bytes == 0) return true;
  if (host_address + bytes < host_address) return false;  // wraps
  DmaExtension extension;
  extension.channel = channel;
  for (const uint64_t address : {host_address, host_address + bytes - 1}) {
    uint8_t byte = 0;
    tlm::tlm_generic_payload payload;
    payload.set_command(tlm::TLM_READ_COMMAND);
    payload.set_address(address);
    payload.set_data_ptr(&byte);
    payload.set_data_length(1);
    payload.set_streaming_width(1);
    payload.set_byte_enable_ptr(nullptr);
    payload.set_extension(&extension);
    const unsigned int read = dma_out->transport_dbg(payload);
    payload.clear_extension(&extension);  // stack-owned
    if (read != 1) return false;
  }
  return true;
}

bool CommandProcessor::dma_write(uint32_t channel, uint64_t host_address, const void* data, uint64_t bytes) {
  // TLM data pointers are non-const; the target only reads on a write.
  const bool ok = dma(channel, tlm::TLM_WRITE_COMMAND, host_address,
                      const_cast<uint8_t*>(static_cast<const uint8_t*>(data)), bytes);
  if (ok) *stats_->dma_d2h += bytes;
  return ok;
}

CommandProcessor::Result CommandProcessor::memcpy(Context& context, uint32_t channel, const device::Command& command) {
  const uint64_t destination = command.body.generic.a;
  const uint64_t source = command.body.generic.b;
  const uint64_t bytes = command.body.generic.c;
  const uint64_t direction = command.body.generic.d;
  using device::CopyDirection;
  if (direction != static_cast<uint64_t>(CopyDirection::HostToDevice) &&
      direction != static_cast<uint64_t>(CopyDirection::DeviceToHost) &&
      direction != static_cast<uint64_t>(CopyDirection::DeviceToDevice)) {
    return Result::error(Status::InvalidCommand, "Memcpy: unknown direction " + std::to_string(direction));
  }
  if (bytes == 0) return Result::ok();
  const bool device_destination = direction != static_cast<uint64_t>(CopyDirection::DeviceToHost);
  const bool device_source = direction != static_cast<uint64_t>(CopyDirection::HostToDevice);
  if (device_destination && !owns_range(context, destination, bytes)) {
    return Result::error(Status::InvalidAddress, "Memcpy: destination " + hex(destination) + " + " +
                                                     std::to_string(bytes) + " is not mapped by this channel");
  }
  if (device_source && !owns_range(context, source, bytes)) {
    return Result::error(Status::InvalidAddress, "Memcpy: source " + hex(source) + " + " + std::to_string(bytes) +
                                                     " is not mapped by this channel");
  }
  if (direction != static_cast<uint64_t>(CopyDirection::DeviceToDevice)) {
    // The host reads or writes managed pages: they leave the device (dirty ones written back).
    const uint64_t host = device_destination ? source : destination;
    if (!host_window_holds(channel, host, bytes)) {
      return Result::error(Status::InvalidAddress, std::string("Memcpy: host ") +
                                                       (device_destination ? "source " : "destination ") + hex(host) +
                                                       " + " + std::to_string(bytes) + " is outside the channel's window");
    }
    host_touches_managed(context, device_destination ? destination : source, bytes, device_destination);
  }
  const uint64_t chunk = std::max<uint64_t>(params_.command_processor.dma_transfer_bytes, 1);
  std::vector<uint8_t> staging(std::min(bytes, chunk));
  if (direction == static_cast<uint64_t>(CopyDirection::DeviceToDevice)) {
    std::vector<uint8_t> all(bytes);  // memmove semantics for overlapping ranges
    context.memory.copy_from_device(all.data(), source, bytes);
    context.memory.copy_to_device(destination, all.data(), bytes);
    *stats_->copy_d2d += bytes;
    wait_ps(2.0 * static_cast<double>(bytes) / params_.hbm.peak_bandwidth() * 1e12);
    return Result::ok();
  }
  for (uint64_t done = 0; done < bytes; done += staging.size()) {
    const uint64_t length = std::min<uint64_t>(staging.size(), bytes - done);
    if (device_destination) {
      if (!dma_read(channel, source + done, staging.data(), length)) {
        return Result::error(Status::InvalidAddress, "Memcpy: host source " + hex(source) + " + " +
                                                         std::to_string(bytes) + " is outside the channel's window");
      }
      context.memory.copy_to_device(destination + done, staging.data(), length);
    } else {
      context.memory.copy_from_device(staging.data(), source + done, length);
      if (!dma_write(channel, destination + done, staging.data(), length)) {
        return Result::error(Status::InvalidAddress, "Memcpy: host destination " + hex(destination) + " + " +
                                                         std::to_string(bytes) + " is outside the channel's window");
      }
    }
  }
  return Result::ok();
}

CommandProcessor::Result CommandProcessor::memset(Context& context, const device::Command& command) {
  const uint64_t address = command.body.generic.a;
  const uint64_t bytes = command.body.generic.b;
  const uint64_t value = command.body.generic.c;
  if (value > 255) return Result::error(Status::InvalidCommand, "Memset: value " + std::to_string(value) + " > 255");
  if (bytes == 0) return Result::ok();
  if (!owns_range(context, address, bytes)) {
    return Result::error(Status::InvalidAddress,
                         "Memset: " + hex(address) + " + " + std::to_string(bytes) + " is not mapped by this channel");
  }
  context.memory.fill(address, static_cast<uint8_t>(value), bytes);
  *stats_->memset_bytes += bytes;
  wait_ps(static_cast<double>(bytes) / params_.hbm.peak_bandwidth() * 1e12);
  return Result::ok();
}

CommandProcessor::Result CommandProcessor::load_module(Context& context, uint32_t channel,
                                                       const device::Command& command) {
  const uint64_t address = command.body.generic.a;
  const uint64_t bytes = command.body.generic.b;
  if (bytes == 0 || bytes > kMaxModuleBytes) {
    return Result::error(Status::InvalidCommand, "LoadModule: image of " + std::to_string(bytes) +
                                                     " bytes (1 B .. 64 MiB)");
  }
  if (context.modules.size() >= kMaxModulesPerContext ||
      context.module_text_bytes + bytes > kMaxModuleBytesPerContext) {
    return Result::error(Status::OutOfMemory,
                         "LoadModule: this context holds " + std::to_string(context.modules.size()) + " modules of " +
                             std::to_string(context.module_text_bytes) + " bytes; at most " +
                             std::to_string(kMaxModulesPerContext) + " modules of " +
                             std::to_string(kMaxModuleBytesPerContext) + " bytes together (unload one first)");
  }
  std::string text(bytes, '\0');
  if (!dma_read(channel, address, text.data(), bytes)) {
    return Result::error(Status::InvalidAddress, "LoadModule: image " + hex(address) + " + " + std::to_string(bytes) +
                                                     " is outside the channel's window");
  }
  while (!text.empty() && text.back() == '\0') text.pop_back();  // C strings may come with their NUL
  const uint64_t handle = kModuleTag | context.next_handle++;
  const std::string file = "module" + std::to_string(handle & 0xffffffffu) + ".ptx";
  std::unique_ptr<ptx::LoadedModule> loaded;
  try {
    loaded = std::make_unique<ptx::LoadedModule>(ptx::Module::parse(text, file), context.memory);
  } catch (const std::exception& e) {
    ++*stats_->module_load_failures;
    return Result::error(Status::ModuleLoadFailed, e.what());
  }
  const auto& variables = loaded->module().variables();
  for (size_t i = 0; i < variables.size(); ++i) {
    context.variables[loaded->variable_addresses()[i]] = std::max<uint64_t>(variables[i].size, 1);
  }
  context.modules[handle] = Context::Module{std::move(loaded), bytes};
  context.module_text_bytes += bytes;
  ++*stats_->modules_loaded;
  return Result::ok(handle);
}

CommandProcessor::Result CommandProcessor::unload_module(Context& context, const device::Command& command) {
  const uint64_t handle = command.body.generic.a;
  const auto it = context.modules.find(handle);
  if (it == context.modules.end()) {
    return Result::error(Status::InvalidHandle, "UnloadModule: " + hex(handle) + " is not a module of this channel");
  }
  for (auto f = context.functions.begin(); f != context.functions.end();) {
    f = f->second.module == handle ? context.functions.erase(f) : std::next(f);
  }
  for (uint64_t address : it->second.loaded->variable_addresses()) {
    context.variables.erase(address);
    context.memory.release(address);
  }
  context.module_text_bytes -= it->second.text_bytes;
  context.modules.erase(it);
  ++*stats_->modules_unloaded;
  return Result::ok();
}

bool CommandProcessor::read_name(uint32_t channel, uint64_t host_address, uint64_t bytes, std::string& name,
                                 Result& error) {
  if (bytes == 0 || bytes > kMaxNameBytes) {
    error = Result::error(Status::InvalidCommand, "name of " + std::to_string(bytes) + " bytes (1 .. 4096)");
    return false;
  }
  name.assign(bytes, '\0');
  if (!dma_read(channel, host_address, name.data(), bytes)) {
    error = Result::error(Status::InvalidAddress, "name at " + hex(host_address) + " is outside the channel's window");
    return false;
  }
  name.resize(std::strlen(name.c_str()));  // a trailing NUL is allowed
  return true;
}

CommandProcessor::Result CommandProcessor::told_resources(const device::KernelResources& told,
                                                          const std::string& kernel_name,
                                                          ptx::KernelResources& resources, uint32_t& max_threads) const {
  using device::ResourceSource;
  const auto refuse = [&](const std::string& what) {
    return Result::error(Status::InvalidCommand, "GetFunction: " + kernel_name + ": " + what);
  };
  if (told.source == static_cast<uint32_t>(ResourceSource::NotTold)) {
    if (told.sass_arch != 0 || told.registers_per_thread != 0 || told.static_shared_bytes != 0 ||
        told.local_bytes_per_thread != 0 || told.max_threads_per_block != 0) {
      return refuse("resources given without a source (KernelResources::source 0 = not told)");
    }
    return Result::ok();
  }
  if (told.source > static_cast<uint32_t>(ResourceSource::CubinNearest)) {
    return refuse("unknown resource source " + std::to_string(told.source) + " (0 .. 2)");
  }
  if (told.sass_arch < 10 || told.sass_arch > 255) {
    return refuse("SASS architecture " + std::to_string(told.sass_arch) + " (major*10+minor, 10 .. 255)");
  }
  if (told.registers_per_thread == 0 || told.registers_per_thread > device::kMaxRegistersPerThread) {
    return refuse(std::to_string(told.registers_per_thread) + " registers per thread (1 .. " +
                  std::to_string(device::kMaxRegistersPerThread) + ")");
  }
  if (told.static_shared_bytes > params_.sm.shared_memory_bytes) {
    return refuse(std::to_string(told.static_shared_bytes) + " bytes of static shared memory exceed the " +
                  std::to_string(params_.sm.shared_memory_bytes) + " per SM");
  }
  if (told.local_bytes_per_thread > device::kMaxLocalBytesPerThread) {
    return refuse(std::to_string(told.local_bytes_per_thread) + " bytes of local memory per thread (at most " +
                  std::to_string(device::kMaxLocalBytesPerThread) + ")");
  }
  if (told.max_threads_per_block > kMaxThreadsPerBlock) {
    return refuse("thread limit " + std::to_string(told.max_threads_per_block) + " (at most " +
                  std::to_string(kMaxThreadsPerBlock) + ")");
  }
  resources.source = told.source == static_cast<uint32_t>(ResourceSource::CubinExact)
                         ? ptx::ResourceSource::kCubinExact
                         : ptx::ResourceSource::kCubinNearest;
  resources.sass_arch = told.sass_arch;
  resources.registers_per_thread = told.registers_per_thread;
  resources.static_shared_bytes = told.static_shared_bytes;
  resources.local_bytes_per_thread = told.local_bytes_per_thread;
  max_threads = told.max_threads_per_block;
  return Result::ok();
}

CommandProcessor::Result CommandProcessor::get_function(Context& context, uint32_t channel,
                                                        const device::Command& command) {
  const uint64_t module_handle = command.body.generic.a;
  const auto module = context.modules.find(module_handle);
  if (module == context.modules.end()) {
    return Result::error(Status::InvalidHandle, "GetFunction: " + hex(module_handle) + " is not a module of this channel");
  }
  std::string name;
  Result error;
  if (!read_name(channel, command.body.generic.b, command.body.generic.c, name, error)) return error;
  const ptx::Kernel* kernel = module->second.loaded->module().find_kernel(name);
  if (kernel == nullptr) return Result::error(Status::InvalidHandle, "GetFunction: no kernel '" + name + "' in the module");
  const uint64_t layout_address = command.body.generic.d;
  if (layout_address != 0) {
    std::vector<device::ParamLayout> layout;
    for (const auto& param : kernel->params) {
      if (layout.size() * sizeof(device::ParamLayout) >= device::kParamLayoutBytes) break;
      layout.push_back(device::ParamLayout{param.offset, param.size});
    }
    if (!layout.empty() && !dma_write(channel, layout_address, layout.data(), layout.size() * sizeof layout[0])) {
      return Result::error(Status::InvalidAddress, "GetFunction: layout buffer " + hex(layout_address) +
                                                       " is outside the channel's window");
    }
  }
  Context::Function function{module_handle, kernel, {}, 0};
  if (Result refused = told_resources(command.body.get_function.resources, kernel->name, function.resources,
                                      function.max_threads);
      refused.status != Status::Ok) {
    return refused;
  }
  const uint64_t handle = kFunctionTag | context.next_handle++;
  context.functions[handle] = function;
  return Result::ok(handle, (uint64_t{kernel->params.size()} << 32) | kernel->param_bytes);
}

CommandProcessor::Result CommandProcessor::get_symbol(Context& context, uint32_t channel,
                                                      const device::Command& command) {
  const uint64_t module_handle = command.body.generic.a;
  const auto module = context.modules.find(module_handle);
  if (module == context.modules.end()) {
    return Result::error(Status::InvalidHandle, "GetSymbol: " + hex(module_handle) + " is not a module of this channel");
  }
  std::string name;
  Result error;
  if (!read_name(channel, command.body.generic.b, command.body.generic.c, name, error)) return error;
  const auto symbol = module->second.loaded->symbol(name);
  if (!symbol) return Result::error(Status::InvalidHandle, "GetSymbol: no variable '" + name + "' in the module");
  return Result::ok(symbol->address, symbol->size);
}

CommandProcessor::Result CommandProcessor::launch(Context& context, uint32_t channel, const device::Command& command,
                                                  const std::atomic<bool>* cancelled) {
  const device::LaunchArgs& args = command.body.launch;
  auto refuse = [&](Status status, std::string message) {
    ++*stats_->invalid_launches;
    return Result::error(status, "Launch: " + std::move(message));
  };
  const auto function = context.functions.find(args.function);
  if (function == context.functions.end()) {
    return refuse(Status::InvalidHandle, hex(args.function) + " is not a function of this channel");
  }
  const ptx::Kernel& kernel = *function->second.kernel;
  const ptx::LoadedModule& module = *context.modules.at(function->second.module).loaded;
  const ptx::KernelResources& resources = function->second.resources;
  const bool told = resources.source != ptx::ResourceSource::kEstimate;
  if ((args.launch_flags & ~device::kKnownLaunchFlags) != 0) {
    return refuse(Status::InvalidCommand, "unknown launch flags " + hex(args.launch_flags));
  }
  const bool cooperative = (args.launch_flags & device::kLaunchCooperative) != 0;
  const auto dims = [](const uint32_t* d) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
  };
  if (args.block[0] == 0 || args.block[1] == 0 || args.block[2] == 0 || args.grid[0] == 0 || args.grid[1] == 0 ||
      args.grid[2] == 0) {
    return refuse(Status::InvalidLaunch, "zero dimension (grid " + dims(args.grid) + ", block " + dims(args.block) + ")");
  }
  if (args.block[0] > kMaxBlockX || args.block[1] > kMaxBlockY || args.block[2] > kMaxBlockZ) {
    return refuse(Status::InvalidLaunch, "block " + dims(args.block) + " exceeds 1024x1024x64");
  }
  const uint64_t threads = uint64_t{args.block[0]} * args.block[1] * args.block[2];
  const uint64_t thread_limit =
      std::min<uint64_t>({kMaxThreadsPerBlock, params_.sm.max_threads,
                          kernel.max_threads_per_cta > 0 ? static_cast<uint64_t>(kernel.max_threads_per_cta) : ~0ull,
                          function->second.max_threads > 0 ? uint64_t{function->second.max_threads} : ~0ull});
  if (threads > thread_limit) {
    return refuse(Status::InvalidLaunch, "block " + dims(args.block) + " has " + std::to_string(threads) +
                                             " threads; at most " + std::to_string(thread_limit));
  }
  if (args.grid[0] > kMaxGridX || args.grid[1] > kMaxGridYZ || args.grid[2] > kMaxGridYZ) {
    return refuse(Status::InvalidLaunch, "grid " + dims(args.grid) + " exceeds 2147483647x65535x65535");
  }
  const uint32_t static_shared = told ? resources.static_shared_bytes : kernel.static_shared_bytes;
  const uint64_t shared = uint64_t{static_shared} + args.dynamic_shared_bytes;
  if (shared > device::kDefaultSharedBytesPerBlock && args.dynamic_shared_bytes > args.max_dynamic_shared_bytes) {
    // (Completion messages are short: the attribute first.)
    return refuse(Status::InvalidLaunch, "MaxDynamicSharedMemorySize " + std::to_string(args.max_dynamic_shared_bytes) +
                                             " < " + std::to_string(args.dynamic_shared_bytes) + " dynamic + " +
                                             std::to_string(static_shared) + " static shared bytes > 48 KiB");
  }
  if (args.shared_carveout > 101) {
    return refuse(Status::InvalidLaunch, "shared memory carve-out preference " +
                                             std::to_string(int64_t{args.shared_carveout} - 1) + " % is not in 0..100");
  }
  if (shared > params_.sm.shared_memory_bytes) {
    return refuse(Status::InvalidLaunch, std::to_string(shared) + " bytes of shared memory (" +
                                             std::to_string(static_shared) + " static + " +
                                             std::to_string(args.dynamic_shared_bytes) + " dynamic) exceed the " +
                                             std::to_string(params_.sm.shared_memory_bytes) + " per SM");
  }
  if (told) {
    // By ptxas's figures a CTA that cannot be resident is refused, as hardware refuses it.
    const CtaFootprint cta{static_cast<uint32_t>(threads), resources.registers_per_thread, static_cast<uint32_t>(shared),
                           resources.local_bytes_per_thread};
    const Occupancy fit = occupancy(params_.sm, cta);
    if (fit.ctas_per_sm == 0) {
      return refuse(Status::LaunchOutOfResources, "too many resources requested: a CTA of " + std::to_string(threads) +
                                               " threads x " + std::to_string(cta.registers_per_thread) +
                                               " registers (sm_" + std::to_string(resources.sass_arch) + " SASS), " +
                                               std::to_string(shared) + " B shared does not fit on an SM (" +
                                               to_string(fit.limit) + ")");
    }
  }
  if (args.args_bytes != kernel.param_bytes) {
    return refuse(Status::InvalidLaunch, "argument buffer of " + std::to_string(args.args_bytes) + " bytes; " +
                                             kernel.name + " takes " + std::to_string(kernel.param_bytes));
  }
  const bool graph_node = (args.launch_flags & device::kLaunchGraphNode) != 0;
  if (args.printf_address != 0 && args.printf_bytes == 0) {
    return refuse(Status::InvalidCommand, "printf buffer of 0 bytes");
  }
  std::vector<uint8_t> params(args.args_bytes);
  if (!params.empty() && !dma_read(channel, args.args_address, params.data(), params.size())) {
    return refuse(Status::InvalidAddress, "argument buffer " + hex(args.args_address) + " is outside the channel's window");
  }

  std::string printed;
  uint64_t dropped = 0;
  const uint64_t printf_capacity = args.printf_address != 0 ? args.printf_bytes : 0;
  ptx::ExecutorOptions options;
  options.printf_sink = [&](std::string_view text) {
    if (printed.size() + text.size() <= printf_capacity) {
      printed.append(text);
    } else {
      dropped += text.size();
    }
  };
  options.instruction_limit = params_.command_processor.instruction_limit;
  options.sm_count = params_.sm.count;
  LaunchMemory memory(context.memory, cancelled);
  ptx::LaunchConfig config;
  config.grid = ptx::Dim3(args.grid[0], args.grid[1], args.grid[2]);
  config.block = ptx::Dim3(args.block[0], args.block[1], args.block[2]);
  config.dynamic_shared_bytes = args.dynamic_shared_bytes;
  config.shared_carveout_percent = static_cast<int32_t>(args.shared_carveout) - 1;
  config.cooperative = cooperative;
  if (cooperative) {
    // Every CTA must be resident at once, by the occupancy rule the CTA scheduler applies.
    CtaFootprint cta;
    if (told) {
      cta = CtaFootprint{static_cast<uint32_t>(threads), resources.registers_per_thread, static_cast<uint32_t>(shared),
                         resources.local_bytes_per_thread};
    } else {
      try {
        const ptx::KernelRun probe(memory, options, module, kernel, config, params);
        cta = footprint(probe);
      } catch (const std::exception& e) {
        return refuse(Status::InvalidLaunch, std::string("cooperative launch: ") + e.what());
      }
    }
    const Occupancy fit =
        occupancy(params_.sm, cta, params_.sm.shared_capacity(config.shared_carveout_percent, cta.shared_bytes));
    const uint64_t resident = uint64_t{fit.ctas_per_sm} * params_.sm.count;
    if (config.grid.count() > resident) {
      return refuse(Status::CooperativeLaunchTooLarge,
                    "cooperative grid of " + std::to_string(config.grid.count()) + " CTAs; at most " +
                        std::to_string(resident) + " resident (" + std::to_string(fit.ctas_per_sm) + "/SM, " +
                        to_string(fit.limit) + (told ? ")" : ", estimated registers)"));
    }
    if (context.grid_workspaces == 0) context.grid_workspaces = context.memory.allocate(kGridWorkspaces * 8, 256);
    if (context.grid_workspaces_in_use == ~0ull) {
      return refuse(Status::InvalidLaunch, std::to_string(kGridWorkspaces) + " cooperative kernels already running");
    }
    const int cell = __builtin_ctzll(~context.grid_workspaces_in_use);
    context.grid_workspaces_in_use |= 1ull << cell;
    config.grid_workspace = context.grid_workspaces + 8 * static_cast<uint64_t>(cell);
    context.memory.store<uint32_t>(config.grid_workspace, 8);      // wsSize
    context.memory.store<uint32_t>(config.grid_workspace + 4, 0);  // barrier
  }
  // Frees the grid workspace cell however the launch ends.
  struct WorkspaceRelease {
    Context& context;
    uint64_t address;
    ~WorkspaceRelease() {
      if (address != 0) context.grid_workspaces_in_use &= ~(1ull << ((address - context.grid_workspaces) / 8));
    }
  } workspace_release{context, config.grid_workspace};

  // Device runtime: the heap (the host names it; a kernel calling malloc first gets the default)
  // and the queue of child grids.
  DeviceRuntimeService& runtime = *context.runtime;
  if (!runtime.heap().established() && module_uses_heap(module)) establish_default_heap(context);
  options.device_runtime = &runtime;
  runtime.set_depth(0);
  double kernel_ps = 0;
  ptx::LaunchResult result =
      run_grid(context, module, kernel, resources, config, params, options, memory, 0, kernel_ps, graph_node);
  // Child grids (dynamic parallelism) run after the grid that launched them, in the order they
  // were launched (launches are serial steps: a fixed order), each gpu.device_launch.latency
  // after the previous grid ended; their children are queued behind them. The host's launch
  // completes when the last descendant has: a parent grid is complete only with its children.
  const double child_extra_ps = std::max(0.0, static_cast<double>(params_.command_processor.device_launch_latency_ps) -
                                                  static_cast<double>(params_.launch.launch_latency_ps));
  while (result.ok() && runtime.has_children() && !memory.is_cancelled()) {
    DeviceRuntimeService::Child child = runtime.take_child();
    if (child.launch.kernel == nullptr) {
      // A device-side cudaMemcpyAsync, in its place among the children (at HBM speed, read + write).
      const ptx::DeviceLaunch& copy = child.launch;
      std::vector<uint8_t> bytes(copy.copy_bytes);
      quiesce();  // write() is the executor's path: no before-change hook
      if (!memory.read(copy.copy_source, bytes.data(), bytes.size()) ||
          !memory.write(copy.copy_destination, bytes.data(), bytes.size())) {
        result.status = ptx::LaunchStatus::kIllegalAddress;
        result.message = "device cudaMemcpyAsync of " + std::to_string(copy.copy_bytes) + " bytes from " +
                         hex(copy.copy_source) + " to " + hex(copy.copy_destination) + ": illegal address";
        break;
      }
      *stats_->copy_d2d += copy.copy_bytes;
      const double copy_ps = 2.0 * static_cast<double>(copy.copy_bytes) / params_.hbm.peak_bandwidth() * 1e12;
      wait_ps(copy_ps);
      kernel_ps += copy_ps;
      continue;
    }
    const ptx::Kernel& child_kernel = *child.launch.kernel;
    ptx::KernelResources child_resources;
    for (const auto& [handle, f] : context.functions) {
      if (f.kernel == &child_kernel) {
        child_resources = f.resources;
        break;
      }
    }
    runtime.set_depth(child.depth);
    double child_ps = 0;
    result = run_grid(context, *child.launch.module, child_kernel, child_resources, child.launch.config,
                      child.launch.params, options, memory, child_extra_ps, child_ps);
    kernel_ps += child_ps;
    if (!result.ok()) result.message = "(child grid at depth " + std::to_string(child.depth) + ") " + result.message;
  }
  runtime.drop_children();
  runtime.set_depth(0);
  // The device runtime's time is an estimate: said once per platform, the first time it is used.
  if (notice_ && timing_ != nullptr) {
    if (!told_malloc_estimate_ && runtime_stats_->mallocs->value() + runtime_stats_->malloc_failures->value() +
                                          runtime_stats_->frees->value() != 0) {
      told_malloc_estimate_ = true;
      notice_("note: in-kernel malloc/free each hold their warp a fixed " +
              std::to_string(params_.command_processor.device_malloc_cycles) +
              " core cycles (gpu.device_malloc.latency; allocator contention is not modelled): their time is an "
              "estimate");
    }
    if (!told_launch_estimate_ && runtime_stats_->child_launches->value() != 0) {
      told_launch_estimate_ = true;
      notice_("note: child grids (dynamic parallelism) run after the grid that launched them, each "
              "gpu.device_launch.latency after the previous grid; overlap with their parent is not modelled: "
              "their time is an estimate");
    }
  }

  if (!printed.empty() && !dma_write(channel, args.printf_address, printed.data(), printed.size())) {
    return Result::error(Status::InvalidAddress, "Launch: printf buffer " + hex(args.printf_address) +
                                                     " is outside the channel's window");
  }
  *stats_->printf_bytes += printed.size();
  *stats_->printf_dropped += dropped;
  if (memory.is_cancelled()) {
    ++*stats_->kernels_cancelled;
    return Result::error(Status::ChannelUnavailable, "Launch: the channel was closed");
  }
  if (result.status != ptx::LaunchStatus::kSuccess && result.status != ptx::LaunchStatus::kInvalidLaunch) {
    KernelIncidents& incidents = incidents_of(kernel.name);
    if (incidents.faults++ == 0) {
      incidents.first_fault = result.message;
      if (notice_) notice_("kernel " + kernel.name + " faulted: " + result.message);
    }
  }
  switch (result.status) {
    case ptx::LaunchStatus::kSuccess: return Result::ok(printed.size(), dropped);
    case ptx::LaunchStatus::kInvalidLaunch: ++*stats_->invalid_launches; return Result::error(Status::InvalidLaunch, result.message);
    case ptx::LaunchStatus::kIllegalAddress:
    case ptx::LaunchStatus::kMisalignedAddress: ++*stats_->kernel_faults; return Result::error(Status::IllegalAddress, result.message);
    case ptx::LaunchStatus::kAssertFailed:
      // The prefix tells the runtime it is an assertion (cudaErrorAssert) however long the
      // source path before "Assertion" is: the completion record keeps only the message's start.
      ++*stats_->kernel_faults;
      return Result::error(Status::KernelTrap, std::string(device::kAssertMessagePrefix) + result.message);
    default: ++*stats_->kernel_faults; return Result::error(Status::KernelTrap, result.message);
  }
}

ptx::LaunchResult CommandProcessor::run_grid(Context& context, const ptx::LoadedModule& module,
                                             const ptx::Kernel& kernel, const ptx::KernelResources& resources,
                                             const ptx::LaunchConfig& config, const std::vector<uint8_t>& params,
                                             const ptx::ExecutorOptions& options, ptx::MemoryInterface& memory,
                                             double extra_launch_ps, double& kernel_ps, bool graph_node) {
  (void)context;
  const bool told = resources.source != ptx::ResourceSource::kEstimate;
  const uint64_t kernel_id = next_kernel_id_++;
  registry_.begin_kernel(kernel_id, kernel.name);
  progress::kernel_begin(kernel_id, kernel.name,
                         static_cast<uint64_t>(config.grid.x) * config.grid.y * config.grid.z);
  ++*stats_->kernels_launched;
  if (kernel.uses_textures) ++*stats_->texture_launches;
  ptx::LaunchResult result;
  kernel_ps = 0;
  bool timed = false;
  try {
    if (timing_ != nullptr) {
      ptx::KernelRun run(memory, options, module, kernel, config, params);
      run.set_resources(resources);
      if (!told && incidents_of(kernel.name).estimated++ == 0 && notice_) {
        notice_("warning: kernel " + kernel.name + ": registers per thread estimated from the PTX (no SASS resources "
                "told with GetFunction, e.g. no cubin of this device's major architecture); occupancy is approximate");
      }
      try {
        // A child grid: the device launch costs more than the host's front end already charges.
        wait_ps(extra_launch_ps);
        kernel_ps = extra_launch_ps + static_cast<double>(timing_->run(run, kernel_id, graph_node).ps);
        timed = true;
        result = run.finish();
      } catch (const std::invalid_argument& e) {
        kernel_ps = 0;
        // Estimated registers may overstate what ptxas allocates; rather than refusing a launch
        // real hardware may accept, run it functionally, and say so.
        ++*stats_->timing_fallbacks;
        KernelIncidents& incidents = incidents_of(kernel.name);
        if (incidents.fallbacks++ == 0) {
          incidents.fallback_reason = std::string(e.what()) + (told ? "" : " by the estimated registers");
          if (notice_) {
            notice_("warning: kernel " + kernel.name + " runs on the functional model, not the timing model (its time is "
                    "an estimate): " + incidents.fallback_reason);
          }
        }
      }
    }
    if (!timed) {
      ptx::Executor executor(memory, options);
      result = executor.launch(module, kernel, config, params);
    }
  } catch (const std::exception& e) {
    result.status = ptx::LaunchStatus::kInvalidInstruction;
    result.message = e.what();
  }
  *stats_->warp_instructions += result.warp_instructions;
  *stats_->thread_instructions += result.thread_instructions;
  if (!timed) {
    // Functional model only: one warp instruction per sub-core per cycle, plus the launch and
    // completion latencies a timed kernel pays (gpu.launch.*).
    const double issue_slots = static_cast<double>(params_.sm.count) * params_.sm.subcores;
    const double cycles = std::max(1.0, std::ceil(static_cast<double>(result.warp_instructions) / issue_slots));
    const uint64_t launch_ps = graph_node ? params_.launch.graph_launch_latency_ps : params_.launch.launch_latency_ps;
    kernel_ps = cycles / params_.sm.clock_hz * 1e12 +
                static_cast<double>(launch_ps + params_.launch.completion_latency_ps) + extra_launch_ps;
    wait_ps(kernel_ps);
  }
  *stats_->kernel_time += static_cast<uint64_t>(std::llround(kernel_ps));
  if (!timed) progress::kernel_end(kernel_id, sc_core::sc_time_stamp().value());  // else GpuTiming::run did
  registry_.end_kernel(kernel_id);
  return result;
}

CommandProcessor::Result CommandProcessor::device_heap(Context& context, const device::Command& command) {
  const uint64_t address = command.body.generic.a;
  const uint64_t bytes = command.body.generic.b;
  if (context.runtime->heap().established()) {
    return Result::error(Status::InvalidCommand, "DeviceHeap: the channel's device heap is already set (" +
                                                     std::to_string(context.runtime->heap().bytes()) + " bytes)");
  }
  if (bytes < ptx::DeviceHeap::kGranule) {
    return Result::error(Status::InvalidCommand, "DeviceHeap: " + std::to_string(bytes) + " bytes (at least 16)");
  }
  auto it = context.allocations.upper_bound(address);
  if (it == context.allocations.begin() || (--it, address - it->first >= it->second) ||
      bytes > it->second - (address - it->first)) {
    return Result::error(Status::InvalidAddress, "DeviceHeap: " + hex(address) + " + " + std::to_string(bytes) +
                                                     " is not inside one mapping of this channel");
  }
  context.runtime->heap().reset(address, bytes);
  return Result::ok();
}

void CommandProcessor::establish_default_heap(Context& context) {
  constexpr uint64_t kDefaultHeapBytes = uint64_t{8} << 20;  // CUDA's default cudaLimitMallocHeapSize
  const uint64_t address = context.memory.allocate(kDefaultHeapBytes, 4096);
  context.allocations[address] = kDefaultHeapBytes;
  context.mapped_bytes += kDefaultHeapBytes;
  mapped_bytes_ += kDefaultHeapBytes;
  *stats_->bytes_mapped += kDefaultHeapBytes;
  context.runtime->heap().reset(address, kDefaultHeapBytes);
}

KernelIncidents& CommandProcessor::incidents_of(const std::string& kernel) {
  const auto [it, fresh] = incident_index_.try_emplace(kernel, incidents_.size());
  if (fresh) {
    incidents_.emplace_back();
    incidents_.back().kernel = kernel;
  }
  return incidents_[it->second];
}

CommandProcessor::Result CommandProcessor::prefetch(Context& context, const device::Command& command) {
  const uint64_t address = command.body.generic.a;
  const uint64_t bytes = command.body.generic.b;
  if (command.body.generic.c > 1) {
    return Result::error(Status::InvalidCommand, "Prefetch: destination " + std::to_string(command.body.generic.c) +
                                                     " (0 = device, 1 = host)");
  }
  if (bytes != 0 && !owns_range(context, address, bytes)) {
    return Result::error(Status::InvalidAddress,
                         "Prefetch: " + hex(address) + " + " + std::to_string(bytes) + " is not mapped by this channel");
  }
  // The values are already where the functional model reads them; the GMMU moves the pages'
  // residency (and takes the PCIe time) for the managed part of the range.
  if (bytes != 0 && timing_ != nullptr) {
    for (const auto& [base, size] : context.managed) {
      const uint64_t lo = std::max(base, address);
      const uint64_t hi = std::min(base + size, address + bytes);
      if (lo < hi) timing_->uvm().prefetch(lo, hi - lo, command.body.generic.c == 0);
    }
  }
  return Result::ok();
}

void CommandProcessor::host_touches_managed(Context& context, uint64_t address, uint64_t bytes, bool write) {
  if (timing_ == nullptr) return;
  for (const auto& [base, size] : context.managed) {
    const uint64_t lo = std::max(base, address);
    const uint64_t hi = std::min(base + size, address + bytes);
    if (lo < hi) timing_->uvm().host_access(lo, hi - lo, write);
  }
}

CommandProcessor::Result CommandProcessor::mem_advise(Context& context, const device::Command& command) {
  const uint64_t address = command.body.generic.a;
  const uint64_t bytes = command.body.generic.b;
  const uint64_t advice = command.body.generic.c;
  const uint64_t location = command.body.generic.d;
  if (advice < static_cast<uint64_t>(device::MemAdvice::SetReadMostly) ||
      advice > static_cast<uint64_t>(device::MemAdvice::UnsetAccessedBy)) {
    return Result::error(Status::InvalidCommand, "MemAdvise: unknown advice " + std::to_string(advice) +
                                                     " (1..6, as cudaMemoryAdvise)");
  }
  if (location > static_cast<uint64_t>(device::AdviceLocation::Host)) {
    return Result::error(Status::InvalidCommand,
                         "MemAdvise: unknown location " + std::to_string(location) + " (0 = device, 1 = host)");
  }
  if (bytes == 0) return Result::error(Status::InvalidCommand, "MemAdvise: 0 bytes");
  if (!owns_range(context, address, bytes)) {
    return Result::error(Status::InvalidAddress,
                         "MemAdvise: " + hex(address) + " + " + std::to_string(bytes) + " is not mapped by this channel");
  }
  if (timing_ != nullptr) {
    for (const auto& [base, size] : context.managed) {
      const uint64_t lo = std::max(base, address);
      const uint64_t hi = std::min(base + size, address + bytes);
      if (lo < hi) timing_->uvm().advise(lo, hi - lo, static_cast<uint32_t>(advice), static_cast<uint32_t>(location));
    }
  }
  return Result::ok();
}

CommandProcessor::Result CommandProcessor::host_access(Context& context, uint32_t channel,
                                                       const device::Command& command) {
  const uint64_t address = command.body.generic.a;
  const uint64_t bytes = command.body.generic.b;
  const uint64_t kind = command.body.generic.c;
  const uint64_t host = command.body.generic.d;
  if (kind > static_cast<uint64_t>(device::HostAccessKind::Write)) {
    return Result::error(Status::InvalidCommand, "HostAccess: unknown access " + std::to_string(kind) +
                                                     " (0 = read, 1 = write)");
  }
  if (bytes == 0) return Result::error(Status::InvalidCommand, "HostAccess: 0 bytes");
  if (!owns_range(context, address, bytes)) {
    return Result::error(Status::InvalidAddress,
                         "HostAccess: " + hex(address) + " + " + std::to_string(bytes) + " is not mapped by this channel");
  }
  if (host != 0 && !host_window_holds(channel, host, bytes)) {
    return Result::error(Status::InvalidAddress, "HostAccess: host buffer " + hex(host) + " + " + std::to_string(bytes) +
                                                     " is outside the channel's window");
  }
  host_touches_managed(context, address, bytes, kind == static_cast<uint64_t>(device::HostAccessKind::Write));
  if (host != 0) {
    // The values go to the host's copy through the copy engine, in gpu.dma.max_transfer pieces.
    const uint64_t chunk = std::max<uint64_t>(params_.command_processor.dma_transfer_bytes, 1);
    std::vector<uint8_t> staging(std::min(bytes, chunk));
    for (uint64_t done = 0; done < bytes; done += staging.size()) {
      const uint64_t length = std::min<uint64_t>(staging.size(), bytes - done);
      context.memory.copy_from_device(staging.data(), address + done, length);
      if (!dma_write(channel, host + done, staging.data(), length)) {
        return Result::error(Status::InvalidAddress, "HostAccess: host buffer " + hex(host) + " + " +
                                                         std::to_string(bytes) + " is outside the channel's window");
      }
    }
  }
  return Result::ok();
}

CommandProcessor::Result CommandProcessor::semaphore_signal(uint32_t channel, const device::Command& command) {
  const uint64_t cell = command.body.generic.a;
  const uint64_t value = command.body.generic.b;
  if (cell % 8 != 0) return Result::error(Status::InvalidAddress, "SemaphoreSignal: cell " + hex(cell) + " is not 8-byte aligned");
  // The timestamp first, so that a host that sees the value also sees its time.
  const uint64_t now_ps = sc_core::sc_time_stamp().value();
  if (!dma_write(channel, cell + 8, &now_ps, sizeof now_ps) || !dma_write(channel, cell, &value, sizeof value)) {
    return Result::error(Status::InvalidAddress, "SemaphoreSignal: cell " + hex(cell) + " is outside the channel's window");
  }
  return Result::ok();
}

}  // namespace gpuvp::gpu
