// libFuzzer target: a fatbin container from raw bytes, and everything it carries. parse_fatbin
// must turn any input into a Fatbin or an error; each PTX entry then goes through the PTX parser
// and each ELF entry through the cubin reader, as libcudart does for a registered program.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/gpu/ptx/module.h"
#include "sw/cubin/cubin.h"
#include "sw/cudart/fatbin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;  // limit 0 means "trust the header": never the case for outside bytes
  std::string error;
  const auto fatbin = gpuvp::cudart::parse_fatbin(data, size, &error);
  if (!fatbin) return 0;
  for (const gpuvp::cudart::FatbinEntry& entry : fatbin->entries) {
    if (entry.kind == gpuvp::cudart::FatbinKind::Elf) {
      std::string cubin_error;
      (void)gpuvp::cubin::parse_cubin(entry.payload.data(), entry.payload.size(), &cubin_error);
    } else {
      try {
        const gpuvp::ptx::Module module = gpuvp::ptx::Module::parse(entry.payload, "fuzz.fatbin");
        (void)module.kernels().size();
      } catch (const gpuvp::ptx::ParseError&) {
        // malformed PTX is an error message, never a crash
      }
    }
  }
  (void)fatbin->best_ptx(75);
  (void)fatbin->lowest_ptx();
  (void)fatbin->best_cubin(75);
  return 0;
}
