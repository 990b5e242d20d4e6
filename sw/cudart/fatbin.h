// Fatbin containers as nvcc embeds them in host objects, parsed in-process (no external tools).
//
// A container starts with a 16-byte header (magic 0xBA55ED50, version, header size, size of the
// entries that follow); each entry has its own header (kind 1 = PTX, 2 = ELF, header size,
// payload size, architecture, flags) and a payload. PTX payloads are ZSTD-compressed when the
// entry's flags carry kFlagZstd (nvcc 13's default); they are decompressed with libzstd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuvp::cudart {

inline constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
inline constexpr uint32_t kFatbinWrapperMagic = 0x466243B1u;  // __fatBinC_Wrapper_t
inline constexpr uint32_t kFatbinLinkVersion = 2;   // a wrapper of an -rdc=true program's linked fatbin
inline constexpr uint32_t kMaxPrelinkedUnits = 4096;

enum class FatbinKind : uint16_t { Ptx = 1, Elf = 2 };

struct FatbinEntry {
  FatbinKind kind = FatbinKind::Ptx;
  uint32_t arch = 0;          // sm/compute version, major*10+minor (75 = sm_75)
  uint32_t ptx_version = 0;   // PTX entries: ISA version major*10+minor (90 = 9.0)
  uint64_t flags = 0;
  bool compressed = false;
  std::string payload;        // decompressed; PTX text without trailing NULs
  uint32_t unit = 0;          // 0: the registered container; n: the n-th prelinked unit (-rdc=true)
};

struct Fatbin {
  std::vector<FatbinEntry> entries;
  std::size_t bytes = 0;  // header + entries, as read

  // The PTX to JIT for a device of compute capability `cc` (major*10+minor): the newest PTX
  // whose architecture is <= cc. nullptr when there is none.
  const FatbinEntry* best_ptx(uint32_t cc) const;
  // The PTX of the lowest architecture, nullptr when there is none.
  const FatbinEntry* lowest_ptx() const;
  // The cubin (ELF entry) whose kernel resources serve a device of compute capability `cc`: the
  // exact architecture, else the nearest of the same major (sw/cubin/cubin.h, best_cubin);
  // nullptr when none matches.
  const FatbinEntry* best_cubin(uint32_t cc) const;
};

// Parses one container at `data`. `limit` bounds the bytes that may be read (0: trust the
// header's sizes, as for a container in a loaded image). Returns nullopt and sets `error` on
// a malformed container or a payload that does not decompress.
std::optional<Fatbin> parse_fatbin(const void* data, std::size_t limit, std::string* error);

// Parses the argument of __cudaRegisterFatBinary: a __fatBinC_Wrapper_t (magic, version, data
// pointer) or a bare container. A version-2 wrapper (-rdc=true) adds the PTX entries of its
// prelinked translation units (FatbinEntry::unit != 0).
std::optional<Fatbin> parse_registered_fatbin(const void* fat_cubin, std::string* error);

}  // namespace gpuvp::cudart
