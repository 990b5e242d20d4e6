// TlmMonitor, TraceRecorder, TraceFilter and the trace formats, driven through TLM sockets
// with the test bench's initiator and memory target.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/tlm/tlm_monitor.h"
#include "platform/trace/trace_filter.h"
#include "platform/trace/trace_format.h"
#include "platform/trace/trace_recorder.h"
#include "tests/support/testbench.h"
#include "tests/trace/trace_check.h"

namespace gpuvp::trace {
namespace {

using gpuvp::testbench::Initiator;
using gpuvp::testbench::MemoryTarget;
using gpuvp::testbench::Protocol;
using gpuvp::testbench::Simulation;
using sc_core::SC_NS;
using sc_core::sc_time;

std::string temp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

std::vector<nlohmann::json> transactions(const nlohmann::json& trace) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X" && e.value("cat", "") == "tlm" && e.contains("args")) out.push_back(e);
  }
  return out;
}

TEST(TlmMonitor, FourPhaseTransactionsKeepTheirTimingAndAreRecorded) {
  Simulation sim;
  TraceOptions options;
  options.path = temp("four_phase.json");
  TraceRecorder recorder(options);
  Initiator cpu("cpu", Protocol::AT);
  cpu.tags.sm_id = 3;
  cpu.tags.warp_id = 5;
  cpu.tags.cta_id = 7;
  cpu.tags.kernel_id = 2;
  cpu.tags.sector_mask = 0x1;
  cpu.tags.kind = AccessKind::Store;
  MemoryTarget mem("mem", sc_time(20, SC_NS));
  std::vector<std::unique_ptr<TlmMonitor>> monitors;
  bind_traced(cpu.socket, mem.socket, &recorder, monitors, "test");
  ASSERT_EQ(monitors.size(), 1u);
  sim.run([&] {
    cpu.write32(0x100, 0xcafe);
    EXPECT_EQ(cpu.last_latency(), sc_time(20, SC_NS));  // the monitor adds no time
    EXPECT_EQ(cpu.read32(0x100), 0xcafeu);
    EXPECT_EQ(cpu.last_latency(), sc_time(20, SC_NS));
  });
  recorder.finish();
  ASSERT_EQ(recorder.links().size(), 1u);
  const auto& link = recorder.links()[0];
  EXPECT_EQ(link.initiator, "cpu.socket");
  EXPECT_EQ(link.target, "mem.socket");
  EXPECT_EQ(link.transactions, 2u);
  EXPECT_EQ(link.reads, 1u);
  EXPECT_EQ(link.writes, 1u);
  EXPECT_EQ(link.bytes, 8u);
  EXPECT_EQ(link.latency_sum_ps, 40000u);
  EXPECT_EQ(link.latency_histogram[5], 2u);  // 20 ns lies in [16, 32)
  EXPECT_EQ(link.unfinished, 0u);

  const nlohmann::json trace = nlohmann::json::parse(test::slurp(options.path));
  const auto tx = transactions(trace);
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx[0]["name"], "write 0x100");
  EXPECT_EQ(tx[1]["name"], "read 0x100");
  const auto& args = tx[1]["args"];
  EXPECT_EQ(args["command"], "read");
  EXPECT_EQ(args["address"], "0x100");
  EXPECT_EQ(args["size"], 4);
  EXPECT_EQ(args["status"], "OK");
  EXPECT_DOUBLE_EQ(args["latency_ns"].get<double>(), 20.0);
  EXPECT_EQ(args["sm"], 3);
  EXPECT_EQ(args["warp"], 5);
  EXPECT_EQ(args["cta"], 7);
  EXPECT_EQ(args["kernel"], 2);
  EXPECT_EQ(args["kind"], "store");
  EXPECT_EQ(args["sector_mask"], "0x1");
  // Phases in order, the read starting after the write ended.
  EXPECT_LE(test::to_ps(args["begin_req_us"]), test::to_ps(args["end_req_us"]));
  EXPECT_EQ(test::to_ps(args["begin_resp_us"]) - test::to_ps(args["begin_req_us"]), 20000);
  EXPECT_LE(test::to_ps(args["begin_resp_us"]), test::to_ps(args["end_us"]));
  EXPECT_GE(test::to_ps(tx[1]["ts"]), test::to_ps(tx[0]["ts"]) + test::to_ps(tx[0]["dur"]));
  EXPECT_EQ(test::check_nesting(trace), "");
  // Process names come from the socket paths.
  bool named = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "test: cpu.socket -> mem.socket") {
      named = true;
    }
  }
  EXPECT_TRUE(named);
}

