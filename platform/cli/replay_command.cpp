#include "platform/cli/replay_command.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "platform/cli/fresh_sim_context.h"
#include "platform/cli/output_file.h"
#include "platform/config/units.h"
#include "platform/config/value_parser.h"
#include "platform/elastic_trace/elastic_trace.h"
#include "platform/elastic_trace/trace_inspect.h"
#include "platform/platform_params.h"
#include "platform/stats/registry.h"
#include "platform/trace/trace_recorder.h"
#include "platform/trace_replay/trace_replay.h"

namespace gpuvp::cli {

ReplayCommand::ReplayCommand(CLI::App& app, const config::ConfigLoader& loader)
    : command_(app.add_subcommand("replay",
                                  "replay an elastic trace (gpuvp run --capture DIR) on the memory system of a "
                                  "configuration: trace injectors in place of the SMs")),
      loader_(loader) {
  command_->add_option("dir", dir_, "capture directory (or its elastic.gvet file)")->required();
  config_options_.add_to(*command_, false);
  command_->get_option("--config")->description("preset name or config file (default: the captured configuration)");
  command_->add_option("--stats", stats_path_, "write the statistics JSON to this file");
  command_->add_option("--trace", trace_path_,
                       "trace TLM transactions, kernels and CTAs of the replay (.json: Chrome/Perfetto; other names: "
                       "compact binary)");
  command_->add_option("--trace-filter", trace_filters_, "keep only some of the trace (as gpuvp run)")
      ->type_name("TERM");
  command_->add_option("--replicate", replicas_,
                       "weak scaling: replay the captured N SMs' traces on K*N SMs (replica r on SMs r*N..)")
      ->check(CLI::Range(1u, 64u))
      ->type_name("K");
  command_->add_option("--offset-stride", offset_stride_text_,
                       "with --replicate: replica r moves the lines the trace writes by r times this many bytes "
                       "(read-only lines stay shared); default 0 B: no offsetting")
      ->type_name("SIZE");
  command_->add_option("--tasks", tasks_,
                       "strong scaling: CTAs as tasks; 'dynamic' (each SM takes the next CTA when a slot frees) or a "
                       "map file of 'KERNEL CTA SM' lines (KERNEL: index or '*')")
      ->type_name("dynamic|MAP");
  command_->add_option("--task-sms", task_sms_, "with --tasks: SMs to run the tasks on (default gpu.sm.count)")
      ->check(CLI::Range(1u, 4096u));
  command_->add_option("--cta-slots", cta_slots_,
                       "with --tasks: CTAs an SM runs at once (default: the most the capture had on one SM)")
      ->check(CLI::Range(1u, 256u));
  command_->add_option("--l1", l1_mode_,
                       "'captured': replay what passed the captured L1; 'redo': look every load up again in an L1 "
                       "of the replay configuration (gpu.sm.l1.*), the captured hits and merges included")
      ->check(CLI::IsMember({"captured", "redo"}))
      ->capture_default_str();
  command_->footer("Example: gpuvp run --capture cap -- ./app\n"
                   "         gpuvp replay cap --set memory.l2.slice_size=128KiB\n"
                   "         gpuvp replay cap --replicate 2 --offset-stride 1GiB\n"
                   "         gpuvp replay cap --tasks dynamic --task-sms 40\n"
                   "         gpuvp replay cap --l1 redo --set gpu.sm.unified_l1_shared=0B --set gpu.sm.l1.size=64KiB");
}

int ReplayCommand::execute() const {
  elastic::Trace trace;
  try {
    trace = elastic::read_trace(dir_);
  } catch (const elastic::TraceFormatError& e) {
    std::cerr << "gpuvp replay: " << e.what() << "\n";
    return 1;
  }
  // The captured configuration unless --config names another; --set applies either way.
  config::Config config = [&] {
    if (!config_options_.config.empty()) return config_options_.load(loader_);
    std::vector<std::string> overrides = config_options_.overrides;
    if (config_options_.threads != 0) overrides.push_back("sim.threads=" + std::to_string(config_options_.threads));
    config::Config captured = loader_.load_text(trace.header.config_yaml, dir_ + " (captured configuration)", overrides);
    captured.set_source(trace.header.config_source + " (captured)");
    return captured;
  }();
  const PlatformParams params = PlatformParams::load(config);

  replay::ReplayOptions options;
  options.replicas = replicas_;
  if (l1_mode_ == "redo") {
    options.l1_redo = true;
    try {  // the hit latency the captured gaps include
      const config::Config captured = loader_.load_text(trace.header.config_yaml, dir_ + " (captured configuration)", {});
      options.captured_l1_hit_latency = PlatformParams::load(captured).sm.l1_hit_latency;
    } catch (const std::exception& e) {
      std::cerr << "gpuvp replay: --l1 redo: " << e.what() << "\n";
      return 1;
    }
  }
  {
    config::KnobSpec spec;
    spec.name = "--offset-stride";
    spec.type = config::KnobType::Quantity;
    spec.dimension = config::Dimension::Size;
    spec.whole = true;
    spec.default_text = "0 B";
    spec.min = 0;
    spec.max = 1e15;
    const auto parsed = config::parse_knob_value(spec, offset_stride_text_);
    if (const auto* message = std::get_if<std::string>(&parsed)) {
      std::cerr << "gpuvp replay: --offset-stride '" << offset_stride_text_ << "': " << *message << "\n";
      return 1;
    }
    options.offset_stride = static_cast<uint64_t>(std::get<config::KnobValue>(parsed).number);
  }
  if (options.offset_stride % 128 != 0) {
    std::cerr << "gpuvp replay: --offset-stride must be a multiple of the 128 B line\n";
    return 1;
  }
  if (options.offset_stride != 0 && replicas_ == 1) {
    std::cerr << "gpuvp replay: --offset-stride needs --replicate K with K > 1\n";
    return 1;
  }
  if (!tasks_.empty()) {
    options.mode = replay::ReplayOptions::Mode::kTask;
    options.task_sms = task_sms_;
    options.cta_slots = cta_slots_;
    if (tasks_ != "dynamic") {
      try {
        options.task_map = replay::read_task_map(tasks_);
      } catch (const std::invalid_argument& e) {
        std::cerr << "gpuvp replay: " << e.what() << "\n";
        return 1;
      }
    }
  } else if (task_sms_ != 0 || cta_slots_ != 0) {
    std::cerr << "gpuvp replay: --task-sms and --cta-slots need --tasks\n";
    return 1;
  }

  std::unique_ptr<trace::TraceRecorder> recorder;
  if (!trace_path_.empty()) {
    try {
      trace::TraceOptions topt;
      topt.path = trace_path_;
      topt.filter = trace::TraceFilter::parse(trace_filters_);
      recorder = std::make_unique<trace::TraceRecorder>(std::move(topt));
    } catch (const trace::TraceError& e) {
      std::cerr << "gpuvp replay: " << e.what() << "\n";
      return 1;
    }
  } else if (!trace_filters_.empty()) {
    std::cerr << "gpuvp replay: --trace-filter needs --trace FILE\n";
    return 1;
  }

  const auto wall_start = std::chrono::steady_clock::now();
  stats::Registry stats;
  stats.set_kernel_detail(stats::Registry::KernelDetail::PerName);
  replay::ReplayResult result;
  std::string stats_json;
  try {
    FreshSimContext context;
    result = replay::run_replay(trace, params, options, stats, recorder.get());
    stats_json = stats.json();
  } catch (const std::invalid_argument& e) {
    std::cerr << "gpuvp replay: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "gpuvp replay: error: " << e.what() << "\n";
    return 1;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const char* mode = options.mode == replay::ReplayOptions::Mode::kTask ? "task" : "sync";
  std::printf("replay of %s on %s: %s mode, %u SMs (captured on %u)", dir_.c_str(), config.source().c_str(), mode,
              result.sms, trace.header.sm_count);
  if (options.l1_redo) std::printf(", L1 redone (%" PRIu64 " B per SM for the first kernel)", params.sm.l1_capacity(trace.kernels.empty() ? 0 : trace.kernels.front().shared_capacity));
  if (replicas_ > 1) {
    std::printf(", %u replicas, offset stride %" PRIu64 " B%s", replicas_, options.offset_stride,
                options.offset_stride == 0 ? " (no offsetting: replicas share all data)" : "");
  }
  std::printf("\n  #   kernel                           captured cycles  replayed cycles   diff\n");
  uint64_t captured_total = 0, replay_total = 0;
  for (size_t i = 0; i < result.kernels.size(); ++i) {
    const replay::KernelResult& k = result.kernels[i];
    captured_total += k.captured_cycles;
    replay_total += k.cycles;
    const double diff = k.captured_cycles != 0
                            ? 100.0 * (static_cast<double>(k.cycles) - static_cast<double>(k.captured_cycles)) /
                                  static_cast<double>(k.captured_cycles)
                            : 0.0;
    std::printf("  %-3zu %-32.32s %15" PRIu64 " %16" PRIu64 " %+6.2f%%\n", i, k.name.c_str(), k.captured_cycles,
                k.cycles, diff);
  }
  std::printf("  total                                %15" PRIu64 " %16" PRIu64 "\n", captured_total, replay_total);
  std::printf("%" PRIu64 " requests replayed, %.3f ms simulated in %.3f s of wall time\n", result.requests,
              static_cast<double>(result.simulated_ps) * 1e-9, wall);
  if (params.sm.window > 1) {
    std::printf("note: sim.window is %u cycles here, but the injectors replay cycle by cycle: what the windowed "
                "model approximates in a windowed run (CTA launches, and responses announced less than a window "
                "ahead, taking effect at window boundaries) is not reproduced\n",
                params.sm.window);
  }
  const uint64_t uvm_operations = elastic::totals(trace).uvm_operations;
  if (trace.header.far_faults != 0 || uvm_operations != 0) {
    const stats::Group* gmmu = stats.find_group("uvm.gmmu");
    const stats::Counter* faults = gmmu != nullptr ? gmmu->find_counter("far_faults") : nullptr;
    std::printf("unified memory: %" PRIu64 " host operations replayed before their kernels; far faults: %" PRIu64
                " captured, %" PRIu64 " replayed\n",
                uvm_operations, trace.header.far_faults, faults != nullptr ? faults->value() : 0);
  }
  if (!stats_path_.empty()) {
    if (!write_output_file(stats_path_, stats_json, "statistics file")) return 1;
    std::cerr << "gpuvp replay: statistics written to " << stats_path_ << "\n";
  }
  if (recorder) {
    try {
      recorder->finish();
    } catch (const trace::TraceError& e) {
      std::cerr << "gpuvp replay: " << e.what() << "\n";
      return 1;
    }
    std::cerr << "gpuvp replay: trace written to " << trace_path_ << "\n";
  }
  return 0;
}

TraceInspectCommand::TraceInspectCommand(CLI::App& app) {
  CLI::App* trace = app.add_subcommand("trace", "elastic traces: inspect what `gpuvp run --capture DIR` wrote");
  trace->require_subcommand(1);
  command_ = trace->add_subcommand("inspect", "print an elastic trace's summary and, with --records, its records");
  command_->add_option("dir", dir_, "capture directory (or its elastic.gvet file)")->required();
  command_->add_flag("--records", records_, "print the records: kernels, CTAs, warps, requests");
  command_->add_option("--kernel", kernel_, "with --records: only this kernel (index in the summary)");
  command_->add_option("--limit", limit_, "with --records: at most this many requests (default 200)");
}

int TraceInspectCommand::execute() const {
  try {
    const elastic::Trace trace = elastic::read_trace(dir_);
    std::error_code error;
    const std::string file = std::filesystem::is_directory(dir_, error)
                                 ? (std::filesystem::path(dir_) / elastic::kTraceFileName).string()
                                 : dir_;
    std::cout << elastic::trace_summary(trace, std::filesystem::file_size(file, error));
    if (records_) {
      if (kernel_ >= static_cast<int64_t>(trace.kernels.size())) {
        std::cerr << "gpuvp trace inspect: --kernel " << kernel_ << ": the trace has " << trace.kernels.size()
                  << " kernel(s)\n";
        return 1;
      }
      std::cout << elastic::trace_records(trace, kernel_ < 0 ? elastic::kNone : static_cast<uint32_t>(kernel_),
                                          limit_);
    }
  } catch (const elastic::TraceFormatError& e) {
    std::cerr << "gpuvp trace inspect: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace gpuvp::cli
