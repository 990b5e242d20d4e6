#include "sw/cubin/cubin.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace gpuvp::cubin {
namespace {

// ELF64 layout (System V gABI).
constexpr std::size_t kElfHeaderBytes = 64;
constexpr std::size_t kSectionHeaderBytes = 64;
constexpr std::size_t kSymbolBytes = 24;
constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtNull = 0;
constexpr uint32_t kShtNobits = 8;
constexpr uint8_t kStoCudaEntry = 0x10;

// .nv.info record formats and the attributes read (see the header).
constexpr uint8_t kFormatSval = 4;
constexpr uint8_t kAttrMaxThreads = 0x05;
constexpr uint8_t kAttrReqntid = 0x10;
constexpr uint8_t kAttrFrameSize = 0x11;
constexpr uint8_t kAttrMinStackSize = 0x12;
constexpr uint8_t kAttrCbankParamSize = 0x19;
constexpr uint8_t kAttrMaxregCount = 0x1b;
constexpr uint8_t kAttrMaxStackSize = 0x23;
constexpr uint8_t kAttrRegcount = 0x2f;

template <typename T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t info = 0;
};

// Whether the section's bytes lie in the image (checked against it on reading the headers).
// SHT_NULL's other fields mean nothing, so its offset and size are never trusted.
bool has_contents(const Section& s) { return s.type != kShtNobits && s.type != kShtNull; }

// Per-symbol attributes of the global .nv.info.
struct SymbolAttributes {
  bool has_registers = false;
  uint32_t registers = 0, frame = 0, min_stack = 0, max_stack = 0;
};

class Reader {
 public:
  Reader(const uint8_t* data, std::size_t size, std::string* error) : data_(data), size_(size), error_(error) {}

  bool fail(const std::string& message) {
    if (error_ != nullptr) *error_ = "cubin: " + message;
    return false;
  }
  // [offset, offset + bytes) lies inside the image (overflow-safe).
  bool holds(uint64_t offset, uint64_t bytes) const { return offset <= size_ && bytes <= size_ - offset; }

