// `gpuvp sweep` and `gpuvp plot` as a user runs them: tables that match single runs, resume,
// crashes and timeouts recorded, bad specs refused before anything runs, MPI and SLURM giving
// the rows that local jobs give, and charts with the knobs' units on their axes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/process.h"

namespace gpuvp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

class SweepCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("gpuvp-sweep-" + std::string(info->name()) + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  fs::path write(const std::string& name, const std::string& text, bool executable = false) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    if (executable) fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
    return path;
  }
  test::CommandResult gpuvp(const std::string& arguments, std::chrono::milliseconds timeout = 300s) {
    return test::run_command("cd " + dir_.string() + " && " + GPUVP_BINARY + " " + arguments, timeout);
  }
  static json load_json(const fs::path& path) {
    std::ifstream in(path);
    return json::parse(in);
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static size_t lines(const fs::path& path) {
    const std::string text = read(path);
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  // The rows without what legitimately differs between runs (host seconds).
  static json comparable_rows(const fs::path& results) {
    json rows = load_json(results)["rows"];
    for (auto& row : rows) row.erase("host_seconds");
    return rows;
  }

  fs::path dir_;
};

// vectorAdd of the conformance suite at two SM clocks and two HBM clocks.
const char* kVectorAddSpec =
    "name: va\n"
    "base: v100\n"
    "knobs:\n"
    "  gpu.sm.clock: [500 MHz, 1312 MHz]\n"
    "  memory.hbm.clock: [877 MHz, 1600 MHz]\n"
    "programs:\n"
    "  - {name: vector_add, path: '${build}/sw/workloads/bin/workload_vector_add'}\n"
    "metrics:\n"
    "  - gpu.time_ps\n"
    "  - gpu.cycles\n"
    "  - {stat: kernel.time_ps, kernel: vector_add, as: kernel_ps}\n"
    "  - memory.l2[*].sector_hit_rate\n";

TEST_F(SweepCli, LocalJobsWriteCsvAndJsonThatMatchSingleRuns) {
  write("va.yaml", kVectorAddSpec);
  const auto run = gpuvp("sweep va.yaml -j 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("sweep va: 4 points (4 ran, 0 already done), 4 ok"), std::string::npos) << run.output;
  // Not a terminal: one line per finished point.
  EXPECT_NE(run.output.find("[4/4] point "), std::string::npos) << run.output;

  const std::string csv = read(dir_ / "va-sweep/results.csv");
  std::istringstream csv_lines(csv);
  std::string header;
  std::getline(csv_lines, header);
  EXPECT_EQ(header,
            "point,id,program,args,gpu.sm.clock,memory.hbm.clock,gpu.time_ps,gpu.cycles,kernel_ps,"
            "memory.l2[*].sector_hit_rate,host_seconds,status,message");
  EXPECT_EQ(lines(dir_ / "va-sweep/results.csv"), 5u);

  const json results = load_json(dir_ / "va-sweep/results.json");
  EXPECT_EQ(results["format"], "gpuvp-sweep-results");
  EXPECT_EQ(results["knobs"][0]["name"], "gpu.sm.clock");
  EXPECT_EQ(results["knobs"][0]["unit"], "Hz");
  EXPECT_EQ(results["metrics"][0]["unit"], "ps");
  EXPECT_EQ(results["metrics"][1]["unit"], "cycle");
  const json& rows = results["rows"];
  ASSERT_EQ(rows.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rows[i]["point"], i);
    EXPECT_EQ(rows[i]["status"], "ok") << rows[i].dump();
    EXPECT_GT(rows[i]["host_seconds"].get<double>(), 0.0);
    // One kernel, one launch: its time is the run's kernel time.
    EXPECT_EQ(rows[i]["metrics"]["kernel_ps"], rows[i]["metrics"]["gpu.time_ps"]);
  }
  EXPECT_EQ(rows[0]["knob_text"]["gpu.sm.clock"], "500 MHz");
  EXPECT_EQ(rows[3]["knobs"]["memory.hbm.clock"], 1.6e9);
  // A faster SM clock shortens the kernel.
  EXPECT_LT(rows[2]["metrics"]["gpu.time_ps"].get<double>(), rows[0]["metrics"]["gpu.time_ps"].get<double>());

  // The CSV row carries the same numbers as the JSON.
  std::string row1;
  std::getline(csv_lines, row1);
  std::getline(csv_lines, row1);
  EXPECT_EQ(row1.rfind("1," + rows[1]["id"].get<std::string>() + ",vector_add,,500 MHz,1600 MHz," +
                           std::to_string(rows[1]["metrics"]["gpu.time_ps"].get<uint64_t>()) + "," +
                           std::to_string(rows[1]["metrics"]["gpu.cycles"].get<uint64_t>()) + ",",
                       0),
            0u)
      << row1;

  // The point equals a single `gpuvp run` of the same configuration.
  const auto single = gpuvp("run --config v100 --set 'gpu.sm.clock=1312 MHz' --set 'memory.hbm.clock=877 MHz' "
                            "--stats single.json -- " GPUVP_BUILD_DIR "/sw/workloads/bin/workload_vector_add");
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const json stats = load_json(dir_ / "single.json");
  EXPECT_EQ(rows[2]["metrics"]["gpu.time_ps"], stats["run"]["groups"]["gpu"]["counters"]["time_ps"]["value"]);
  EXPECT_EQ(rows[2]["metrics"]["gpu.cycles"], stats["run"]["groups"]["gpu"]["counters"]["cycles"]["value"]);
  EXPECT_EQ(rows[2]["metrics"]["memory.l2[*].sector_hit_rate"],
            stats["run"]["aggregates"]["memory.l2[*]"]["ratios"]["sector_hit_rate"]["value"]);
}

// A program that only appends a line to runs.log: cheap points whose runs can be counted.
const char* kCountingSpec =
    "name: count\n"
    "knobs:\n"
    "  gpu.sm.count: [1, 2, 3, 4, 5, 6]\n"
    "programs:\n"
    "  - {name: counter, path: counter.sh, args: ['${spec_dir}/runs.log']}\n"
    "metrics: [gpu.kernels]\n";

TEST_F(SweepCli, ResumeRunsOnlyUnfinishedPoints) {
  write("counter.sh", "#!/bin/sh\necho run >> \"$1\"\n", true);
  write("count.yaml", kCountingSpec);
  auto run = gpuvp("sweep count.yaml -j 2 --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(lines(dir_ / "runs.log"), 6u);
  const json first = comparable_rows(dir_ / "count-sweep/results.json");

  // Everything finished: nothing runs again.
  run = gpuvp("sweep count.yaml -j 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("(0 ran, 6 already done)"), std::string::npos) << run.output;
  EXPECT_EQ(lines(dir_ / "runs.log"), 6u);

  // A point without its record (a sweep stopped before it ended) runs again, alone.
  const std::string id = first[4]["id"];
  fs::remove(dir_ / "count-sweep/points" / id / "point.json");
  run = gpuvp("sweep count.yaml -j 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("(1 ran, 5 already done)"), std::string::npos) << run.output;
  EXPECT_EQ(lines(dir_ / "runs.log"), 7u);
  EXPECT_EQ(comparable_rows(dir_ / "count-sweep/results.json"), first);
}

TEST_F(SweepCli, InterruptedSweepResumesWithoutRerunningFinishedPoints) {
  // Each point takes a while and logs only when it completes.
  write("counter.sh", "#!/bin/sh\nsleep 1\necho run >> \"$1\"\n", true);
  write("count.yaml", kCountingSpec);
  test::Process sweep({GPUVP_BINARY, "sweep", (dir_ / "count.yaml").string(), "-o", (dir_ / "out").string(), "-j", "1"});
  // Wait for two finished points, then interrupt as Ctrl-C would.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  auto records = [&] {
    size_t n = 0;
    if (fs::exists(dir_ / "out/points")) {
      for (const auto& entry : fs::directory_iterator(dir_ / "out/points")) n += fs::exists(entry.path() / "point.json");
    }
    return n;
  };
  while (records() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
  ASSERT_GE(records(), 2u);
  ::kill(sweep.pid(), SIGINT);
  const auto stopped = sweep.finish(60s);
  EXPECT_EQ(stopped.exit_code, 130) << stopped.out << stopped.err;
  EXPECT_NE(stopped.out.find("interrupted; run the same command again"), std::string::npos) << stopped.out;
  const size_t finished = records();
  EXPECT_LT(finished, 6u);
  EXPECT_EQ(lines(dir_ / "runs.log"), finished);  // the point running at the signal was killed, not recorded
  const json partial = load_json(dir_ / "out/results.json");
  EXPECT_EQ(partial["rows"][5]["status"], "missing");

  const auto resumed = gpuvp("sweep count.yaml -o out -j 2");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("(" + std::to_string(6 - finished) + " ran, " + std::to_string(finished) +
                                " already done)"),
            std::string::npos)
      << resumed.output;
  EXPECT_EQ(lines(dir_ / "runs.log"), 6u);  // every point completed exactly once
}

TEST_F(SweepCli, CrashedAndTimedOutPointsAreRecordedAndTheSweepGoesOn) {
  write("ok.sh", "#!/bin/sh\nexit 0\n", true);
  write("crash.sh", "#!/bin/sh\necho 'about to crash' >&2\nkill -SEGV $$\n", true);
  write("hang.sh", "#!/bin/sh\nsleep 60\n", true);
  write("bad.sh", "#!/bin/sh\necho 'no input' >&2\nexit 3\n", true);
  write("mixed.yaml",
        "timeout: 2 s\n"
        "knobs:\n  gpu.sm.count: [1, 2]\n"
        "programs: [crash.sh, hang.sh, bad.sh, ok.sh]\n"
        "metrics: [gpu.kernels]\n");
  const auto start = std::chrono::steady_clock::now();
  const auto run = gpuvp("sweep mixed.yaml -j 4");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 40s);  // the hanging points were cut at 2 s
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("2 ok, 6 not ok"), std::string::npos) << run.output;
  const json rows = load_json(dir_ / "mixed-sweep/results.json")["rows"];
  ASSERT_EQ(rows.size(), 8u);
  for (int i : {0, 1}) {
    EXPECT_EQ(rows[i]["status"], "crashed");
    EXPECT_NE(rows[i]["message"].get<std::string>().find("signal 11"), std::string::npos) << rows[i].dump();
    EXPECT_NE(rows[i]["stderr"].get<std::string>().find("about to crash"), std::string::npos) << rows[i].dump();
    EXPECT_TRUE(rows[i]["metrics"]["gpu.kernels"].is_null());
  }
  for (int i : {2, 3}) {
    EXPECT_EQ(rows[i]["status"], "timeout");
    EXPECT_NE(rows[i]["message"].get<std::string>().find("timeout of 2 s"), std::string::npos) << rows[i].dump();
  }
  for (int i : {4, 5}) {
    EXPECT_EQ(rows[i]["status"], "failed");
    EXPECT_EQ(rows[i]["message"], "gpuvp run exited with code 3");
    EXPECT_NE(rows[i]["stderr"].get<std::string>().find("no input"), std::string::npos);
  }
  for (int i : {6, 7}) {
    EXPECT_EQ(rows[i]["status"], "ok");
    EXPECT_EQ(rows[i]["metrics"]["gpu.kernels"], 0);  // no CUDA program: nothing ran on the GPU
  }
  const std::string csv = read(dir_ / "mixed-sweep/results.csv");
  EXPECT_NE(csv.find(",crashed,the program was killed by signal 11 (Segmentation fault)\n"), std::string::npos) << csv;

  // Crashes are results: a resumed sweep keeps them; --retry-failed runs them again.
  const auto again = gpuvp("sweep mixed.yaml -j 4");
  EXPECT_NE(again.output.find("(0 ran, 8 already done)"), std::string::npos) << again.output;
  write("crash.sh", "#!/bin/sh\nexit 0\n", true);
  write("hang.sh", "#!/bin/sh\nexit 0\n", true);
  write("bad.sh", "#!/bin/sh\nexit 0\n", true);
  const auto retried = gpuvp("sweep mixed.yaml -j 4 --retry-failed");
  EXPECT_EQ(retried.exit_code, 0) << retried.output;
  EXPECT_NE(retried.output.find("(6 ran, 2 already done), 8 ok"), std::string::npos) << retried.output;
}

TEST_F(SweepCli, BadSpecIsReportedWithFileAndLineBeforeAnythingRuns) {
  write("ok.sh", "#!/bin/sh\nexit 0\n", true);
  write("bad.yaml",
        "knobs:\n"
        "  gpu.sm.count: [1, 2]\n"
        "  memory.l2.sizze: [1 MiB]\n"
        "  memory.hbm.clock: [877 MHz, 100 GHz]\n"
        "programs: [ok.sh, missing.sh]\n"
        "metrics: [gpu.cycles]\n");
  const auto run = gpuvp("sweep bad.yaml");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find("bad.yaml:3:3: error: unknown knob 'memory.l2.sizze'"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("bad.yaml:4:31: error: memory.hbm.clock:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("bad.yaml:5:19: error: program 'missing.sh' not found"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("3 error(s) in bad.yaml; nothing ran"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir_ / "bad-sweep"));
}

// A results.json that is not a sweep's, or one damaged by hand, is a clear error of gpuvp plot
// (its reader once let the JSON library throw or read a missing key).
TEST_F(SweepCli, PlotRefusesMalformedResults) {
  const char* damaged[] = {"[1, 2]", R"({"format": 7})",
                           R"({"format": "gpuvp-sweep-results", "knobs": [{"nam": 1}], "metrics": []})",
                           R"({"format": "gpuvp-sweep-results", "metrics": []})"};
  for (const char* text : damaged) {
    write("results.json", text);
    const auto run = gpuvp("plot results.json");
    EXPECT_EQ(run.exit_code, 1) << text;
    EXPECT_NE(run.output.find("results.json: error: not the results.json of a gpuvp sweep"), std::string::npos)
        << text << "\n" << run.output;
  }
}

// Replay mode: one captured run of vectorAdd replayed on two HBM clocks; each point equals a
// single `gpuvp replay` of its configuration, and an unknown mode or a program that is not a
// capture directory is refused before anything runs.
TEST_F(SweepCli, ReplayModeSweepsACapturedTrace) {
  const auto capture = gpuvp("run --capture cap -- " GPUVP_BUILD_DIR "/sw/workloads/bin/workload_vector_add");
  ASSERT_EQ(capture.exit_code, 0) << capture.output;
  write("replay.yaml",
        "name: rp\n"
        "mode: replay\n"
        "knobs:\n"
        "  memory.hbm.clock: [500 MHz, 1600 MHz]\n"
        "programs: [{name: va, path: cap}]\n"
        "metrics: [gpu.cycles, {stat: gpu.time_ps, kernel: vector_add, as: kernel_ps}]\n");
  const auto run = gpuvp("sweep replay.yaml -j 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const json rows = load_json(dir_ / "rp-sweep/results.json")["rows"];
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) EXPECT_EQ(row["status"], "ok") << row.dump();
  EXPECT_NE(read(dir_ / "rp-sweep/points" / rows[0]["id"].get<std::string>() / "command.txt").find("replay\n"),
            std::string::npos);
  // A slower memory clock makes the replayed kernel longer.
  EXPECT_GT(rows[0]["metrics"]["gpu.cycles"].get<double>(), rows[1]["metrics"]["gpu.cycles"].get<double>());
  const auto single = gpuvp("replay cap --config v100 --set 'memory.hbm.clock=1600 MHz' --stats single.json");
  ASSERT_EQ(single.exit_code, 0) << single.output;
  EXPECT_EQ(rows[1]["metrics"]["gpu.cycles"],
            load_json(dir_ / "single.json")["run"]["groups"]["gpu"]["counters"]["cycles"]["value"]);

  write("ok.sh", "#!/bin/sh\nexit 0\n", true);
  write("bad.yaml",
        "mode: replayed\n"
        "knobs: {gpu.sm.count: [1]}\n"
        "programs: [ok.sh]\n"
        "metrics: [gpu.cycles]\n");
  const auto bad = gpuvp("sweep bad.yaml");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("bad.yaml:1:7: error: unknown mode 'replayed' (execution, replay)"), std::string::npos)
      << bad.output;
  write("bad2.yaml",
        "mode: replay\n"
        "knobs: {gpu.sm.count: [1]}\n"
        "programs: [ok.sh]\n"
        "metrics: [gpu.cycles]\n");
  const auto bad2 = gpuvp("sweep bad2.yaml");
  EXPECT_EQ(bad2.exit_code, 1);
  EXPECT_NE(bad2.output.find("bad2.yaml:3:12: error: mode replay: 'ok.sh' is not a capture directory"),
            std::string::npos)
      << bad2.output;
}

const char* kTwoKnobScriptSpec =
    "name: grid\n"
    "knobs:\n"
    "  gpu.sm.clock: [500 MHz, 1312 MHz, 1800 MHz]\n"
    "  memory.hbm.clock: [877 MHz, 1600 MHz]\n"
    "programs: [ok.sh, {name: other, path: ok.sh, args: [x]}]\n"
    "metrics: [gpu.kernels, gpu.command_processor.kernels_launched]\n";

TEST_F(SweepCli, SlurmArrayTasksAndMergeGiveTheRowsOfLocalJobs) {
  write("ok.sh", "#!/bin/sh\nexit 0\n", true);
  write("grid.yaml", kTwoKnobScriptSpec);
  ASSERT_EQ(gpuvp("sweep grid.yaml -j 2 -o local --quiet").exit_code, 0);

  const auto emit = gpuvp("sweep grid.yaml --emit-slurm -o cluster");
  ASSERT_EQ(emit.exit_code, 0) << emit.output;
  const std::string script = read(dir_ / "cluster/sweep.slurm");
  EXPECT_NE(script.find("#SBATCH --array=0-11\n"), std::string::npos) << script;
  // What SLURM would do: run the script once per array index (in any order), then merge.
  for (int task : {11, 3, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10}) {
    const auto result = test::run_command("cd " + dir_.string() + " && SLURM_ARRAY_TASK_ID=" + std::to_string(task) +
                                          " bash cluster/sweep.slurm");
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }
  const auto merged = gpuvp("sweep grid.yaml --merge -o cluster");
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_EQ(comparable_rows(dir_ / "cluster/results.json"), comparable_rows(dir_ / "local/results.json"));
}

TEST_F(SweepCli, PlotDrawsHeatMapsLinesAndSpeedupsWithUnits) {
  write("va.yaml", kVectorAddSpec);
  ASSERT_EQ(gpuvp("sweep va.yaml -j 2 --quiet").exit_code, 0);
  const json rows = load_json(dir_ / "va-sweep/results.json")["rows"];

  auto check_chart = [&](const std::string& prefix, const std::vector<std::string>& texts) {
    const std::string png = read(prefix + ".png");
    ASSERT_GT(png.size(), 2000u) << prefix;
    EXPECT_EQ(png.substr(1, 3), "PNG");
    const std::string svg = read(prefix + ".svg");
    ASSERT_NE(svg.find("<svg"), std::string::npos);
    for (const auto& text : texts) EXPECT_NE(svg.find(text), std::string::npos) << prefix << ": " << text;
  };
  // Two swept knobs: a heat map, both axes in MHz, the time in us (the metric's unit is ps).
  auto run = gpuvp("plot va-sweep");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  check_chart((dir_ / "va-sweep/gpu.time_ps-heatmap-gpu.sm.clock").string(),
              {"gpu.sm.clock (MHz)", "memory.hbm.clock (MHz)", "gpu.time_ps (us)", "vector_add", ">1312<", ">1600<"});
  // A chosen x and metric: one line per value of the other knob.
  run = gpuvp("plot va-sweep/results.json --x memory.hbm.clock --y gpu.cycles -o lines");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  check_chart((dir_ / "lines").string(), {"memory.hbm.clock (MHz)", "gpu.cycles (cycle)", "vector_add, gpu.sm.clock=500",
                                          "vector_add, gpu.sm.clock=1312"});
  // Speedup over a baseline point: the baseline cell is 1; the others are the time ratios.
  run = gpuvp("plot va-sweep --baseline 'gpu.sm.clock=1312 MHz,memory.hbm.clock=877MHz' -o speedup");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  char slow[32];
  std::snprintf(slow, sizeof slow, ">%.3g<",
                rows[2]["metrics"]["gpu.time_ps"].get<double>() / rows[0]["metrics"]["gpu.time_ps"].get<double>());
  check_chart((dir_ / "speedup").string(),
              {"va: gpu.time_ps speedup over gpu.sm.clock=1312 MHz, memory.hbm.clock=877MHz", "speedup (x)", ">1<", slow});

  // Mistakes name what is wrong.
  run = gpuvp("plot va-sweep --x gpu.sm.count");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find("'gpu.sm.count' is not a knob of this sweep (its knobs: gpu.sm.clock, memory.hbm.clock)"),
            std::string::npos)
      << run.output;
  run = gpuvp("plot va-sweep --baseline gpu.sm.clock=1312MHz");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("matches 2 points of program vector_add"), std::string::npos) << run.output;
}

