#include "sw/cudart/fatbin.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "sw/cubin/cubin.h"

namespace gpuvp::cudart {
namespace {

constexpr uint64_t kFlagZstd = 0x8000;
constexpr uint64_t kFlagLz4 = 0x2000;  // older nvcc: not supported

template <typename T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// Entry header fields (offsets in bytes from the entry's start).
constexpr std::size_t kEntryKind = 0;          // u16
constexpr std::size_t kEntryHeaderSize = 4;    // u32
constexpr std::size_t kEntryPaddedSize = 8;    // u64
constexpr std::size_t kEntryCompressedSize = 16;  // u32 (0 when not compressed)
constexpr std::size_t kEntryVersion = 24;      // u16 minor, u16 major
constexpr std::size_t kEntryArch = 28;         // u32
constexpr std::size_t kEntryFlags = 40;        // u64
constexpr std::size_t kEntryUncompressedSize = 56;  // u64
constexpr std::size_t kEntryMinHeader = 64;

bool fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return false;
}

// Decompresses the ZSTD frames at `src` into `out`, at most `limit` bytes. Memory grows with the
// bytes actually produced, never with a size the container merely declares (a few bytes of fatbin
// may declare 4 GiB). False and `problem` on corrupt or cut-short data, or more than `limit`.
bool zstd_decompress(const uint8_t* src, std::size_t size, uint64_t limit, std::string& out, std::string& problem) {
  const std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (context == nullptr) {
    problem = "no memory for a ZSTD context";
    return false;
  }
  ZSTD_inBuffer in{src, size, 0};
  out.clear();
  for (;;) {
    const std::size_t produced = out.size();
    const uint64_t room = std::min<uint64_t>(ZSTD_DStreamOutSize(), limit - produced);
    out.resize(produced + room);
    ZSTD_outBuffer chunk{out.data() + produced, room, 0};
    const std::size_t next = ZSTD_decompressStream(context.get(), &chunk, &in);
    out.resize(produced + chunk.pos);
    if (ZSTD_isError(next) != 0U) {
      problem = ZSTD_getErrorName(next);
      return false;
    }
    const bool input_left = in.pos < in.size;
    if (next == 0 && !input_left) return true;  // every frame complete
    if (out.size() == limit && (next != 0 || input_left)) {
      problem = "more than the " + std::to_string(limit) + " bytes the entry declares";
      return false;
    }
    if (!input_left && chunk.pos < chunk.size) {
      problem = "the compressed data ends inside a frame";
      return false;
    }
  }
}

void strip_nuls(std::string& text) {
  while (!text.empty() && text.back() == '\0') text.pop_back();
}

}  // namespace

const FatbinEntry* Fatbin::best_ptx(uint32_t cc) const {
  const FatbinEntry* best = nullptr;
  for (const FatbinEntry& entry : entries) {
    if (entry.kind != FatbinKind::Ptx || entry.arch > cc) continue;
    if (best == nullptr || entry.arch > best->arch) best = &entry;
  }
  return best;
}

const FatbinEntry* Fatbin::lowest_ptx() const {
  const FatbinEntry* lowest = nullptr;
  for (const FatbinEntry& entry : entries) {
    if (entry.kind == FatbinKind::Ptx && (lowest == nullptr || entry.arch < lowest->arch)) lowest = &entry;
  }
  return lowest;
}

const FatbinEntry* Fatbin::best_cubin(uint32_t cc) const {
  std::vector<uint32_t> archs;
  std::vector<const FatbinEntry*> elves;
  for (const FatbinEntry& entry : entries) {
    if (entry.kind != FatbinKind::Elf) continue;
    archs.push_back(entry.arch);
    elves.push_back(&entry);
  }
  const int best = cubin::best_cubin(archs, cc);
  return best < 0 ? nullptr : elves[static_cast<std::size_t>(best)];
}

