#include "platform/config/value_parser.h"

#include <cmath>

#include "platform/config/registry.h"

namespace gpuvp::config {
namespace {

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string suggest_unit(std::string_view written, Dimension dimension) {
  std::string best;
  size_t best_distance = 3;
  for (std::string_view symbol : all_unit_symbols()) {
    const auto unit = find_unit(symbol);
    if (!unit || unit->dimension != dimension) continue;
    // Case-insensitive match first ("mhz" -> "MHz").
    size_t distance = edit_distance(written, symbol);
    if (written.size() == symbol.size()) {
      bool same_ignoring_case = true;
      for (size_t i = 0; i < written.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(written[i])) !=
            std::tolower(static_cast<unsigned char>(symbol[i]))) {
          same_ignoring_case = false;
        }
      }
      if (same_ignoring_case) distance = 0;
    }
    if (distance < best_distance) {
      best_distance = distance;
      best = std::string(symbol);
    }
  }
  return best;
}

}  // namespace

std::string check_range(const KnobSpec& spec, double value) {
  if (value < spec.min) {
    return "value " + spec.format(KnobValue{value, false, {}}) + " is below the minimum " +
           spec.format(KnobValue{spec.min, false, {}}) + " (range " + spec.range_label() + ")";
  }
  if (value > spec.max) {
    return "value " + spec.format(KnobValue{value, false, {}}) + " is above the maximum " +
           spec.format(KnobValue{spec.max, false, {}}) + " (range " + spec.range_label() + ")";
  }
  return {};
}

ParseOutcome parse_knob_value(const KnobSpec& spec, std::string_view text) {
  KnobValue value;
  switch (spec.type) {
    case KnobType::Flag:
      if (text == "true") { value.flag = true; return value; }
      if (text == "false") { value.flag = false; return value; }
      return "expected true or false, got " + quoted(text);
    case KnobType::Text:
      // Empty text is a value: knobs use it for "not set, use the automatic choice".
      value.text = std::string(text);
      return value;
    case KnobType::Choice: {
      for (const std::string& choice : spec.choices) {
        if (choice == text) { value.text = choice; return value; }
      }
      std::string message = "expected one of " + spec.range_label() + ", got " + quoted(text);
      for (const std::string& choice : spec.choices) {
        if (edit_distance(choice, text) <= 2) return message + " (did you mean " + quoted(choice) + "?)";
      }
      return message;
    }
    case KnobType::Integer:
    case KnobType::Real:
    case KnobType::Quantity:
      break;
  }

  const auto split = split_quantity(text);
  const std::string expected = spec.type == KnobType::Quantity
      ? "a " + std::string(dimension_name(spec.dimension)) + " such as '" + spec.default_text + "'"
      : (spec.type == KnobType::Integer ? std::string("a whole number") : std::string("a number"));
  if (!split) return "expected " + expected + ", got " + quoted(text);

  if (spec.type != KnobType::Quantity) {
    if (!split->unit.empty()) {
      return "unexpected unit " + quoted(split->unit) + ": " + spec.name + " is a plain " +
             (spec.type == KnobType::Integer ? "whole number" : "number") + ", got " + quoted(text);
    }
    value.number = split->number;
    if (spec.type == KnobType::Integer && split->number != std::floor(split->number)) {
      return "expected a whole number, got " + quoted(text);
    }
  } else {
    if (split->unit.empty()) {
      return "missing unit: write e.g. '" + spec.default_text + "' (units: " +
             accepted_symbols(spec.dimension) + ")";
    }
    const auto unit = find_unit(split->unit);
    if (!unit) {
      std::string message = "unknown unit " + quoted(split->unit) + " (units for a " +
                            std::string(dimension_name(spec.dimension)) + ": " +
                            accepted_symbols(spec.dimension) + ")";
      const std::string suggestion = suggest_unit(split->unit, spec.dimension);
      if (!suggestion.empty()) message += "; did you mean " + quoted(suggestion) + "?";
      return message;
    }
    if (unit->dimension != spec.dimension) {
      return "wrong unit " + quoted(split->unit) + ": that is a " +
             std::string(dimension_name(unit->dimension)) + ", but " + spec.name + " is a " +
             std::string(dimension_name(spec.dimension)) + " (units: " +
             accepted_symbols(spec.dimension) + ")";
    }
    value.number = split->number * unit->factor;
    if (spec.whole && std::fabs(value.number - std::round(value.number)) > 1e-6) {
      return "expected a whole number of " +
             std::string(spec.dimension == Dimension::Size ? "bytes" : canonical_symbol(spec.dimension)) +
             ", got " + quoted(text);
    }
    if (spec.whole) value.number = std::round(value.number);
  }
  std::string range_problem = check_range(spec, value.number);
  if (!range_problem.empty()) return range_problem;
  return value;
}

}  // namespace gpuvp::config
