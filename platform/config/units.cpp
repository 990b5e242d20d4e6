#include "platform/config/units.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpuvp::config {
namespace {

// Display order within a dimension: smallest to largest. Decimal (SI) and binary (IEC)
// prefixes are distinct: "KB" is 1000 bytes, "KiB" is 1024.
constexpr std::array<UnitSymbol, 32> kUnits{{
    {"Hz", Dimension::Frequency, 1},
    {"kHz", Dimension::Frequency, 1e3},
    {"MHz", Dimension::Frequency, 1e6},
    {"GHz", Dimension::Frequency, 1e9},
    {"B", Dimension::Size, 1},
    {"KB", Dimension::Size, 1e3},
    {"KiB", Dimension::Size, 1024.0},
    {"MB", Dimension::Size, 1e6},
    {"MiB", Dimension::Size, 1024.0 * 1024},
    {"GB", Dimension::Size, 1e9},
    {"GiB", Dimension::Size, 1024.0 * 1024 * 1024},
    {"TB", Dimension::Size, 1e12},
    {"TiB", Dimension::Size, 1024.0 * 1024 * 1024 * 1024},
    {"ps", Dimension::Time, 1},
    {"ns", Dimension::Time, 1e3},
    {"us", Dimension::Time, 1e6},
    {"ms", Dimension::Time, 1e9},
    {"s", Dimension::Time, 1e12},
    {"B/s", Dimension::Bandwidth, 1},
    {"KB/s", Dimension::Bandwidth, 1e3},
    {"KiB/s", Dimension::Bandwidth, 1024.0},
    {"MB/s", Dimension::Bandwidth, 1e6},
    {"MiB/s", Dimension::Bandwidth, 1024.0 * 1024},
    {"GB/s", Dimension::Bandwidth, 1e9},
    {"GiB/s", Dimension::Bandwidth, 1024.0 * 1024 * 1024},
    {"TB/s", Dimension::Bandwidth, 1e12},
    {"bit", Dimension::Bits, 1},
    {"bits", Dimension::Bits, 1},
    {"cycle", Dimension::Cycles, 1},
    {"cycles", Dimension::Cycles, 1},
    {"kcycles", Dimension::Cycles, 1e3},
    {"Mcycles", Dimension::Cycles, 1e6},
}};

bool is_whole(double value) {
  return std::isfinite(value) && std::fabs(value - std::round(value)) <= 1e-9 * std::fabs(value);
}

}  // namespace

std::string_view dimension_name(Dimension dimension) {
  switch (dimension) {
    case Dimension::None: return "number";
    case Dimension::Frequency: return "frequency";
    case Dimension::Size: return "size";
    case Dimension::Time: return "time";
    case Dimension::Bandwidth: return "bandwidth";
    case Dimension::Bits: return "width";
    case Dimension::Cycles: return "cycles";
  }
  return "?";
}

std::string_view canonical_symbol(Dimension dimension) {
  switch (dimension) {
    case Dimension::None: return "";
    case Dimension::Frequency: return "Hz";
    case Dimension::Size: return "B";
    case Dimension::Time: return "ps";
    case Dimension::Bandwidth: return "B/s";
    case Dimension::Bits: return "bit";
    case Dimension::Cycles: return "cycles";
  }
  return "";
}

std::string accepted_symbols(Dimension dimension) {
  std::string out;
  for (const UnitSymbol& unit : kUnits) {
    if (unit.dimension != dimension) continue;
    if (!out.empty()) out += ", ";
    out += unit.symbol;
  }
  return out;
}

std::optional<UnitSymbol> find_unit(std::string_view symbol) {
  for (const UnitSymbol& unit : kUnits) {
    if (unit.symbol == symbol) return unit;
  }
  // "µs" is accepted as a spelling of "us".
  if (symbol == "\xC2\xB5s") return kUnits[15];
  return std::nullopt;
}

std::vector<std::string_view> all_unit_symbols() {
  std::vector<std::string_view> out;
  for (const UnitSymbol& unit : kUnits) out.push_back(unit.symbol);
  return out;
}

std::optional<SplitQuantity> split_quantity(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  size_t end = text.size();
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  text = text.substr(begin, end - begin);
  if (text.empty()) return std::nullopt;

  // Accept the decimal forms people write: 84, -3, 1.5, .5, 1e9, 1_000 is not accepted.
  size_t i = 0;
  if (text[i] == '+' || text[i] == '-') ++i;
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) { ++i; digits = true; }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) { ++i; digits = true; }
  }
  if (!digits) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t exponent = i + 1;
    if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
    size_t exponent_digits = exponent;
    while (exponent_digits < text.size() && std::isdigit(static_cast<unsigned char>(text[exponent_digits]))) {
      ++exponent_digits;
    }
    if (exponent_digits > exponent) i = exponent_digits;  // "1e9"; otherwise "e" starts a unit
  }
  SplitQuantity out;
  const std::string number_text(text.substr(0, i));
  char* parse_end = nullptr;
  out.number = std::strtod(number_text.c_str(), &parse_end);
  if (parse_end != number_text.c_str() + number_text.size() || !std::isfinite(out.number)) {
    return std::nullopt;
  }
  size_t unit_begin = i;
  while (unit_begin < text.size() && std::isspace(static_cast<unsigned char>(text[unit_begin]))) ++unit_begin;
  out.unit = std::string(text.substr(unit_begin));
  for (char c : out.unit) {
    if (std::isspace(static_cast<unsigned char>(c))) return std::nullopt;  // "12 MHz x"
  }
  return out;
}

std::string format_number(double value) {
  char buffer[64];
  if (is_whole(value) && std::fabs(value) < 1e17) {
    std::snprintf(buffer, sizeof buffer, "%.0f", std::round(value));
  } else {
    std::snprintf(buffer, sizeof buffer, "%.10g", value);
  }
  return buffer;
}

std::string format_quantity(double canonical_value, Dimension dimension) {
  if (dimension == Dimension::None) return format_number(canonical_value);
  // Prefer the largest unit in which the value is a whole number below 10000 ("1312 MHz",
  // "192 KiB"); otherwise the largest in which it is at least 1 with at most three decimals
  // ("37.5 GB/s", "23.84 ns").
  const UnitSymbol* whole = nullptr;
  const UnitSymbol* tidy = nullptr;
  for (const UnitSymbol& unit : kUnits) {
    if (unit.dimension != dimension || unit.symbol == "bits" || unit.symbol == "cycle") continue;
    const double scaled = std::fabs(canonical_value / unit.factor);
    if (scaled < 1) continue;
    if (is_whole(scaled) && scaled < 10000 && (whole == nullptr || unit.factor > whole->factor)) whole = &unit;
    if (is_whole(scaled * 1000) && (tidy == nullptr || unit.factor > tidy->factor)) tidy = &unit;
  }
  const UnitSymbol* chosen = whole != nullptr ? whole : tidy;
  if (chosen == nullptr) {
    return format_number(canonical_value) + " " + std::string(canonical_symbol(dimension));
  }
  return format_number(canonical_value / chosen->factor) + " " + std::string(chosen->symbol);
}

}  // namespace gpuvp::config