TEST(TlmMonitor, CompletedAtOnceAndBlockingTransactionsAreRecorded) {
  Simulation sim;
  TraceOptions options;
  options.path = temp("immediate.json");
  TraceRecorder recorder(options);
  Initiator at("at", Protocol::AT);
  Initiator lt("lt", Protocol::LT);
  MemoryTarget fast("fast", sc_time(7, SC_NS));
  MemoryTarget slow("slow", sc_time(9, SC_NS));
  fast.at_style = MemoryTarget::AtStyle::Immediate;
  std::vector<std::unique_ptr<TlmMonitor>> monitors;
  bind_traced(at.socket, fast.socket, &recorder, monitors, "at");
  bind_traced(lt.socket, slow.socket, &recorder, monitors, "lt");
  sim.run([&] {
    at.write32(0x40, 1);
    EXPECT_EQ(at.last_latency(), sc_time(7, SC_NS));
    lt.write32(0x80, 2);
    EXPECT_EQ(lt.read32(0x80), 2u);
  });
  recorder.finish();
  ASSERT_EQ(recorder.links().size(), 2u);
  EXPECT_EQ(recorder.links()[0].transactions, 1u);
  EXPECT_EQ(recorder.links()[0].latency_sum_ps, 7000u);
  EXPECT_EQ(recorder.links()[1].transactions, 2u);
  EXPECT_EQ(recorder.links()[1].latency_sum_ps, 18000u);
  const nlohmann::json trace = nlohmann::json::parse(test::slurp(options.path));
  EXPECT_EQ(transactions(trace).size(), 3u);
  EXPECT_EQ(test::check_nesting(trace), "");
}

TEST(TlmMonitor, ErrorResponsesAreTracedWithTheirStatus) {
  Simulation sim;
  TraceOptions options;
  options.path = temp("error.json");
  TraceRecorder recorder(options);
  Initiator cpu("cpu", Protocol::AT);
  MemoryTarget mem("mem", sc_time(5, SC_NS), 0x1000);
  std::vector<std::unique_ptr<TlmMonitor>> monitors;
  bind_traced(cpu.socket, mem.socket, &recorder, monitors, "test");
  sim.run([&] { EXPECT_EQ(cpu.transport(tlm::TLM_READ_COMMAND, 0x2000, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE); });
  recorder.finish();
  const auto tx = transactions(nlohmann::json::parse(test::slurp(options.path)));
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx[0]["args"]["status"], "ADDRESS_ERROR");
}

TEST(TraceRecorder, AFilteredOutLinkGetsNoMonitor) {
  Simulation sim;
  TraceOptions options;
  options.filter = TraceFilter::parse({"module=*gpu*"});
  TraceRecorder recorder(options);
  Initiator cpu("cpu", Protocol::AT);
  MemoryTarget mem("mem", sc_time(20, SC_NS));
  std::vector<std::unique_ptr<TlmMonitor>> monitors;
  bind_traced(cpu.socket, mem.socket, &recorder, monitors, "test");
  EXPECT_TRUE(monitors.empty());
  sim.run([&] { cpu.write32(0x100, 1); });
  recorder.finish();
  EXPECT_TRUE(recorder.links().empty());
}

