// Every way a config can be wrong gets an error that names the file, line, column and key, and
// says what to write instead. Each case here is one bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "platform/config/config.h"
#include "tests/config/test_knobs.h"

namespace gpuvp::config {
namespace {

class BadInputTest : public ::testing::Test {
 protected:
  // Loads `text` as "bad.yaml" and returns the diagnostics it produced (failing if none).
  std::vector<Diagnostic> errors_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    ConfigLoader loader(registry_, {});
    try {
      loader.load_text(text, "bad.yaml", overrides);
    } catch (const ConfigError& e) {
      return e.diagnostics();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return {};
  }
  // The single diagnostic `text` produced, as a string.
  std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    const auto errors = errors_of(text, overrides);
    EXPECT_EQ(errors.size(), 1u);
    return errors.empty() ? std::string() : errors.front().to_string();
  }

  KnobRegistry registry_ = testing::make_test_registry();
};

TEST_F(BadInputTest, UnknownKeySuggestsTheClosestKnob) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    cout: 80\n"),
            "bad.yaml:3:5: error: gpu.sm.cout: unknown key (did you mean 'gpu.sm.count'?)");
}

TEST_F(BadInputTest, UnknownSectionSuggestsTheClosestSection) {
  EXPECT_EQ(error_of("memroy:\n  l2:\n    slice_size: 1 MiB\n"),
            "bad.yaml:1:1: error: memroy: unknown key (did you mean 'memory'?)");
}

TEST_F(BadInputTest, MissingUnit) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    clock: 1312\n"),
            "bad.yaml:3:12: error: gpu.sm.clock: missing unit: write e.g. '1312 MHz' (units: Hz, kHz, MHz, GHz)");
}

TEST_F(BadInputTest, UnitOfTheWrongDimension) {
  EXPECT_EQ(error_of("pcie:\n  bandwidth: 16 GB\n"),
            "bad.yaml:2:14: error: pcie.bandwidth: wrong unit 'GB': that is a size, but pcie.bandwidth is a "
            "bandwidth (units: B/s, KB/s, KiB/s, MB/s, MiB/s, GB/s, GiB/s, TB/s)");
}

TEST_F(BadInputTest, UnknownUnitWithSuggestion) {
  const std::string message = error_of("gpu:\n  sm:\n    clock: 1312 mhz\n");
  EXPECT_NE(message.find("bad.yaml:3:12: error: gpu.sm.clock: unknown unit 'mhz'"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean 'MHz'?"), std::string::npos) << message;
}

TEST_F(BadInputTest, UnitOnAPlainNumber) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    count: 80 MHz\n"),
            "bad.yaml:3:12: error: gpu.sm.count: unexpected unit 'MHz': gpu.sm.count is a plain whole number, "
            "got '80 MHz'");
}

TEST_F(BadInputTest, WrongTypeText) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    count: many\n"),
            "bad.yaml:3:12: error: gpu.sm.count: expected a whole number, got 'many'");
}

TEST_F(BadInputTest, FractionForAnInteger) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    count: 80.5\n"),
            "bad.yaml:3:12: error: gpu.sm.count: expected a whole number, got '80.5'");
}

TEST_F(BadInputTest, FractionalBytes) {
  EXPECT_EQ(error_of("memory:\n  l2:\n    slice_size: 1.0001 KiB\n"),
            "bad.yaml:3:17: error: memory.l2.slice_size: expected a whole number of bytes, got '1.0001 KiB'");
}

TEST_F(BadInputTest, BelowMinimum) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    count: 0\n"),
            "bad.yaml:3:12: error: gpu.sm.count: value 0 is below the minimum 1 (range 1 .. 1024)");
}

TEST_F(BadInputTest, AboveMaximumInTheKnobsUnit) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    clock: 12 GHz\n"),
            "bad.yaml:3:12: error: gpu.sm.clock: value 12 GHz is above the maximum 10 GHz (range 1 MHz .. 10 GHz)");
}

TEST_F(BadInputTest, NegativeSize) {
  const std::string message = error_of("memory:\n  l2:\n    slice_size: -4 KiB\n");
  EXPECT_NE(message.find("is below the minimum 1 KiB"), std::string::npos) << message;
}

TEST_F(BadInputTest, BadChoiceSuggestsTheClosest) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    scheduler: lru\n"),
            "bad.yaml:3:16: error: gpu.sm.scheduler: expected one of gto | lrr, got 'lru' (did you mean 'lrr'?)");
}

