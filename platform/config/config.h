// A resolved platform configuration: every declared knob with its value and where that value
// came from (declared default, a config file's line, or a --set override).
//
// Config files are nested YAML (JSON is valid YAML, so JSON files load too):
//
//   extends: v100          # optional: start from a preset or another file
//   gpu:
//     sm:
//       count: 80          # plain numbers for counts
//       clock: 1530 MHz    # units written out for quantities
//
// Errors name the file, line, column and key, and every problem in a file is reported at once.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "platform/config/registry.h"

namespace gpuvp::config {

struct Origin {
  enum class Kind { Default, File, Override } kind = Kind::Default;
  std::string file;  // File only
  int line = 0;      // 1-based; File only
  int column = 0;    // 1-based; File only
  std::string describe() const;  // "default", "configs/v100.yaml:12", "--set"
};

struct Diagnostic {
  std::string where;  // "configs/x.yaml:12:5" or "--set 'gpu.sm.count=0'" or a file name
  std::string key;    // dotted key, when the problem is about one
  std::string message;
  std::string to_string() const;  // "where: error: key: message"
};

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

class Config {
 public:
  // Every knob at its declared default.
  explicit Config(const KnobRegistry& registry);

  const KnobRegistry& registry() const { return *registry_; }
  // The value of a declared knob; std::logic_error for an undeclared name (a programming error).
  const KnobValue& value(std::string_view name) const;
  const KnobValue& value(size_t index) const { return values_[index]; }
  const Origin& origin(size_t index) const { return origins_[index]; }
  double number(std::string_view name) const { return value(name).number; }
  bool flag(std::string_view name) const { return value(name).flag; }
  const std::string& text(std::string_view name) const { return value(name).text; }

  void set(size_t index, KnobValue value, Origin origin);
  // What this configuration was loaded from: "v100", "my.yaml", or "defaults".
  const std::string& source() const { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }

 private:
  const KnobRegistry* registry_;
  std::vector<KnobValue> values_;  // parallel to registry().knobs()
  std::vector<Origin> origins_;
  std::string source_ = "defaults";
};

class ConfigLoader {
 public:
  // `preset_dirs` are searched in order for "<name>.yaml" when a preset name is given.
  ConfigLoader(const KnobRegistry& registry, std::vector<std::filesystem::path> preset_dirs);

  // Loads a preset name ("v100") or a file path, then applies "key=value" overrides in order.
  // Throws ConfigError listing every problem found.
  Config load(std::string_view preset_or_file, const std::vector<std::string>& overrides = {}) const;
  // Defaults plus overrides only.
  Config load_defaults(const std::vector<std::string>& overrides = {}) const;
  // Loads YAML text as if it were the file `file_name` (used by tests and by `config check -`).
  Config load_text(std::string_view text, std::string_view file_name,
                   const std::vector<std::string>& overrides = {}) const;

  // The knobs this loader checks names and values against.
  const KnobRegistry& registry() const { return *registry_; }
  // Preset names available in the preset directories, sorted.
  std::vector<std::string> presets() const;
  // The file a preset name or path refers to; throws ConfigError when there is none.
  std::filesystem::path resolve(std::string_view preset_or_file) const;

 private:
  void apply_file(Config& config, const std::filesystem::path& path, std::vector<Diagnostic>& errors,
                  int depth) const;
  void apply_text(Config& config, std::string_view text, const std::string& file_name,
                  const std::filesystem::path& base_dir, std::vector<Diagnostic>& errors, int depth) const;
  void apply_overrides(Config& config, const std::vector<std::string>& overrides,
                       std::vector<Diagnostic>& errors) const;

  const KnobRegistry* registry_;
  std::vector<std::filesystem::path> preset_dirs_;
};

// The preset directories gpuvp searches: $GPUVP_CONFIG_DIR (if set), then the source tree's
// configs/ (compiled in), then configs/ beside the installed binary's share directory.
std::vector<std::filesystem::path> default_preset_dirs();

}  // namespace gpuvp::config
