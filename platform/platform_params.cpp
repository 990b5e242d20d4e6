#include "platform/platform_params.h"

#include <string>

namespace gpuvp {
namespace {

// Where a knob's value came from, for messages about rules between knobs.
std::string where(const config::Config& config, const char* knob) {
  const auto index = config.registry().find(knob);
  return index ? config.origin(*index).describe() : std::string("?");
}

}  // namespace

config::KnobRegistry build_knob_registry() {
  config::KnobRegistry registry;
  config::declare_knobs<gpu::DeviceParams>(registry);
  config::declare_knobs<gpu::SmParams>(registry);
  config::declare_knobs<gpu::LaunchParams>(registry);
  config::declare_knobs<gpu::CrossbarParams>(registry);
  config::declare_knobs<memory::L2Params>(registry);
  config::declare_knobs<memory::HbmParams>(registry);
  config::declare_knobs<uvm::PcieParams>(registry);
  config::declare_knobs<uvm::UvmParams>(registry);
  config::declare_knobs<gpu::CommandProcessorParams>(registry);
  config::declare_knobs<bridge::BridgeParams>(registry);
  config::declare_knobs<bridge::HostParams>(registry);
  config::declare_knobs<SimParams>(registry);
  return registry;
}

PlatformParams PlatformParams::load(const config::Config& config) {
  PlatformParams p;
  p.device = config::load_params<gpu::DeviceParams>(config);
  p.sm = config::load_params<gpu::SmParams>(config);
  p.launch = config::load_params<gpu::LaunchParams>(config);
  p.crossbar = config::load_params<gpu::CrossbarParams>(config);
  p.l2 = config::load_params<memory::L2Params>(config);
  p.hbm = config::load_params<memory::HbmParams>(config);
  p.pcie = config::load_params<uvm::PcieParams>(config);
  p.uvm = config::load_params<uvm::UvmParams>(config);
  p.command_processor = config::load_params<gpu::CommandProcessorParams>(config);
  p.bridge = config::load_params<bridge::BridgeParams>(config);
  p.host = config::load_params<bridge::HostParams>(config);
  p.sim = config::load_params<SimParams>(config);

  std::vector<config::Diagnostic> errors;
  auto rule = [&](bool holds, const char* knob, std::string message) {
    if (!holds) errors.push_back({where(config, knob), knob, std::move(message)});
  };
  rule(p.sm.max_threads % 32 == 0, "gpu.sm.max_threads", "must be a multiple of the warp size (32)");
  rule((p.sm.const_line & (p.sm.const_line - 1)) == 0, "gpu.sm.const_cache.line", "must be a power of two (32, 64 or 128)");
  rule((p.sm.icache_line & (p.sm.icache_line - 1)) == 0, "gpu.sm.icache.line", "must be a power of two (32, 64 or 128)");
  if (p.sm.unified_l1_shared_bytes != 0) {
    rule(p.sm.shared_memory_bytes + p.sm.l1_bytes == p.sm.unified_l1_shared_bytes, "gpu.sm.unified_l1_shared",
         "must equal gpu.sm.shared_memory + gpu.sm.l1.size (the default split), or be 0 B (separate L1)");
    const std::vector<uint64_t> carveouts = p.sm.carveout_bytes();
    bool ascending = !carveouts.empty();
    for (size_t i = 0; i < carveouts.size(); ++i) {
      ascending = ascending && (i == 0 || carveouts[i] > carveouts[i - 1]) && carveouts[i] <= p.sm.shared_memory_bytes;
    }
    rule(ascending, "gpu.sm.shared_carveouts",
         "must be ascending whole KiB numbers, comma-separated, none above gpu.sm.shared_memory");
  }
  {
    // Windowed SM stepping: no response can come back sooner than an L2 hit (the lookahead).
    const uint64_t lookahead = p.sm.lookahead_cycles(p.l2.hit_latency, p.l2.clock_hz);
    rule(p.sm.window <= lookahead, "sim.window",
         "must be at most the lookahead of " + std::to_string(lookahead) +
             " core cycles (memory.l2.hit_latency in core cycles: the shortest memory round trip)");
  }
  if (p.hbm.partition && p.sm.window > 1) {
    // The HBM partition runs up to a phase's start beside it; what it answers must still be
    // ahead of SystemC time two phases on.
    const double two_windows_ps = 2e12 * p.sm.window / p.sm.clock_hz;
    rule(p.hbm.response_lookahead_ps() > two_windows_ps, "memory.hbm.partition",
         "needs memory.hbm.controller_latency + (min(t_cl, t_wl) + burst_length/2) HBM cycles (" +
             std::to_string(static_cast<uint64_t>(p.hbm.response_lookahead_ps())) +
             " ps) above two sim.window (" + std::to_string(static_cast<uint64_t>(two_windows_ps)) + " ps)");
  }
  rule(p.sm.fp32_lanes % p.sm.subcores == 0, "gpu.sm.fp32_lanes",
       "must divide evenly among gpu.sm.subcores (" + std::to_string(p.sm.subcores) + ")");
  rule(p.l2.line_bytes % p.l2.sector_bytes == 0, "memory.l2.line_size",
       "must be a whole number of sectors (memory.l2.sector_size)");
  rule(p.l2.slice_bytes % p.l2.line_bytes == 0, "memory.l2.slice_size",
       "must be a whole number of lines (memory.l2.line_size)");
  const uint64_t channels = uint64_t{p.hbm.stacks} * p.hbm.channels_per_stack;
  rule(p.hbm.capacity_bytes % channels == 0, "memory.hbm.capacity",
       "must divide evenly among the " + std::to_string(channels) + " HBM channels");
  // The memory-side timing model's geometry (models/memory): whole sets, rows and bursts; only
  // checked once lines and sectors tile (one mistake, one message).
  const bool lines_tile = p.l2.line_bytes % p.l2.sector_bytes == 0 && p.l2.slice_bytes % p.l2.line_bytes == 0;
  if (lines_tile) {
    rule(p.l2.slice_bytes % (uint64_t{p.l2.associativity} * p.l2.line_bytes) == 0, "memory.l2.associativity",
         "memory.l2.slice_size must be a whole number of sets of associativity x line_size");
    rule(p.l2.line_bytes / p.l2.sector_bytes <= 8, "memory.l2.sector_size", "at most 8 sectors per line");
    rule(p.hbm.row_bytes % p.l2.line_bytes == 0, "memory.hbm.row_size",
         "must be a whole number of L2 lines (memory.l2.line_size)");
    const uint64_t burst = uint64_t{p.hbm.channel_width_bits} / p.hbm.pseudo_channels / 8 * p.hbm.burst_length;
    rule(burst != 0 && p.l2.line_bytes % burst == 0, "memory.hbm.burst_length",
         "an L2 line must be a whole number of bursts (channel width / pseudo-channels / 8 x burst length)");
    const uint64_t bank_row_bytes =
        channels * p.hbm.pseudo_channels * p.hbm.bank_groups * p.hbm.banks_per_group * p.hbm.row_bytes;
    rule(p.hbm.capacity_bytes % bank_row_bytes == 0, "memory.hbm.capacity",
         "must be a whole number of rows in every bank of every pseudo-channel");
  }
  rule(p.uvm.l1_tlb_associativity <= p.uvm.l1_tlb_entries && p.uvm.l1_tlb_entries % p.uvm.l1_tlb_associativity == 0,
       "uvm.l1_tlb.associativity", "must divide uvm.l1_tlb.entries (a whole number of sets)");
  rule(p.uvm.l2_tlb_associativity <= p.uvm.l2_tlb_entries && p.uvm.l2_tlb_entries % p.uvm.l2_tlb_associativity == 0,
       "uvm.l2_tlb.associativity", "must divide uvm.l2_tlb.entries (a whole number of sets)");
  rule(p.uvm.device_memory % 4096 == 0, "uvm.device_memory", "must be a whole number of 4 KB pages");
  rule((p.bridge.region_bytes & (p.bridge.region_bytes - 1)) == 0, "platform.bridge.region_size",
       "must be a power of two (QEMU's ivshmem maps the region as a PCI BAR)");
  if (!errors.empty()) throw config::ConfigError(std::move(errors));
  return p;
}

}  // namespace gpuvp
