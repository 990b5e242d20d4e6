// Sweep specs: expansion into points, and every kind of mistake reported with file:line before
// anything runs; metrics found in a statistics JSON by dotted name.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

#include "platform/platform_params.h"
#include "platform/sweep/sweep_results.h"
#include "platform/sweep/sweep_runner.h"
#include "platform/sweep/sweep_spec.h"

namespace gpuvp::sweep {
namespace {

class SpecTest : public ::testing::Test {
 protected:
  SpecTest() : registry_(build_knob_registry()), loader_(registry_, config::default_preset_dirs()) {}

  SweepSpec load(const std::string& text) { return load_spec_text(text, "s.yaml", "/tmp", loader_, {}); }
  // The messages of the SpecError that `text` raises (fails the test when it loads).
  std::vector<std::string> errors(const std::string& text) {
    try {
      load(text);
    } catch (const SpecError& e) {
      return e.messages();
    }
    ADD_FAILURE() << "the spec loaded:\n" << text;
    return {};
  }

  config::KnobRegistry registry_;
  config::ConfigLoader loader_;
};

const char* kPrograms =
    "programs: [/bin/true, {name: other, path: /bin/false, args: [a, b]}]\n"
    "metrics: [gpu.time_ps]\n";

TEST_F(SpecTest, CartesianProductIsProgramMajorLastKnobFastest) {
  const auto spec = load(std::string("base: v100\n"
                                     "knobs:\n"
                                     "  gpu.sm.clock: [500 MHz, 1312 MHz, 1.8 GHz]\n"
                                     "  memory.hbm.clock: [877 MHz, 1200 MHz]\n") +
                         kPrograms);
  ASSERT_EQ(spec.points.size(), 12u);
  EXPECT_EQ(spec.knobs, (std::vector<std::string>{"gpu.sm.clock", "memory.hbm.clock"}));
  EXPECT_EQ(spec.programs[0].name, "true");
  EXPECT_EQ(spec.programs[1].args, (std::vector<std::string>{"a", "b"}));
  const Point& p0 = spec.points[0];
  EXPECT_EQ(p0.program, 0u);
  EXPECT_EQ(p0.knobs[0].text, "500 MHz");
  EXPECT_EQ(p0.knobs[1].text, "877 MHz");
  EXPECT_EQ(spec.points[1].knobs[1].text, "1200 MHz");
  EXPECT_EQ(spec.points[5].knobs[0].text, "1800 MHz");
  EXPECT_DOUBLE_EQ(spec.points[5].knobs[0].value, 1.8e9);
  EXPECT_EQ(spec.points[6].program, 1u);
  EXPECT_EQ(spec.overrides(spec.points[5]),
            (std::vector<std::string>{"gpu.sm.clock=1800 MHz", "memory.hbm.clock=1200 MHz"}));
  std::set<std::string> ids;
  for (const auto& p : spec.points) ids.insert(p.id);
  EXPECT_EQ(ids.size(), 12u);
  // Ids depend on what defines a point, not on when it was loaded.
  EXPECT_EQ(load(std::string("knobs:\n  gpu.sm.clock: [500 MHz, 1312 MHz, 1800 MHz]\n"
                             "  memory.hbm.clock: [877 MHz, 1200 MHz]\n") +
                 kPrograms)
                .points[7]
                .id,
            spec.points[7].id);
}

TEST_F(SpecTest, ZipMovesKnobsTogetherAndRangesExpand) {
  const auto spec = load(std::string("set: {sim.kernel_model: timing}\n"
                                     "knobs:\n"
                                     "  zip:\n"
                                     "    gpu.sm.clock: [500 MHz, 1312 MHz]\n"
                                     "    memory.l2.clock: [500 MHz, 1312 MHz]\n"
                                     "  memory.l2.slice_size: {from: 48 KiB, to: 384 KiB, factor: 2}\n") +
                         kPrograms);
  ASSERT_EQ(spec.points.size(), 2u * 4u * 2u);
  EXPECT_EQ(spec.base_sets, (std::vector<std::string>{"sim.kernel_model=timing"}));
  ASSERT_EQ(spec.axes.size(), 2u);
  EXPECT_EQ(spec.axes[0], (std::vector<std::string>{"gpu.sm.clock", "memory.l2.clock"}));
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(spec.points[i].knobs[0].text, spec.points[i].knobs[1].text);
  EXPECT_EQ(spec.points[0].knobs[2].text, "48 KiB");
  EXPECT_EQ(spec.points[3].knobs[2].text, "384 KiB");
  EXPECT_EQ(spec.points[4].knobs[0].text, "1312 MHz");

  const auto steps = load(std::string("knobs:\n  gpu.sm.count: {from: 10, to: 40, step: 10}\n"
                                      "  memory.hbm.clock: {from: 800 MHz, to: 1 GHz, count: 3}\n") +
                          "programs: [/bin/true]\nmetrics: [gpu.cycles]\n");
  ASSERT_EQ(steps.points.size(), 12u);
  EXPECT_EQ(steps.points[0].knobs[0].text, "10");
  EXPECT_EQ(steps.points[1].knobs[1].text, "900 MHz");
  EXPECT_EQ(steps.points[11].knobs[0].text, "40");
}

TEST_F(SpecTest, UnknownKnobNamesLineAndSuggests) {
  const auto e = errors(std::string("knobs:\n  gpu.sm.clok: [500 MHz]\n") + kPrograms);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("s.yaml:2:3: error: unknown knob 'gpu.sm.clok' (did you mean 'gpu.sm.clock'?)", 0), 0u) << e[0];
}

TEST_F(SpecTest, OutOfRangeAndWrongUnitValuesNameTheirLine) {
  const auto e = errors(std::string("knobs:\n"
                                    "  gpu.sm.clock: [500 MHz, 20 GHz]\n"
                                    "  memory.hbm.clock: [877 KiB]\n"
                                    "  gpu.sm.count: {from: 0, to: 8, step: 4}\n") +
                        kPrograms);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_NE(e[0].find("s.yaml:2:27: error: gpu.sm.clock:"), std::string::npos) << e[0];
  EXPECT_NE(e[0].find("10 GHz"), std::string::npos) << e[0];  // names the range
  EXPECT_NE(e[1].find("s.yaml:3:22: error: memory.hbm.clock:"), std::string::npos) << e[1];
  EXPECT_NE(e[2].find("s.yaml:4:24: error: gpu.sm.count:"), std::string::npos) << e[2];
}

TEST_F(SpecTest, MissingProgramAndMalformedPartsAreAllReported) {
  const auto e = errors(
      "base: no_such_preset\n"
      "mode: replay\n"
      "colour: blue\n"
      "knobs:\n"
      "  zip:\n"
      "    gpu.sm.clock: [500 MHz, 600 MHz]\n"
      "    memory.l2.clock: [500 MHz]\n"
      "programs:\n"
      "  - /no/such/program\n"
      "  - {name: x, path: /bin/true, argz: [1]}\n"
      "metrics: [cycles, {stat: gpu.cycles, kernel: k, as: c}, {stat: gpu.time_ps, as: c}]\n");
  std::string all;
  for (const auto& m : e) all += m + "\n";
  EXPECT_NE(all.find("s.yaml:1:7: error: base configuration:"), std::string::npos) << all;
  EXPECT_NE(all.find("s.yaml:3:1: error: unknown key 'colour'"), std::string::npos) << all;
  EXPECT_NE(all.find("s.yaml:7:22: error: zipped knob 'memory.l2.clock' has 1 values"), std::string::npos) << all;
  // In replay mode a program is a capture directory.
  EXPECT_NE(all.find("s.yaml:9:5: error: mode replay: '/no/such/program' is not a capture directory"), std::string::npos)
      << all;
  EXPECT_NE(all.find("s.yaml:10:32: error: unknown program key 'argz'"), std::string::npos) << all;
  EXPECT_NE(all.find("s.yaml:11:11: error: metric 'cycles' is not a dotted statistic name"), std::string::npos) << all;
  EXPECT_NE(all.find("s.yaml:11:57: error: two metrics give the column 'c'"), std::string::npos) << all;
}

// A path the system cannot look up at all is the spec's error with the system's reason, not an
// exception out of std::filesystem (found by the sweep fuzzer).
TEST_F(SpecTest, UnlookablePathsAreReportedWithTheirReason) {
  const std::string long_path = "/tmp/" + std::string(5000, 'x');
  for (const char* mode : {"execution", "replay"}) {
    const auto e = errors(std::string("base: v100\nmode: ") + mode + "\nprograms: [" + long_path +
                          "]\nmetrics: [gpu.time_ps]\n");
    std::string all;
    for (const auto& m : e) all += m + "\n";
    EXPECT_NE(all.find("s.yaml:3:12: error: "), std::string::npos) << all;
    EXPECT_NE(all.find("File name too long"), std::string::npos) << all;
  }
}

// Point records read back by --resume: integers must be integers in range, or the record is not
// taken (a float like 1e60 converted to an int was undefined behaviour; found by the stats fuzzer).
TEST_F(SpecTest, PointRecordsWithNonIntegerFieldsAreNotTaken) {
  const SweepSpec spec = load(std::string("base: v100\n") + kPrograms);
  auto record = [&](const std::string& index, const std::string& exit_code) {
    return record_from_json(nlohmann::json::parse(R"({"id": "p", "index": )" + index + R"(, "status": "ok", "exit_code": )" +
                                                  exit_code + R"(, "metrics": {")" + spec.metrics.at(0).column +
                                                  R"(": 5}})"),
                            spec);
  };
  const auto good = record("1", "0");
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(good->index, 1u);
  EXPECT_EQ(good->metrics.at(0), 5.0);
  EXPECT_FALSE(record("1", "1e60").has_value());
  EXPECT_FALSE(record("1", "4294967296").has_value());
  EXPECT_FALSE(record("1e60", "0").has_value());
  EXPECT_FALSE(record("-1", "0").has_value());
  EXPECT_FALSE(record("\"1\"", "0").has_value());
  EXPECT_EQ(record("1", "-9")->exit_code, -9);
}