TEST(TraceRecorder, AddressKernelAndSamplingFilters) {
  Simulation sim;
  TraceOptions options;
  options.path = temp("filtered.json");
  options.filter = TraceFilter::parse({"addr=0x1000-0x2000,every=2", "kernel=4"});
  TraceRecorder recorder(options);
  Initiator cpu("cpu", Protocol::AT);
  MemoryTarget mem("mem", sc_time(3, SC_NS));
  std::vector<std::unique_ptr<TlmMonitor>> monitors;
  bind_traced(cpu.socket, mem.socket, &recorder, monitors, "test");
  sim.run([&] {
    cpu.tags.kernel_id = 4;
    for (uint64_t a = 0x800; a < 0x2800; a += 0x100) cpu.write32(a, 1);  // 16 of 32 in range
    cpu.tags.kernel_id = 5;
    for (uint64_t a = 0x1000; a < 0x2000; a += 0x100) cpu.write32(a, 1);  // other kernel
  });
  recorder.finish();
  ASSERT_EQ(recorder.links().size(), 1u);
  EXPECT_EQ(recorder.links()[0].transactions, 8u);  // every 2nd of the 16
  const auto tx = transactions(nlohmann::json::parse(test::slurp(options.path)));
  ASSERT_EQ(tx.size(), 8u);
  EXPECT_EQ(tx[0]["args"]["address"], "0x1000");
  EXPECT_EQ(tx[1]["args"]["address"], "0x1200");
  for (const auto& t : tx) EXPECT_EQ(t["args"]["kernel"], 4);
}

TEST(TraceRecorder, TimeWindowFilter) {
  Simulation sim;
  TraceOptions options;
  options.filter = TraceFilter::parse({"time=100ns-200ns"});
  TraceRecorder recorder(options);
  Initiator cpu("cpu", Protocol::AT);
  MemoryTarget mem("mem", sc_time(10, SC_NS));
  std::vector<std::unique_ptr<TlmMonitor>> monitors;
  bind_traced(cpu.socket, mem.socket, &recorder, monitors, "test");
  sim.run([&] {
    for (int i = 0; i < 30; ++i) cpu.write32(0x100, 1);  // one every 10 ns: 0..290 ns
  });
  recorder.finish();
  EXPECT_EQ(recorder.links()[0].transactions, 10u);  // those starting at 100..190 ns
  EXPECT_NE(recorder.summary().find("cpu.socket -> mem.socket"), std::string::npos) << recorder.summary();
}

TEST(TraceRecorder, KernelsAndCtasBecomeSpansInLanes) {
  TraceOptions options;
  options.path = temp("spans.json");
  TraceRecorder recorder(options);
  recorder.kernel_begin(1, "vecAdd", sc_time(0, SC_NS));
  recorder.cta_begin(0, 1, 0, sc_time(1, SC_NS));
  recorder.cta_begin(0, 1, 1, sc_time(2, SC_NS));  // overlaps cta 0: second lane
  recorder.cta_end(0, 1, 0, sc_time(5, SC_NS));
  recorder.cta_begin(0, 1, 2, sc_time(6, SC_NS));  // lane 0 is free again
  recorder.cta_end(0, 1, 1, sc_time(7, SC_NS));
  recorder.cta_end(0, 1, 2, sc_time(8, SC_NS));
  recorder.kernel_end(1, sc_time(9, SC_NS));
  recorder.finish();
  EXPECT_EQ(recorder.kernels(), 1u);
  EXPECT_EQ(recorder.ctas(), 3u);
  const nlohmann::json trace = nlohmann::json::parse(test::slurp(options.path));
  std::map<std::string, int64_t> lane;
  int kernels = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "cta") lane[e["name"]] = e["tid"];
    if (e["cat"] == "kernel") {
      ++kernels;
      EXPECT_EQ(e["name"], "vecAdd");
      EXPECT_EQ(test::to_ps(e["dur"]), 9000);
    }
  }
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(lane["cta 0"], 0);
  EXPECT_EQ(lane["cta 1"], 1);
  EXPECT_EQ(lane["cta 2"], 0);
  EXPECT_EQ(test::check_nesting(trace), "");
}

