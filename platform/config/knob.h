// A configuration knob: declared once, next to the module that uses it, with its name, type,
// unit, default, range and a one-line doc (the GPGPU-Sim `option_parser_register` habit).
#pragma once

#include <string>
#include <vector>

#include "platform/config/units.h"

namespace gpuvp::config {

enum class KnobType {
  Integer,   // whole number without unit (counts)
  Real,      // number without unit (ratios, factors)
  Quantity,  // number with a unit of the knob's dimension, stored canonically
  Flag,      // true / false
  Choice,    // one of a fixed set of words
  Text,      // free text (names)
};

std::string_view knob_type_name(KnobType type);

// The value of a knob. Numbers (Integer, Real, Quantity) live in `number` in canonical units;
// Flag in `flag`; Choice and Text in `text`.
struct KnobValue {
  double number = 0;
  bool flag = false;
  std::string text;
};

struct KnobSpec {
  std::string name;          // dotted path: "gpu.sm.count", "memory.hbm.tRCD"
  KnobType type = KnobType::Integer;
  Dimension dimension = Dimension::None;  // Quantity only
  bool whole = false;        // Quantity only: canonical value must be a whole number (bytes, bits)
  KnobValue default_value;
  std::string default_text;  // as declared, e.g. "1312 MHz"
  double min = 0;            // numeric types; canonical units
  double max = 0;
  std::vector<std::string> choices;  // Choice only
  std::string doc;

  // The type as shown to users: "integer", "frequency", "choice", ...
  std::string type_label() const;
  // The unit column of `gpuvp config list`: accepted symbols, or "" for unitless knobs.
  std::string unit_label() const;
  // "1 .. 1024", "1 MHz .. 10 GHz", "gto | lrr", "" for flags and text.
  std::string range_label() const;
  // A value formatted the way a user would write it in a config file.
  std::string format(const KnobValue& value) const;
};

}  // namespace gpuvp::config
