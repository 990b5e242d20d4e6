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
  // A counter of uvm.gmmu in the scope of the k-th kernel (launch order).
  uint64_t kernel_gmmu(std::size_t k, const char* name) const {
    const nlohmann::json& kernels = stats["kernels"];
    if (!kernels.is_array() || k >= kernels.size()) return ~uint64_t{0};
    const nlohmann::json& counters = kernels[k]["groups"]["uvm.gmmu"]["counters"];
    return counters.contains(name) ? counters[name].get<uint64_t>() : 0;
  }
  std::size_t kernels() const { return stats["kernels"].is_array() ? stats["kernels"].size() : 0; }
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
  std::vector<std::string> argv = {kGpuvp, "run", "--stats", stats, "--stats-per-launch"};
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
  EXPECT_EQ(r.gmmu("host_migrated_pages"), 2 * pages);     // page by page, as the host touched them
  ASSERT_EQ(r.kernels(), 2u);
  EXPECT_EQ(r.kernel_gmmu(1, "far_faults"), pages);        // the host touched (and wrote) every page
}

// Host access is page-granular (the runtime's fault handler): between two kernels the host
// reads 16 pages and writes one of 256; only those 17 leave the device and fault again, for
// every prefetcher (a prefetcher may bring only host-resident pages: the same 17).
class PartialTouch : public ::testing::TestWithParam<const char*> {};

TEST_P(PartialTouch, OnlyThePagesTheHostTouchedMoveAndRefault) {
  const SuiteRun r = run_suite("partial", {std::string("uvm.prefetcher=") + GetParam()});
  expect_pass(r, "partial");
  if (!r.stats.is_object()) return;
  const uint64_t pages = 256, touched = 17;
  ASSERT_EQ(r.kernels(), 2u);
  EXPECT_GE(r.kernel_gmmu(0, "migrated_bytes"), pages * 4096);
  EXPECT_GT(r.kernel_gmmu(1, "far_faults"), 0u);
  EXPECT_LE(r.kernel_gmmu(1, "far_faults"), touched);
  EXPECT_EQ(r.kernel_gmmu(1, "migrated_bytes"), touched * 4096);  // untouched pages stayed on the device
  EXPECT_EQ(r.gmmu("host_migrated_pages"), touched + pages);      // 17 between the kernels, all at the end
  EXPECT_EQ(r.gmmu("writeback_bytes"), (touched + pages) * 4096);
  if (std::string(GetParam()) == "none") {
    EXPECT_EQ(r.kernel_gmmu(1, "far_faults"), touched);
  }
}

INSTANTIATE_TEST_SUITE_P(Uvm, PartialTouch, ::testing::Values("none", "random", "sequential_local", "tbn"));

TEST(UvmSuite, HostAccessDuringAKernelRuntimeCopiesAndChainedHandlersWork) {
  for (const char* program : {"concurrent", "copies", "threads", "chain"}) {
    const SuiteRun r = run_suite(program, {});
    expect_pass(r, program);
  }
}

// With the constant and instruction caches on, the SMs send fills of their own beside the loads
// that the L1 TLBs hold on far faults. An END_REQ a cluster port repeats for a request it had
// queued must not release an SM whose own request is still held by its TLB (the next request
// would overwrite it and the kernel would never end).
TEST(UvmSuite, ThreadsFinishWithTheConstantAndInstructionCachesOn) {
  const SuiteRun r = run_suite("threads", {"gpu.sm.const_cache.size=64 KiB", "gpu.sm.icache.size=128 KiB"});
  expect_pass(r, "threads");
  EXPECT_FALSE(r.process.timed_out) << r.describe();
}

TEST(UvmSuite, ReadMostlyHostReadsLeaveTheDataOnTheDevice) {
  const SuiteRun r = run_suite("readmostly", {"uvm.prefetcher=none"});
  expect_pass(r, "readmostly");
  if (!r.stats.is_object()) return;
  const uint64_t pages = 64;
  ASSERT_EQ(r.kernels(), 4u);
  EXPECT_EQ(r.kernel_gmmu(0, "far_faults"), 2 * pages);  // x (duplicated) and y
  EXPECT_EQ(r.kernel_gmmu(0, "read_duplicated_pages"), pages);
  EXPECT_EQ(r.kernel_gmmu(2, "far_faults"), 0u);  // after the host read x and y: x still there, z untouched
  EXPECT_EQ(r.kernel_gmmu(2, "migrated_bytes"), 0u);
  EXPECT_EQ(r.gmmu("duplicate_host_reads"), pages);  // the host's reads of x moved nothing
  EXPECT_GE(r.gmmu("duplicate_collapses"), 1u);      // the host's write to x[5]
  EXPECT_EQ(r.kernel_gmmu(3, "far_faults"), 1u + pages);  // x's collapsed page, and y (the host read it)
}

TEST(UvmSuite, PreferredLocationHostIsZeroCopy) {
  for (const char* prefetcher : {"none", "tbn"}) {
    const SuiteRun r = run_suite("prefhost", {std::string("uvm.prefetcher=") + prefetcher});
    expect_pass(r, "prefhost");
    if (!r.stats.is_object()) continue;
    EXPECT_EQ(r.gmmu("migrated_bytes"), 0u) << prefetcher;
    EXPECT_EQ(r.gmmu("prefetched_pages"), 0u) << prefetcher;
    EXPECT_EQ(r.gmmu("remote_mappings"), 3u * 64u) << prefetcher;
    EXPECT_GT(r.gmmu("remote_accesses"), 0u) << prefetcher;
    EXPECT_EQ(r.gmmu("host_migrated_pages"), 0u) << prefetcher;  // the host reads c where it is
    EXPECT_EQ(r.gmmu("writeback_bytes"), 0u) << prefetcher;
  }
}