TEST_F(BadInputTest, BadFlag) {
  EXPECT_EQ(error_of("sim:\n  trace: yes please\n"),
            "bad.yaml:2:10: error: sim.trace: expected true or false, got 'yes please'");
}

TEST_F(BadInputTest, ValueWhereASectionBelongs) {
  EXPECT_EQ(error_of("gpu:\n  sm: 80\n"),
            "bad.yaml:2:3: error: gpu.sm: is a section; expected a mapping of its keys, got a value");
}

TEST_F(BadInputTest, ListWhereAValueBelongs) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    count: [1, 2]\n"),
            "bad.yaml:3:5: error: gpu.sm.count: expected integer value, got a list");
}

TEST_F(BadInputTest, MissingValue) {
  EXPECT_EQ(error_of("gpu:\n  sm:\n    count:\n"),
            "bad.yaml:3:5: error: gpu.sm.count: expected integer value, got nothing");
}

TEST_F(BadInputTest, DuplicateKey) {
  const auto errors = errors_of("gpu:\n  sm:\n    count: 1\n    count: 2\n");
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.back().to_string(), "bad.yaml:4:5: error: gpu.sm.count: duplicate key");
}

TEST_F(BadInputTest, MalformedYamlNamesTheLine) {
  const std::string message = error_of("gpu:\n  sm:\n    count: [80\n");
  EXPECT_EQ(message.rfind("bad.yaml:", 0), 0u) << message;
  EXPECT_NE(message.find("malformed YAML"), std::string::npos) << message;
}

TEST_F(BadInputTest, TopLevelMustBeAMapping) {
  EXPECT_EQ(error_of("- gpu\n- memory\n"),
            "bad.yaml:1:1: error: expected a mapping of sections (gpu:, memory:, ...), got a list");
}

TEST_F(BadInputTest, EveryProblemInAFileIsReportedAtOnce) {
  const auto errors = errors_of("gpu:\n  sm:\n    count: 0\n    clock: 5\nmemory:\n  l2:\n    slize_size: 1 KiB\n");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].where, "bad.yaml:3:12");
  EXPECT_EQ(errors[1].where, "bad.yaml:4:12");
  EXPECT_EQ(errors[2].where, "bad.yaml:7:5");
}

TEST_F(BadInputTest, OverrideWithoutEquals) {
  EXPECT_EQ(error_of("", {"gpu.sm.count"}),
            "--set 'gpu.sm.count': error: expected key=value, e.g. --set gpu.sm.count=80");
}

TEST_F(BadInputTest, OverrideOfUnknownKey) {
  EXPECT_EQ(error_of("", {"gpu.sm.cont=3"}),
            "--set 'gpu.sm.cont=3': error: gpu.sm.cont: unknown key (did you mean 'gpu.sm.count'?)");
}

TEST_F(BadInputTest, OverrideOfASection) {
  EXPECT_EQ(error_of("", {"gpu.sm=3"}), "--set 'gpu.sm=3': error: gpu.sm: is a section, not a knob");
}

TEST_F(BadInputTest, OverrideWithAnEmptyValue) {
  EXPECT_EQ(error_of("", {"gpu.sm.clock="}),
            "--set 'gpu.sm.clock=': error: gpu.sm.clock: expected a frequency such as '1312 MHz', got ''");
}

TEST_F(BadInputTest, UnknownPresetListsTheKnownOnes) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuvp_bad_preset";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "known.yaml") << "gpu:\n  sm:\n    count: 2\n";
  ConfigLoader loader(registry_, {dir});
  try {
    loader.load("unknown");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics().front().message, "no preset or file named 'unknown' (presets: known)");
  }
  EXPECT_THROW(loader.load("/no/such/file.yaml"), ConfigError);
  std::filesystem::remove_all(dir);
}

TEST_F(BadInputTest, ExtendsCycleIsCaught) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuvp_cycle";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.yaml") << "extends: b\n";
  std::ofstream(dir / "b.yaml") << "extends: a\n";
  ConfigLoader loader(registry_, {dir});
  try {
    loader.load("a");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("levels deep (a cycle?)"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST_F(BadInputTest, ErrorsInAnExtendedFileNameThatFile) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuvp_extends_error";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "base.yaml") << "gpu:\n  sm:\n    count: -1\n";
  std::ofstream(dir / "child.yaml") << "extends: base\n";
  ConfigLoader loader(registry_, {dir});
  try {
    loader.load("child");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("base.yaml:3:12: error: gpu.sm.count: value -1 is below the minimum 1"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuvp::config
