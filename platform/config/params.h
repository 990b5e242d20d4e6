// Declaring a module's knobs once and loading them into its parameter struct.
//
// A module writes one static template function that lists its knobs against the fields of its
// parameter struct; the same list registers the knobs (name, type, unit, default, range, doc)
// and fills the struct from a resolved Config:
//
//   struct HbmParams {
//     uint32_t stacks = 0;
//     double clock_hz = 0;
//     template <class Knobs> static void declare_knobs(Knobs& k) {
//       k.integer(&HbmParams::stacks, "memory.hbm.stacks", 4, 1, 16, "HBM stacks on the package");
//       k.quantity(&HbmParams::clock_hz, "memory.hbm.clock", Dimension::Frequency, "877 MHz",
//                  "100 MHz", "4 GHz", "HBM interface clock; data moves on both edges");
//     }
//   };
//   declare_knobs<HbmParams>(registry);                 // at start-up
//   HbmParams params = load_params<HbmParams>(config);  // at elaboration, never per request
#pragma once

#include <cmath>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "platform/config/config.h"
#include "platform/config/registry.h"
#include "platform/config/value_parser.h"

namespace gpuvp::config {

// Parses a range bound written with its unit ("1 MHz"); bounds are declarations, so a bad one
// is a programming error.
double parse_bound(Dimension dimension, const char* text, const std::string& knob_name);

template <class Params>
class KnobDeclarer {
 public:
  explicit KnobDeclarer(KnobRegistry& registry) : registry_(registry) {}

  template <class Field>
  void integer(Field Params::*, const char* name, long long default_value, long long min, long long max,
               const char* doc) {
    static_assert(std::is_integral_v<Field>, "integer knobs bind integral fields");
    KnobSpec spec = base(name, KnobType::Integer, doc);
    spec.default_text = std::to_string(default_value);
    spec.min = static_cast<double>(min);
    spec.max = static_cast<double>(max);
    registry_.add(std::move(spec));
  }

  void real(double Params::*, const char* name, double default_value, double min, double max, const char* doc) {
    KnobSpec spec = base(name, KnobType::Real, doc);
    spec.default_text = format_number(default_value);
    spec.min = min;
    spec.max = max;
    registry_.add(std::move(spec));
  }

  template <class Field>
  void quantity(Field Params::*, const char* name, Dimension dimension, const char* default_text,
                const char* min, const char* max, const char* doc) {
    static_assert(std::is_arithmetic_v<Field>, "quantity knobs bind numeric fields");
    KnobSpec spec = base(name, KnobType::Quantity, doc);
    spec.dimension = dimension;
    spec.whole = std::is_integral_v<Field> || dimension == Dimension::Size ||
                 dimension == Dimension::Bits || dimension == Dimension::Cycles;
    spec.default_text = default_text;
    spec.min = parse_bound(dimension, min, spec.name);
    spec.max = parse_bound(dimension, max, spec.name);
    registry_.add(std::move(spec));
  }

  void flag(bool Params::*, const char* name, bool default_value, const char* doc) {
    KnobSpec spec = base(name, KnobType::Flag, doc);
    spec.default_text = default_value ? "true" : "false";
    registry_.add(std::move(spec));
  }

  // A choice bound to an enum field: the words and the enum values they stand for.
  template <class Enum>
  void choice(Enum Params::*, const char* name, const char* default_word,
              std::initializer_list<std::pair<const char*, Enum>> words, const char* doc) {
    KnobSpec spec = base(name, KnobType::Choice, doc);
    spec.default_text = default_word;
    for (const auto& word : words) spec.choices.emplace_back(word.first);
    registry_.add(std::move(spec));
  }

  void text(std::string Params::*, const char* name, const char* default_value, const char* doc) {
    KnobSpec spec = base(name, KnobType::Text, doc);
    spec.default_text = default_value;
    registry_.add(std::move(spec));
  }

 private:
  static KnobSpec base(const char* name, KnobType type, const char* doc) {
    KnobSpec spec;
    spec.name = name;
    spec.type = type;
    spec.doc = doc;
    return spec;
  }

  KnobRegistry& registry_;
};

template <class Params>
class KnobLoader {
 public:
  KnobLoader(const Config& config, Params& params) : config_(config), params_(params) {}

  template <class Field>
  void integer(Field Params::*field, const char* name, long long, long long, long long, const char*) {
    params_.*field = checked_cast<Field>(config_.number(name), name);
  }

  void real(double Params::*field, const char* name, double, double, double, const char*) {
    params_.*field = config_.number(name);
  }

  template <class Field>
  void quantity(Field Params::*field, const char* name, Dimension, const char*, const char*, const char*,
                const char*) {
    if constexpr (std::is_integral_v<Field>) {
      params_.*field = checked_cast<Field>(config_.number(name), name);
    } else {
      params_.*field = static_cast<Field>(config_.number(name));
    }
  }

  void flag(bool Params::*field, const char* name, bool, const char*) { params_.*field = config_.flag(name); }

  template <class Enum>
  void choice(Enum Params::*field, const char* name, const char*,
              std::initializer_list<std::pair<const char*, Enum>> words, const char*) {
    const std::string& chosen = config_.text(name);
    for (const auto& word : words) {
      if (chosen == word.first) {
        params_.*field = word.second;
        return;
      }
    }
    throw std::logic_error("knob " + std::string(name) + " holds an undeclared choice: " + chosen);
  }

  void text(std::string Params::*field, const char* name, const char*, const char*) {
    params_.*field = config_.text(name);
  }

 private:
  template <class Field>
  static Field checked_cast(double value, const char* name) {
    // Ranges are checked at parse time; a declared range wider than the field is a bug.
    if (value < static_cast<double>(std::numeric_limits<Field>::lowest()) ||
        value > static_cast<double>(std::numeric_limits<Field>::max()) || value != std::floor(value)) {
      throw std::logic_error("knob " + std::string(name) + " does not fit its field");
    }
    return static_cast<Field>(value);
  }

  const Config& config_;
  Params& params_;
};

template <class Params>
void declare_knobs(KnobRegistry& registry) {
  KnobDeclarer<Params> declarer(registry);
  Params::declare_knobs(declarer);
}

template <class Params>
Params load_params(const Config& config) {
  Params params{};
  KnobLoader<Params> loader(config, params);
  Params::declare_knobs(loader);
  return params;
}

}  // namespace gpuvp::config
