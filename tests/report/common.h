// Shared by the report tests: paths of the built gpuvp and workloads, and small helpers.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace gpuvp::test {

inline const std::string kGpuvp = GPUVP_BINARY;
inline const std::string kWorkloads = GPUVP_WORKLOAD_BIN_DIR;

inline std::string describe(const ProcessResult& r) {
  std::ostringstream text;
  text << "exit " << r.exit_code << (r.timed_out ? " (timed out)" : "") << "\n--- stdout\n" << r.out
       << "--- stderr\n" << r.err;
  return text.str();
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The statistics without the `bridge` group, which counts wall-clock meetings of host and
// platform (polls, doorbells) and so differs from run to run by design.
inline nlohmann::json device_stats(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(slurp(path));
  j["run"]["groups"].erase("bridge");
  for (auto& kernel : j["kernels"]) kernel["groups"].erase("bridge");
  return j;
}

}  // namespace gpuvp::test
