// Checks shared by the trace tests: reading a trace-event JSON file and verifying that the
// complete ("X") events of every track nest (each pair is disjoint or one contains the other).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuvp::test {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Microseconds with picosecond digits, back to ps.
inline int64_t to_ps(const nlohmann::json& us) { return std::llround(us.get<double>() * 1e6); }

// Empty when every track's spans nest; else a description of the first pair that overlaps.
inline std::string check_nesting(const nlohmann::json& trace) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> tracks;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const int64_t begin = to_ps(e.at("ts"));
    tracks[{e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>()}].emplace_back(begin, begin + to_ps(e.at("dur")));
  }
  for (auto& [track, spans] : tracks) {
    // Outer spans first: earlier begin, then later end.
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::pair<int64_t, int64_t>> open;
    for (const auto& s : spans) {
      while (!open.empty() && open.back().second <= s.first) open.pop_back();
      if (!open.empty() && s.second > open.back().second) {
        return "pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) + ": [" +
               std::to_string(s.first) + "," + std::to_string(s.second) + ") overlaps [" +
               std::to_string(open.back().first) + "," + std::to_string(open.back().second) + ")";
      }
      open.push_back(s);
    }
  }
  return {};
}

}  // namespace gpuvp::test
