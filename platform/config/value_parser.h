// Turns the text of a value ("1312 MHz", "84", "true", "gto") into a knob's value, checking
// type, unit and range. Used for config files, --set overrides and declared defaults alike.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "platform/config/knob.h"

namespace gpuvp::config {

// Either the parsed value or a message saying what is wrong and how to write it, without the
// location (the caller knows the file, line and key).
using ParseOutcome = std::variant<KnobValue, std::string>;

ParseOutcome parse_knob_value(const KnobSpec& spec, std::string_view text);

// Checks a numeric value against the knob's range; returns an empty string when it fits.
std::string check_range(const KnobSpec& spec, double canonical_value);

}  // namespace gpuvp::config
