#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "platform/config/config.h"
#include "platform/platform_params.h"

namespace gpuvp {
namespace {

const std::vector<std::string> kPresets = {"v100", "p100", "v100_windowed"};

std::string read_preset(const std::string& name) {
  std::ifstream in(std::string(GPUVP_PRESET_DIR) + "/" + name + ".yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Presets, EveryPresetLoadsAndPassesTheCrossKnobRules) {
  const auto registry = build_knob_registry();
  const config::ConfigLoader loader(registry, {GPUVP_PRESET_DIR});
  for (const auto& name : kPresets) {
    EXPECT_NO_THROW(PlatformParams::load(loader.load(name))) << name;
  }
}

TEST(Presets, EveryPresetSetsEveryKnobExplicitly) {
  // A preset describes a machine completely: nothing is left to gpuvp's defaults silently.
  const auto registry = build_knob_registry();
  const config::ConfigLoader loader(registry, {GPUVP_PRESET_DIR});
  for (const auto& name : kPresets) {
    const auto config = loader.load(name);
    for (size_t i = 0; i < registry.size(); ++i) {
      EXPECT_EQ(config.origin(i).kind, config::Origin::Kind::File) << name << " leaves " << registry.at(i).name;
    }
  }
}

TEST(Presets, EveryValueCitesItsSource) {
  // Each "key: value" line carries a comment naming a seed table or a public document.
  const std::regex value_line(R"(^\s*[a-z0-9_]+:\s*[^\s#].*$)");
  const std::regex citation(R"(#.*(seed 0\d\d|whitepaper|JESD|gpuvp's own))");
  for (const auto& name : kPresets) {
    std::istringstream lines(read_preset(name));
    int line_number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++line_number;
      if (!std::regex_match(line, value_line)) continue;
      EXPECT_TRUE(std::regex_search(line, citation)) << name << ".yaml:" << line_number << ": " << line;
    }
  }
}

TEST(Presets, V100FollowsSeed000Table2AndListing1) {
  const auto registry = build_knob_registry();
  const config::ConfigLoader loader(registry, {GPUVP_PRESET_DIR});
  const auto p = PlatformParams::load(loader.load("v100"));
  EXPECT_EQ(p.sm.count, 84u);
  EXPECT_EQ(p.sm.clock_hz, 1312e6);
  EXPECT_EQ(p.l2.slices, 32u);
  EXPECT_EQ(p.l2.slice_bytes, 192u * 1024);
  EXPECT_EQ(p.hbm.stacks, 4u);
  EXPECT_EQ(p.hbm.capacity_bytes, 16384ull << 20);
  EXPECT_EQ(p.crossbar.clock_hz, 1200e6);
  EXPECT_EQ(p.crossbar.flit_bytes, 40u);
  EXPECT_EQ(p.crossbar.latency_ps, 750);
  EXPECT_EQ(p.pcie.latency_ps, 23840);
  EXPECT_EQ(p.pcie.bandwidth, 16e9);
}

TEST(Presets, P100FollowsSeed000Table6) {
  const auto registry = build_knob_registry();
  const config::ConfigLoader loader(registry, {GPUVP_PRESET_DIR});
  const auto p = PlatformParams::load(loader.load("p100"));
  EXPECT_EQ(p.sm.count, 56u);
  EXPECT_EQ(p.sm.clock_hz, 1328e6);
  EXPECT_EQ(p.l2.slices, 8u);
  EXPECT_EQ(p.l2.slice_bytes, 512u * 1024);
  EXPECT_EQ(p.crossbar.clock_hz, 1000e6);
}

TEST(Presets, CrossKnobRulesNameTheKnobAndWhereItWasSet) {
  const auto registry = build_knob_registry();
  const config::ConfigLoader loader(registry, {GPUVP_PRESET_DIR});
  try {
    PlatformParams::load(loader.load("v100", {"gpu.sm.max_threads=100", "memory.l2.line_size=100 B"}));
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 3u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].to_string(),
              "--set: error: gpu.sm.max_threads: must be a multiple of the warp size (32)");
    EXPECT_EQ(e.diagnostics()[1].key, "memory.l2.line_size");  // not whole sectors
    EXPECT_EQ(e.diagnostics()[2].key, "memory.l2.slice_size");  // not whole lines
  }
}

}  // namespace
}  // namespace gpuvp
