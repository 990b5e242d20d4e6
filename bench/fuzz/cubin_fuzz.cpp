// libFuzzer target: a cubin (SASS ELF image) from raw bytes. parse_cubin must turn any input
// into kernel resources or an error naming what is wrong.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sw/cubin/cubin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  const auto cubin = gpuvp::cubin::parse_cubin(data, size, &error);
  if (cubin) {
    for (const auto& kernel : cubin->kernels) (void)cubin->find(kernel.name);
  }
  return 0;
}
