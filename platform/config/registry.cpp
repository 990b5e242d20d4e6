#include "platform/config/registry.h"

#include <algorithm>
#include <stdexcept>

#include "platform/config/value_parser.h"

namespace gpuvp::config {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

void KnobRegistry::add(KnobSpec spec) {
  if (index_.count(spec.name) != 0) throw std::logic_error("knob declared twice: " + spec.name);
  if (spec.doc.empty()) throw std::logic_error("knob without doc: " + spec.name);
  const bool numeric = spec.type == KnobType::Integer || spec.type == KnobType::Real ||
                       spec.type == KnobType::Quantity;
  if (numeric && !(spec.min <= spec.max)) throw std::logic_error("empty range for knob " + spec.name);
  if (spec.type == KnobType::Choice && spec.choices.empty()) {
    throw std::logic_error("choice knob without choices: " + spec.name);
  }
  // A name may not be both a knob and a section ("gpu.sm" and "gpu.sm.count").
  if (is_section(spec.name)) throw std::logic_error("knob name is also a section: " + spec.name);
  for (const KnobSpec& other : knobs_) {
    if (spec.name.compare(0, other.name.size() + 1, other.name + ".") == 0) {
      throw std::logic_error("knob " + spec.name + " lies under knob " + other.name);
    }
  }
  ParseOutcome parsed = parse_knob_value(spec, spec.default_text);
  if (auto* message = std::get_if<std::string>(&parsed)) {
    throw std::logic_error("bad default for knob " + spec.name + ": " + *message);
  }
  spec.default_value = std::get<KnobValue>(parsed);

  auto position = std::lower_bound(knobs_.begin(), knobs_.end(), spec.name,
                                   [](const KnobSpec& k, const std::string& n) { return k.name < n; });
  knobs_.insert(position, std::move(spec));
  index_.clear();
  for (size_t i = 0; i < knobs_.size(); ++i) index_.emplace(knobs_[i].name, i);
}

std::optional<size_t> KnobRegistry::find(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

bool KnobRegistry::is_section(std::string_view prefix) const {
  const std::string with_dot = std::string(prefix) + ".";
  auto it = std::lower_bound(knobs_.begin(), knobs_.end(), with_dot,
                             [](const KnobSpec& k, const std::string& n) { return k.name < n; });
  return it != knobs_.end() && it->name.compare(0, with_dot.size(), with_dot) == 0;
}

std::vector<std::string> KnobRegistry::suggest(std::string_view name, size_t max_suggestions) const {
  // Candidates: every knob and every section prefix.
  std::vector<std::string> candidates;
  for (const KnobSpec& knob : knobs_) {
    candidates.push_back(knob.name);
    for (size_t dot = knob.name.find('.'); dot != std::string::npos; dot = knob.name.find('.', dot + 1)) {
      candidates.push_back(knob.name.substr(0, dot));
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

  std::vector<std::pair<size_t, std::string>> scored;
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  for (const std::string& candidate : candidates) {
    const size_t distance = edit_distance(name, candidate);
    if (distance <= limit) scored.emplace_back(distance, candidate);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max_suggestions; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace gpuvp::config
