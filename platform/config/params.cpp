#include "platform/config/params.h"

namespace gpuvp::config {

double parse_bound(Dimension dimension, const char* text, const std::string& knob_name) {
  const auto split = split_quantity(text);
  if (!split) throw std::logic_error("bad range bound '" + std::string(text) + "' for knob " + knob_name);
  if (split->unit.empty()) {
    if (split->number == 0) return 0;  // "0" needs no unit
    throw std::logic_error("range bound '" + std::string(text) + "' needs a unit for knob " + knob_name);
  }
  const auto unit = find_unit(split->unit);
  if (!unit || unit->dimension != dimension) {
    throw std::logic_error("range bound '" + std::string(text) + "' has the wrong unit for knob " + knob_name);
  }
  return split->number * unit->factor;
}

}  // namespace gpuvp::config