  bool parse(Cubin& out) {
    if (data_ == nullptr || size_ < kElfHeaderBytes) return fail("image of " + std::to_string(size_) + " bytes is shorter than an ELF header");
    if (std::memcmp(data_, "\x7f" "ELF", 4) != 0) return fail("no ELF magic");
    if (data_[4] != 2) return fail("not ELF64 (class " + std::to_string(data_[4]) + ")");
    if (data_[5] != 1) return fail("not little endian (data encoding " + std::to_string(data_[5]) + ")");
    const uint16_t machine = load<uint16_t>(data_ + 18);
    if (machine != kElfMachineCuda) return fail("e_machine " + std::to_string(machine) + " is not EM_CUDA (190)");
    const uint8_t abi_version = data_[8];
    const uint32_t flags = load<uint32_t>(data_ + 48);
    out.arch = abi_version >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
    const uint64_t shoff = load<uint64_t>(data_ + 40);
    const uint16_t shentsize = load<uint16_t>(data_ + 58);
    const uint16_t shnum = load<uint16_t>(data_ + 60);
    const uint16_t shstrndx = load<uint16_t>(data_ + 62);
    if (shnum == 0) return fail("no section headers");
    if (shentsize != kSectionHeaderBytes) return fail("section header size " + std::to_string(shentsize) + " (64 expected)");
    if (!holds(shoff, uint64_t{shnum} * kSectionHeaderBytes)) {
      return fail("section headers at " + std::to_string(shoff) + " (" + std::to_string(shnum) +
                  " x 64 B) overrun the image of " + std::to_string(size_) + " bytes");
    }
    if (shstrndx >= shnum) return fail("section name table index " + std::to_string(shstrndx) + " out of range");

    std::vector<Section> sections(shnum);
    std::vector<uint32_t> name_offsets(shnum);
    for (uint16_t i = 0; i < shnum; ++i) {
      const uint8_t* h = data_ + shoff + uint64_t{i} * kSectionHeaderBytes;
      name_offsets[i] = load<uint32_t>(h + 0);
      sections[i].type = load<uint32_t>(h + 4);
      sections[i].offset = load<uint64_t>(h + 24);
      sections[i].size = load<uint64_t>(h + 32);
      sections[i].info = load<uint32_t>(h + 44);
      if (has_contents(sections[i]) && !holds(sections[i].offset, sections[i].size)) {
        return fail("section " + std::to_string(i) + " (" + std::to_string(sections[i].size) + " bytes at " +
                    std::to_string(sections[i].offset) + ") overruns the image of " + std::to_string(size_) + " bytes");
      }
    }
    const Section& names = sections[shstrndx];
    for (uint16_t i = 0; i < shnum; ++i) {
      if (!string_at(names, name_offsets[i], sections[i].name)) {
        return fail("name of section " + std::to_string(i) + " lies outside the section name table");
      }
    }

    // Symbols: the entry-point flag and the name of each .text section's function.
    const Section* symtab = nullptr;
    for (const Section& s : sections) {
      if (s.type == kShtSymtab) symtab = &s;
    }
    const uint64_t symbols = symtab != nullptr ? symtab->size / kSymbolBytes : 0;

    std::map<uint32_t, SymbolAttributes> by_symbol;
    std::map<std::string, const Section*> by_name;
    for (const Section& s : sections) by_name.emplace(s.name, &s);
    if (const auto global = by_name.find(".nv.info"); global != by_name.end()) {
      if (!read_global_info(*global->second, by_symbol)) return false;
    }

    for (const Section& s : sections) {
      if (s.name.rfind(".text.", 0) != 0) continue;
      const uint32_t symbol = s.info & 0xffffffu;
      if (symbol == 0 || symbol >= symbols) {
        return fail("section " + s.name + " names symbol " + std::to_string(symbol) + " of " + std::to_string(symbols));
      }
      const uint8_t other = data_[symtab->offset + uint64_t{symbol} * kSymbolBytes + 5];
      if ((other & kStoCudaEntry) == 0) continue;  // a device function, not a kernel
      KernelResources k;
      k.name = s.name.substr(6);
      k.registers = s.info >> 24;
      if (const auto it = by_symbol.find(symbol); it != by_symbol.end()) {
        if (it->second.has_registers) k.registers = it->second.registers;
        k.frame_bytes = it->second.frame;
        k.min_stack_bytes = it->second.min_stack;
        k.max_stack_bytes = it->second.max_stack;
      }
      // nvlink writes a stack size of 0xffffffff for a recursive call tree (no static bound): the
      // bounded sizes stand, as the header says.
      const auto bounded = [](uint32_t bytes) { return bytes == kUnboundedStack ? 0u : bytes; };
      k.local_bytes = std::max({bounded(k.frame_bytes), bounded(k.min_stack_bytes), bounded(k.max_stack_bytes)});
      if (const auto shared = by_name.find(".nv.shared." + k.name); shared != by_name.end()) {
        if (shared->second->size > UINT32_MAX) return fail(shared->first + " of " + std::to_string(shared->second->size) + " bytes");
        k.static_shared_bytes = static_cast<uint32_t>(shared->second->size);
      }
      if (const auto constant = by_name.find(".nv.constant0." + k.name); constant != by_name.end()) {
        k.constant0_bytes = static_cast<uint32_t>(std::min<uint64_t>(constant->second->size, UINT32_MAX));
      }
      if (const auto info = by_name.find(".nv.info." + k.name); info != by_name.end()) {
        if (!read_kernel_info(*info->second, k)) return false;
      }
      out.kernels.push_back(std::move(k));
    }
    return true;
  }

 private:
  bool string_at(const Section& table, uint32_t offset, std::string& out) const {
    if (!has_contents(table) || offset >= table.size) return false;
    const char* begin = reinterpret_cast<const char*>(data_ + table.offset + offset);
    const void* end = std::memchr(begin, '\0', table.size - offset);
    if (end == nullptr) return false;
    out.assign(begin, static_cast<const char*>(end));
    return true;
  }

  // Walks the records of an .nv.info section; `visit(format, attribute, value, payload, bytes)`
  // returns false to stop with its own error.
  template <typename Visit>
  bool walk(const Section& s, Visit&& visit) {
    if (!has_contents(s)) return fail(s.name + " has no contents");
    const uint8_t* p = data_ + s.offset;
    uint64_t at = 0;
    while (at < s.size) {
      if (s.size - at < 4) return fail(s.name + ": record at " + std::to_string(at) + " is cut off");
      const uint8_t format = p[at];
      const uint8_t attribute = p[at + 1];
      const uint16_t value = load<uint16_t>(p + at + 2);
      if (format < 1 || format > kFormatSval) {
        return fail(s.name + ": record at " + std::to_string(at) + " has unknown format " + std::to_string(format));
      }
      const uint64_t payload = format == kFormatSval ? value : 0;
      if (s.size - at - 4 < payload) {
        return fail(s.name + ": record at " + std::to_string(at) + " (attribute " + std::to_string(attribute) +
                    ", " + std::to_string(payload) + " bytes) overruns the section");
      }
      if (!visit(format, attribute, value, p + at + 4, payload)) return false;
      at += 4 + payload;
    }
    return true;
  }