TEST_F(SpecTest, CombinationThePlatformRejectsIsBlamedOnItsValue) {
  // 97 KiB is no whole number of 16-way sets of 128 B lines.
  const auto e = errors(std::string("knobs:\n  memory.l2.slice_size: [192 KiB, 97 KiB]\n") + kPrograms);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("s.yaml:2:35: error: the point memory.l2.slice_size = 97 KiB is not a valid platform: "
                       "memory.l2.associativity: memory.l2.slice_size must be a whole number of sets",
                       0),
            0u)
      << e[0];
}

TEST_F(SpecTest, VariablesAndRelativePathsResolve) {
  const auto spec = load_spec_text("programs: [{path: '${bin}/true', args: ['${spec_dir}/x']}]\nmetrics: [gpu.cycles]\n",
                                   "s.yaml", "/tmp", loader_, {{"bin", "/bin"}});
  EXPECT_EQ(spec.programs[0].path, "/bin/true");
  EXPECT_EQ(spec.programs[0].args[0], "/tmp/x");
  EXPECT_EQ(spec.points.size(), 1u);  // no knobs: one point per program
  const auto e = errors("programs: ['${NO_SUCH_VARIABLE_HERE}/true']\nmetrics: [gpu.cycles]\n");
  ASSERT_GE(e.size(), 1u);
  EXPECT_NE(e[0].find("s.yaml:1:12: error: ${NO_SUCH_VARIABLE_HERE}"), std::string::npos) << e[0];
}

