#include <gtest/gtest.h>

#include "platform/config/params.h"
#include "tests/config/test_knobs.h"

namespace gpuvp::config {
namespace {

TEST(Params, DeclarationsBecomeSortedDocumentedKnobs) {
  const KnobRegistry registry = testing::make_test_registry();
  ASSERT_EQ(registry.size(), 10u);
  for (size_t i = 1; i < registry.size(); ++i) EXPECT_LT(registry.at(i - 1).name, registry.at(i).name);
  const KnobSpec& clock = registry.at(*registry.find("gpu.sm.clock"));
  EXPECT_EQ(clock.type_label(), "frequency");
  EXPECT_EQ(clock.unit_label(), "Hz");
  EXPECT_EQ(clock.default_text, "1312 MHz");
  EXPECT_EQ(clock.range_label(), "1 MHz .. 10 GHz");
  EXPECT_EQ(clock.doc, "core clock");
  EXPECT_EQ(registry.at(*registry.find("gpu.sm.scheduler")).range_label(), "gto | lrr");
  EXPECT_TRUE(registry.is_section("gpu.sm"));
  EXPECT_TRUE(registry.is_section("gpu"));
  EXPECT_FALSE(registry.is_section("gpu.sm.count"));
  EXPECT_FALSE(registry.is_section("gp"));
}

TEST(Params, LoadFillsTheStructInCanonicalUnits) {
  const KnobRegistry registry = testing::make_test_registry();
  ConfigLoader loader(registry, {});
  const Config config = loader.load_text(
      "gpu: {sm: {count: 80, clock: 1.5 GHz, scheduler: lrr}, name: \"x\"}\n"
      "memory: {l2: {slice_size: 2 MiB}, hbm: {channel_width: 64 bits}}\n"
      "pcie: {latency: 1 us, bandwidth: 8 GiB/s}\nsim: {trace: true}\n",
      "all.yaml");
  const auto params = load_params<testing::TestParams>(config);
  EXPECT_EQ(params.sm_count, 80u);
  EXPECT_EQ(params.sm_clock_hz, 1.5e9);
  EXPECT_EQ(params.slice_bytes, 2u << 20);
  EXPECT_EQ(params.bus_bits, 64u);
  EXPECT_EQ(params.latency_ps, 1e6);
  EXPECT_EQ(params.bandwidth, 8.0 * 1024 * 1024 * 1024);
  EXPECT_TRUE(params.trace);
  EXPECT_EQ(params.policy, testing::Policy::Lrr);
  EXPECT_EQ(params.name, "x");
  EXPECT_EQ(params.hit_ratio, 0.5);
}

struct BrokenDefault {
  double clock = 0;
  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    k.quantity(&BrokenDefault::clock, "x.clock", Dimension::Frequency, "1312", "1 MHz", "10 GHz", "doc");
  }
};

struct Duplicate {
  uint32_t a = 0;
  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    k.integer(&Duplicate::a, "x.a", 1, 0, 2, "doc");
    k.integer(&Duplicate::a, "x.a", 1, 0, 2, "doc");
  }
};

struct KnobUnderKnob {
  uint32_t a = 0;
  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    k.integer(&KnobUnderKnob::a, "x.a", 1, 0, 2, "doc");
    k.integer(&KnobUnderKnob::a, "x.a.b", 1, 0, 2, "doc");
  }
};

struct DefaultOutOfRange {
  uint32_t a = 0;
  template <class Knobs>
  static void declare_knobs(Knobs& k) { k.integer(&DefaultOutOfRange::a, "x.a", 5, 0, 2, "doc"); }
};

TEST(Params, DeclarationMistakesAreCaughtAtStartUp) {
  KnobRegistry r1, r2, r3, r4;
  EXPECT_THROW(declare_knobs<BrokenDefault>(r1), std::logic_error);
  EXPECT_THROW(declare_knobs<Duplicate>(r2), std::logic_error);
  EXPECT_THROW(declare_knobs<KnobUnderKnob>(r3), std::logic_error);
  EXPECT_THROW(declare_knobs<DefaultOutOfRange>(r4), std::logic_error);
}

TEST(Params, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("count", "cout"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace gpuvp::config
