// End to end: unmodified CUDA programs (nvcc -cudart shared) under `gpuvp run`, with gpuvp's
// libcudart.so.13 and the platform; plus the bad-input and fault cases of issue 4. Every run is
// bounded in time (process.h).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace gpuvp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kGpuvp = GPUVP_BINARY;
const std::string kPrograms = GPUVP_RT_TEST_DIR;
const std::string kWorkloads = GPUVP_WORKLOAD_BIN_DIR;
const std::string kCudartDir = GPUVP_CUDART_LIB_DIR;
constexpr auto kRunTimeout = seconds(300);

ProcessResult gpuvp_run(const std::vector<std::string>& program, milliseconds timeout = kRunTimeout) {
  std::vector<std::string> argv = {kGpuvp, "run", "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  return run(argv, timeout);
}

std::string describe(const ProcessResult& r) {
  std::ostringstream text;
  text << "exit " << r.exit_code << (r.timed_out ? " (timed out)" : "") << "\n--- stdout\n" << r.out
       << "--- stderr\n" << r.err;
  return text.str();
}

// ---- libcudart.so.13 without a platform.

TEST(Cudart, NvccProgramLoadsOurLibraryAndReportsMissingPlatform) {
  const ProcessResult r = run({kPrograms + "/fatbin_default"}, seconds(60),
                              {{"LD_LIBRARY_PATH", kCudartDir}, {"GPUVP_SOCKET", ""}});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << describe(r);  // cudaDeviceSynchronize failed: no device
  EXPECT_NE(r.err.find("GPUVP_SOCKET is not set"), std::string::npos) << describe(r);
}

TEST(Cudart, UnreachablePlatformIsDevicesUnavailableNotAHang) {
  const ProcessResult r = run({kPrograms + "/fatbin_default"}, seconds(60),
                              {{"LD_LIBRARY_PATH", kCudartDir}, {"GPUVP_SOCKET", "/nonexistent/gpuvp.sock"}});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << describe(r);
}

// ---- gpuvp run.

TEST(GpuvpRun, StaticCudartIsDetected) {
  const ProcessResult r = gpuvp_run({kPrograms + "/static_cudart"}, seconds(60));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("-cudart shared"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, ExitCodeAndOutputArePreserved) {
  const ProcessResult r = gpuvp_run({"sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 7"}, seconds(60));
  EXPECT_EQ(r.exit_code, 7) << describe(r);
  EXPECT_EQ(r.out, "to-stdout\n") << describe(r);
  EXPECT_NE(r.err.find("to-stderr\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("timing model"), std::string::npos) << describe(r);  // sim.kernel_model=timing by default
}

TEST(GpuvpRun, ApiProbe) {
  const ProcessResult r = gpuvp_run({kPrograms + "/api_probe"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS api_probe"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("hello from block 0 tag 42\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("hello from block 1 tag 42\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("cudaGraphCreate is not supported"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, SeveralTranslationUnitsAndStreams) {
  const ProcessResult r = gpuvp_run({kPrograms + "/multi_tu_streams"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS multi_tu_streams"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, ManagedMemory) {
  const ProcessResult r = gpuvp_run({kPrograms + "/managed"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS managed"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, ManagedVariables) {
  const ProcessResult r = gpuvp_run({kPrograms + "/managed_variables"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS managed_variables"), std::string::npos) << describe(r);
}

// 8 streams of 300 commands before one synchronize: more than a device queue holds. The driver
// waits for room as a waiting host (HostWaiting for the queue's oldest command); polling for room
// alone hung, because simulated time moves only while the host says it waits.
TEST(GpuvpRun, FullQueuesAreAWaitNotAHang) {
  const ProcessResult r = gpuvp_run({kPrograms + "/full_queues"}, seconds(120));
  EXPECT_FALSE(r.timed_out) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS full_queues: 8 streams x 300 commands"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, StatsFileIsWritten) {
  const std::string stats = ::testing::TempDir() + "/gpuvp_run_stats.json";
  std::remove(stats.c_str());
  const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kWorkloads + "/workload_vector_add"}, kRunTimeout);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  FILE* file = std::fopen(stats.c_str(), "r");
  ASSERT_NE(file, nullptr) << describe(r);
  std::fclose(file);
}

// Polling without ever blocking (cudaEventQuery / cudaStreamQuery loops, host work between the
// queries): each query of unfinished work lets simulated time run for one quantum, so the loops
// end (the program bounds them and fails rather than hang), the results match the CPU, and two
// identical runs print the same query counts and give byte-identical device statistics (the
// host-side `bridge` group left out, as in tests/gpu_timing).
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string without_bridge(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  j["run"]["groups"].erase("bridge");
  for (auto& kernel : j["kernels"]) kernel["groups"].erase("bridge");
  return j.dump(2);
}

TEST(GpuvpRun, PollingQueriesAdvanceTimeDeterministically) {
  std::string first_out, first_stats;
  for (int i = 0; i < 2; ++i) {
    const std::string stats = ::testing::TempDir() + "/query_poll_" + std::to_string(i) + ".json";
    std::remove(stats.c_str());
    const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kPrograms + "/query_poll"}, kRunTimeout);
    ASSERT_FALSE(r.timed_out) << describe(r);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_NE(r.out.find("PASS query_poll"), std::string::npos) << describe(r);
    const std::string text = slurp(stats);
    ASSERT_FALSE(text.empty()) << describe(r);
    const nlohmann::json j = nlohmann::json::parse(text);
    const auto& bridge = j["run"]["groups"]["bridge"];
    ASSERT_GT(bridge["counters"]["host_waits_bounded"]["value"].get<uint64_t>(), 3u) << bridge.dump(2);
    if (i == 0) {
      first_out = r.out;
      first_stats = without_bridge(text);
      continue;
    }
    EXPECT_EQ(r.out, first_out) << "the query counts differ between identical runs";
    EXPECT_TRUE(without_bridge(text) == first_stats) << "device statistics differ between identical runs";
  }
}

// ---- Bad input and faults.

TEST(BadInput, IllegalLaunchIsInvalidConfiguration) {
  const ProcessResult r = gpuvp_run({kPrograms + "/illegal_launch"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS illegal_launch"), std::string::npos) << describe(r);
}

TEST(BadInput, WildStoreIsIllegalAddressAtNextSync) {
  const ProcessResult r = gpuvp_run({kPrograms + "/wild_store"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS wild_store"), std::string::npos) << describe(r);
}

TEST(BadInput, InvalidPointerToMemcpyIsInvalidValue) {
  const ProcessResult r = gpuvp_run({kPrograms + "/bad_memcpy"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS bad_memcpy"), std::string::npos) << describe(r);
}

TEST(BadInput, PlatformGoneIsDevicesUnavailableWithinBoundedTime) {
  Process gpuvp({kGpuvp, "run", "--", kPrograms + "/endless_kernel", "wait"});
  ASSERT_TRUE(gpuvp.wait_for_output("kernel running", seconds(120))) << gpuvp.out();
  ::kill(gpuvp.pid(), SIGKILL);  // the platform dies; the program (its child) lives on
  // The program notices within its heartbeat/socket bound and reports.
  EXPECT_TRUE(gpuvp.wait_for_output("PASS platform_gone", seconds(20))) << gpuvp.out();
}

TEST(BadInput, ProgramDyingMidKernelLeavesThePlatformServing) {
  const ProcessResult r = gpuvp_run(
      {"sh", "-c", "\"$0\" die; \"$1\"", kPrograms + "/endless_kernel", kWorkloads + "/workload_vector_add"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("kernel running"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("PASS vector_add"), std::string::npos) << describe(r);
}

// ---- Every workload, unmodified.

class Workload : public ::testing::TestWithParam<std::string> {};

TEST_P(Workload, PassesUnderGpuvpRun) {
  const ProcessResult r = gpuvp_run({kWorkloads + "/workload_" + GetParam()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS " + GetParam()), std::string::npos) << describe(r);
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  std::stringstream list(GPUVP_WORKLOAD_LIST);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(All, Workload, ::testing::ValuesIn(workload_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

// Occupancy is sized by ptxas's register count, end to end: workload_gemm under `gpuvp run` on the
// v100 preset (its sm_75 cubin, the nearest of major 7), the kernel scope's registers_per_thread
// against ptxas -v's "Used N registers" for the same source, built by tests/cubin.
TEST(GpuvpRun, OccupancyUsesPtxasRegisterCounts) {
  const std::string log = slurp(GPUVP_GEMM_PTXAS_LOG);
  std::smatch used;
  ASSERT_TRUE(std::regex_search(log, used, std::regex("Used ([0-9]+) registers"))) << log;
  const uint64_t registers = std::stoull(used[1]);
  const std::string stats = ::testing::TempDir() + "/gpuvp_run_registers.json";
  std::remove(stats.c_str());
  const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kWorkloads + "/workload_gemm"}, kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err.find("estimated"), std::string::npos) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(slurp(stats));
  ASSERT_EQ(j["kernels"].size(), 1u);
  const nlohmann::json& scheduler = j["kernels"][0]["groups"]["gpu.cta_scheduler"];
  EXPECT_EQ(scheduler["histograms"]["registers_per_thread"]["count"], 1u);
  EXPECT_EQ(scheduler["histograms"]["registers_per_thread"]["sum"], registers);
  EXPECT_EQ(scheduler["histograms"]["sass_arch"]["sum"], 75u);
  EXPECT_EQ(scheduler["counters"]["resources_cubin_nearest"], 1u);
  EXPECT_GT(scheduler["histograms"]["ctas_per_sm"]["sum"], 0u);
}

}  // namespace
}  // namespace gpuvp::test
