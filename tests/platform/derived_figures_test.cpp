// `gpuvp info` figures, checked against hand computation from the seeds' numbers.
#include <gtest/gtest.h>

#include <map>

#include "platform/config/config.h"
#include "platform/derived_figures.h"

namespace gpuvp {
namespace {

std::map<std::string, double> figures_of(const std::string& preset, const std::vector<std::string>& overrides = {}) {
  const auto registry = build_knob_registry();
  const config::ConfigLoader loader(registry, {GPUVP_PRESET_DIR});
  const auto params = PlatformParams::load(loader.load(preset, overrides));
  std::map<std::string, double> out;
  for (const auto& figure : derive_figures(params)) out[figure.key] = figure.value;
  return out;
}

TEST(DerivedFigures, V100MatchesHandComputation) {
  auto f = figures_of("v100");
  EXPECT_EQ(f["sm_count"], 84);
  // 2 FLOP per FMA x 84 SMs x 64 FP32 lanes x 1.312 GHz = 14.106 TFLOP/s
  EXPECT_DOUBLE_EQ(f["peak_fp32_flops"], 2.0 * 84 * 64 * 1312e6);
  EXPECT_NEAR(f["peak_fp32_flops"], 14.106e12, 0.001e12);
  EXPECT_DOUBLE_EQ(f["peak_fp64_flops"], 2.0 * 84 * 32 * 1312e6);
  // 32 slices x 192 KiB = 6 MiB
  EXPECT_EQ(f["l2_capacity"], 6.0 * 1024 * 1024);
  // 4 stacks x 1024 bit x 2 x 877 MHz / 8 = 898.048 GB/s (the whitepaper's "900 GB/s")
  EXPECT_DOUBLE_EQ(f["peak_hbm_bandwidth"], 4 * 1024 / 8.0 * 2 * 877e6);
  EXPECT_NEAR(f["peak_hbm_bandwidth"], 898.048e9, 1e6);
  EXPECT_EQ(f["hbm_capacity"], 16384.0 * 1024 * 1024);
  EXPECT_EQ(f["pcie_peak_bandwidth"], 16e9);
  EXPECT_EQ(f["max_resident_threads"], 84 * 2048);
  EXPECT_EQ(f["crossbar_bandwidth"], 4800e9);
}

TEST(DerivedFigures, P100MatchesHandComputation) {
  auto f = figures_of("p100");
  EXPECT_EQ(f["sm_count"], 56);
  EXPECT_DOUBLE_EQ(f["peak_fp32_flops"], 2.0 * 56 * 64 * 1328e6);  // 9.519 TFLOP/s
  EXPECT_EQ(f["l2_capacity"], 4.0 * 1024 * 1024);                    // 8 x 512 KiB
  EXPECT_NEAR(f["peak_hbm_bandwidth"], 732.16e9, 1e6);               // 4096 bit x 1.43 GT/s / 8
}

TEST(DerivedFigures, PcieFollowsSeed003TableOneAndTheCap) {
  auto f = figures_of("v100");
  EXPECT_DOUBLE_EQ(f["pcie_4k_bandwidth"], 3.2219e9);   // Table 1, 4 KB
  EXPECT_DOUBLE_EQ(f["pcie_1m_bandwidth"], 11.223e9);   // Table 1, 1 MB
  auto capped = figures_of("v100", {"pcie.bandwidth=8 GB/s"});
  EXPECT_DOUBLE_EQ(capped["pcie_1m_bandwidth"], 8e9);
  auto peak = figures_of("v100", {"pcie.transfer_model=peak"});
  EXPECT_DOUBLE_EQ(peak["pcie_4k_bandwidth"], 16e9);
}

TEST(DerivedFigures, OverridesChangeTheFigures) {
  auto f = figures_of("v100", {"gpu.sm.count=80", "gpu.sm.clock=1530 MHz"});
  EXPECT_DOUBLE_EQ(f["peak_fp32_flops"], 2.0 * 80 * 64 * 1530e6);  // the 15.7 TFLOP/s of the datasheet
}

TEST(DerivedFigures, FormattingUsesDecimalPrefixes) {
  EXPECT_EQ(format_figure({"k", "l", 14.106e12, "FLOP/s", ""}), "14.11 TFLOP/s");
  EXPECT_EQ(format_figure({"k", "l", 6.0 * 1024 * 1024, "B", ""}), "6 MiB");
  EXPECT_EQ(format_figure({"k", "l", 898.048e9, "B/s", ""}), "898.05 GB/s");
  EXPECT_EQ(format_figure({"k", "l", 84, "", ""}), "84");
}

}  // namespace
}  // namespace gpuvp