nlohmann::json sample_stats() {
  return nlohmann::json::parse(R"({
    "format": "gpuvp-stats", "version": 1, "kernel_detail": "per_name",
    "run": {
      "groups": {
        "gpu": {"counters": {"cycles": {"value": 3947, "unit": "cycle", "doc": ""},
                             "time_ps": {"value": 3007667, "unit": "ps", "doc": ""}},
                "ratios": {"ipc": {"value": 8.5, "doc": ""}, "l1_hit_rate": {"value": null, "doc": ""}}},
        "memory.hbm": {"counters": {"bytes": {"value": 4096, "unit": "B", "doc": ""}}}
      },
      "aggregates": {
        "memory.l2[*]": {"instances": 32,
                         "histograms": {"mshr_occupancy": {"unit": "mshr", "count": 10, "sum": 430, "mean": 43.0,
                                                           "min": 1, "max": 64}}}
      }
    },
    "kernels": [
      {"name": "a", "launches": 2, "time_ps": {"sum": 100, "min": 40, "max": 60},
       "groups": {"gpu": {"counters": {"cycles": 70}}}},
      {"name": "b", "launches": 1, "time_ps": {"sum": 30, "min": 30, "max": 30},
       "groups": {"gpu": {"counters": {"cycles": 25}}}}
    ]})");
}