// The identifier SystemC's VCD writer gave the variable `name`, from its $var line.
std::string vcd_id(const std::string& vcd, const std::string& name) {
  std::istringstream lines(vcd);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string var, type, width, id, var_name;
    if (words >> var >> type >> width >> id >> var_name && var == "$var" && var_name == name) return id;
  }
  return {};
}

TEST(TraceRecorder, VcdShowsBusyFlagsAndLevels) {
  Simulation sim;
  TraceOptions options;
  options.vcd_path = temp("busy.vcd");
  TraceRecorder recorder(options);
  Initiator cpu("cpu", Protocol::AT);
  MemoryTarget mem("mem", sc_time(20, SC_NS));
  std::vector<std::unique_ptr<TlmMonitor>> monitors;
  bind_traced(cpu.socket, mem.socket, &recorder, monitors, "test");
  sim.run([&] {
    sc_core::wait(sc_time(5, SC_NS));
    recorder.kernel_begin(1, "k", sc_core::sc_time_stamp());
    cpu.write32(0x100, 1);  // busy from 5 ns to 25 ns
    sc_core::wait(sc_time(10, SC_NS));
    recorder.kernel_end(1, sc_core::sc_time_stamp());
    sc_core::wait(sc_time(10, SC_NS));
  });
  recorder.finish();
  const std::string vcd = test::slurp(options.vcd_path);
  const std::string busy = vcd_id(vcd, "test__cpu_socket__mem_socket_busy");
  const std::string level = vcd_id(vcd, "test__cpu_socket__mem_socket_in_flight");
  const std::string kernel = vcd_id(vcd, "kernel_running");
  ASSERT_FALSE(busy.empty()) << vcd;
  ASSERT_FALSE(level.empty()) << vcd;
  ASSERT_FALSE(kernel.empty()) << vcd;
  EXPECT_NE(vcd.find("#5000\n"), std::string::npos) << vcd;
  const size_t at5 = vcd.find("#5000\n");
  const size_t at25 = vcd.find("#25000\n");
  ASSERT_NE(at25, std::string::npos) << vcd;
  const std::string during = vcd.substr(at5, at25 - at5);
  EXPECT_NE(during.find("1" + busy + "\n"), std::string::npos) << vcd;
  EXPECT_NE(vcd.substr(at25).find("0" + busy + "\n"), std::string::npos) << vcd;
  // SystemC's wall-clock date is replaced by a fixed text (identical runs, identical bytes).
  EXPECT_EQ(vcd.rfind(std::string("$date\n     ") + TraceRecorder::kVcdDate + "\n$end\n", 0), 0u) << vcd;
}

// The GMMU's far-fault reports become three counter tracks sampled per window: the most MSHR
// entries held (carried into a window from the one before), and the faults raised and pages
// migrated within each window, which add up to the running totals reported last.
TEST(TraceRecorder, FarFaultsBecomeCounterTracks) {
  TraceOptions options;
  options.path = temp("faults.json");
  options.counter_window_ps = 1000;
  TraceRecorder recorder(options);
  recorder.far_faults(3, 3, 0, sc_time(100, sc_core::SC_PS));    // window 0: 3 faults raised
  recorder.far_faults(5, 5, 0, sc_time(900, sc_core::SC_PS));    // window 0: 2 more, 5 held
  recorder.far_faults(2, 5, 3, sc_time(1500, sc_core::SC_PS));   // window 1: 3 landed, 2 held (5 at start)
  recorder.far_faults(0, 6, 6, sc_time(3200, sc_core::SC_PS));   // window 3 (window 2 silent, 2 held)
  recorder.finish();
  const nlohmann::json trace = nlohmann::json::parse(test::slurp(options.path));
  std::map<std::string, std::vector<std::pair<int64_t, double>>> tracks;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "C") tracks[e["name"]].emplace_back(test::to_ps(e["ts"]), e["args"].begin().value().get<double>());
  }
  using Samples = std::vector<std::pair<int64_t, double>>;
  EXPECT_EQ(tracks["far faults outstanding"], (Samples{{0, 5}, {1000, 5}, {2000, 2}, {3000, 2}, {4000, 0}}));
  EXPECT_EQ(tracks["far faults raised"], (Samples{{0, 5}, {1000, 0}, {2000, 0}, {3000, 1}, {4000, 0}}));
  EXPECT_EQ(tracks["pages migrated"], (Samples{{0, 0}, {1000, 3}, {2000, 0}, {3000, 3}, {4000, 0}}));
}

