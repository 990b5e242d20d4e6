// The GPU front end: decodes and validates the commands the host interface (the bridge) hands
// it, runs the copy engine over the PCIe link, and launches kernels. With sim.kernel_model =
// timing (the default) a launch runs on the GPU timing top level (models/gpu/gpu_timing, owned
// here): the kernel's simulated time and cycles come from the SMs, crossbar, L2 and HBM, its
// values from the functional model stepped by the SMs. With `functional` the PTX executor runs it
// alone and it takes an estimated time of one warp instruction per SM sub-core per core cycle.
// Kernel resources (registers, static shared and local memory per thread) are what the host read
// from the kernel's SASS and told with GetFunction; the device validates them, refuses a launch
// whose CTA cannot be resident by them (as hardware does), and the CTA scheduler sizes occupancy
// by them. A kernel told nothing gets registers estimated from its PTX, with one warning per
// kernel name on stderr; if its CTA does not fit on an SM by that estimate it falls back to the
// functional model (counted in gpu.command_processor.timing_fallbacks, listed by incidents(),
// and told to the notice sink once per kernel name).
//
//   command_in  <- bridge::Bridge::command_out    (transactions.h: Command + CommandExtension)
//   dma_out     -> uvm::PcieLink::device_in        (DMA reads/writes of host memory + DmaExtension)
//
// Each channel is one context (like a CUDA context): its own device address space, mappings,
// modules and functions; Hello creates it, Goodbye (also sent by the bridge when a client
// disconnects) frees all of it. Every field of every command is checked: handles must belong to
// the channel, device ranges must lie inside one of the channel's mappings or module variables,
// host ranges are checked by the host memory target (its window slice).
//
// Statistics: gpu.command_processor (kernels, instructions, modules, mappings, contexts) and
// gpu.dma (bytes per direction, transactions, address errors).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "gpuvp/device.h"
#include "models/gpu/command_processor/device_runtime_service.h"
#include "models/gpu/command_processor/kernel_incidents.h"
#include "models/gpu/command_processor/transactions.h"
#include "models/gpu/ptx/kernel_resources.h"
#include "models/tlm/trace_observer.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::parallel {
class RankExchange;
}

namespace gpuvp::gpu {

class GpuTiming;

class CommandProcessor : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<CommandProcessor> command_in;
  tlm_utils::simple_initiator_socket<CommandProcessor> dma_out;

  // `tracer` (optional) is handed to the timing model (see GpuTiming).
  CommandProcessor(sc_core::sc_module_name name, const PlatformParams& params, stats::Registry& stats,
                   TraceObserver* tracer = nullptr);
  ~CommandProcessor() override;
  CommandProcessor(const CommandProcessor&) = delete;
  CommandProcessor& operator=(const CommandProcessor&) = delete;

  // Contexts alive now and device bytes mapped by all of them (tests, reports).
  size_t live_contexts() const;
  uint64_t mapped_bytes() const { return mapped_bytes_; }

  // Timing-model fallbacks and faults per kernel name, in order of first occurrence (read while
  // the simulation does not run).
  const std::vector<KernelIncidents>& incidents() const { return incidents_; }
  // Gets one line the first time each kernel name falls back to the functional model and the
  // first time each faults (the platform prints it on stderr). None by default.
  void set_notice_sink(std::function<void(const std::string&)> sink) { notice_ = std::move(sink); }
  // Finishes a window the timing model's SMs may be running on other host threads
  // (models/gpu/sm/sm_stepper.h): call before reading or changing model state from outside the
  // simulation's own processes. Device memory's host-side changes call it themselves.
  void quiesce();
  // SM partitions in several ranks (GpuTiming::set_rank_exchange; the timing model only: throws
  // std::invalid_argument with sim.kernel_model = functional).
  void set_rank_exchange(parallel::RankExchange* exchange);

 private:
  struct Context;
  struct Result;
  struct Stats;

  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  Result execute(uint32_t channel, const device::Command& command, const std::atomic<bool>* cancelled);

