// End to end: unmodified CUDA programs (nvcc -cudart shared) under `gpuvp run`, with gpuvp's
// libcudart.so.13 and the platform; plus the bad-input and fault cases of issue 4. Every run is
// bounded in time (process.h).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <fstream>
#include <regex>
#include <map>
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
  EXPECT_NE(r.err.find("cudaGraphExternalSemaphoresSignalNodeGetParams is not supported"), std::string::npos)
      << describe(r);
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

// Wrappers that start the CUDA program (env, stdbuf) are not themselves CUDA programs: no
// warning about them; the program they start runs on the model. A program that never connects
// (a shell) is told so when it ends.
TEST(GpuvpRun, WrappedProgramsRunOnTheModelWithoutWarnings) {
  const std::vector<std::vector<std::string>> wrappers = {{"env", "GPUVP_WRAPPED=1"}, {"stdbuf", "-oL"}};
  for (const std::vector<std::string>& wrapper : wrappers) {
    std::vector<std::string> program = wrapper;
    program.push_back(kWorkloads + "/workload_vector_add");
    const ProcessResult r = gpuvp_run(program);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("PASS vector_add"), std::string::npos) << describe(r);
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << describe(r);
    EXPECT_EQ(r.err.find("not on the GPU model"), std::string::npos) << describe(r);
    EXPECT_EQ(r.err.find("no program connected"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find("kernels ran on the timing model"), std::string::npos) << describe(r);
  }
  const ProcessResult shell = gpuvp_run({"sh", "-c", "exit 0"}, seconds(60));
  EXPECT_EQ(shell.exit_code, 0) << describe(shell);
  EXPECT_NE(shell.err.find("no program connected to the platform"), std::string::npos) << describe(shell);
  EXPECT_EQ(shell.err.find("static CUDA runtime;"), std::string::npos) << describe(shell);
  // A wrapped program built with nvcc's default static runtime gets as far as gpuvp's libcuda.so.1
  // (cuInit) and stops at the driver's integrity check, before any kernel: named at exit.
  const ProcessResult wrapped_static = gpuvp_run({"env", "GPUVP_WRAPPED=1", kPrograms + "/static_cudart"}, seconds(60));
  EXPECT_NE(wrapped_static.err.find("an integrity check"), std::string::npos) << describe(wrapped_static);
  EXPECT_NE(wrapped_static.err.find("0 kernel launch(es)"), std::string::npos) << describe(wrapped_static);
  EXPECT_NE(wrapped_static.err.find("static_cudart is linked with the static CUDA runtime; rebuild it with `nvcc "
                                    "-cudart shared ...`"),
            std::string::npos)
      << describe(wrapped_static);
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

const nlohmann::json* kernel_entry(const nlohmann::json& stats, const std::string& name_part) {
  for (const auto& k : stats["kernels"]) {
    if (k["name"].get<std::string>().find(name_part) != std::string::npos) return &k;
  }
  return nullptr;
}

// 2,000 launches of one kernel: by default one statistics scope per kernel name, so the file
// stays small and the summary names each kernel once.
TEST(GpuvpRun, StatisticsOfThousandsOfLaunchesStaySmall) {
  const std::string stats = ::testing::TempDir() + "/many_launches.json";
  std::remove(stats.c_str());
  const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kPrograms + "/many_launches"}, seconds(600));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS many_launches: 2000 launches"), std::string::npos) << describe(r);
  const std::string text = slurp(stats);
  EXPECT_LT(text.size(), 10u << 20);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["kernel_detail"], "per_name");
  ASSERT_EQ(j["kernels"].size(), 2u);
  const nlohmann::json* accumulate = kernel_entry(j, "accumulate");
  const nlohmann::json* finish = kernel_entry(j, "finish");
  ASSERT_TRUE(accumulate != nullptr && finish != nullptr) << j["kernels"].dump().substr(0, 2000);
  EXPECT_EQ((*accumulate)["launches"], 2000);
  EXPECT_EQ((*finish)["launches"], 1);
  EXPECT_EQ(j["run"]["groups"]["gpu.command_processor"]["counters"]["kernels_launched"]["value"], 2001);
  EXPECT_EQ(occurrences(r.err, "\nkernel \""), 2u) << r.err.substr(0, 4000);
  EXPECT_NE(r.err.find("accumulatePii\": 2000 launches"), std::string::npos) << r.err.substr(0, 4000);
}

