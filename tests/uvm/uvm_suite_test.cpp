// The unified-memory suite (sw/workloads/uvm/uvm_suite.cu) under `gpuvp run`: every program
// passes its CPU-reference check for every prefetcher and eviction policy, and the GMMU's
// statistics show what each configuration must do (faults, prefetches, evictions, write-backs).
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace gpuvp::test {
namespace {

const std::string kGpuvp = GPUVP_BINARY;
const std::string kSuite = GPUVP_UVM_SUITE;

struct SuiteRun {
  ProcessResult process;
  nlohmann::json stats;
  uint64_t gmmu(const char* name) const {
    return stats["run"]["groups"]["uvm.gmmu"]["counters"][name]["value"].get<uint64_t>();
  }
  uint64_t gpu_cycles() const { return stats["run"]["groups"]["gpu"]["counters"]["cycles"]["value"].get<uint64_t>(); }
  std::string describe() const {
    std::ostringstream text;
    text << "exit " << process.exit_code << (process.timed_out ? " (timed out)" : "") << "\n--- stdout\n"
         << process.out << "--- stderr\n" << process.err;
    return text.str();
  }
};

SuiteRun run_suite(const std::string& program, const std::vector<std::string>& sets) {
  const std::string stats = ::testing::TempDir() + "/uvm_suite_" + program + "_" + std::to_string(::getpid()) + ".json";
  std::remove(stats.c_str());
  std::vector<std::string> argv = {kGpuvp, "run", "--stats", stats};
  for (const std::string& s : sets) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  argv.insert(argv.end(), {"--", kSuite, program});
  SuiteRun r{run(argv, std::chrono::seconds(300)), {}};
  std::ifstream in(stats);
  if (in) r.stats = nlohmann::json::parse(in, nullptr, false);
  return r;
}

void expect_pass(const SuiteRun& r, const std::string& program) {
  EXPECT_EQ(r.process.exit_code, 0) << r.describe();
  EXPECT_NE(r.process.out.find("PASS uvm " + program), std::string::npos) << r.describe();
  ASSERT_TRUE(r.stats.is_object()) << "no statistics JSON\n" << r.describe();
}

class Prefetchers : public ::testing::TestWithParam<const char*> {};

TEST_P(Prefetchers, StreamPassesAndFaultsOnlyWhatThePrefetcherLeft) {
  const SuiteRun r = run_suite("stream", {std::string("uvm.prefetcher=") + GetParam()});
  expect_pass(r, "stream");
  if (!r.stats.is_object()) return;
  const uint64_t pages = 3 * (1u << 20) / 4096;  // three 1 MiB arrays
  EXPECT_GT(r.gmmu("far_faults"), 0u);
  EXPECT_GE(r.gmmu("migrated_bytes"), 3u << 20);  // every byte came over at least once
  if (std::string(GetParam()) == "none") {
    EXPECT_EQ(r.gmmu("far_faults"), pages);
    EXPECT_EQ(r.gmmu("prefetched_pages"), 0u);
  } else {
    EXPECT_LT(r.gmmu("far_faults"), pages);
    EXPECT_GT(r.gmmu("useful_prefetches"), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Uvm, Prefetchers, ::testing::Values("none", "random", "sequential_local", "tbn"));

TEST(UvmSuite, TbnFaultsLeastAndRunsFastestOnAStream) {
  const SuiteRun none = run_suite("stream", {"uvm.prefetcher=none"});
  const SuiteRun seq = run_suite("stream", {"uvm.prefetcher=sequential_local"});
  const SuiteRun tbn = run_suite("stream", {"uvm.prefetcher=tbn"});
  for (const SuiteRun* r : {&none, &seq, &tbn}) expect_pass(*r, "stream");
  EXPECT_LT(tbn.gmmu("far_faults"), seq.gmmu("far_faults"));
  EXPECT_LT(seq.gmmu("far_faults"), none.gmmu("far_faults"));
  EXPECT_LT(tbn.gpu_cycles(), seq.gpu_cycles());
  EXPECT_LT(seq.gpu_cycles(), none.gpu_cycles());
}

class Evictions : public ::testing::TestWithParam<const char*> {};

TEST_P(Evictions, OversubscribedWorkingSetPassesWithEvictionsAndWriteBacks) {
  const SuiteRun r = run_suite("oversub", {std::string("uvm.eviction=") + GetParam(), "uvm.device_memory=1 MiB"});
  expect_pass(r, "oversub");
  if (!r.stats.is_object()) return;
  EXPECT_GT(r.gmmu("evicted_bytes"), 0u);
  EXPECT_GT(r.gmmu("writeback_bytes"), 0u);  // the kernels wrote the pages they lost
  EXPECT_GE(r.gmmu("migrated_bytes"), 2u * (4u << 20) - (1u << 20));  // the second pass refaults
}

INSTANTIATE_TEST_SUITE_P(Uvm, Evictions, ::testing::Values("lru_4k", "lru_2m", "random", "sequential_local", "lfu"));

TEST(UvmSuite, RandomAndStridedAccessPass) {
  for (const char* program : {"random", "strided"}) {
    const SuiteRun r = run_suite(program, {});
    expect_pass(r, program);
    if (r.stats.is_object()) {
      EXPECT_GT(r.gmmu("far_faults"), 0u) << program;
    }
  }
}

TEST(UvmSuite, ExplicitPrefetchLeavesNothingToFault) {
  const SuiteRun r = run_suite("prefetch", {});
  expect_pass(r, "prefetch");
  if (!r.stats.is_object()) return;
  EXPECT_EQ(r.gmmu("far_faults"), 0u);
  EXPECT_EQ(r.gmmu("explicit_prefetch_bytes"), 3u << 20);
}

TEST(UvmSuite, HostTouchBetweenKernelsSendsThePagesBackAndForth) {
  const SuiteRun r = run_suite("retouch", {"uvm.prefetcher=none"});
  expect_pass(r, "retouch");
  if (!r.stats.is_object()) return;
  const uint64_t pages = (1u << 16) * 4 / 4096;
  EXPECT_EQ(r.gmmu("far_faults"), 2 * pages);          // each kernel faults the array in
  EXPECT_EQ(r.gmmu("writeback_bytes"), 2 * pages * 4096);  // and the host takes it back dirty
}

TEST(UvmSuite, RandomPrefetcherIsSeededAndReproducible) {
  const SuiteRun a = run_suite("stream", {"uvm.prefetcher=random"});
  const SuiteRun b = run_suite("stream", {"uvm.prefetcher=random"});
  expect_pass(a, "stream");
  expect_pass(b, "stream");
  if (!a.stats.is_object() || !b.stats.is_object()) return;
  EXPECT_EQ(a.stats["run"]["groups"]["uvm.gmmu"], b.stats["run"]["groups"]["uvm.gmmu"]);
  EXPECT_EQ(a.gpu_cycles(), b.gpu_cycles());
}

}  // namespace
}  // namespace gpuvp::test
