// The progress line of `gpuvp run` (platform/stats/progress.h): drawn on a terminal, absent from
// logs, forced by --progress, and without effect on the results.
#include <string>

#include "tests/report/common.h"

namespace gpuvp::test {
namespace {

using std::chrono::seconds;

const std::string kEraseLine = "\r\033[K";
// A program that simulates for well over the half second before the first line is drawn.
const std::string kLongProgram = kWorkloads + "/workload_hotspot";

TEST(Progress, ForcedOnChangesNoStatistic) {
  const std::string on = ::testing::TempDir() + "/progress_on.json";
  const std::string off = ::testing::TempDir() + "/progress_off.json";
  const ProcessResult with = run({kGpuvp, "run", "--progress", "--stats", on, "--", kLongProgram}, seconds(600));
  ASSERT_EQ(with.exit_code, 0) << describe(with);
  const ProcessResult without =
      run({kGpuvp, "run", "--no-progress", "--stats", off, "--", kLongProgram}, seconds(600));
  ASSERT_EQ(without.exit_code, 0) << describe(without);
  // Forced: the line is drawn although stderr is a pipe, with every figure it promises.
  EXPECT_NE(with.err.find(kEraseLine + "gpuvp run: simulated "), std::string::npos) << describe(with);
  EXPECT_NE(with.err.find(" kernels done"), std::string::npos) << describe(with);
  EXPECT_NE(with.err.find(" CTAs "), std::string::npos) << describe(with);
  EXPECT_NE(with.err.find("/s"), std::string::npos) << describe(with);
  EXPECT_EQ(without.err.find(kEraseLine), std::string::npos) << describe(without);
  // The program's own output and the device statistics are the same.
  EXPECT_EQ(with.out, without.out);
  EXPECT_TRUE(device_stats(on) == device_stats(off)) << "statistics differ with --progress";
}

TEST(Progress, NotDrawnWhenStderrIsNotATerminal) {
  const ProcessResult r = run({kGpuvp, "run", "--", kWorkloads + "/workload_gemm"}, seconds(600));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err.find(kEraseLine), std::string::npos) << describe(r);
  EXPECT_EQ(r.err.find("kernels done |"), std::string::npos) << describe(r);
}

TEST(Progress, DrawnOnATerminal) {
  // script(1) runs the command on a pseudo-terminal and copies what it writes to our stdout.
  const std::string command = "script -qec '" + kGpuvp + " run -- " + kLongProgram + "' /dev/null";
  const CommandResult r = run_command(command, seconds(600));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(kEraseLine + "gpuvp run: simulated "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" kernels done"), std::string::npos) << r.output;
  // The program still ran to its own check.
  EXPECT_NE(r.output.find("exited with code 0"), std::string::npos) << r.output;
}

TEST(Progress, BothFlagsAreRefused) {
  const ProcessResult r =
      run({kGpuvp, "run", "--progress", "--no-progress", "--", kWorkloads + "/workload_vector_add"}, seconds(120));
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << describe(r);
}

}  // namespace
}  // namespace gpuvp::test