  bool read_global_info(const Section& s, std::map<uint32_t, SymbolAttributes>& by_symbol) {
    return walk(s, [&](uint8_t format, uint8_t attribute, uint16_t, const uint8_t* payload, uint64_t bytes) {
      if (attribute != kAttrRegcount && attribute != kAttrFrameSize && attribute != kAttrMinStackSize &&
          attribute != kAttrMaxStackSize) {
        return true;
      }
      if (format != kFormatSval || bytes != 8) {
        return fail(s.name + ": attribute " + std::to_string(attribute) + " is not {symbol, value}");
      }
      SymbolAttributes& a = by_symbol[load<uint32_t>(payload)];
      const uint32_t v = load<uint32_t>(payload + 4);
      switch (attribute) {
        case kAttrRegcount: a.registers = v; a.has_registers = true; break;
        case kAttrFrameSize: a.frame = v; break;
        case kAttrMinStackSize: a.min_stack = v; break;
        default: a.max_stack = v; break;
      }
      return true;
    });
  }

  bool read_kernel_info(const Section& s, KernelResources& k) {
    return walk(s, [&](uint8_t format, uint8_t attribute, uint16_t value, const uint8_t* payload, uint64_t bytes) {
      switch (attribute) {
        case kAttrMaxThreads:
        case kAttrReqntid: {
          if (format != kFormatSval || bytes != 12) return fail(s.name + ": thread-count attribute is not {x, y, z}");
          const uint64_t threads =
              uint64_t{load<uint32_t>(payload)} * load<uint32_t>(payload + 4) * load<uint32_t>(payload + 8);
          const uint32_t clamped = static_cast<uint32_t>(std::min<uint64_t>(threads, UINT32_MAX));
          (attribute == kAttrMaxThreads ? k.max_threads : k.required_threads) = clamped;
          return true;
        }
        case kAttrMaxregCount:
          if (format != kFormatSval) k.max_registers = value;
          return true;
        case kAttrCbankParamSize:
          if (format != kFormatSval) k.param_bytes = value;
          return true;
        default: return true;
      }
    });
  }

  const uint8_t* data_;
  std::size_t size_;
  std::string* error_;
};

}  // namespace

const KernelResources* Cubin::find(std::string_view name) const {
  for (const KernelResources& k : kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::optional<Cubin> parse_cubin(const void* data, std::size_t size, std::string* error) {
  Cubin cubin;
  Reader reader(static_cast<const uint8_t*>(data), size, error);
  if (!reader.parse(cubin)) return std::nullopt;
  return cubin;
}

ArchMatch arch_match(uint32_t cubin_arch, uint32_t device_cc) {
  if (cubin_arch == 0 || device_cc == 0) return ArchMatch::kNone;
  if (cubin_arch == device_cc) return ArchMatch::kExact;
  return cubin_arch / 10 == device_cc / 10 ? ArchMatch::kSameMajor : ArchMatch::kNone;
}

const char* to_string(ArchMatch match) noexcept {
  switch (match) {
    case ArchMatch::kExact: return "exact";
    case ArchMatch::kSameMajor: return "nearest";
    case ArchMatch::kNone: return "none";
  }
  return "?";
}

int best_cubin(const std::vector<uint32_t>& archs, uint32_t device_cc) {
  int best = -1;
  auto distance = [&](uint32_t arch) { return arch > device_cc ? arch - device_cc : device_cc - arch; };
  for (std::size_t i = 0; i < archs.size(); ++i) {
    if (arch_match(archs[i], device_cc) == ArchMatch::kNone) continue;
    if (best < 0 || distance(archs[i]) < distance(archs[static_cast<std::size_t>(best)]) ||
        (distance(archs[i]) == distance(archs[static_cast<std::size_t>(best)]) &&
         archs[i] < archs[static_cast<std::size_t>(best)])) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace gpuvp::cubin
