// The in-process fatbin parser on what the installed nvcc 13 embeds: ZSTD-compressed PTX (the
// default), uncompressed PTX, several architectures, and malformed containers.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sw/cudart/fatbin.h"

namespace gpuvp::cudart {
namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename T>
T at(const std::vector<uint8_t>& bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

// The bytes of an ELF64 section by name.
std::vector<uint8_t> elf_section(const std::vector<uint8_t>& elf, const std::string& name) {
  const auto shoff = at<uint64_t>(elf, 0x28);
  const auto shentsize = at<uint16_t>(elf, 0x3A);
  const auto shnum = at<uint16_t>(elf, 0x3C);
  const auto shstrndx = at<uint16_t>(elf, 0x3E);
  const std::size_t strtab = at<uint64_t>(elf, shoff + std::size_t{shstrndx} * shentsize + 0x18);
  for (uint16_t i = 0; i < shnum; ++i) {
    const std::size_t header = shoff + std::size_t{i} * shentsize;
    const char* section_name = reinterpret_cast<const char*>(elf.data() + strtab + at<uint32_t>(elf, header));
    if (name == section_name) {
      const auto offset = at<uint64_t>(elf, header + 0x18);
      const auto size = at<uint64_t>(elf, header + 0x20);
      return {elf.begin() + static_cast<std::ptrdiff_t>(offset), elf.begin() + static_cast<std::ptrdiff_t>(offset + size)};
    }
  }
  return {};
}

// Every container in a .nv_fatbin section (they follow each other, 8-byte aligned).
std::vector<Fatbin> containers(const std::string& program) {
  const std::vector<uint8_t> section = elf_section(read_file(program), ".nv_fatbin");
  std::vector<Fatbin> result;
  std::size_t offset = 0;
  while (offset + 16 <= section.size()) {
    std::string error;
    auto fatbin = parse_fatbin(section.data() + offset, section.size() - offset, &error);
    if (!fatbin) {
      ADD_FAILURE() << program << " @" << offset << ": " << error;
      break;
    }
    offset += (fatbin->bytes + 7) / 8 * 8;
    result.push_back(std::move(*fatbin));
  }
  return result;
}

std::vector<const FatbinEntry*> ptx_entries(const std::vector<Fatbin>& fatbins) {
  std::vector<const FatbinEntry*> entries;
  for (const Fatbin& f : fatbins) {
    for (const FatbinEntry& e : f.entries) {
      if (e.kind == FatbinKind::Ptx) entries.push_back(&e);
    }
  }
  return entries;
}

TEST(Fatbin, DefaultBuildCarriesZstdCompressedPtx) {
  const auto fatbins = containers(GPUVP_RT_TEST_DIR "/fatbin_default");
  const auto ptx = ptx_entries(fatbins);
  ASSERT_EQ(ptx.size(), 1u);
  EXPECT_TRUE(ptx[0]->compressed);
  EXPECT_EQ(ptx[0]->arch, 75u);
  EXPECT_GE(ptx[0]->ptx_version, 90u);
  EXPECT_NE(ptx[0]->payload.find(".entry _Z5scalePffi"), std::string::npos);
  EXPECT_NE(ptx[0]->payload.find(".global .align 4 .b8 table[16]"), std::string::npos);
  EXPECT_EQ(ptx[0]->payload.find('\0'), std::string::npos);
  bool has_elf = false;
  for (const Fatbin& f : fatbins) {
    for (const FatbinEntry& e : f.entries) has_elf = has_elf || e.kind == FatbinKind::Elf;
  }
  EXPECT_TRUE(has_elf);
}

TEST(Fatbin, UncompressedPtxForSeveralArchitectures) {
  const auto fatbins = containers(GPUVP_RT_TEST_DIR "/fatbin_multiarch");
  const auto ptx = ptx_entries(fatbins);
  ASSERT_EQ(ptx.size(), 2u);
  for (const FatbinEntry* e : ptx) {
    EXPECT_FALSE(e->compressed);
    EXPECT_NE(e->payload.find(".entry _Z5mixed4Paircs"), std::string::npos);
  }
  const Fatbin* with_both = nullptr;
  for (const Fatbin& f : fatbins) {
    if (f.entries.size() == 2) with_both = &f;
  }
  ASSERT_NE(with_both, nullptr);
  EXPECT_EQ(with_both->best_ptx(70), nullptr);
  EXPECT_EQ(with_both->lowest_ptx()->arch, 75u);
  ASSERT_NE(with_both->best_ptx(75), nullptr);
  EXPECT_EQ(with_both->best_ptx(75)->arch, 75u);
  EXPECT_EQ(with_both->best_ptx(86)->arch, 80u);
  EXPECT_NE(with_both->best_ptx(90)->payload.find(".target sm_80"), std::string::npos);
}

TEST(Fatbin, RegisteredWrapperIsFollowed) {
  const std::vector<uint8_t> section = elf_section(read_file(GPUVP_RT_TEST_DIR "/fatbin_default"), ".nv_fatbin");
  ASSERT_GE(section.size(), 16u);
  // __fatBinC_Wrapper_t {magic, version, data, filename_or_fatbins}
  struct {
    uint32_t magic;
    uint32_t version;
    const void* data;
    const void* unused;
  } wrapper{kFatbinWrapperMagic, 1, section.data(), nullptr};
  std::string error;
  EXPECT_TRUE(parse_registered_fatbin(&wrapper, &error).has_value()) << error;
  wrapper.magic = 0x12345678;
  EXPECT_FALSE(parse_registered_fatbin(&wrapper, &error).has_value());
}

// Found by the fatbin fuzzer (bench/fuzz): a compressed entry that declares a 4 GiB uncompressed
// size made parse_fatbin allocate and zero 4 GiB before decompressing 1 KiB. Memory now follows
// what the data really holds; a declared size that is too small is still an error.
TEST(Fatbin, DeclaredUncompressedSizeIsNotTrusted) {
  std::vector<uint8_t> section = elf_section(read_file(GPUVP_RT_TEST_DIR "/fatbin_default"), ".nv_fatbin");
  std::string error;
  std::size_t offset = 0;
  bool found = false;
  while (!found && offset + 16 <= section.size()) {
    auto f = parse_fatbin(section.data() + offset, section.size() - offset, &error);
    ASSERT_TRUE(f.has_value()) << error;
    const uint16_t header = at<uint16_t>(section, offset + 6);
    for (std::size_t entry = offset + header; entry + 64 <= offset + f->bytes;) {
      if (at<uint16_t>(section, entry) == 1 && (at<uint64_t>(section, entry + 40) & 0x8000) != 0) {
        const uint64_t real = at<uint64_t>(section, entry + 56);
        uint64_t declared = uint64_t{1} << 32;
        std::memcpy(section.data() + entry + 56, &declared, sizeof declared);
        auto big = parse_fatbin(section.data() + offset, section.size() - offset, &error);
        ASSERT_TRUE(big.has_value()) << error;
        const std::vector<Fatbin> parsed{*big};  // outlives the entry pointers into it
        const auto ptx = ptx_entries(parsed);
        ASSERT_FALSE(ptx.empty());
        EXPECT_NE(ptx.front()->payload.find(".entry"), std::string::npos);  // the real PTX, whole
        EXPECT_LE(ptx.front()->payload.size(), real);
        declared = real / 2;
        std::memcpy(section.data() + entry + 56, &declared, sizeof declared);
        EXPECT_FALSE(parse_fatbin(section.data() + offset, section.size() - offset, &error).has_value());
        EXPECT_NE(error.find("more than the"), std::string::npos) << error;
        found = true;
        break;
      }
      entry += at<uint32_t>(section, entry + 4) + at<uint64_t>(section, entry + 8);
    }
    offset += (f->bytes + 7) / 8 * 8;
  }
  EXPECT_TRUE(found) << "no ZSTD-compressed PTX entry in fatbin_default";
}

TEST(Fatbin, MalformedContainersAreRejected) {
  std::vector<uint8_t> section = elf_section(read_file(GPUVP_RT_TEST_DIR "/fatbin_default"), ".nv_fatbin");
  ASSERT_GE(section.size(), 64u);
  std::string error;
  // Find the container holding the compressed PTX.
  std::size_t offset = 0;
  std::size_t ptx_container = section.size();
  while (offset + 16 <= section.size()) {
    auto f = parse_fatbin(section.data() + offset, section.size() - offset, &error);
    ASSERT_TRUE(f.has_value());
    if (!ptx_entries({*f}).empty()) ptx_container = offset;
    offset += (f->bytes + 7) / 8 * 8;
  }
  ASSERT_LT(ptx_container, section.size());
  uint8_t* base = section.data() + ptx_container;
  const std::size_t size = section.size() - ptx_container;

  EXPECT_FALSE(parse_fatbin(base, 8, &error).has_value());
  EXPECT_FALSE(parse_fatbin(base, 40, &error).has_value());  // entries beyond the limit
  EXPECT_NE(error.find("bounds"), std::string::npos);

  std::vector<uint8_t> bad_magic(base, base + size);
  bad_magic[0] ^= 0xff;
  EXPECT_FALSE(parse_fatbin(bad_magic.data(), bad_magic.size(), &error).has_value());
  EXPECT_NE(error.find("magic"), std::string::npos);

  // Corrupt every entry's compressed payload: decompression must fail cleanly.
  std::vector<uint8_t> corrupt(base, base + size);
  const uint16_t header = at<uint16_t>(corrupt, 6);
  std::size_t entry = header;
  bool corrupted = false;
  while (entry + 64 <= corrupt.size()) {
    const uint32_t entry_header = at<uint32_t>(corrupt, entry + 4);
    const uint64_t padded = at<uint64_t>(corrupt, entry + 8);
    if (at<uint16_t>(corrupt, entry) == 1 && (at<uint64_t>(corrupt, entry + 40) & 0x8000) != 0) {
      for (std::size_t i = 0; i < 8; ++i) corrupt[entry + entry_header + i] = 0x55;
      corrupted = true;
    }
    entry += entry_header + padded;
  }
  ASSERT_TRUE(corrupted);
  EXPECT_FALSE(parse_fatbin(corrupt.data(), corrupt.size(), &error).has_value());
  EXPECT_NE(error.find("ZSTD"), std::string::npos);

  // An entry that claims more bytes than the container holds.
  std::vector<uint8_t> overrun(base, base + size);
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(overrun.data() + header + 8, &huge, sizeof huge);
  EXPECT_FALSE(parse_fatbin(overrun.data(), overrun.size(), &error).has_value());
}

}  // namespace
}  // namespace gpuvp::cudart
