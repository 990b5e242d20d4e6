// `gpuvp run --trace` on a real CUDA program (sw/workloads vector_add, nvcc -cudart shared):
// the trace parses, its spans nest, its transaction counts per link equal the run's statistics,
// tracing leaves the statistics byte-identical, the same run gives the same trace bytes, the
// compact form converts to the same JSON, and filters narrow it. On a unified-memory program
// (sw/workloads/uvm) the far-fault counter tracks add up to the GMMU's statistics; and two
// identical runs write byte-identical VCD files (SystemC's wall-clock $date is replaced).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"
#include "tests/trace/trace_check.h"

namespace gpuvp::test {
namespace {

const std::string kGpuvp = GPUVP_BINARY;
const std::string kProgram = std::string(GPUVP_WORKLOAD_BIN_DIR) + "/workload_vector_add";
const std::string kUvmSuite = GPUVP_UVM_SUITE;

std::string temp(const std::string& name) { return ::testing::TempDir() + "/trace_run_" + name; }

std::string describe(const ProcessResult& r) {
  std::ostringstream text;
  text << "exit " << r.exit_code << (r.timed_out ? " (timed out)" : "") << "\n--- stdout\n" << r.out
       << "--- stderr\n" << r.err;
  return text.str();
}

ProcessResult gpuvp_run(const std::vector<std::string>& options) {
  std::vector<std::string> argv = {kGpuvp, "run"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.push_back(kProgram);
  return run(argv, std::chrono::seconds(300));
}

std::string without_host_side(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  j["run"]["groups"].erase("bridge");
  for (auto& kernel : j["kernels"]) kernel["groups"].erase("bridge");
  return j.dump(2);
}

uint64_t counter(const nlohmann::json& stats, const std::string& group, const std::string& name) {
  return stats.at("run").at("groups").at(group).at("counters").at(name).at("value").get<uint64_t>();
}

// Transactions per traced link, keyed by the link's process name ("kind: initiator -> target").
std::map<std::string, uint64_t> transactions_per_link(const nlohmann::json& trace) {
  std::map<int64_t, std::string> names;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") names[e.at("pid")] = e.at("args").at("name");
  }
  std::map<std::string, uint64_t> counts;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("cat") == "tlm" && e.contains("args")) ++counts[names.at(e.at("pid"))];
  }
  return counts;
}

