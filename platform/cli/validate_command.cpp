#include "platform/cli/validate_command.h"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <systemc>

#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/gpu_timing/gpu_timing.h"
#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/kernel_run.h"
#include "platform/cli/fresh_sim_context.h"
#include "platform/cli/validate_applications.h"
#include "platform/cli/validation_kernels.h"
#include "platform/clock_domains.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::cli {
namespace {

// One kernel to run: its name, shape, and a setup that fills device memory and returns the
// packed parameters.
struct Launch {
  std::string kernel;
  ptx::Dim3 grid{1};
  ptx::Dim3 block{1};
  std::function<std::vector<uint8_t>(ptx::DeviceMemory&, const ptx::Kernel&)> setup;
  // A clock64-timed kernel: setup stores here where the kernel writes its clock difference
  // (`clock_count` of them, one per CTA for the bandwidth kernels: the longest is used).
  std::shared_ptr<uint64_t> clock_out;
  uint32_t clock_count = 1;
};

struct Outcome {
  uint64_t cycles = 0;        // kernel cycles (launch accepted -> completion)
  uint64_t clock_cycles = 0;  // what a timed kernel measured with clock64() (the longest CTA's)
  uint64_t warp_instructions = 0;
};

// Links between the two clock64() reads of the timed_* kernels (kTimedLinks in ubench_kernels.cu).
constexpr uint32_t kTimedLinks = 256;

Outcome run_kernel(const PlatformParams& params, const ValidationKernels& kernels, const Launch& launch) {
  FreshSimContext context;  // cold caches and time zero for every measurement
  stats::Registry stats;
  Outcome outcome;
  std::string error;
  {
    ptx::DeviceMemory memory;
    ptx::LoadedModule module(ptx::Module::parse(kernels.ptx(), "ubench.ptx"), memory);
    const ptx::Kernel& kernel = module.kernel(launch.kernel);
    std::vector<uint8_t> packed = launch.setup(memory, kernel);
    gpu::GpuTiming timing("timing", params, ClockDomains::from(params), stats);
    ptx::ExecutorOptions options;
    options.sm_count = params.sm.count;
    ptx::KernelRun run(memory, options, module, kernel, {launch.grid, launch.block, 0}, std::move(packed));
    run.set_resources(kernels.resources(launch.kernel));
    sc_core::sc_spawn([&] {
      try {
        outcome.cycles = timing.run(run, 1).cycles;
      } catch (const std::exception& e) {  // e.g. a CTA that does not fit on an SM
        error = launch.kernel + ": " + e.what();
      }
    });
    sc_core::sc_start();  // to starvation: every model idles without events once the kernel ended
    timing.quiesce();
    const ptx::LaunchResult result = run.finish();
    if (error.empty() && !result.ok()) error = launch.kernel + ": " + result.message;
    outcome.warp_instructions = result.warp_instructions;
    if (launch.clock_out) {
      std::vector<uint64_t> clocks(launch.clock_count);
      memory.copy_from_device(clocks.data(), *launch.clock_out, clocks.size() * sizeof(uint64_t));
      for (uint64_t c : clocks) outcome.clock_cycles = std::max(outcome.clock_cycles, c);
    }
  }
  if (!error.empty()) throw std::runtime_error(error);
  return outcome;
}

// A ring of `count` 8-byte pointers `stride` bytes apart; returns its first element.
uint64_t pointer_ring(ptx::DeviceMemory& memory, uint64_t count, uint64_t stride) {
  const uint64_t base = memory.allocate(count * stride, 4096);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t next = base + ((i + 1) % count) * stride;
    memory.copy_to_device(base + i * stride, &next, sizeof next);
  }
  return base;
}

// Cycles per link of a chain: the kernel run with `short_steps` and `long_steps` links.
double per_link(const PlatformParams& p, const ValidationKernels& ptx, const std::function<Launch(uint32_t)>& make,
                uint32_t short_steps, uint32_t long_steps) {
  const Outcome a = run_kernel(p, ptx, make(short_steps));
  const Outcome b = run_kernel(p, ptx, make(long_steps));
  return (static_cast<double>(b.cycles) - static_cast<double>(a.cycles)) / (long_steps - short_steps);
}

