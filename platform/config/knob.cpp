#include "platform/config/knob.h"

namespace gpuvp::config {

std::string_view knob_type_name(KnobType type) {
  switch (type) {
    case KnobType::Integer: return "integer";
    case KnobType::Real: return "real";
    case KnobType::Quantity: return "quantity";
    case KnobType::Flag: return "flag";
    case KnobType::Choice: return "choice";
    case KnobType::Text: return "text";
  }
  return "?";
}

std::string KnobSpec::type_label() const {
  if (type == KnobType::Quantity) return std::string(dimension_name(dimension));
  return std::string(knob_type_name(type));
}

std::string KnobSpec::unit_label() const {
  if (type != KnobType::Quantity) return {};
  return std::string(canonical_symbol(dimension));
}

std::string KnobSpec::range_label() const {
  switch (type) {
    case KnobType::Integer:
    case KnobType::Real:
    case KnobType::Quantity:
      return format(KnobValue{min, false, {}}) + " .. " + format(KnobValue{max, false, {}});
    case KnobType::Choice: {
      std::string out;
      for (const std::string& choice : choices) {
        if (!out.empty()) out += " | ";
        out += choice;
      }
      return out;
    }
    case KnobType::Flag: return "true | false";
    case KnobType::Text: return "";
  }
  return "";
}

std::string KnobSpec::format(const KnobValue& value) const {
  switch (type) {
    case KnobType::Integer:
    case KnobType::Real: return format_number(value.number);
    case KnobType::Quantity: return format_quantity(value.number, dimension);
    case KnobType::Flag: return value.flag ? "true" : "false";
    case KnobType::Choice:
    case KnobType::Text: return value.text;
  }
  return "";
}

}  // namespace gpuvp::config
