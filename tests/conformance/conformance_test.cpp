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
  if (!workloads::kWorkloadPtxBuilt) GTEST_SKIP() << "nvcc was not found at configure time; no PTX to run";
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

INSTANTIATE_TEST_SUITE_P(Workloads, Conformance, ::testing::ValuesIn(workload_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace
}  // namespace gpuvp::conformance
