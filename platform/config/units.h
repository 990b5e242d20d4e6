// Physical units of configuration values.
//
// Every knob with a dimension is written with its unit in config files ("1312 MHz", "192 KiB",
// "45 us", "23840 ps", "16 GB/s") and stored in one canonical unit per dimension, so models
// never convert: Hz, bytes, picoseconds, bytes per second, bits, cycles.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvp::config {

enum class Dimension {
  None,        // plain number: counts, ratios
  Frequency,   // canonical Hz
  Size,        // canonical bytes
  Time,        // canonical picoseconds
  Bandwidth,   // canonical bytes per second
  Bits,        // canonical bits (bus widths)
  Cycles,      // canonical clock cycles of the module's own clock domain
};

struct UnitSymbol {
  std::string_view symbol;
  Dimension dimension;
  double factor;  // canonical units per one of this unit
};

// Name of the dimension as used in messages and `gpuvp config list` ("frequency", ...).
std::string_view dimension_name(Dimension dimension);
// Canonical unit symbol of a dimension ("Hz", "B", "ps", "B/s", "bit", "cycles"; "" for None).
std::string_view canonical_symbol(Dimension dimension);
// All unit symbols accepted for a dimension, in display order ("Hz, kHz, MHz, GHz").
std::string accepted_symbols(Dimension dimension);
// The unit with this exact symbol, if any.
std::optional<UnitSymbol> find_unit(std::string_view symbol);
// Every known unit symbol (for did-you-mean suggestions).
std::vector<std::string_view> all_unit_symbols();

// A number and an optional unit symbol split from text such as "1312 MHz", "1312MHz", "84".
struct SplitQuantity {
  double number = 0;
  std::string unit;  // empty when the text has no unit
};
// Splits text into number and unit. Returns nullopt when the text does not start with a
// well-formed decimal number or has trailing garbage between number and unit.
std::optional<SplitQuantity> split_quantity(std::string_view text);

// Formats a canonical value with the largest unit of its dimension in which it is a whole
// number (binary sizes preferred), else the largest unit in which it is at least 1:
// 1.312e9 Hz -> "1312 MHz", 196608 B -> "192 KiB", 23840 ps -> "23840 ps".
std::string format_quantity(double canonical_value, Dimension dimension);

// Formats a plain number without a trailing ".0" for integers and with up to 10 significant
// digits otherwise; deterministic.
std::string format_number(double value);

}  // namespace gpuvp::config