TEST(UvmSuite, AccessedByMapsWithoutFaultsOrMigration) {
  const SuiteRun r = run_suite("accessedby", {"uvm.prefetcher=none"});
  expect_pass(r, "accessedby");
  if (!r.stats.is_object()) return;
  EXPECT_EQ(r.gmmu("remote_mappings"), 64u);
  EXPECT_EQ(r.gmmu("far_faults"), 64u);  // y only
  EXPECT_EQ(r.gmmu("migrated_bytes"), 64u * 4096u);
  EXPECT_GT(r.gmmu("remote_accesses"), 0u);
}

TEST(UvmSuite, PreferredLocationDeviceSurvivesAnOversubscribingStream) {
  const SuiteRun r = run_suite("prefdevice", {"uvm.prefetcher=none", "uvm.device_memory=1 MiB"});
  expect_pass(r, "prefdevice");
  if (!r.stats.is_object()) return;
  ASSERT_EQ(r.kernels(), 3u);
  EXPECT_GT(r.kernel_gmmu(1, "evicted_pages"), 0u);
  EXPECT_EQ(r.kernel_gmmu(2, "far_faults"), 0u);
  EXPECT_EQ(r.gmmu("preferred_evictions"), 0u);
}

TEST(UvmSuite, BadAdviceIsAClearErrorAndUnsetUndoesIt) {
  const SuiteRun r = run_suite("adviseerrors", {"uvm.prefetcher=none"});
  expect_pass(r, "adviseerrors");
  if (!r.stats.is_object()) return;
  EXPECT_EQ(r.gmmu("advice_calls"), 6u);
  EXPECT_EQ(r.gmmu("remote_mappings"), 16u);  // SetAccessedBy mapped the 16 pages, Unset took them back
  EXPECT_EQ(r.gmmu("far_faults"), 16u);       // then the kernel faulted them in as without advice
  EXPECT_EQ(r.gmmu("remote_accesses"), 0u);
}

// The bridge's counters (polls, doorbells, host waits) count how the host process and the
// platform's I/O thread met in wall-clock time; everything else must be byte-identical.
std::string without_host_side(const nlohmann::json& stats) {
  nlohmann::json j = stats;
  j["run"]["groups"].erase("bridge");
  for (auto& kernel : j["kernels"]) kernel["groups"].erase("bridge");
  return j.dump(2);
}

// Idle skipping (seed 003 §C.2, gpu.sm.idle_skip): while every warp waits on far faults the SMs
// jump to the next landing instead of ticking each cycle; no reported number may change. The
// strided program faults one page per thread without a prefetcher: the kernel is nearly all
// fault waiting (several 45 us batches).
TEST(UvmSuite, IdleSkippingLeavesEveryNumberOfAFaultBoundRunUnchanged) {
  const SuiteRun skip = run_suite("strided", {"uvm.prefetcher=none", "gpu.sm.idle_skip=true"});
  const SuiteRun tick = run_suite("strided", {"uvm.prefetcher=none", "gpu.sm.idle_skip=false"});
  expect_pass(skip, "strided");
  expect_pass(tick, "strided");
  if (!skip.stats.is_object() || !tick.stats.is_object()) return;
  // Fault-bound: at least two fault latencies (513 faults, 256 MSHRs) at 1312 MHz.
  EXPECT_EQ(skip.gmmu("far_faults"), 513u);
  EXPECT_GT(skip.gpu_cycles(), 2u * 45u * 1312u);
  const nlohmann::json stall =
      skip.stats.value(nlohmann::json::json_pointer("/run/aggregates/uvm.l1_tlb[*]/counters/fault_stall_cycles/value"),
                       nlohmann::json(0));
  EXPECT_GT(stall.get<uint64_t>(), skip.gpu_cycles());  // summed over the SMs' TLBs
  EXPECT_TRUE(without_host_side(skip.stats) == without_host_side(tick.stats))
      << "statistics differ with gpu.sm.idle_skip on and off";
}

// Windowed SM stepping (sim.window): far faults, replays and migrations give byte-identical
// statistics with 1 and 2 host threads, and the program's check passes.
TEST(UvmSuite, WindowedSteppingIsIdenticalForOneAndTwoThreads) {
  const SuiteRun one = run_suite("strided", {"uvm.prefetcher=none", "sim.window=16", "sim.threads=1"});
  const SuiteRun two = run_suite("strided", {"uvm.prefetcher=none", "sim.window=16", "sim.threads=2", "sim.parallel_min_work=0"});
  expect_pass(one, "strided");
  expect_pass(two, "strided");
  if (!one.stats.is_object() || !two.stats.is_object()) return;
  EXPECT_EQ(one.gmmu("far_faults"), 513u);
  EXPECT_TRUE(without_host_side(one.stats) == without_host_side(two.stats))
      << "statistics differ between 1 and 2 threads with sim.window=16";
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