Launch global_chase(const std::string& kernel, uint64_t ring, uint64_t stride, uint32_t warm, uint32_t steps) {
  Launch l;
  l.kernel = kernel;
  l.setup = [=](ptx::DeviceMemory& m, const ptx::Kernel& k) {
    const uint64_t start = pointer_ring(m, ring, stride);
    const uint64_t out = m.allocate(8);
    return ptx::pack_params(k, start, warm, steps, out);
  };
  return l;
}

Launch shared_chase(uint32_t lane_stride, uint32_t threads, uint32_t steps) {
  Launch l;
  l.kernel = "chase_shared";
  l.block = ptx::Dim3{threads};
  l.setup = [=](ptx::DeviceMemory& m, const ptx::Kernel& k) {
    // Next link 32 words on: the same bank, so a lane's bank pattern holds along the chain.
    const uint64_t out = m.allocate(4 * 32);
    return ptx::pack_params(k, uint32_t{32}, lane_stride, steps, out);
  };
  return l;
}

Launch chain(const std::string& kernel, uint32_t steps) {
  Launch l;
  l.kernel = kernel;
  l.setup = [=](ptx::DeviceMemory& m, const ptx::Kernel& k) {
    const uint64_t out = m.allocate(8 * 32);
    return ptx::pack_params(k, steps, out);
  };
  return l;
}

// The clock64 way: one run of a timed kernel, its clock difference per link.
double timed_per_link(const PlatformParams& p, const ValidationKernels& ptx, const Launch& launch) {
  return static_cast<double>(run_kernel(p, ptx, launch).clock_cycles) / kTimedLinks;
}

// A clock64-timed launch of `ctas` CTAs of `threads` threads. `pack` allocates the kernel's
// buffers and packs its parameters; it calls `clocks()` for the buffer the kernel writes its
// CTAs' clock differences to (one 8-byte slot per CTA), at the point of its own allocations
// where that buffer belongs.
using ClockedPack = std::function<std::vector<uint8_t>(ptx::DeviceMemory&, const ptx::Kernel&,
                                                       const std::function<uint64_t()>& clocks)>;
Launch timed_launch(const std::string& kernel, uint32_t ctas, uint32_t threads, ClockedPack pack) {
  Launch l;
  l.kernel = kernel;
  l.grid = ptx::Dim3{ctas};
  l.block = ptx::Dim3{threads};
  l.clock_out = std::make_shared<uint64_t>(0);
  l.clock_count = ctas;
  l.setup = [ctas, pack = std::move(pack), clock_out = l.clock_out](ptx::DeviceMemory& m, const ptx::Kernel& k) {
    return pack(m, k, [&] { return *clock_out = m.allocate(8ull * ctas); });
  };
  return l;
}

// Each timed_* kernel takes the clock's destination as its last parameter.
Launch timed_global(const std::string& kernel, uint64_t ring, uint64_t stride, uint32_t warm) {
  return timed_launch(kernel, 1, 1, [=](ptx::DeviceMemory& m, const ptx::Kernel& k, const auto& clocks) {
    const uint64_t start = pointer_ring(m, ring, stride);
    const uint64_t out = m.allocate(8);
    return ptx::pack_params(k, start, warm, out, clocks());
  });
}

Launch timed_shared(uint32_t lane_stride, uint32_t threads) {
  return timed_launch("timed_chase_shared", 1, threads,
                      [=](ptx::DeviceMemory& m, const ptx::Kernel& k, const auto& clocks) {
    const uint64_t out = m.allocate(8 * 32);
    return ptx::pack_params(k, uint32_t{32}, lane_stride, out, clocks());
  });
}

Launch timed_chain(const std::string& kernel) {
  return timed_launch(kernel, 1, 1, [](ptx::DeviceMemory& m, const ptx::Kernel& k, const auto& clocks) {
    const uint64_t out = m.allocate(8 * 32);
    return ptx::pack_params(k, out, clocks());
  });
}

