// `gpuvp report` end to end: statistics of real runs (vector_add, a matmul, a unified-memory
// program) turned into HTML, and each page rendered by headless Chromium, the test checking the
// rendered page: no script error, every chart present and laid out with a size, a screenshot.
#include <regex>
#include <string>

#include "tests/report/common.h"

namespace gpuvp::test {
namespace {

using std::chrono::seconds;

const std::string kChromium = GPUVP_CHROMIUM;

std::string chromium(const std::string& arguments) {
  // --no-sandbox: tests may run as root; no GPU and no network are needed to render the page.
  return kChromium + " --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions " + arguments;
}

struct Rendered {
  int charts = -1;
  int sized = -1;
  bool script_error = true;
  std::string dom;
};

Rendered render(const std::string& html_path) {
  const CommandResult r =
      run_command(chromium("--virtual-time-budget=5000 --dump-dom file://" + html_path) + " 2>/dev/null", seconds(180));
  Rendered out;
  out.dom = r.output;
  std::smatch m;
  const std::regex body("<body([^>]*)>");
  if (!std::regex_search(r.output, m, body)) return out;
  const std::string attributes = m[1];
  std::smatch a;
  if (std::regex_search(attributes, a, std::regex("data-charts=\"(\\d+)\""))) out.charts = std::stoi(a[1]);
  if (std::regex_search(attributes, a, std::regex("data-charts-sized=\"(\\d+)\""))) out.sized = std::stoi(a[1]);
  out.script_error = attributes.find("data-script-error") != std::string::npos;
  return out;
}

struct Case {
  const char* name;
  std::vector<std::string> program;
  bool unified_memory;
};

class ReportRenders : public ::testing::TestWithParam<Case> {};

TEST_P(ReportRenders, InHeadlessChromium) {
  const Case& c = GetParam();
  const std::string base = ::testing::TempDir() + "/report_" + c.name;
  std::vector<std::string> argv = {kGpuvp, "run", "--stats-per-launch", "--stats", base + ".json", "--"};
  argv.insert(argv.end(), c.program.begin(), c.program.end());
  const ProcessResult ran = run(argv, seconds(600));
  ASSERT_EQ(ran.exit_code, 0) << describe(ran);

  const ProcessResult made = run({kGpuvp, "report", base + ".json", "-o", base + ".html"}, seconds(300));
  ASSERT_EQ(made.exit_code, 0) << describe(made);
  const std::string page = slurp(base + ".html");
  ASSERT_FALSE(page.empty());
  // Self-contained: nothing is fetched at view time (the SVG namespace URI is a name, not a fetch).
  EXPECT_FALSE(std::regex_search(page, std::regex("(src|href)=\"(https?:)?//"))) << "page refers to the network";
  EXPECT_EQ(page.find("url(http"), std::string::npos);
  EXPECT_NE(page.find("speed of light"), std::string::npos);
  EXPECT_NE(page.find("issue slots"), std::string::npos);
  EXPECT_NE(page.find("Occupancy: achieved occupancy"), std::string::npos);
  EXPECT_NE(page.find("limited by"), std::string::npos);
  EXPECT_NE(page.find("cache and TLB hit rates"), std::string::npos);
  EXPECT_NE(page.find("kernels over simulated time"), std::string::npos);
  EXPECT_EQ(page.find("unified memory: far faults") != std::string::npos, c.unified_memory)
      << "the fault and migration timeline appears exactly when the run had far faults";

  // The same statistics give the same page.
  const ProcessResult again = run({kGpuvp, "report", base + ".json", "-o", base + "_again.html"}, seconds(300));
  ASSERT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_TRUE(slurp(base + "_again.html") == page) << "report output is not deterministic";

  const Rendered r = render(base + ".html");
  ASSERT_GE(r.charts, 0) << "Chromium did not render the page (is chromium installed? scripts/setup.sh):\n"
                         << r.dom.substr(0, 2000);
  EXPECT_FALSE(r.script_error) << r.dom.substr(0, 2000);
  // A timeline, then per kernel the speed of light, the stalls and the hit rates.
  EXPECT_GE(r.charts, 4 + (c.unified_memory ? 1 : 0));
  EXPECT_EQ(r.sized, r.charts) << "a chart was laid out without a size";

  const std::string png = base + ".png";
  std::remove(png.c_str());
  const CommandResult shot =
      run_command(chromium("--window-size=1280,2400 --screenshot=" + png + " file://" + base + ".html") + " 2>&1",
                  seconds(180));
  const std::string image = slurp(png);
  ASSERT_GT(image.size(), 10000u) << shot.output;
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

INSTANTIATE_TEST_SUITE_P(
    Report, ReportRenders,
    ::testing::Values(Case{"vector_add", {GPUVP_WORKLOAD_BIN_DIR "/workload_vector_add"}, false},
                      Case{"matmul", {GPUVP_WORKLOAD_BIN_DIR "/workload_gemm"}, false},
                      Case{"uvm_stream", {GPUVP_WORKLOAD_BIN_DIR "/uvm_suite", "stream"}, true}),
    [](const ::testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

TEST(Report, BadInputIsAnErrorNamingTheFile) {
  const ProcessResult missing = run({kGpuvp, "report", "/nonexistent/stats.json"}, seconds(60));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/stats.json"), std::string::npos) << describe(missing);

  const std::string not_stats = ::testing::TempDir() + "/not_stats.json";
  { std::ofstream(not_stats) << "{\"hello\": 1}\n"; }
  const ProcessResult wrong = run({kGpuvp, "report", not_stats, "-o", not_stats + ".html"}, seconds(120));
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("not a gpuvp statistics file"), std::string::npos) << describe(wrong);

  const std::string broken = ::testing::TempDir() + "/broken_stats.json";
  { std::ofstream(broken) << "{\"format\": \"gpuvp-stats\", \"kern"; }
  const ProcessResult bad = run({kGpuvp, "report", broken, "-o", broken + ".html"}, seconds(120));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find(broken), std::string::npos) << describe(bad);
}

}  // namespace
}  // namespace gpuvp::test