TEST(TraceRecorder, NoFarFaultTracksWithoutReports) {
  TraceOptions options;
  options.path = temp("no_faults.json");
  TraceRecorder recorder(options);
  recorder.kernel_begin(1, "k", sc_time(0, SC_NS));
  recorder.kernel_end(1, sc_time(1, SC_NS));
  recorder.finish();
  EXPECT_EQ(test::slurp(options.path).find("far faults"), std::string::npos);
}

TEST(TraceRecorder, VcdNameMustEndInVcd) {
  TraceOptions options;
  options.vcd_path = temp("busy.txt");
  EXPECT_THROW(TraceRecorder recorder(options), TraceError);
  options.vcd_path = "/nonexistent-dir/x.vcd";
  EXPECT_THROW(TraceRecorder recorder(options), TraceError);
}

TEST(TraceFilter, ParsesEveryTerm) {
  const TraceFilter f = TraceFilter::parse({"module=*sm_3*,addr=0x100-0x200", "kernel=7", "kernel=vec*",
                                            "time=10us-", "every=16"});
  EXPECT_TRUE(f.link_matches("top.timing.core.sm_3.mem", "top.timing.core.cluster_0.in"));
  EXPECT_FALSE(f.link_matches("top.timing.core.sm_4.mem", "top.timing.core.cluster_0.in"));
  EXPECT_TRUE(f.address_matches(0x100));
  EXPECT_FALSE(f.address_matches(0x200));
  EXPECT_TRUE(f.kernel_matches(7, "gemm"));
  EXPECT_TRUE(f.kernel_matches(8, "vecAdd"));
  EXPECT_FALSE(f.kernel_matches(8, "gemm"));
  EXPECT_EQ(f.begin_ps, 10000000u);
  EXPECT_FALSE(f.time_matches(9999999));
  EXPECT_TRUE(f.time_matches(~uint64_t{0} - 1));
  EXPECT_EQ(f.every, 16u);
  EXPECT_EQ(TraceFilter::parse({"time=5ps-7ps"}).end_ps, 7u);
  EXPECT_EQ(TraceFilter::parse({"time=5-7"}).begin_ps, 5000u);  // ns by default
}

TEST(TraceFilter, BadTermsAreRejectedByName) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"module", "expected KEY=VALUE"},
      {"colour=red", "unknown key 'colour'"},
      {"addr=0x200-0x100", "the range is empty"},
      {"addr=0x100", "expected addr=LO-HI"},
      {"addr=zz-0x100", "'zz' is not a number"},
      {"every=0", "N >= 1"},
      {"every=2,every=3", "every= given twice"},
      {"time=5xs-6ns", "unknown time unit 'xs'"},
      {"time=9ns-3ns", "the window is empty"},
      {"kernel=", "empty value"},
  };
  for (const auto& [term, why] : bad) {
    try {
      TraceFilter::parse({term});
      ADD_FAILURE() << term << " was accepted";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << term << ": " << e.what();
    }
  }
}