// The per-name totals are the sums (and extremes) of the per-launch scopes of the same run.
TEST(GpuvpRun, PerNameStatisticsAreTheSumsOfThePerLaunchOnes) {
  constexpr int kLaunches = 40;
  const std::string by_name = ::testing::TempDir() + "/many_launches_by_name.json";
  const std::string by_launch = ::testing::TempDir() + "/many_launches_by_launch.json";
  const std::string program = kPrograms + "/many_launches";
  const ProcessResult a = run({kGpuvp, "run", "--stats", by_name, "--", program, std::to_string(kLaunches)}, kRunTimeout);
  const ProcessResult b = run({kGpuvp, "run", "--stats", by_launch, "--stats-per-launch", "--", program,
                               std::to_string(kLaunches)},
                              kRunTimeout);
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  const nlohmann::json names = nlohmann::json::parse(slurp(by_name));
  const nlohmann::json launches = nlohmann::json::parse(slurp(by_launch));
  ASSERT_EQ(launches["kernels"].size(), static_cast<size_t>(kLaunches + 1));
  EXPECT_EQ(occurrences(b.err, "\nkernel "), static_cast<size_t>(kLaunches + 1));  // per launch on request
  const nlohmann::json* accumulate = kernel_entry(names, "accumulate");
  ASSERT_NE(accumulate, nullptr);
  EXPECT_EQ((*accumulate)["launches"], kLaunches);
  for (const char* counter : {"cycles", "warp_instructions", "thread_instructions"}) {
    uint64_t sum = 0, low = ~uint64_t{0}, high = 0, count = 0;
    for (const auto& k : launches["kernels"]) {
      if (k["name"] != (*accumulate)["name"]) continue;
      const uint64_t value = k["groups"]["gpu"]["counters"][counter].get<uint64_t>();
      sum += value;
      low = std::min(low, value);
      high = std::max(high, value);
      ++count;
    }
    EXPECT_EQ(count, static_cast<uint64_t>(kLaunches));
    EXPECT_GT(sum, 0u) << counter;
    EXPECT_EQ((*accumulate)["groups"]["gpu"]["counters"][counter], sum) << counter;
    EXPECT_EQ((*accumulate)["groups"]["gpu"]["per_launch_min"][counter], low) << counter;
    EXPECT_EQ((*accumulate)["groups"]["gpu"]["per_launch_max"][counter], high) << counter;
  }
  nlohmann::json run_a = names["run"], run_b = launches["run"];
  run_a["groups"].erase("bridge");
  run_b["groups"].erase("bridge");
  EXPECT_TRUE(run_a == run_b) << "the run scope depends on the kernel detail";
}