  Result hello(uint32_t channel);
  Result goodbye(uint32_t channel);
  Result mem_map(Context& context, const device::Command& command);
  Result mem_unmap(Context& context, const device::Command& command);
  // MemMapHost: the channel's host memory at a device address, accessed in place (zero copy).
  Result mem_map_host(Context& context, uint32_t channel, const device::Command& command);
  // IPC: one channel's device allocation seen by another (same pages, no copy).
  Result ipc_export(Context& context, uint32_t channel, const device::Command& command);
  Result ipc_import(Context& context, uint32_t channel, const device::Command& command);
  // Forgets the exports of `channel` (of the allocation at `base`; 0: all) and unmaps their imports.
  void drop_exports(uint32_t channel, uint64_t base);
  Result memcpy(Context& context, uint32_t channel, const device::Command& command);
  Result memset(Context& context, const device::Command& command);
  Result load_module(Context& context, uint32_t channel, const device::Command& command);
  Result unload_module(Context& context, const device::Command& command);
  Result get_function(Context& context, uint32_t channel, const device::Command& command);
  // Validates the resources GetFunction told for `kernel_name`; fills `resources` and `max_threads`.
  Result told_resources(const device::KernelResources& told, const std::string& kernel_name,
                        ptx::KernelResources& resources, uint32_t& max_threads) const;
  // One line on stderr per kernel name and platform: what was approximated for it.
  Result get_symbol(Context& context, uint32_t channel, const device::Command& command);
  Result launch(Context& context, uint32_t channel, const device::Command& command,
                const std::atomic<bool>* cancelled);
  Result prefetch(Context& context, const device::Command& command);
  Result mem_advise(Context& context, const device::Command& command);
  Result host_access(Context& context, uint32_t channel, const device::Command& command);
  // The host reads (write = false) or writes managed [address, address + bytes): its pages go
  // back to the host or are read-duplicated (unified memory).
  void host_touches_managed(Context& context, uint64_t address, uint64_t bytes, bool write);
  Result semaphore_signal(uint32_t channel, const device::Command& command);
  Result device_heap(Context& context, const device::Command& command);
  // Maps `bytes` for the context's device heap (the default one, when a kernel calls malloc
  // before the host named a heap).
  void establish_default_heap(Context& context);
  // One grid on the timing model (or the functional one); its time in `kernel_ps`. `graph_node`:
  // a kernel node of a launched CUDA graph (gpu.launch.graph_latency instead of gpu.launch.latency).
  ptx::LaunchResult run_grid(Context& context, const ptx::LoadedModule& module, const ptx::Kernel& kernel,
                             const ptx::KernelResources& resources, const ptx::LaunchConfig& config,
                             const std::vector<uint8_t>& params, const ptx::ExecutorOptions& options,
                             ptx::MemoryInterface& memory, double extra_launch_ps, double& kernel_ps,
                             bool graph_node = false);

  // Copy engine: host memory through the PCIe link, in gpu.dma.max_transfer pieces; waits for
  // each transaction's delay. False when the host memory target refused an address.
  bool dma_read(uint32_t channel, uint64_t host_address, void* data, uint64_t bytes);
  bool dma_write(uint32_t channel, uint64_t host_address, const void* data, uint64_t bytes);
  bool dma(uint32_t channel, tlm::tlm_command command, uint64_t host_address, uint8_t* data, uint64_t bytes);
  // Whether `bytes` at `host_address` lie in the channel's DMA window: untimed debug reads of the
  // first and last byte (the window is contiguous), so a bad buffer is refused before any state
  // -- managed pages' residency -- changes.
  bool host_window_holds(uint32_t channel, uint64_t host_address, uint64_t bytes);
  // Reads a name (function or symbol) of 1..4096 bytes from host memory.
  bool read_name(uint32_t channel, uint64_t host_address, uint64_t bytes, std::string& name, Result& error);
  // True when [address, address + bytes) lies inside one mapping or module variable of `context`.
  bool owns_range(const Context& context, uint64_t address, uint64_t bytes) const;
  void wait_ps(double ps);

  PlatformParams params_;
  std::unique_ptr<GpuTiming> timing_;  // null with sim.kernel_model = functional
  std::array<std::unique_ptr<Context>, device::kMaxChannels> contexts_;
  uint64_t mapped_bytes_ = 0;
  uint64_t next_kernel_id_ = 1;
  struct Export {
    uint32_t channel = 0;
    uint64_t base = 0;
    uint64_t bytes = 0;
  };
  std::map<uint64_t, Export> exports_;  // IPC export id -> exported allocation
  uint64_t next_export_id_ = 1;
  stats::Registry& registry_;
  std::unique_ptr<Stats> stats_;
  std::unique_ptr<DeviceRuntimeStats> runtime_stats_;
  bool told_malloc_estimate_ = false;  // the notices of the device runtime's estimated time, once each
  bool told_launch_estimate_ = false;
  KernelIncidents& incidents_of(const std::string& kernel);
  std::vector<KernelIncidents> incidents_;
  std::map<std::string, size_t> incident_index_;  // kernel name -> position in incidents_
  std::function<void(const std::string&)> notice_;
};

}  // namespace gpuvp::gpu
