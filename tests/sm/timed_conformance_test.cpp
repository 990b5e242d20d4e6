// The conformance workloads with timing: every workload of sw/workloads runs its host code on
// a device whose launches go through GpuCore (CTA scheduler, 4 SMs in 2 clusters, each
// cluster port on a fixed-latency memory target), i.e. through the warp-stepping API in the
// order the timing model issues; the workload's own CPU-reference check must pass.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/workloads.h"
#include "gpuvp_workload_paths.h"
#include "models/gpu/sm/sm_cluster.h"
#include "ptx_device.h"
#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

using workloads::DeviceError;
using workloads::DevicePtr;

std::vector<std::string> with_core(std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), {"gpu.sm.count=4", "gpu.sm.cluster_size=2"});
  return overrides;
}

class TimedDevice final : public workloads::Device {
 public:
  TimedDevice(const std::string& ptx_path, const std::vector<std::string>& overrides)
      : params_(testing::load_sm_params(with_core(overrides))),
        clock_("core", static_cast<uint64_t>(params_.clock_hz)),
        core_("gpu", params_, clock_, stats_) {
    for (uint32_t i = 0; i < core_.cluster_count(); ++i) {
      ports_.push_back(std::make_unique<testbench::MemoryTarget>(("port" + std::to_string(i)).c_str(),
                                                                 sc_core::sc_time(20, sc_core::SC_NS)));
      core_.cluster(i).out.bind(ports_.back()->socket);
    }
    std::ifstream file(ptx_path, std::ios::binary);
    if (!file) throw DeviceError("cannot open " + ptx_path);
    std::ostringstream text;
    text << file.rdbuf();
    try {
      module_ = std::make_unique<ptx::LoadedModule>(ptx::Module::parse(text.str(), ptx_path), memory_);
    } catch (const ptx::ParseError& error) {
      throw DeviceError(error.what());
    }
    options_.printf_sink = [this](std::string_view t) {
      if (capturing_) captured_.append(t);
      else std::cout << t;
    };
    options_.instruction_limit = 2'000'000'000ULL;
    options_.device_runtime = &runtime_;
  }

  DevicePtr malloc(std::size_t bytes) override { return memory_.allocate(bytes); }
  void free(DevicePtr ptr) override { memory_.release(ptr); }
  void copy_to_device(DevicePtr dst, const void* src, std::size_t bytes) override {
    try {
      memory_.copy_to_device(dst, src, bytes);
    } catch (const ptx::IllegalHostAccess& e) {
      throw DeviceError(e.what());
    }
  }
  void copy_to_host(void* dst, DevicePtr src, std::size_t bytes) override {
    try {
      memory_.copy_from_device(dst, src, bytes);
    } catch (const ptx::IllegalHostAccess& e) {
      throw DeviceError(e.what());
    }
  }
  void memset(DevicePtr dst, int value, std::size_t bytes) override {
    try {
      memory_.fill(dst, static_cast<std::uint8_t>(value), bytes);
    } catch (const ptx::IllegalHostAccess& e) {
      throw DeviceError(e.what());
    }
  }
  void launch(const std::string& name, workloads::Dim3 grid, workloads::Dim3 block, std::uint32_t dynamic_shared,
              const workloads::KernelArgs& args) override {
    const ptx::Kernel* kernel = module_->module().find_kernel(name);
    if (kernel == nullptr) throw DeviceError("no kernel " + name);
    std::vector<std::uint8_t> params;
    try {
      ptx::ParamPacker packer(*kernel);
      for (const workloads::KernelArg& arg : args.list()) packer.add_bytes(arg.data(), arg.size());
      params = packer.finish();
    } catch (const std::invalid_argument& e) {
      throw DeviceError(e.what());
    }
    runtime_.depth_ = 0;
    ptx::LaunchResult result = run_grid(*module_, *kernel,
                                        {ptx::Dim3(grid.x, grid.y, grid.z), ptx::Dim3(block.x, block.y, block.z), dynamic_shared},
                                        std::move(params));
    // Child grids (dynamic parallelism) after their parent, in launch order, as the platform runs them.
    while (result.ok() && !runtime_.children.empty()) {
      conformance::QueuedDeviceRuntime::Child child = std::move(runtime_.children.front());
      runtime_.children.pop_front();
      runtime_.depth_ = child.depth;
      if (child.launch.kernel == nullptr) {
        runtime_.copy(child.launch);
        continue;
      }
      result = run_grid(*child.launch.module, *child.launch.kernel, child.launch.config, std::move(child.launch.params));
    }
    runtime_.children.clear();
    if (!result.ok()) throw DeviceError("launch of " + name + " failed: " + result.message);
  }
  ptx::LaunchResult run_grid(const ptx::LoadedModule& module, const ptx::Kernel& kernel, const ptx::LaunchConfig& config,
                             std::vector<std::uint8_t> params) {
    ptx::KernelRun run(memory_, options_, module, kernel, config, std::move(params));
    if (run.ok()) {
      bool done = false;
      sc_core::sc_event finished;
      sim_.run([&] {
        core_.submit(run, ++launches_, [&] { done = true; finished.notify(sc_core::SC_ZERO_TIME); });
        while (!done) wait(finished);
      }, sc_core::sc_time(100, sc_core::SC_SEC));
      core_.stepper().quiesce();  // windowed: no SM runs while the host side reads and writes
    }
    const ptx::LaunchResult result = run.finish();
    warp_instructions_ += result.warp_instructions;
    return result;
  }
  void synchronize() override {}
  void begin_output_capture() override {
    capturing_ = true;
    captured_.clear();
  }
  std::string end_output_capture() override {
    capturing_ = false;
    return std::move(captured_);
  }
  uint64_t cycles() const { return core_.last_cycle(); }
  uint64_t warp_instructions() const { return warp_instructions_; }

