// The gpuvp binary as a user runs it: exit codes, help everywhere, output that loads back.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "platform/platform_params.h"
#include "tests/support/process.h"

namespace gpuvp {
namespace {

test::CommandResult gpuvp(const std::string& arguments) { return test::run_command(std::string(GPUVP_BINARY) + " " + arguments); }

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

TEST(Cli, ConfigListShowsEveryKnobWithItsColumns) {
  const test::CommandResult run = gpuvp("config list");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto registry = build_knob_registry();
  for (const auto& knob : registry.knobs()) {
    EXPECT_NE(run.output.find(knob.name), std::string::npos) << knob.name;
    EXPECT_NE(run.output.find(knob.doc), std::string::npos) << knob.name;
  }
  EXPECT_NE(run.output.find("gpu.sm.clock                   frequency  Hz      1312 MHz"), std::string::npos)
      << run.output;
}

TEST(Cli, ConfigListJsonParses) {
  const test::CommandResult run = gpuvp("config list --json");
  ASSERT_EQ(run.exit_code, 0);
  const auto knobs = nlohmann::json::parse(run.output);
  EXPECT_EQ(knobs.size(), build_knob_registry().size());
  EXPECT_EQ(knobs[0]["name"], "gpu.compute_capability");
}

TEST(Cli, ShowOutputLoadsBackToTheSameConfiguration) {
  const test::CommandResult shown = gpuvp("config show p100 --set gpu.sm.count=7");
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("    count: 7"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("# --set"), std::string::npos);
  EXPECT_NE(shown.output.find("p100.yaml:"), std::string::npos);
  const auto file = temp_file("gpuvp_show_roundtrip.yaml", shown.output);
  const test::CommandResult reshown = gpuvp("config show " + file.string());
  ASSERT_EQ(reshown.exit_code, 0) << reshown.output;
  // Same values: compare the JSON forms.
  EXPECT_EQ(gpuvp("config show --json " + file.string()).output,
            gpuvp("config show --json p100 --set gpu.sm.count=7").output);
}

TEST(Cli, CheckAcceptsAGoodFileAndRejectsABadOneWithLocations) {
  const auto good = temp_file("gpuvp_good.yaml", "extends: v100\ngpu:\n  sm:\n    count: 80\n");
  const test::CommandResult ok = gpuvp("config check " + good.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find(": ok ("), std::string::npos) << ok.output;

  const auto bad = temp_file("gpuvp_bad.yaml", "gpu:\n  sm:\n    cont: 80\n    clock: 1312\n");
  const test::CommandResult failed = gpuvp("config check " + bad.string());
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.output.find(bad.string() + ":3:5: error: gpu.sm.cont: unknown key (did you mean 'gpu.sm.count'?)"),
            std::string::npos)
      << failed.output;
  EXPECT_NE(failed.output.find(bad.string() + ":4:12: error: gpu.sm.clock: missing unit"), std::string::npos)
      << failed.output;
}

TEST(Cli, InfoPrintsDerivedFigures) {
  const test::CommandResult run = gpuvp("info v100");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("14.11 TFLOP/s"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("898.05 GB/s"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("6 MiB"), std::string::npos) << run.output;
  const auto json = nlohmann::json::parse(gpuvp("info --json --config p100").output);
  EXPECT_EQ(json["figures"]["sm_count"]["value"], 56);
}

TEST(Cli, InfoWithoutArgumentsUsesTheDefaultPreset) {
  EXPECT_EQ(gpuvp("info").output, gpuvp("info v100").output);
}

TEST(Cli, HelpWorksEverywhere) {
  for (const char* command : {"--help", "config --help", "config list --help", "config show --help",
                              "config check --help", "info --help"}) {
    const test::CommandResult run = gpuvp(command);
    EXPECT_EQ(run.exit_code, 0) << command;
    EXPECT_NE(run.output.find("Usage"), std::string::npos) << command;
  }
}

// An unknown subcommand is an error, with or without --help (which must not answer with the
// enclosing command's help and exit 0), and the message lists the subcommands there are.
TEST(Cli, UnknownSubcommandIsAnErrorEvenWithHelp) {
  for (const char* command : {"frobnicate --help", "frobnicate", "--log-level info frobnicate --help"}) {
    const test::CommandResult run = gpuvp(command);
    EXPECT_NE(run.exit_code, 0) << command;
    EXPECT_NE(run.output.find("gpuvp: unknown subcommand 'frobnicate'"), std::string::npos) << command << run.output;
    EXPECT_NE(run.output.find("config, info"), std::string::npos) << command << run.output;
    EXPECT_EQ(run.output.find("Usage"), std::string::npos) << command << run.output;
  }
  const test::CommandResult nested = gpuvp("config bogus --help");
  EXPECT_NE(nested.exit_code, 0);
  EXPECT_NE(nested.output.find("gpuvp config: unknown subcommand 'bogus'"), std::string::npos) << nested.output;
  EXPECT_NE(nested.output.find("list, show, check, presets"), std::string::npos) << nested.output;
  // Known subcommands keep their help; a program's own --help after `run --` is the program's.
  EXPECT_EQ(gpuvp("run --help").exit_code, 0);
  EXPECT_EQ(gpuvp("run -- sh -c 'exit 0' --help").exit_code, 0);
}

TEST(Cli, LogLevelSendsDiagnosticsToStderrOnly) {
  const auto quiet = test::run_command("(" + std::string(GPUVP_BINARY) + " info v100 2>/dev/null)");
  const auto logged = test::run_command("(" + std::string(GPUVP_BINARY) + " --log-level info info v100 2>/dev/null)");
  EXPECT_EQ(quiet.output, logged.output);  // stdout unchanged
  const auto with_stderr = gpuvp("--log-level info info v100");
  EXPECT_NE(with_stderr.output.find("configuration v100 from "), std::string::npos) << with_stderr.output;
  EXPECT_NE(gpuvp("--log-level loud info").exit_code, 0);
}

TEST(Cli, UsageErrorsExitNonZero) {
  EXPECT_NE(gpuvp("").exit_code, 0);
  EXPECT_NE(gpuvp("frobnicate").exit_code, 0);
  EXPECT_NE(gpuvp("config").exit_code, 0);
  EXPECT_NE(gpuvp("config check").exit_code, 0);
  EXPECT_NE(gpuvp("info --no-such-flag").exit_code, 0);
  const test::CommandResult missing = gpuvp("info no_such_preset");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("presets: p100, v100"), std::string::npos) << missing.output;
}

TEST(Cli, PcieSweepReproducesSeed003TableOne) {
  const auto run = gpuvp("pcie-sweep --bytes 1MiB");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // 4 KiB transfers achieve Table 1's 3.2219 GB/s (less a latency on the first transfer).
  EXPECT_NE(run.output.find("4 KiB        256     3.221 GB/s     3.222 GB/s   3.222 GB/s   3.2219 GB/s"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("pcie.errors"), std::string::npos) << "zero counters stay out of the summary";
  EXPECT_NE(run.output.find("pcie.downstream_bytes"), std::string::npos) << run.output;
}

TEST(Cli, StatsOfTwoIdenticalRunsAreByteIdentical) {
  const auto first = std::filesystem::temp_directory_path() / "gpuvp_stats_1.json";
  const auto second = std::filesystem::temp_directory_path() / "gpuvp_stats_2.json";
  ASSERT_EQ(gpuvp("pcie-sweep --config p100 --stats " + first.string()).exit_code, 0);
  ASSERT_EQ(gpuvp("pcie-sweep --config p100 --stats " + second.string()).exit_code, 0);
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string a = read(first);
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, read(second));
  const auto json = nlohmann::json::parse(a);
  EXPECT_EQ(json["run"]["groups"]["pcie"]["counters"]["errors"]["value"], 0);
  EXPECT_EQ(json["run"]["groups"]["copy_engine"]["counters"]["bytes"]["value"], 2 * 6 * (4u << 20));
}

TEST(Cli, PcieSweepRejectsBadArguments) {
  const auto run = gpuvp("pcie-sweep --bytes 12");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find("--bytes '12': error: missing unit"), std::string::npos) << run.output;
  EXPECT_EQ(gpuvp("pcie-sweep --bytes 1KiB").exit_code, 1);  // below the 4 KiB minimum
  EXPECT_EQ(gpuvp("pcie-sweep --set pcie.bandwidth=0GB/s").exit_code, 1);
}

}  // namespace
}  // namespace gpuvp