// CTAs of `threads` threads of `kernel` that are resident on the whole GPU at once, by the
// model's occupancy rules and the kernel's cubin resources (a grid barrier needs all of them).
uint32_t resident_ctas(const PlatformParams& p, const ValidationKernels& kernels, const std::string& kernel,
                       uint32_t threads) {
  const ptx::KernelResources told = kernels.resources(kernel);
  gpu::CtaFootprint cta;
  cta.threads = threads;
  cta.registers_per_thread = told.registers_per_thread != 0 ? told.registers_per_thread : 32;
  cta.shared_bytes = told.static_shared_bytes;
  cta.local_bytes_per_thread = told.local_bytes_per_thread;
  return std::max<uint32_t>(1, gpu::occupancy(p.sm, cta).ctas_per_sm) * p.sm.count;
}

struct Row {
  std::string name;
  double model = 0;   // the current method: kernel cycles (two chain lengths for latencies)
  double timed = -1;  // the clock64 way; < 0: not measured that way
  std::string unit;
  double reference = 0;  // 0: no numeric reference
  std::string source;
};

std::string format_value(double v) {
  char text[32];
  if (std::fabs(v) >= 10 || v == std::floor(v)) {
    std::snprintf(text, sizeof text, "%.0f", v);
  } else {
    std::snprintf(text, sizeof text, "%.2f", v);
  }
  return text;
}

}  // namespace

ValidateCommand::ValidateCommand(CLI::App& app, const config::ConfigLoader& loader)
    : command_(app.add_subcommand("validate", "run the microbenchmarks on the timing model; model vs. published V100 figures")),
      loader_(loader) {
  config_options_.add_to(*command_, false);
#ifdef GPUVP_UBENCH_PTX
  ptx_path_ = GPUVP_UBENCH_PTX;
#endif
  command_->add_option("--ptx", ptx_path_, "PTX of sw/workloads/ubench (default: the one built with gpuvp)");
#ifdef GPUVP_UBENCH_CUBIN
  cubin_path_ = GPUVP_UBENCH_CUBIN;
#endif
  command_->add_option("--cubin", cubin_path_,
                       "sm_75 cubin of the same kernels: their registers, shared and local memory (default: built with gpuvp)");
#ifdef GPUVP_CORRELATION_PTX
  applications_ptx_path_ = GPUVP_CORRELATION_PTX;
#endif
  command_->add_option("--applications-ptx", applications_ptx_path_,
                       "PTX of the application table (default: the one built with gpuvp)");
#ifdef GPUVP_CORRELATION_CUBIN
  applications_cubin_path_ = GPUVP_CORRELATION_CUBIN;
#endif
  command_->add_option("--applications-cubin", applications_cubin_path_,
                       "sm_75 cubin of the application table's kernels (default: built with gpuvp)");
  progress_.add_to(*command_);
  command_->add_flag("--quick", quick_, "shorter chains and a smaller bandwidth kernel (tests); same rows");
  command_->footer("Example: gpuvp validate --config v100");
}

