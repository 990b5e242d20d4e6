// Human- and machine-readable views of knobs and resolved configurations.
#pragma once

#include <ostream>

#include "platform/config/config.h"

namespace gpuvp {

// `gpuvp config list`: one row per knob (name, type, unit, default, range, doc).
void print_knob_table(const config::KnobRegistry& registry, std::ostream& out);
void print_knob_json(const config::KnobRegistry& registry, std::ostream& out);

// `gpuvp config show`: the resolved configuration as nested YAML that loads back unchanged,
// each value commented with where it came from.
void print_resolved_yaml(const config::Config& config, std::ostream& out);
void print_resolved_json(const config::Config& config, std::ostream& out);

}  // namespace gpuvp