TEST(TraceRun, VectorAddTraceAgreesWithTheStatistics) {
  const ProcessResult plain = gpuvp_run({"--stats", temp("plain_stats.json")});
  ASSERT_EQ(plain.exit_code, 0) << describe(plain);
  const ProcessResult traced = gpuvp_run({"--stats", temp("traced_stats.json"), "--trace", temp("trace.json"),
                                          "--trace-summary", temp("summary.txt"), "--trace-vcd", temp("run.vcd")});
  ASSERT_EQ(traced.exit_code, 0) << describe(traced);
  EXPECT_NE(traced.err.find("trace written to"), std::string::npos) << describe(traced);
  // Tracing changes nothing the model does: the statistics are byte-identical but for the
  // bridge's counters, which count how the host process and the platform's I/O thread met in
  // wall-clock time (see tests/gpu_timing) and differ between any two runs.
  const std::string stats_text = slurp(temp("plain_stats.json"));
  EXPECT_TRUE(without_host_side(slurp(temp("traced_stats.json"))) == without_host_side(stats_text))
      << "tracing changed the statistics";

  const nlohmann::json stats = nlohmann::json::parse(stats_text);
  const nlohmann::json trace = nlohmann::json::parse(slurp(temp("trace.json")));
  EXPECT_EQ(check_nesting(trace), "");
  const auto links = transactions_per_link(trace);
  uint64_t sm_total = 0;
  uint64_t crossbar_total = 0;
  uint64_t l2_total = 0;
  uint64_t dram_total = 0;
  // Each SM's port goes to its L1 TLB (unified memory), which forwards to the cluster.
  const std::regex sm_link(R"(sm: sm_(\d+)\.mem -> l1_tlb_\d+\.in)");
  const std::regex l2_link(R"(l2: crossbar\.slice -> l2_(\d+)\.in)");
  for (const auto& [name, count] : links) {
    std::smatch m;
    if (std::regex_match(name, m, sm_link)) {
      // Data requests, constant cache fills and instruction fetches.
      const std::string sm = "gpu.sm[" + m[1].str() + "]";
      EXPECT_EQ(count, counter(stats, sm, "line_requests") + counter(stats, sm, "const_requests") +
                           counter(stats, sm, "icache_requests"))
          << name;
      sm_total += count;
    } else if (std::regex_match(name, m, l2_link)) {
      EXPECT_EQ(count, counter(stats, "memory.l2[" + m[1].str() + "]", "accesses")) << name;
      l2_total += count;
    } else if (name.rfind("crossbar: ", 0) == 0) {
      crossbar_total += count;
    } else if (name.rfind("dram: ", 0) == 0) {
      dram_total += count;
    }
  }
  EXPECT_GT(sm_total, 0u);
  // Every SM request crosses its cluster's port; the copy engine's writes (launch parameters,
  // kernel code) cross its own.
  EXPECT_EQ(crossbar_total, sm_total + counter(stats, "gpu.copy_engine", "writes"));
  EXPECT_GT(l2_total, 0u);
  EXPECT_EQ(dram_total, counter(stats, "memory.hbm", "requests"));

  uint64_t kernels = 0;
  uint64_t ctas = 0;
  bool dram_counter = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "kernel") ++kernels;
    if (e["ph"] == "X" && e["cat"] == "cta") ++ctas;
    if (e["ph"] == "C" && e["name"] == "dram bandwidth") dram_counter = true;
  }
  EXPECT_EQ(kernels, counter(stats, "gpu", "kernels"));
  EXPECT_EQ(ctas, counter(stats, "gpu.cta_scheduler", "ctas_issued"));
  EXPECT_GT(ctas, 0u);
  EXPECT_TRUE(dram_counter);

  const std::string vcd = slurp(temp("run.vcd"));
  for (const char* name : {"kernel_running", "ctas_resident", "dram__l2_0_dram__hbm_socket_busy",
                           "sm__sm_0_mem__l1_tlb_0_in_in_flight"}) {
    EXPECT_TRUE(std::regex_search(vcd, std::regex(std::string("\\$var wire +[0-9]+ +[a-z]+ +") + name + " ")))
        << name;
  }
  EXPECT_EQ(plain.out, traced.out) << "the VCD writer printed on the program's stdout";

  const std::string summary = slurp(temp("summary.txt"));
  EXPECT_NE(summary.find("trace summary: "), std::string::npos) << summary;
  EXPECT_NE(summary.find("latency ns:"), std::string::npos) << summary;
}

TEST(TraceRun, SameRunSameBytesAndTheCompactFormConverts) {
  const ProcessResult a = gpuvp_run({"--trace", temp("a.json")});
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  const ProcessResult b = gpuvp_run({"--trace", temp("b.json")});
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  const std::string json = slurp(temp("a.json"));
  EXPECT_GT(json.size(), 1000u);
  EXPECT_TRUE(slurp(temp("b.json")) == json) << "two identical runs gave different traces";
  const ProcessResult c = gpuvp_run({"--trace", temp("c.gvtrace")});
  ASSERT_EQ(c.exit_code, 0) << describe(c);
  const ProcessResult convert = run({kGpuvp, "trace-convert", temp("c.gvtrace"), temp("c.json")}, std::chrono::seconds(60));
  ASSERT_EQ(convert.exit_code, 0) << describe(convert);
  EXPECT_TRUE(slurp(temp("c.json")) == json) << "the converted compact trace differs from the JSON trace";
  EXPECT_LT(slurp(temp("c.gvtrace")).size(), json.size() / 2);
}