 private:
  testbench::Simulation sim_;
  stats::Registry stats_;
  SmParams params_;
  ClockDomain clock_;
  GpuCore core_;
  std::vector<std::unique_ptr<testbench::MemoryTarget>> ports_;
  ptx::DeviceMemory memory_;
  conformance::QueuedDeviceRuntime runtime_{memory_};
  std::unique_ptr<ptx::LoadedModule> module_;
  ptx::ExecutorOptions options_;
  bool capturing_ = false;
  std::string captured_;
  uint64_t launches_ = 0;
  uint64_t warp_instructions_ = 0;
};

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const workloads::WorkloadInfo& info : workloads::all_workloads()) names.emplace_back(info.name);
  return names;
}

class TimedConformance : public ::testing::TestWithParam<std::string> {};

// Each workload on 1 stepping thread, then on 3 (dynamic distribution, issue 6): both match
// the CPU reference, with the same cycles, instructions and report. Then windowed
// (platform/parallel/README.md: 8-cycle windows, the memory side beside the SMs on 2 threads):
// it matches the CPU reference too, and so does its run with the phases after the windows, with
// the same cycles and report.
TEST_P(TimedConformance, MatchesCpuReference) {
  ASSERT_TRUE(workloads::kWorkloadPtxBuilt) << "nvcc was not found at configure time; no PTX to run";
  const workloads::WorkloadInfo* info = workloads::find_workload(GetParam());
  ASSERT_NE(info, nullptr);
  struct Outcome {
    std::string report;
    bool passed = false;
    uint64_t cycles = 0, instructions = 0;
  };
  auto run = [&](const std::vector<std::string>& overrides) {
    Outcome outcome;
    std::ostringstream report;
    try {
      TimedDevice device(conformance::workload_ptx_path(info->name), overrides);
      outcome.passed = workloads::run_and_report(GetParam(), info->run, device, report).passed;
      outcome.cycles = device.cycles();
      outcome.instructions = device.warp_instructions();
    } catch (const workloads::DeviceError& error) {
      ADD_FAILURE() << error.what();
    }
    outcome.report = report.str();
    return outcome;
  };
  const Outcome one = run({});
  EXPECT_TRUE(one.passed) << one.report;
  const Outcome three = run({"sim.threads=3", "sim.sm_distribution=dynamic", "sim.parallel_min_work=0"});
  EXPECT_TRUE(three.passed) << three.report;
  EXPECT_EQ(three.cycles, one.cycles);
  EXPECT_EQ(three.instructions, one.instructions);
  EXPECT_EQ(three.report, one.report);
  const Outcome windowed = run({"sim.window=8", "sim.threads=2", "sim.parallel_min_work=0"});
  EXPECT_TRUE(windowed.passed) << windowed.report;
  const Outcome serial = run({"sim.window=8", "sim.threads=2", "sim.overlap=false"});
  EXPECT_TRUE(serial.passed) << serial.report;
  EXPECT_EQ(serial.cycles, windowed.cycles);
  EXPECT_EQ(serial.report, windowed.report);
  std::cout << GetParam() << ": " << one.cycles << " cycles, " << one.instructions << " warp-instructions (4 SMs)\n";
}

INSTANTIATE_TEST_SUITE_P(Workloads, TimedConformance, ::testing::ValuesIn(workload_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace
}  // namespace gpuvp::gpu
