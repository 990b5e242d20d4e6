// The catalogue of every knob in the platform. Built once at start-up by the platform from
// each module's declaration (see params.h); looked up by name only while loading configs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/config/knob.h"

namespace gpuvp::config {

class KnobRegistry {
 public:
  // Adds a knob. Throws std::logic_error on a duplicate name, a bad default or an empty range
  // (a programming error in a module's declaration, caught by the registry's unit test).
  void add(KnobSpec spec);

  // Knobs in name order.
  const std::vector<KnobSpec>& knobs() const { return knobs_; }
  // Index of a knob in knobs(), if declared.
  std::optional<size_t> find(std::string_view name) const;
  const KnobSpec& at(size_t index) const { return knobs_[index]; }
  size_t size() const { return knobs_.size(); }
  // True when some knob's name starts with `prefix` followed by a dot: "gpu.sm" is a section.
  bool is_section(std::string_view prefix) const;
  // The declared knob or section names closest to `name` (edit distance), best first.
  std::vector<std::string> suggest(std::string_view name, size_t max_suggestions = 1) const;

 private:
  std::vector<KnobSpec> knobs_;  // sorted by name
  std::map<std::string, size_t, std::less<>> index_;
};

// Levenshtein distance, used for did-you-mean suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace gpuvp::config