TEST(SweepMetrics, FoundByDottedNameInRunAndKernelScopes) {
  const auto stats = sample_stats();
  std::string unit, problem;
  auto value = [&](const std::string& stat, const std::string& kernel = "") {
    return extract_metric(stats, Metric{stat, stat, kernel}, unit, problem);
  };
  EXPECT_EQ(value("gpu.cycles"), 3947.0);
  EXPECT_EQ(unit, "cycle");
  EXPECT_EQ(value("memory.hbm.bytes"), 4096.0);
  EXPECT_EQ(unit, "B");
  EXPECT_EQ(value("gpu.ipc"), 8.5);
  EXPECT_EQ(value("gpu.l1_hit_rate"), std::nullopt);  // a ratio without a denominator is null...
  EXPECT_TRUE(problem.empty());                        // ...not a missing statistic
  EXPECT_EQ(value("memory.l2[*].mshr_occupancy"), 43.0);
  EXPECT_EQ(value("memory.l2[*].mshr_occupancy.max"), 64.0);
  EXPECT_EQ(value("gpu.cycles", "b"), 25.0);
  EXPECT_EQ(unit, "cycle");
  EXPECT_EQ(value("gpu.cycles", "*"), 95.0);
  EXPECT_EQ(value("kernel.time_ps", "a"), 100.0);
  EXPECT_EQ(unit, "ps");
  EXPECT_EQ(value("kernel.launches", "*"), 3.0);

  EXPECT_EQ(value("gpu.cycels"), std::nullopt);
  EXPECT_EQ(problem, "no statistic 'gpu.cycels' in the run scope");
  EXPECT_EQ(value("gpu.cycles", "c"), std::nullopt);
  EXPECT_EQ(problem, "no kernel named 'c' ran");
}

// A statistics file damaged by hand or cut short: the metric has no value (or the statistic is
// missing), never a crash (the reader once indexed missing keys of a const JSON object; found by
// the stats fuzzer).
TEST(SweepMetrics, MalformedStatisticsGiveNoValue) {
  const auto stats = nlohmann::json::parse(R"({
    "run": {"groups": {"gpu": {"counters": {"cycles": {"unit": 5}, "kernels": 3},
                                "ratios": {"ipc": {}},
                                "histograms": {"latency": {"count": "x"}}}}},
    "kernels": [7, {"name": 3, "time_ps": 9, "launches": "two"},
                {"name": "k", "groups": {"gpu": {"counters": {"cycles": "many"}}}}]})");
  std::string unit, problem;
  auto value = [&](const std::string& stat, const std::string& kernel = "") {
    return extract_metric(stats, Metric{stat, stat, kernel}, unit, problem);
  };
  EXPECT_EQ(value("gpu.cycles"), std::nullopt);  // an object without "value"
  EXPECT_EQ(unit, "");
  EXPECT_EQ(value("gpu.kernels"), std::nullopt);  // a bare number where the run scope has objects
  EXPECT_EQ(value("gpu.ipc"), std::nullopt);
  EXPECT_EQ(value("gpu.latency.count"), std::nullopt);
  EXPECT_EQ(value("kernel.time_ps", "*"), std::nullopt);
  EXPECT_EQ(value("kernel.launches", "*"), std::nullopt);
  EXPECT_EQ(value("gpu.cycles", "k"), std::nullopt);
  EXPECT_EQ(extract_metric(nlohmann::json::parse("[1]"), Metric{"gpu.cycles", "c", ""}, unit, problem), std::nullopt);
  EXPECT_EQ(problem, "the statistics have no run scope");
}

TEST(SweepSlurm, ScriptRunsOnePointPerArrayTask) {
  SweepSpec spec;
  spec.name = "clocks";
  spec.points.resize(18);
  const std::string script = slurm_script(spec, "/opt/gpuvp", "/s/clocks.yaml", "/out");
  EXPECT_NE(script.find("#SBATCH --array=0-17\n"), std::string::npos) << script;
  EXPECT_NE(script.find("exec '/opt/gpuvp' sweep '/s/clocks.yaml' -o '/out' --point \"$SLURM_ARRAY_TASK_ID\""),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("sweep --merge"), std::string::npos);
}

}  // namespace
}  // namespace gpuvp::sweep