#ifdef GPUVP_MPIRUN
// mpirun as root needs --allow-run-as-root; --oversubscribe lets 3 ranks share a 2-core machine.
std::string mpirun(int ranks) {
  return std::string(GPUVP_MPIRUN) + " --allow-run-as-root --oversubscribe --enable-recovery -np " +
         std::to_string(ranks) + " ";
}

TEST_F(SweepCli, MpiRanksGiveTheRowsOfLocalJobs) {
  write("va.yaml", kVectorAddSpec);
  ASSERT_EQ(gpuvp("sweep va.yaml -j 2 -o local --quiet").exit_code, 0);
  const auto run = test::run_command("cd " + dir_.string() + " && " + mpirun(3) + GPUVP_BINARY +
                                         " sweep --mpi va.yaml -o mpi",
                                     300s);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("4 of 4 points to run on 3 MPI rank(s)"), std::string::npos) << run.output;
  EXPECT_EQ(comparable_rows(dir_ / "mpi/results.json"), comparable_rows(dir_ / "local/results.json"));
}

TEST_F(SweepCli, MpiRankThatDiesLosesOnlyItsPoint) {
  // Rank 1 kills itself (the rank process is the grandparent of the program) at its first point.
  write("ok.sh",
        "#!/bin/sh\n"
        "if [ \"$GPUVP_SWEEP_RANK\" = 1 ]; then kill -KILL $(cut -d' ' -f4 /proc/$PPID/stat); sleep 30; fi\n"
        "sleep 0.2\n",
        true);
  write("grid.yaml", kTwoKnobScriptSpec);
  const auto run = test::run_command("cd " + dir_.string() + " && " + mpirun(2) + GPUVP_BINARY +
                                         " sweep --mpi grid.yaml -o mpi --rank-timeout 3",
                                     300s);
  // (mpirun --enable-recovery exits 0 whatever the ranks did: the summary and the rows tell.)
  EXPECT_NE(run.output.find("11 ok, 1 not ok"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("MPI rank 1 stopped responding while running this point"), std::string::npos) << run.output;
  const json rows = load_json(dir_ / "mpi/results.json")["rows"];
  size_t lost = 0, ok = 0;
  for (const auto& row : rows) {
    lost += row["status"] == "lost";
    ok += row["status"] == "ok";
  }
  EXPECT_EQ(lost, 1u) << rows.dump(1);
  EXPECT_EQ(ok, rows.size() - 1);
  // The lost point runs again on resume, alone.
  write("ok.sh", "#!/bin/sh\nexit 0\n", true);
  const auto resumed = gpuvp("sweep grid.yaml -o mpi");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("(1 ran, 11 already done), 12 ok"), std::string::npos) << resumed.output;
}
#endif

}  // namespace
}  // namespace gpuvp