int ValidateCommand::execute() const {
  const config::Config config = config_options_.load(loader_);
  const PlatformParams p = PlatformParams::load(config);
  // PTX for the functional model, and the cubin nvcc built from the same source for occupancy.
  std::optional<ValidationKernels> microbenchmarks, application_kernels;
  try {
    microbenchmarks.emplace(ptx_path_, cubin_path_, p.device.compute_capability);
    application_kernels.emplace(applications_ptx_path_, applications_cubin_path_, p.device.compute_capability);
  } catch (const std::exception& e) {
    std::cerr << "gpuvp validate: " << e.what() << " (pass --ptx/--cubin, --applications-ptx/--applications-cubin)\n";
    return 1;
  }
  const ValidationKernels& ptx = *microbenchmarks;
  const ValidationKernels& applications_ptx = *application_kernels;
  const auto wall_start = std::chrono::steady_clock::now();
  std::optional<progress::Display> display;
  display.emplace(progress_.mode, "validate");

  // Chain lengths: the difference of two runs is divided by the difference of lengths.
  const uint32_t s0 = quick_ ? 128 : 256, s1 = quick_ ? 384 : 1280;
  std::vector<Row> rows;
  std::vector<ApplicationFigure> applications;
  try {
    // L1 hit: a ring of 64 lines (8 KiB, inside the 32 KiB L1), one warm-up lap first.
    rows.push_back({"L1 hit latency", per_link(p, ptx, [](uint32_t n) { return global_chase("chase_global_ca", 64, 128, 64, n); }, s0, s1),
                    timed_per_link(p, ptx, timed_global("timed_chase_global_ca", 64, 128, 64)), "cycles", 28,
                    "Jia et al. 2018 (another method: 36)"});
    // Shared memory: one thread, word stride 32 (same bank), no conflict.
    rows.push_back({"shared-memory latency", per_link(p, ptx, [](uint32_t n) { return shared_chase(0, 1, n); }, s0, s1),
                    timed_per_link(p, ptx, timed_shared(0, 1)), "cycles", 19, "Jia et al. 2018"});
    // L2 hit: a 1 MiB ring of lines (larger than L1, inside the 6 MiB L2), one warm-up lap.
    const uint64_t l2_ring = quick_ ? 2048 : 8192;
    rows.push_back({"L2 hit latency",
                    per_link(p, ptx, [&](uint32_t n) { return global_chase("chase_global_cg", l2_ring, 128, static_cast<uint32_t>(l2_ring), n); }, s0, s1),
                    timed_per_link(p, ptx, timed_global("timed_chase_global_cg", l2_ring, 128, static_cast<uint32_t>(l2_ring))),
                    "cycles", 193, "Jia et al. 2018 (another method: 221)"});
    // DRAM: every link a new line 4160 B on (no reuse, rows and channels vary), no warm-up.
    rows.push_back({"DRAM latency", per_link(p, ptx, [](uint32_t n) { return global_chase("chase_global_cg", 16384, 4160, 0, n); }, s0, s1),
                    timed_per_link(p, ptx, timed_global("timed_chase_global_cg", 16384, 4160, 0)), "cycles", 460,
                    "public measurement, different method (Jia: n/a)"});
    // DRAM bandwidth: copies of n0 and n1 float4 (read + write), 256-thread CTAs over the whole
    // GPU; the difference in bytes over the difference in kernel cycles, which cancels the
    // launch, the first wave's latency and the drain (as a STREAM-type figure over a large array
    // makes them negligible).
    {
      const uint32_t n1 = quick_ ? (1u << 16) : (1u << 21), n0 = n1 / 2;
      auto copy = [](uint32_t n) {
        Launch l;
        l.kernel = "stream_copy";
        l.grid = ptx::Dim3{n / 256};
        l.block = ptx::Dim3{256};
        l.setup = [n](ptx::DeviceMemory& m, const ptx::Kernel& k) {
          const uint64_t a = m.allocate(16ull * n), c = m.allocate(16ull * n);
          return ptx::pack_params(k, a, c, n);
        };
        return l;
      };
      const Outcome a = run_kernel(p, ptx, copy(n0));
      const Outcome b = run_kernel(p, ptx, copy(n1));
      const double seconds = (static_cast<double>(b.cycles) - static_cast<double>(a.cycles)) / p.sm.clock_hz;
      // The clock64 way: a copy of n1 elements by a full-occupancy grid of persistent 256-thread
      // CTAs (as many threads per SM as stream_copy's), each CTA timing its share after a grid
      // barrier; the bytes over the longest CTA's cycles.
      const uint32_t copy_ctas = resident_ctas(p, ptx, "timed_stream_copy", 256);
      const Launch timed = timed_launch(
          "timed_stream_copy", copy_ctas, 256, [n1](ptx::DeviceMemory& m, const ptx::Kernel& k, const auto& clocks) {
            const uint64_t source = m.allocate(16ull * n1), copy_to = m.allocate(16ull * n1);
            const uint64_t arrived = m.allocate(4), ticket = m.allocate(4);
            return ptx::pack_params(k, source, copy_to, n1, arrived, ticket, clocks());
          });
      const double timed_seconds = static_cast<double>(run_kernel(p, ptx, timed).clock_cycles) / p.sm.clock_hz;
      rows.push_back({"DRAM bandwidth (copy " + std::to_string(32ull * n0 >> 20) + " vs " +
                          std::to_string(32ull * n1 >> 20) + " MiB)",
                      32.0 * (n1 - n0) / seconds / 1e9, 32.0 * n1 / timed_seconds / 1e9, "GB/s", 750,
                      "~750 of 900 GB/s peak (public STREAM-type figure)"});
    }
    // L2 bandwidth: 2 MiB read through .cg by 4 CTAs of 256 threads per SM, two lap counts.
    // Laps are not synchronised, but warps start together: a larger set keeps the per-lap
    // latency bubble small beside the transfer.
    {
      const uint32_t n = 1u << 17;  // float4 elements: 2 MiB
      const uint32_t ctas = std::min(4 * p.sm.count, resident_ctas(p, ptx, "timed_l2_read", 256));
      auto launch = [&](uint32_t laps) {
        Launch l;
        l.kernel = "l2_read";
        l.grid = ptx::Dim3{ctas};
        l.block = ptx::Dim3{256};
        l.setup = [n, laps, ctas](ptx::DeviceMemory& m, const ptx::Kernel& k) {
          const uint64_t a = m.allocate(16ull * n), out = m.allocate(4ull * 256 * ctas);
          return ptx::pack_params(k, a, n, laps, out);
        };
        return l;
      };
      const uint32_t l0 = quick_ ? 2 : 3, l1 = quick_ ? 4 : 21;
      const Outcome a = run_kernel(p, ptx, launch(l0));
      const Outcome b = run_kernel(p, ptx, launch(l1));
      const double seconds = (static_cast<double>(b.cycles) - static_cast<double>(a.cycles)) / p.sm.clock_hz;
      // The clock64 way: the same grid times l1 - l0 laps per CTA after a warm-up lap and a grid
      // barrier.
      const uint32_t laps = l1 - l0;
      const Launch timed = timed_launch(
          "timed_l2_read", ctas, 256, [n, laps, ctas](ptx::DeviceMemory& m, const ptx::Kernel& k, const auto& clocks) {
            const uint64_t source = m.allocate(16ull * n), out = m.allocate(8ull * 256 * ctas);
            const uint64_t arrived = m.allocate(4);
            return ptx::pack_params(k, source, n, laps, out, arrived, clocks());
          });
      const double timed_seconds = static_cast<double>(run_kernel(p, ptx, timed).clock_cycles) / p.sm.clock_hz;
      rows.push_back({"L2 bandwidth (2 MiB read, .cg)", 16.0 * n * (l1 - l0) / seconds / 1e9,
                      16.0 * n * (l1 - l0) / timed_seconds / 1e9, "GB/s", 2156,
                      "Jia et al. 2018 (L2 load throughput 2155.88 GB/s)"});
    }
    rows.push_back({"FP32 dependent-issue latency", per_link(p, ptx, [](uint32_t n) { return chain("chain_fp32", n); }, s0, s1),
                    timed_per_link(p, ptx, timed_chain("timed_chain_fp32")), "cycles", 4, "Jia et al. 2018 (FFMA)"});
    rows.push_back({"FP64 dependent-issue latency", per_link(p, ptx, [](uint32_t n) { return chain("chain_fp64", n); }, s0, s1),
                    timed_per_link(p, ptx, timed_chain("timed_chain_fp64")), "cycles", 8, "Jia et al. 2018 (DFMA)"});
    rows.push_back({"SFU dependent-issue latency", per_link(p, ptx, [](uint32_t n) { return chain("chain_sfu", n); }, s0, s1),
                    timed_per_link(p, ptx, timed_chain("timed_chain_sfu")), "cycles", 0,
                    "no published cycle figure used (preset: 14)"});
    // Bank conflicts: a warp whose lanes sit k words apart hits 32/k banks, k words each.
    const double conflict_free = per_link(p, ptx, [](uint32_t n) { return shared_chase(1, 32, n); }, s0, s1);
    const double conflict_free_timed = timed_per_link(p, ptx, timed_shared(1, 32));
    for (uint32_t k : {2u, 4u, 32u}) {
      const double lat = per_link(p, ptx, [k](uint32_t n) { return shared_chase(k, 32, n); }, s0, s1);
      const double lat_timed = timed_per_link(p, ptx, timed_shared(k, 32));
      rows.push_back({"shared " + std::to_string(k) + "-way bank-conflict slowdown", lat / conflict_free,
                      lat_timed / conflict_free_timed, "x", 0,
                      "hardware replays k-way conflicts (no published cycle figure used)"});
    }
    applications = run_application_table(p, applications_ptx);
  } catch (const std::exception& e) {
    std::cerr << "gpuvp validate: " << e.what() << "\n";
    return 1;
  }

  // The references are V100 measurements whatever the configuration: other presets are compared
  // against them only for orientation.
  display.reset();  // the line is erased before the table is printed
  std::cout << "gpuvp validate: timing model of " << p.device.name << " (" << config.source()
            << ") vs. published V100 figures\n";
  std::printf("%-36s %12s %6s %12s %6s %10s  %s\n", "figure", "kernel cycles", "off", "clock64", "off", "reference",
              "reference source");
  auto percent_off = [](double value, double reference) {
    if (reference <= 0 || value < 0) return std::string("-");
    char t[32];
    std::snprintf(t, sizeof t, "%+.0f%%", 100.0 * (value - reference) / reference);
    return std::string(t);
  };
  for (const Row& r : rows) {
    const std::string model = format_value(r.model) + " " + r.unit;
    const std::string timed = r.timed >= 0 ? format_value(r.timed) + " " + r.unit : "-";
    const std::string reference = r.reference > 0 ? format_value(r.reference) + " " + r.unit : "-";
    std::printf("%-36s %12s %6s %12s %6s %10s  %s\n", r.name.c_str(), model.c_str(), percent_off(r.model, r.reference).c_str(),
                timed.c_str(), percent_off(r.timed, r.reference).c_str(), reference.c_str(), r.source.c_str());
  }
  std::printf("\n%-40s %8s %10s %10s %8s  %s\n", "application (every launch)", "launches", "model", "reference",
              "off", "reference source");
  for (const ApplicationFigure& a : applications) {
    const double off = 100.0 * (static_cast<double>(a.cycles) - static_cast<double>(a.reference)) /
                       static_cast<double>(a.reference);
    std::printf("%-40s %8llu %10llu %10llu %+7.1f%%  %s\n", a.name.c_str(), static_cast<unsigned long long>(a.launches),
                static_cast<unsigned long long>(a.cycles), static_cast<unsigned long long>(a.reference), off,
                a.source.c_str());
    if (a.kernels.size() < 2) continue;
    for (const KernelCycles& k : a.kernels) {
      char reference_share[32] = "-";
      if (k.reference_share > 0) std::snprintf(reference_share, sizeof reference_share, "%.0f%%", 100.0 * k.reference_share);
      std::printf("  %-38s %8llu %10llu %10s %8s  share of the program's cycles: model %.0f%%\n", k.name.c_str(),
                  static_cast<unsigned long long>(k.launches), static_cast<unsigned long long>(k.cycles), reference_share,
                  "", 100.0 * static_cast<double>(k.cycles) / static_cast<double>(a.cycles));
    }
  }
  std::printf("(applications: summed kernel cycles of every launch, results checked against a CPU reference)\n");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::printf("(latencies: cycles per link of a dependent chain; kernel cycles: the difference of two chain lengths; "
              "clock64: clock64() read around %u links inside the kernel, and for bandwidths around each CTA's share, the bytes "
              "over the longest CTA's cycles; %.1f s wall)\n",
              kTimedLinks, wall);
  return 0;
}

}  // namespace gpuvp::cli
