#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "platform/config/config.h"
#include "tests/config/test_knobs.h"

namespace gpuvp::config {
namespace {

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gpuvp_loader_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  KnobRegistry registry_ = testing::make_test_registry();
  std::filesystem::path dir_;
};

TEST_F(LoaderTest, DefaultsApplyWhenNothingIsSet) {
  ConfigLoader loader(registry_, {dir_});
  const Config config = loader.load_defaults();
  EXPECT_EQ(config.number("gpu.sm.count"), 84);
  EXPECT_EQ(config.number("gpu.sm.clock"), 1312e6);
  EXPECT_EQ(config.number("memory.l2.slice_size"), 192 * 1024);
  EXPECT_EQ(config.text("gpu.sm.scheduler"), "gto");
  EXPECT_EQ(config.origin(*registry_.find("gpu.sm.count")).kind, Origin::Kind::Default);
}

TEST_F(LoaderTest, NestedYamlWithUnitsSetsKnobsAndRemembersTheLine) {
  ConfigLoader loader(registry_, {dir_});
  const Config config = loader.load_text(
      "gpu:\n"
      "  sm:\n"
      "    count: 80\n"
      "    clock: 1.53 GHz\n"
      "memory:\n"
      "  l2:\n"
      "    slice_size: 1 MiB\n"
      "pcie:\n"
      "  latency: 45 us\n"
      "  bandwidth: 32 GB/s\n",
      "mine.yaml");
  EXPECT_EQ(config.number("gpu.sm.count"), 80);
  EXPECT_DOUBLE_EQ(config.number("gpu.sm.clock"), 1.53e9);
  EXPECT_EQ(config.number("memory.l2.slice_size"), 1 << 20);
  EXPECT_EQ(config.number("pcie.latency"), 45e6);
  EXPECT_EQ(config.number("pcie.bandwidth"), 32e9);
  const Origin& origin = config.origin(*registry_.find("gpu.sm.clock"));
  EXPECT_EQ(origin.kind, Origin::Kind::File);
  EXPECT_EQ(origin.describe(), "mine.yaml:4");
}

TEST_F(LoaderTest, DottedKeysAndJsonAreAccepted) {
  ConfigLoader loader(registry_, {dir_});
  const Config dotted = loader.load_text("gpu.sm.count: 12\ngpu:\n  sm.clock: 1 GHz\n", "dotted.yaml");
  EXPECT_EQ(dotted.number("gpu.sm.count"), 12);
  EXPECT_EQ(dotted.number("gpu.sm.clock"), 1e9);
  const Config json = loader.load_text(R"({"gpu": {"sm": {"count": 7, "clock": "900 MHz"}}, "sim": {"trace": true}})",
                                       "cfg.json");
  EXPECT_EQ(json.number("gpu.sm.count"), 7);
  EXPECT_EQ(json.number("gpu.sm.clock"), 900e6);
  EXPECT_TRUE(json.flag("sim.trace"));
}

TEST_F(LoaderTest, OverridesApplyInOrderAfterTheFile) {
  write("base.yaml", "gpu:\n  sm:\n    count: 80\n");
  ConfigLoader loader(registry_, {dir_});
  const Config config = loader.load("base", {"gpu.sm.count=40", "gpu.sm.count=20", "gpu.sm.scheduler=lrr",
                                             "gpu.name=my gpu=fast"});
  EXPECT_EQ(config.number("gpu.sm.count"), 20);
  EXPECT_EQ(config.text("gpu.sm.scheduler"), "lrr");
  EXPECT_EQ(config.text("gpu.name"), "my gpu=fast");  // only the first '=' splits
  EXPECT_EQ(config.origin(*registry_.find("gpu.sm.count")).kind, Origin::Kind::Override);
}

TEST_F(LoaderTest, PresetsResolveByNameAndExtendOneAnother) {
  write("big.yaml", "gpu:\n  sm:\n    count: 128\n    clock: 2 GHz\n");
  write("bigger.yaml", "extends: big\ngpu:\n  sm:\n    count: 256\n");
  ConfigLoader loader(registry_, {dir_});
  EXPECT_EQ(loader.presets(), (std::vector<std::string>{"big", "bigger"}));
  const Config config = loader.load("bigger");
  EXPECT_EQ(config.number("gpu.sm.count"), 256);   // own value wins
  EXPECT_EQ(config.number("gpu.sm.clock"), 2e9);   // inherited
  EXPECT_EQ(config.source(), "bigger");
}

TEST_F(LoaderTest, AFileExtendsAnotherByRelativePath) {
  write("base.yaml", "gpu:\n  sm:\n    clock: 1 GHz\n");
  const auto child = write("child.yaml", "gpu:\n  sm:\n    count: 2\nextends: ./base.yaml\n");
  ConfigLoader loader(registry_, {});
  const Config config = loader.load(child.string());
  EXPECT_EQ(config.number("gpu.sm.count"), 2);
  EXPECT_EQ(config.number("gpu.sm.clock"), 1e9);
}

TEST_F(LoaderTest, EmptyFileSetsNothing) {
  ConfigLoader loader(registry_, {dir_});
  const Config config = loader.load_text("", "empty.yaml");
  EXPECT_EQ(config.number("gpu.sm.count"), 84);
}

}  // namespace
}  // namespace gpuvp::config
