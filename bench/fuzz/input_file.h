// For fuzz targets whose reader takes a path: the input goes into one anonymous in-memory file
// per process (rewritten for every input), named by its /proc/self/fd path.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <string>

inline std::string input_file_path(const char* name, const void* data, size_t size) {
  static const int fd = ::memfd_create(name, 0);
  if (fd < 0) std::abort();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  return "/proc/self/fd/" + std::to_string(fd);
}
