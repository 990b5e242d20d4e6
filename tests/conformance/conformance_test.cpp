// One test per workload: load its PTX into the functional model, run its host code, and
// require its own CPU-reference check to pass.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/workloads.h"
#include "gpuvp_workload_paths.h"
#include "ptx_device.h"

namespace gpuvp::conformance {
namespace {

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const workloads::WorkloadInfo& info : workloads::all_workloads()) names.emplace_back(info.name);
  return names;
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, MatchesCpuReference) {
  ASSERT_TRUE(workloads::kWorkloadPtxBuilt) << "nvcc was not found at configure time; no PTX to run";
  const workloads::WorkloadInfo* info = workloads::find_workload(GetParam());
  ASSERT_NE(info, nullptr);
  std::ostringstream report;
  workloads::WorkloadResult result;
  try {
    PtxDevice device(workload_ptx_path(info->name));
    result = workloads::run_and_report(GetParam(), info->run, device, report);
  } catch (const workloads::DeviceError& error) {
    FAIL() << "loading " << workload_ptx_path(info->name) << ": " << error.what();
  }
  EXPECT_TRUE(result.passed) << report.str();
  std::cout << report.str();
}

// Forwards everything to the real device except the first kernel launch, which it drops.
// A workload whose check still passes would not notice a kernel that does nothing.
class DropFirstLaunch final : public workloads::Device {
 public:
  explicit DropFirstLaunch(workloads::Device& inner) : inner_(inner) {}
  workloads::DevicePtr malloc(std::size_t bytes) override { return inner_.malloc(bytes); }
  void free(workloads::DevicePtr ptr) override { inner_.free(ptr); }
  void copy_to_device(workloads::DevicePtr dst, const void* src, std::size_t bytes) override {
    inner_.copy_to_device(dst, src, bytes);
  }
  void copy_to_host(void* dst, workloads::DevicePtr src, std::size_t bytes) override { inner_.copy_to_host(dst, src, bytes); }
  void memset(workloads::DevicePtr dst, int value, std::size_t bytes) override { inner_.memset(dst, value, bytes); }
  void launch(const std::string& kernel, workloads::Dim3 grid, workloads::Dim3 block, std::uint32_t shared_bytes,
              const workloads::KernelArgs& args) override {
    if (dropped_) inner_.launch(kernel, grid, block, shared_bytes, args);
    dropped_ = true;
  }
  void synchronize() override { inner_.synchronize(); }
  void begin_output_capture() override { inner_.begin_output_capture(); }
  std::string end_output_capture() override { return inner_.end_output_capture(); }

 private:
  workloads::Device& inner_;
  bool dropped_ = false;
};

TEST_P(Conformance, CheckDetectsAMissingLaunch) {
  ASSERT_TRUE(workloads::kWorkloadPtxBuilt) << "nvcc was not found at configure time; no PTX to run";
  const workloads::WorkloadInfo* info = workloads::find_workload(GetParam());
  ASSERT_NE(info, nullptr);
  std::ostringstream report;
  workloads::WorkloadResult result;
  try {
    PtxDevice device(workload_ptx_path(info->name));
    DropFirstLaunch mutated(device);
    result = workloads::run_and_report(GetParam(), info->run, mutated, report);
  } catch (const workloads::DeviceError& error) {
    FAIL() << "PTX does not load, so the check cannot be exercised: " << error.what();
  }
  EXPECT_FALSE(result.passed) << "check passed although the first kernel never ran: " << report.str();
}

INSTANTIATE_TEST_SUITE_P(Workloads, Conformance, ::testing::ValuesIn(workload_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace
}  // namespace gpuvp::conformance
