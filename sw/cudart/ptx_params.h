// The parameter layout of a PTX kernel entry, read from its declaration, so that a launch's
// argument pointers can be packed into the .param buffer the device expects.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuvp::cudart {

struct PtxParam {
  uint32_t offset = 0;
  uint32_t size = 0;
  uint32_t align = 1;
};

struct PtxEntry {
  std::vector<PtxParam> params;
  uint32_t param_bytes = 0;  // packed size including trailing padding to the largest alignment
};

// Every `.entry` of a PTX module by name. Malformed declarations are skipped.
std::map<std::string, PtxEntry> parse_ptx_entries(const std::string& ptx);

// Packs `args` (one pointer per parameter, as cudaLaunchKernel takes them) into `out`.
void pack_arguments(const PtxEntry& entry, void* const* args, std::vector<uint8_t>& out);

}  // namespace gpuvp::cudart