std::optional<Fatbin> parse_fatbin(const void* data, std::size_t limit, std::string* error) {
  if (data == nullptr) {
    fail(error, "null fatbin");
    return std::nullopt;
  }
  const auto* base = static_cast<const uint8_t*>(data);
  if (limit != 0 && limit < 16) {
    fail(error, "fatbin shorter than its 16-byte header");
    return std::nullopt;
  }
  if (load<uint32_t>(base) != kFatbinMagic) {
    fail(error, "bad fatbin magic");
    return std::nullopt;
  }
  const uint16_t header_size = load<uint16_t>(base + 6);
  const uint64_t entries_size = load<uint64_t>(base + 8);
  if (header_size < 16 || entries_size > (uint64_t{1} << 34) ||
      (limit != 0 && header_size + entries_size > limit)) {
    fail(error, "fatbin sizes exceed its bounds");
    return std::nullopt;
  }
  Fatbin fatbin;
  fatbin.bytes = header_size + entries_size;
  const uint8_t* cursor = base + header_size;
  const uint8_t* end = cursor + entries_size;
  while (cursor + kEntryMinHeader <= end) {
    const uint16_t kind = load<uint16_t>(cursor + kEntryKind);
    const uint32_t entry_header = load<uint32_t>(cursor + kEntryHeaderSize);
    const uint64_t padded = load<uint64_t>(cursor + kEntryPaddedSize);
    if (entry_header < kEntryMinHeader || padded > static_cast<uint64_t>(end - cursor) ||
        entry_header > static_cast<uint64_t>(end - cursor) - padded) {
      fail(error, "fatbin entry overruns its container");
      return std::nullopt;
    }
    const uint8_t* payload = cursor + entry_header;
    if (kind == static_cast<uint16_t>(FatbinKind::Ptx) || kind == static_cast<uint16_t>(FatbinKind::Elf)) {
      FatbinEntry entry;
      entry.kind = static_cast<FatbinKind>(kind);
      entry.arch = load<uint32_t>(cursor + kEntryArch);
      const uint32_t version = load<uint32_t>(cursor + kEntryVersion);
      entry.ptx_version = (version >> 16) * 10 + (version & 0xffff);
      entry.flags = load<uint64_t>(cursor + kEntryFlags);
      const uint32_t compressed_size = load<uint32_t>(cursor + kEntryCompressedSize);
      if ((entry.flags & kFlagZstd) != 0) {
        entry.compressed = true;
        const uint64_t size = load<uint64_t>(cursor + kEntryUncompressedSize);
        if (compressed_size == 0 || compressed_size > padded || size > (uint64_t{1} << 32)) {
          fail(error, "fatbin entry has inconsistent compressed sizes");
          return std::nullopt;
        }
        std::string problem;
        if (!zstd_decompress(payload, compressed_size, size, entry.payload, problem)) {
          fail(error, "ZSTD decompression of a fatbin entry failed: " + problem);
          return std::nullopt;
        }
      } else if ((entry.flags & kFlagLz4) != 0) {
        // LZ4-compressed entries (older nvcc); skip them: another entry may be usable.
        cursor += entry_header + padded;
        continue;
      } else {
        const uint64_t size = compressed_size != 0 && compressed_size <= padded ? compressed_size : padded;
        entry.payload.assign(reinterpret_cast<const char*>(payload), size);
      }
      if (entry.kind == FatbinKind::Ptx) strip_nuls(entry.payload);
      fatbin.entries.push_back(std::move(entry));
    }
    cursor += entry_header + padded;
  }
  return fatbin;
}

std::optional<Fatbin> parse_registered_fatbin(const void* fat_cubin, std::string* error) {
  if (fat_cubin == nullptr) {
    fail(error, "null fatbin wrapper");
    return std::nullopt;
  }
  const auto* bytes = static_cast<const uint8_t*>(fat_cubin);
  const uint32_t magic = load<uint32_t>(bytes);
  if (magic == kFatbinWrapperMagic) {
    // struct { int magic; int version; const unsigned long long* data; void* filename_or_fatbins; }
    const void* data = load<const void*>(bytes + 8);
    std::optional<Fatbin> fatbin = parse_fatbin(data, 0, error);
    // Version 2 (programs built with -rdc=true): the registered container holds the linked cubin
    // only; the PTX of each translation unit is in its prelinked container, listed in a
    // NULL-terminated array (fatbinary_section.h: filename_or_fatbins).
    const auto* prelinked = load<const void* const*>(bytes + 16);
    if (fatbin && load<uint32_t>(bytes + 4) == kFatbinLinkVersion && prelinked != nullptr) {
      for (uint32_t unit = 1; prelinked[unit - 1] != nullptr && unit <= kMaxPrelinkedUnits; ++unit) {
        std::string unit_error;
        std::optional<Fatbin> part = parse_fatbin(prelinked[unit - 1], 0, &unit_error);
        if (!part) continue;  // an unreadable unit contributes no PTX; the others may do
        for (FatbinEntry& entry : part->entries) {
          if (entry.kind != FatbinKind::Ptx) continue;
          entry.unit = unit;
          fatbin->entries.push_back(std::move(entry));
        }
      }
    }
    return fatbin;
  }
  if (magic == kFatbinMagic) return parse_fatbin(fat_cubin, 0, error);
  fail(error, "neither a fatbin wrapper nor a fatbin");
  return std::nullopt;
}

}  // namespace gpuvp::cudart