TEST(TraceRun, ModuleFilterKeepsOneLink) {
  const ProcessResult r = gpuvp_run({"--stats", temp("filtered_stats.json"), "--trace", temp("filtered.json"),
                                     "--trace-filter", "module=*l2_0.in"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json stats = nlohmann::json::parse(slurp(temp("filtered_stats.json")));
  const auto links = transactions_per_link(nlohmann::json::parse(slurp(temp("filtered.json"))));
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links.begin()->first, "l2: crossbar.slice -> l2_0.in");
  EXPECT_EQ(links.begin()->second, counter(stats, "memory.l2[0]", "accesses"));
}

TEST(TraceRun, SameRunSameVcdBytes) {
  const ProcessResult a = gpuvp_run({"--trace-vcd", temp("same_a.vcd")});
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  const ProcessResult b = gpuvp_run({"--trace-vcd", temp("same_b.vcd")});
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  const std::string vcd = slurp(temp("same_a.vcd"));
  EXPECT_GT(vcd.size(), 1000u);
  EXPECT_TRUE(slurp(temp("same_b.vcd")) == vcd) << "two identical runs gave different VCD files";
  // The $date section holds the fixed text, not the wall-clock date; the rest of the header stays.
  EXPECT_EQ(vcd.rfind("$date\n     gpuvp simulated run (date fixed for reproducible traces)\n$end", 0), 0u)
      << vcd.substr(0, 200);
  EXPECT_NE(vcd.find("$version"), std::string::npos);
  EXPECT_NE(vcd.find("$enddefinitions"), std::string::npos);
}

// Far faults as counter tracks: the uvm_suite `stream` program with no prefetcher faults every
// page of its three arrays; the per-window counts add up to uvm.gmmu's far_faults and
// migrated_bytes, and the MSHR entries held never pass the configured number and end at zero.
TEST(TraceRun, FarFaultCounterTracksAgreeWithTheGmmuStatistics) {
  const ProcessResult r = run({kGpuvp, "run", "--stats", temp("uvm_stats.json"), "--trace", temp("uvm.json"), "--set",
                               "uvm.prefetcher=none", "--", kUvmSuite, "stream"},
                              std::chrono::seconds(300));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_NE(r.out.find("PASS uvm stream"), std::string::npos) << describe(r);
  const nlohmann::json stats = nlohmann::json::parse(slurp(temp("uvm_stats.json")));
  const nlohmann::json trace = nlohmann::json::parse(slurp(temp("uvm.json")));
  double raised = 0;
  double migrated = 0;
  double most_outstanding = -1;
  double last_outstanding = -1;
  uint64_t samples = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "C") continue;
    const double value = e.at("args").begin().value().get<double>();
    if (e.at("name") == "far faults raised") raised += value, ++samples;
    if (e.at("name") == "pages migrated") migrated += value;
    if (e.at("name") == "far faults outstanding") {
      most_outstanding = std::max(most_outstanding, value);
      last_outstanding = value;
    }
  }
  const uint64_t far_faults = counter(stats, "uvm.gmmu", "far_faults");
  EXPECT_EQ(far_faults, 3u * (1u << 20) / 4096);  // every page of the three 1 MiB arrays
  EXPECT_GT(samples, 1u);
  EXPECT_EQ(static_cast<uint64_t>(raised), far_faults);
  EXPECT_EQ(static_cast<uint64_t>(migrated) * 4096, counter(stats, "uvm.gmmu", "migrated_bytes"));
  EXPECT_GT(most_outstanding, 0);
  EXPECT_LE(most_outstanding, 256) << "more far faults outstanding than far-fault MSHRs (uvm.far_fault_mshrs)";
  EXPECT_EQ(last_outstanding, 0);
}

TEST(TraceRun, BadTraceOptionsAreErrorsBeforeTheProgramRuns) {
  const ProcessResult bad = gpuvp_run({"--trace", temp("x.json"), "--trace-filter", "every=0"});
  EXPECT_EQ(bad.exit_code, 1) << describe(bad);
  EXPECT_NE(bad.err.find("--trace-filter 'every=0'"), std::string::npos) << describe(bad);
  const ProcessResult vcd = gpuvp_run({"--trace-vcd", temp("x.txt")});
  EXPECT_EQ(vcd.exit_code, 1) << describe(vcd);
  EXPECT_NE(vcd.err.find("must end in .vcd"), std::string::npos) << describe(vcd);
  const ProcessResult alone = gpuvp_run({"--trace-filter", "module=*"});
  EXPECT_EQ(alone.exit_code, 1) << describe(alone);
  EXPECT_NE(alone.err.find("--trace-filter needs --trace"), std::string::npos) << describe(alone);
  const ProcessResult unwritable = gpuvp_run({"--trace", "/nonexistent-dir/t.json"});
  EXPECT_EQ(unwritable.exit_code, 1) << describe(unwritable);
  EXPECT_NE(unwritable.err.find("/nonexistent-dir/t.json: cannot open"), std::string::npos) << describe(unwritable);
  const ProcessResult convert = run({kGpuvp, "trace-convert", temp("missing.gvtrace"), temp("m.json")},
                                    std::chrono::seconds(60));
  EXPECT_EQ(convert.exit_code, 1) << describe(convert);
  EXPECT_NE(convert.err.find("cannot open the trace file"), std::string::npos) << describe(convert);
}

}  // namespace
}  // namespace gpuvp::test