// A kernel that cannot run on the timing model (here: a program shipped as PTX only, so its
// registers are estimated, and by the estimate a CTA needs more registers than the SM has) runs
// on the functional model, and says so: one warning per kernel name with the reason, and the
// exit summary counts those launches instead of claiming the timing model.
TEST(GpuvpRun, TimingFallbacksAreLoud) {
  const std::string stats = ::testing::TempDir() + "/fallbacks.json";
  const ProcessResult r = run({kGpuvp, "run", "--set", "gpu.sm.registers=1024", "--stats", stats, "--",
                               kPrograms + "/many_launches_ptx_only", "3"},
                              kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS many_launches: 3 launches"), std::string::npos) << describe(r);
  EXPECT_EQ(occurrences(r.err, "runs on the functional model, not the timing model"), 2u) << describe(r);
  EXPECT_EQ(occurrences(r.err, "accumulatePii runs on the functional model"), 1u) << describe(r);
  EXPECT_NE(r.err.find("does not fit on an SM"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("gpuvp run: 4 kernel launches ran on the functional model instead of the timing model"),
            std::string::npos)
      << describe(r);
  EXPECT_EQ(r.err.find("ran on the timing model"), std::string::npos) << describe(r);
  // The estimate itself: warned once per kernel name, and counted in the exit report.
  EXPECT_EQ(occurrences(r.err, "registers per thread estimated from the PTX (no SASS"), 2u) << describe(r);
  EXPECT_NE(r.err.find("gpuvp run: 4 kernel launches had no resources from the SASS"), std::string::npos)
      << describe(r);
  const nlohmann::json j = nlohmann::json::parse(slurp(stats));
  EXPECT_EQ(j["run"]["groups"]["gpu.command_processor"]["counters"]["timing_fallbacks"]["value"], 4);
}

// ---- Runtime API surface: device attributes, host functions, pools, per-thread streams.

// "attr NAME VALUE" lines of device_attributes; an error is kept as its name in `errors`.
struct Attributes {
  std::map<std::string, long long> values;
  std::map<std::string, std::string> errors;
};

Attributes parse_attributes(const std::string& out) {
  Attributes a;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string tag, name, value;
    words >> tag >> name >> value;
    if (tag != "attr") continue;
    if (value == "error") {
      words >> a.errors[name];
    } else {
      a.values[name] = std::stoll(value);
    }
  }
  return a;
}

// Every enumerator of cudaDeviceAttr in the toolkit's driver_types.h (cudaDevAttrMax excluded:
// it has no value of its own).
std::vector<std::string> header_attributes() {
  const std::string text = slurp(std::string(GPUVP_CUDA_INCLUDE) + "/driver_types.h");
  const std::size_t begin = text.find("enum __device_builtin__ cudaDeviceAttr");
  const std::size_t end = text.find('}', begin);
  std::vector<std::string> names;
  if (begin == std::string::npos || end == std::string::npos) return names;
  const std::string body = text.substr(begin, end - begin);
  for (std::size_t at = body.find("cudaDevAttr"); at != std::string::npos; at = body.find("cudaDevAttr", at + 1)) {
    std::size_t stop = at;
    while (stop < body.size() && (std::isalnum(static_cast<unsigned char>(body[stop])) || body[stop] == '_')) ++stop;
    std::size_t after = body.find_first_not_of(" \t", stop);
    if (after != std::string::npos && body[after] == '=') names.push_back(body.substr(at, stop - at));
  }
  return names;
}

TEST(GpuvpRun, EveryDeviceAttributeAnswersFromThePreset) {
  const ProcessResult r = gpuvp_run({kPrograms + "/device_attributes"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_NE(r.out.find("PASS device_attributes"), std::string::npos) << describe(r);
  const Attributes a = parse_attributes(r.out);
  const std::vector<std::string> names = header_attributes();
  ASSERT_GT(names.size(), 100u);
  for (const std::string& name : names) {
    EXPECT_EQ(a.errors.count(name), 0u) << name << " returned " << (a.errors.count(name) ? a.errors.at(name) : "");
    EXPECT_EQ(a.values.count(name), 1u) << name << " was not asked (device_attributes.inc is stale?)";
  }
  // configs/v100.yaml, and what the runtime implements.
  const std::map<std::string, long long> expected = {
      {"cudaDevAttrComputeMode", 0},                         // cudaComputeModeDefault
      {"cudaDevAttrMultiProcessorCount", 84},                // gpu.sm.count
      {"cudaDevAttrClockRate", 1312000},                     // gpu.sm.clock, kHz
      {"cudaDevAttrMemoryClockRate", 877000},                // memory.hbm.clock, kHz
      {"cudaDevAttrGlobalMemoryBusWidth", 4096},             // 4 stacks x 8 channels x 128 bit
      {"cudaDevAttrL2CacheSize", 32 * 192 * 1024},           // memory.l2: 32 slices of 192 KiB
      {"cudaDevAttrMaxSharedMemoryPerMultiprocessor", 96 * 1024},
      {"cudaDevAttrMaxSharedMemoryPerBlock", 48 * 1024},
      {"cudaDevAttrMaxSharedMemoryPerBlockOptin", 96 * 1024},  // Volta: all of the SM's
      {"cudaDevAttrReservedSharedMemoryPerBlock", 0},
      {"cudaDevAttrMaxRegistersPerMultiprocessor", 65536},
      {"cudaDevAttrMaxRegistersPerBlock", 65536},
      {"cudaDevAttrMaxThreadsPerMultiProcessor", 2048},
      {"cudaDevAttrMaxBlocksPerMultiprocessor", 32},
      {"cudaDevAttrMaxThreadsPerBlock", 1024},
      {"cudaDevAttrWarpSize", 32},
      {"cudaDevAttrComputeCapabilityMajor", 7},
      {"cudaDevAttrComputeCapabilityMinor", 0},
      {"cudaDevAttrSingleToDoublePrecisionPerfRatio", 2},   // 64 FP32 / 32 FP64 lanes
      {"cudaDevAttrConcurrentKernels", 1},
      {"cudaDevAttrUnifiedAddressing", 1},
      {"cudaDevAttrManagedMemory", 1},
      {"cudaDevAttrConcurrentManagedAccess", 1},
      {"cudaDevAttrMemoryPoolsSupported", 1},
      {"cudaDevAttrAsyncEngineCount", 1},
      {"cudaDevAttrCooperativeLaunch", 1},                   // cudaLaunchCooperativeKernel, grid sync
      {"cudaDevAttrIntegrated", 0},
      {"cudaDevAttrHostRegisterSupported", 1},
      {"cudaDevAttrCanMapHostMemory", 1},                    // zero copy (MemMapHost)
      {"cudaDevAttrCanUseHostPointerForRegisteredMem", 1},   // mapped at the host's own address
  };
  for (const auto& [name, value] : expected) {
    ASSERT_EQ(a.values.count(name), 1u) << name;
    EXPECT_EQ(a.values.at(name), value) << name;
  }
  EXPECT_NE(r.out.find("prop totalGlobalMem 17179869184\n"), std::string::npos) << describe(r);  // 16384 MiB
}

TEST(GpuvpRun, DeviceAttributesFollowTheConfiguration) {
  const ProcessResult r = run({kGpuvp, "run", "--set", "gpu.sm.count=40", "--set", "gpu.sm.clock=1GHz", "--set",
                               "memory.hbm.clock=1GHz", "--set", "memory.l2.slices=16", "--set",
                               "gpu.sm.fp64_lanes=2", "--set", "gpu.sm.shared_memory=64KiB", "--set",
                               "gpu.sm.unified_l1_shared=0B", "--set", "gpu.sm.shared_carveouts=0,8,16,32,64", "--",
                               kPrograms + "/device_attributes"},
                              kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const Attributes a = parse_attributes(r.out);
  EXPECT_EQ(a.values.at("cudaDevAttrMultiProcessorCount"), 40);
  EXPECT_EQ(a.values.at("cudaDevAttrClockRate"), 1000000);
  EXPECT_EQ(a.values.at("cudaDevAttrMemoryClockRate"), 1000000);
  EXPECT_EQ(a.values.at("cudaDevAttrL2CacheSize"), 16 * 192 * 1024);
  EXPECT_EQ(a.values.at("cudaDevAttrSingleToDoublePrecisionPerfRatio"), 32);
  EXPECT_EQ(a.values.at("cudaDevAttrMaxSharedMemoryPerMultiprocessor"), 64 * 1024);
  EXPECT_EQ(a.values.at("cudaDevAttrMaxSharedMemoryPerBlockOptin"), 64 * 1024);
}

// Host functions in stream order; two identical runs give byte-identical device statistics (the
// host functions run while simulated time stands still).
TEST(GpuvpRun, HostFunctionsRunInStreamOrderDeterministically) {
  std::string first_out, first_stats;
  for (int i = 0; i < 2; ++i) {
    const std::string stats = ::testing::TempDir() + "/host_functions_" + std::to_string(i) + ".json";
    std::remove(stats.c_str());
    const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kPrograms + "/host_functions"}, kRunTimeout);
    ASSERT_FALSE(r.timed_out) << describe(r);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_NE(r.out.find("PASS host_functions"), std::string::npos) << describe(r);
    const std::string text = slurp(stats);
    ASSERT_FALSE(text.empty()) << describe(r);
    if (i == 0) {
      first_out = r.out;
      first_stats = without_bridge(text);
      continue;
    }
    EXPECT_EQ(r.out, first_out) << "the poll counts differ between identical runs";
    EXPECT_TRUE(without_bridge(text) == first_stats) << "device statistics differ between identical runs";
  }
}

// A program that waits for its host functions on a host barrier, never on the device (the CUDA
// samples' callback program does): the runtime waits for them itself, and says so.
TEST(GpuvpRun, HostFunctionsRunWhenTheProgramOnlyWaitsOnTheHost) {
  const ProcessResult r = gpuvp_run({kPrograms + "/host_function_barrier"}, seconds(180));
  EXPECT_FALSE(r.timed_out) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS host_function_barrier: 6 workloads"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("has stopped calling CUDA"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, StreamOrderedAllocation) {
  const ProcessResult r = gpuvp_run({kPrograms + "/mem_pools"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS mem_pools"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, GraphsBuiltNodeByNode) {
  const ProcessResult r = gpuvp_run({kPrograms + "/graphs_explicit"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS graphs_explicit"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, GraphsCapturedFromStreams) {
  const ProcessResult r = gpuvp_run({kPrograms + "/graphs_capture"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS graphs_capture"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, GraphConditionalNodes) {
  const ProcessResult r = gpuvp_run({kPrograms + "/graphs_conditional"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS graphs_conditional"), std::string::npos) << describe(r);
}

// A kernel launched as a graph node pays gpu.launch.graph_latency instead of gpu.launch.latency:
// with a 1 GHz core clock, the default 515 ns against 915 ns is 400 cycles less per launch.
TEST(GpuvpRun, GraphLaunchesHaveLowerLaunchOverhead) {
  const std::string stats = ::testing::TempDir() + "/graphs_timing.json";
  std::remove(stats.c_str());
  const ProcessResult r =
      run({kGpuvp, "run", "--set", "gpu.sm.clock=1GHz", "--stats", stats, "--", kPrograms + "/graphs_timing"}, kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_NE(r.out.find("PASS graphs_timing"), std::string::npos) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(slurp(stats));
  const nlohmann::json* streamed = kernel_entry(j, "tiny_stream");
  const nlohmann::json* graphed = kernel_entry(j, "tiny_graph");
  ASSERT_TRUE(streamed != nullptr && graphed != nullptr) << j["kernels"].dump().substr(0, 2000);
  EXPECT_EQ((*streamed)["launches"], 20);
  EXPECT_EQ((*graphed)["launches"], 20);
  // The fastest launch of each (caches warm in both): only the launch latency differs.
  const nlohmann::json& stream_gpu = (*streamed)["groups"]["gpu"];
  const nlohmann::json& graph_gpu = (*graphed)["groups"]["gpu"];
  const int64_t difference =
      stream_gpu["per_launch_min"]["cycles"].get<int64_t>() - graph_gpu["per_launch_min"]["cycles"].get<int64_t>();
  EXPECT_EQ(difference, 400) << stream_gpu.dump() << "\n" << graph_gpu.dump();
  EXPECT_LT(graph_gpu["counters"]["cycles"].get<int64_t>(), stream_gpu["counters"]["cycles"].get<int64_t>());
}

TEST(GpuvpRun, PinnedAndRegisteredHostMemory) {
  const ProcessResult r = gpuvp_run({kPrograms + "/pinned_memory"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS pinned_memory"), std::string::npos) << describe(r);
  // Beyond the DMA window, pinned memory is pageable: said once.
  EXPECT_NE(r.err.find("is pageable memory"), std::string::npos) << describe(r);
}

// Cooperative launches: grid-wide sync on the timing model and on the functional model, the
// occupancy API against the rule, cudaLaunchKernelEx's attributes (tests/runtime/cuda/cooperative.cu).
TEST(GpuvpRun, CooperativeLaunchesSyncTheWholeGrid) {
  for (const std::string model : {"timing", "functional"}) {
    const ProcessResult r =
        run({kGpuvp, "run", "--set", "sim.kernel_model=" + model, "--", kPrograms + "/cooperative"}, kRunTimeout);
    EXPECT_EQ(r.exit_code, 0) << model << "\n" << describe(r);
    EXPECT_NE(r.out.find("PASS cooperative"), std::string::npos) << model << "\n" << describe(r);
    // grid.sync() outside a cooperative launch has no workspace: the kernel traps, as on hardware.
    EXPECT_NE(r.out.find("non-cooperative grid sync: cudaErrorLaunchFailure"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find("thread block clusters (launch attribute 4) need compute capability 9.0"), std::string::npos)
        << describe(r);
  }
  // Fewer SMs: the largest co-resident grid shrinks with them, and still syncs.
  const ProcessResult small = run({kGpuvp, "run", "--set", "gpu.sm.count=6", "--", kPrograms + "/cooperative"}, kRunTimeout);
  EXPECT_EQ(small.exit_code, 0) << describe(small);
}

// Resource exhaustion (tests/runtime/cuda/resource_exhaustion.cu): device memory piece by piece to
// the last GiB, managed memory beyond any host, thousands of streams and events: clear errors,
// everything back when freed, and kernels still right. On a 2 GiB device: the platform backs every
// mapped device page with host memory, so filling a 16 GiB one would cost the host 16 GiB.
TEST(GpuvpRun, ExhaustedResourcesAreClearErrorsAndComeBack) {
  const std::string stats = ::testing::TempDir() + "resource_exhaustion_stats.json";
  const ProcessResult r = run({kGpuvp, "run", "--set", "memory.hbm.capacity=2GiB", "--stats", stats, "--",
                               kPrograms + "/resource_exhaustion"},
                              kRunTimeout);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS resource_exhaustion"), std::string::npos) << describe(r);
  const nlohmann::json json = nlohmann::json::parse(slurp(stats));
  const nlohmann::json& cp = json["run"]["groups"]["gpu.command_processor"]["counters"];
  EXPECT_GE(cp["bytes_mapped"]["value"].get<uint64_t>(), uint64_t{2} << 30) << cp.dump(2);
  EXPECT_EQ(cp["bytes_mapped"]["value"], cp["bytes_unmapped"]["value"]) << cp.dump(2);
}

// Zero copy (tests/runtime/cuda/zero_copy.cu): kernels read and write mapped host memory in place,
// system-scope atomics on it, a kernel leaving a spin loop once the host sets a mapped flag; the
// accesses cross the GMMU's PCIe link on the timing model.
TEST(GpuvpRun, MappedHostMemoryIsAccessedInPlace) {
  const std::string stats = ::testing::TempDir() + "zero_copy_stats.json";
  const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kPrograms + "/zero_copy"}, kRunTimeout);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS zero_copy"), std::string::npos) << describe(r);
  const nlohmann::json json = nlohmann::json::parse(slurp(stats));
  const nlohmann::json& gmmu = json["run"]["groups"]["uvm.gmmu"]["counters"];
  // Every access to mapped memory crossed the GMMU's PCIe link, and none migrated a page: saxpy
  // alone reads at least 3 x 10,000 x 2 floats and writes 2 x 10,000 over it.
  EXPECT_GT(gmmu["remote_accesses"]["value"].get<uint64_t>(), 0u) << gmmu.dump(2);
  EXPECT_GE(gmmu["remote_bytes"]["value"].get<uint64_t>(), 5u * 10000 * sizeof(float)) << gmmu.dump(2);
  EXPECT_EQ(gmmu["far_faults"]["value"].get<uint64_t>(), 0u) << gmmu.dump(2);
  EXPECT_EQ(gmmu["migrated_bytes"]["value"].get<uint64_t>(), 0u) << gmmu.dump(2);
  // Through cudaHostGetDevicePointer's pointers the statistics repeat exactly.
  std::string repeat[2];
  for (int i = 0; i < 2; ++i) {
    const std::string path = ::testing::TempDir() + "zero_copy_repeat" + std::to_string(i) + ".json";
    const ProcessResult again =
        run({kGpuvp, "run", "--stats", path, "--", kPrograms + "/zero_copy", "no-host-pointers"}, kRunTimeout);
    ASSERT_EQ(again.exit_code, 0) << describe(again);
    repeat[i] = without_bridge(slurp(path));
  }
  EXPECT_EQ(repeat[0], repeat[1]);
  const ProcessResult functional =
      run({kGpuvp, "run", "--set", "sim.kernel_model=functional", "--", kPrograms + "/zero_copy", "no-spin"},
          kRunTimeout);
  EXPECT_EQ(functional.exit_code, 0) << describe(functional);
  EXPECT_NE(functional.out.find("PASS zero_copy"), std::string::npos) << describe(functional);
}

// IPC between programs on one platform (tests/runtime/cuda/ipc.cu starts copies of itself): one
// opens and doubles another's buffer, which sees the writes; handles of exited programs and of
// freed memory fail clearly.
TEST(GpuvpRun, IpcHandlesShareDeviceMemoryBetweenPrograms) {
  const ProcessResult r = gpuvp_run({kPrograms + "/ipc"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS ipc"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("names no memory: its program freed it or exited"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, PerThreadDefaultStreamBuild) {
  // The program really calls the per-thread variants.
  const ProcessResult symbols = run({"nm", "-D", "--undefined-only", kPrograms + "/per_thread_stream"}, seconds(60));
  ASSERT_EQ(symbols.exit_code, 0) << describe(symbols);
  for (const char* name : {"cudaLaunchKernel_ptsz", "cudaMemcpy_ptds", "cudaStreamSynchronize_ptsz",
                           "cudaLaunchHostFunc_ptsz", "cudaMemsetAsync_ptsz", "cudaProfilerStart",
                           "cudaStreamIsCapturing_ptsz", "cudaStreamGetCaptureInfo_ptsz"}) {
    EXPECT_NE(symbols.out.find(name), std::string::npos) << name << "\n" << symbols.out;
  }
  const ProcessResult r = gpuvp_run({kPrograms + "/per_thread_stream"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS per_thread_stream"), std::string::npos) << describe(r);
  // The one unimplemented call (twice) is named once, under its per-thread name.
  const std::string said = "cudaSignalExternalSemaphoresAsync_ptsz is not supported by the gpuvp CUDA runtime";
  EXPECT_NE(r.err.find(said), std::string::npos) << describe(r);
  const std::string any = "is not supported by the gpuvp CUDA runtime";
  EXPECT_EQ(r.err.find(any), r.err.rfind(any)) << describe(r);  // said once, and nothing else unsupported
}

// ---- The device-side runtime: in-kernel malloc/free/new/delete, dynamic parallelism.

// The program checks its own results against CPU references (heap size limit, thousands of
// threads allocating at once, blocks read by the host, exhaustion, new/delete); the statistics
// count every call, the same on every run (calls are served in a fixed order).
TEST(DeviceRuntime, DeviceHeapUnderGpuvpRun) {
  std::string previous;
  for (int i = 0; i < 2; ++i) {
    const std::string stats = ::testing::TempDir() + "/device_malloc_" + std::to_string(i) + ".json";
    std::remove(stats.c_str());
    const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kPrograms + "/device_malloc"}, kRunTimeout);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_NE(r.out.find("PASS device_malloc"), std::string::npos) << describe(r);
    const std::string text = slurp(stats);
    const nlohmann::json j = nlohmann::json::parse(text);
    const auto& counters = j["run"]["groups"]["gpu.device_runtime"]["counters"];
    // fill: 2048; grab: 1024 of 2048 (the rest NULL); chains: 256 x 12 new.
    EXPECT_EQ(counters["mallocs"]["value"], 2048 + 1024 + 256 * 12) << counters.dump(2);
    EXPECT_EQ(counters["malloc_failures"]["value"], 1024) << counters.dump(2);
    EXPECT_EQ(counters["frees"]["value"], 2048 + 1024 + 256 * 12) << counters.dump(2);
    if (i == 1) {
      EXPECT_EQ(without_bridge(text), previous);
    }
    previous = without_bridge(text);
  }
}

// A -rdc=true program: tree sum, quicksort in device-created streams, a tail launch, the nesting
// limit; checked by the program against CPU references, on the timing model.
TEST(DeviceRuntime, DynamicParallelismUnderGpuvpRun) {
  const std::string stats = ::testing::TempDir() + "/cdp.json";
  std::remove(stats.c_str());
  const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kPrograms + "/cdp"}, kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS cdp"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("kernels ran on the timing model"), std::string::npos) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(slurp(stats));
  const auto& counters = j["run"]["groups"]["gpu.device_runtime"]["counters"];
  // tree_sum: 2 x 255 splits of 2^16 into 256-element leaves; dive: 24 levels launch, one refused.
  EXPECT_GE(counters["child_launches"]["value"].get<uint64_t>(), 510u + 24u) << counters.dump(2);
  EXPECT_EQ(counters["child_launch_errors"]["value"], 1) << counters.dump(2);
  // Every child grid is a kernel launch of its own in the statistics.
  EXPECT_EQ(j["run"]["groups"]["gpu.command_processor"]["counters"]["kernels_launched"]["value"].get<uint64_t>(),
            4 + counters["child_launches"]["value"].get<uint64_t>());
}

// The toolkit's CUB and Thrust radix sorts (100,000 keys, checked against std::sort in the
// program) load and run on the timing model: every instruction they use is accepted.
TEST(GpuvpRun, CubAndThrustSortsRunOnTheTimingModel) {
  const ProcessResult r = gpuvp_run({kPrograms + "/cub_sort"}, seconds(600));
  ASSERT_FALSE(r.timed_out) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS cub_sort"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("instead of the timing model"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("runs on the functional model"), std::string::npos) << describe(r);
}

// wmma (tensor cores) and cp.async through the runtime, checked against a CPU GEMM in the
// program, on the timing model.
TEST(GpuvpRun, TensorCoresAndAsyncCopiesRunOnTheTimingModel) {
  const ProcessResult r = gpuvp_run({kPrograms + "/tensor_and_async"});
  ASSERT_FALSE(r.timed_out) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS tensor_and_async"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("instead of the timing model"), std::string::npos) << describe(r);
}

// Warp collectives that diverged lanes reach at different times (two call sites, an out-of-line
// block, ballots in a partitioning loop, early exits), checked against a CPU reference in the
// program, on the timing model.
TEST(GpuvpRun, WarpCollectivesWaitForEveryMemberLane) {
  const ProcessResult r = gpuvp_run({kPrograms + "/warp_collectives"});
  ASSERT_FALSE(r.timed_out) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS warp_collectives"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("instead of the timing model"), std::string::npos) << describe(r);
}

// cuda::barrier and cuda::pipeline (mbarrier objects, cp.async.mbarrier.arrive), including
// producers and consumers in one warp, checked against CPU references, on the timing model.
TEST(GpuvpRun, BarriersAndPipelinesRunOnTheTimingModel) {
  const ProcessResult r = gpuvp_run({kPrograms + "/barriers_and_pipelines"});
  ASSERT_FALSE(r.timed_out) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS barriers_and_pipelines"), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("instead of the timing model"), std::string::npos) << describe(r);
}

// ---- Bad input and faults.

// `--set` takes one value: the program's own dash arguments after `--` reach the program.
TEST(GpuvpRun, SetBeforeTheProgramLeavesItsDashArguments) {
  const ProcessResult r =
      run({kGpuvp, "run", "--set", "sim.threads=1", "--set", "sim.kernel_model=functional", "--", "/bin/echo", "-n",
           "dash-argument-kept"},
          kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.rfind("dash-argument-kept", 0), 0u) << describe(r);  // -n went to echo, not to gpuvp
}

// A kernel whose call tree recurses (-rdc: no static stack bound in the cubin) launches, and its
// results match the CPU's.
TEST(GpuvpRun, RecursiveKernelLaunches) {
  const ProcessResult r = run({kGpuvp, "run", "--", kPrograms + "/recursive_kernel"}, kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS recursive_kernel"), std::string::npos) << describe(r);
}

// A failed device-side assert() answers cudaErrorAssert (not a generic launch failure) even when
// the source path pushes the word "Assertion" out of the runtime's completion message.
TEST(BadInput, DeviceAssertAnswersCudaErrorAssert) {
  const ProcessResult r = run({kGpuvp, "run", "--", kPrograms + "/device_assert"}, kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS device_assert"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("(cudaErrorAssert)"), std::string::npos) << describe(r);
}

// Every faulting launch is counted in the exit summary, the first fault of each kernel is shown
// whole on stderr, and the CTA and thread survive a long kernel name in the runtime's message.
TEST(BadInput, EveryFaultingLaunchIsCountedAndItsPlaceShown) {
  const std::string stats = ::testing::TempDir() + "/many_faults.json";
  const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kPrograms + "/many_faults"}, kRunTimeout);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS many_faults"), std::string::npos) << describe(r);
  const nlohmann::json j = nlohmann::json::parse(slurp(stats));
  const uint64_t faults = j["run"]["groups"]["gpu.command_processor"]["counters"]["kernel_faults"]["value"].get<uint64_t>();
  EXPECT_GE(faults, 2u) << describe(r);
  EXPECT_NE(r.err.find("gpuvp run: " + std::to_string(faults) + " kernel launches faulted:"), std::string::npos)
      << describe(r);
  EXPECT_NE(r.err.find("(" + std::to_string(faults) + " launches), first: illegal address"), std::string::npos)
      << describe(r);
  // The platform tells the first fault of the kernel once, whole (name and PTX line included).
  EXPECT_EQ(occurrences(r.err, "faulted: illegal address"), 1u) << describe(r);
  EXPECT_NE(r.err.find("a_kernel_whose_mangled_template_name_is_long_enough_to_fill_a_completion_message"
                       "IfLi2EEvPT_ at "),
            std::string::npos)
      << describe(r);
  // The runtime's error line (cut to a completion record) still says where.
  const size_t runtime_line = r.err.find("(cudaErrorIllegalAddress)");
  ASSERT_NE(runtime_line, std::string::npos) << describe(r);
  const std::string line = r.err.substr(r.err.rfind('\n', runtime_line) + 1, runtime_line - r.err.rfind('\n', runtime_line));
  EXPECT_NE(line.find("CTA (3,0,0), thread (17,0,0)"), std::string::npos) << line;
}

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

// ---- Textures, surfaces, CUDA arrays, pitched and 2D/3D copies (on the timing model).

TEST(GpuvpRun, TexturesMatchTheCpuReference) {
  const std::string stats = ::testing::TempDir() + "/gpuvp_run_textures.json";
  std::remove(stats.c_str());
  const ProcessResult r = run({kGpuvp, "run", "--stats", stats, "--", kPrograms + "/textures"}, kRunTimeout);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS textures"), std::string::npos) << describe(r);
  // The approximate timing of texture fetches is stated in the statistics.
  const nlohmann::json j = nlohmann::json::parse(slurp(stats));
  const nlohmann::json& launches = j["run"]["groups"]["gpu.command_processor"]["counters"]["texture_launches"];
  EXPECT_GT(launches["value"].get<uint64_t>(), 10u) << launches;
  EXPECT_NE(launches["doc"].get<std::string>().find("approximation"), std::string::npos) << launches;
}

TEST(GpuvpRun, SurfacesReadAndWrite) {
  const ProcessResult r = gpuvp_run({kPrograms + "/surfaces"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS surfaces"), std::string::npos) << describe(r);
}

TEST(GpuvpRun, PitchedArrayAnd3DCopies) {
  const ProcessResult r = gpuvp_run({kPrograms + "/copies"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS copies"), std::string::npos) << describe(r);
}

TEST(BadInput, TextureAndSurfaceApiErrors) {
  const ProcessResult r = gpuvp_run({kPrograms + "/texture_bad"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("PASS texture_bad"), std::string::npos) << describe(r);
}

// A kernel given a destroyed or wild texture handle, or writing outside a surface in trap mode,
// faults with a message naming the handle; the platform serves the next program.
TEST(BadInput, BadTextureHandlesFaultAndThePlatformKeepsServing) {
  const std::string program = kPrograms + "/texture_bad";
  const ProcessResult r = gpuvp_run({"sh", "-c", "\"$0\" destroyed && \"$0\" wild && \"$0\" trap && \"$1\"", program,
                                     kPrograms + "/surfaces"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  for (const char* mode : {"destroyed", "wild", "trap"}) {
    EXPECT_NE(r.out.find(std::string("PASS texture_bad ") + mode), std::string::npos) << mode << "\n" << describe(r);
  }
  EXPECT_NE(r.err.find("names no live texture object"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("texture handle 0x123456789 names no texture object"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("is outside the 160-byte x 2 surface"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("PASS surfaces"), std::string::npos) << describe(r);
}

}  // namespace
}  // namespace gpuvp::test
