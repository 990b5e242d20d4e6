// One way for gpuvp's commands to write a result file (statistics, trace summary).
#pragma once

#include <fstream>
#include <iostream>
#include <string>

namespace gpuvp::cli {

// Writes `text` to `path`, replacing it. On failure says "<path>: error: cannot write the
// <what>" on stderr and returns false; the caller decides the exit code.
inline bool write_output_file(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (out) return true;
  std::cerr << path << ": error: cannot write the " << what << "\n";
  return false;
}

}  // namespace gpuvp::cli