void write_sample(TraceWriter& w) {
  w.link(0, "a.sm_0.mem", "a.cluster_0.in", "sm");
  w.kernel_name(1, "k\"quoted\"");
  TransactionRecord r;
  r.begin_ps = 1000;
  r.end_req_ps = 2000;
  r.begin_resp_ps = 5000;
  r.end_ps = 6000;
  r.address = 0xabc0;
  r.length = 128;
  r.status = 1;
  r.has_extension = 1;
  r.sm = 0;
  r.kernel_id = 1;
  w.transaction(r);
  SpanRecord k;
  k.end_ps = 9000;
  k.kernel_id = 1;
  w.span(k);
  w.counter_track(0, "sm bandwidth", "GB/s");
  w.counter({0, 0, 0, 12.5});
  w.finish();
}

TEST(TraceFormat, CompactTraceConvertsToTheSameJson) {
  const std::string direct = temp("direct.json");
  const std::string compact = temp("compact.gvtrace");
  const std::string converted = temp("converted.json");
  write_sample(*make_writer(direct));
  write_sample(*make_writer(compact));
  const auto out = make_json_writer(converted);
  convert_compact_trace(compact, *out);
  const std::string json = test::slurp(direct);
  EXPECT_EQ(test::slurp(converted), json);
  EXPECT_LT(test::slurp(compact).size(), json.size());
  const nlohmann::json trace = nlohmann::json::parse(json);
  EXPECT_EQ(test::check_nesting(trace), "");  // the transaction's request/response phases nest in it
  int phases = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && (e["name"] == "request" || e["name"] == "response")) ++phases;
  }
  EXPECT_EQ(phases, 2);
}

TEST(TraceFormat, ConvertRejectsWhatIsNotACompactTrace) {
  const std::string json = temp("not_compact.json");
  write_sample(*make_json_writer(json));
  const auto out = make_json_writer(temp("ignored.json"));
  EXPECT_THROW(convert_compact_trace(json, *out), TraceError);
  const std::string compact = temp("cut.gvtrace");
  write_sample(*make_compact_writer(compact));
  std::string bytes = test::slurp(compact);
  bytes.resize(bytes.size() - 5);
  {
    std::ofstream cut(compact, std::ios::binary);
    cut << bytes;
  }
  const auto again = make_json_writer(temp("ignored2.json"));
  try {
    convert_compact_trace(compact, *again);
    ADD_FAILURE() << "a cut trace was accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("ends inside a record"), std::string::npos) << e.what();
  }
  EXPECT_THROW(convert_compact_trace(temp("missing.gvtrace"), *again), TraceError);
  EXPECT_THROW(make_json_writer("/nonexistent-dir/x.json"), TraceError);
}

// Found by the trace fuzzer (bench/fuzz/regressions/trace): a record naming lane 4294967280 made
// the JSON writer name every lane up to it -- billions of lines. Only lanes that records use are
// named; a recorder's lanes (0..n-1) come out as before.
TEST(TraceFormat, AStrayLaneNumberCostsOneLine) {
  const std::string compact = temp("stray_lane.gvtrace");
  {
    const auto w = make_compact_writer(compact);
    w->link(0, "gpu.sm0", "gpu.l2", "tlm");
    TransactionRecord t;
    t.begin_ps = 1000;
    t.end_ps = 2000;
    t.lane = 0xfffffff0u;
    w->transaction(t);
    t.lane = 0xffffffffu;  // the largest: lane + 1 wraps to 0
    w->transaction(t);
    SpanRecord s;
    s.end_ps = 3000;
    s.sm = 1;
    s.lane = 0xfffffff0u;
    w->span(s);
    w->finish();
  }
  const std::string converted = temp("stray_lane.json");
  const auto out = make_json_writer(converted);
  convert_compact_trace(compact, *out);
  const nlohmann::json trace = nlohmann::json::parse(test::slurp(converted));
  int thread_names = 0, process_names = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") ++thread_names;
    if (e["ph"] == "M" && e["name"] == "process_name") ++process_names;
  }
  EXPECT_EQ(thread_names, 4);   // the kernels row, the link's two lanes, the SM's one
  EXPECT_EQ(process_names, 3);  // gpu, the link, sm_1
}

}  // namespace
}  // namespace gpuvp::trace
