// The cubin reader on real nvcc-built cubins (figures checked against ptxas -v's log of the same
// build), on a fatbin with several architectures, and on corrupt and truncated bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "sw/cubin/cubin.h"
#include "sw/cudart/fatbin.h"

namespace gpuvp::cubin {
namespace {

const std::string kDir = GPUVP_CUBIN_TEST_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

Cubin parse_file(const std::string& path) {
  const std::string image = slurp(path);
  EXPECT_FALSE(image.empty()) << path;
  std::string error;
  std::optional<Cubin> cubin = parse_cubin(image.data(), image.size(), &error);
  EXPECT_TRUE(cubin.has_value()) << error;
  return cubin.value_or(Cubin{});
}

// ptxas -v's "Function properties for NAME ... N bytes stack frame" and "Used N registers".
struct PtxasFigures {
  uint32_t registers = 0;
  uint32_t stack_frame = 0;
  uint32_t shared = 0;
};
std::map<std::string, PtxasFigures> ptxas_log(const std::string& path) {
  std::map<std::string, PtxasFigures> out;
  std::istringstream log(slurp(path));
  std::string line, entry, properties;
  const std::regex compiling("Compiling entry function '([^']+)'");
  const std::regex function("Function properties for (\\S+)");
  const std::regex frame("([0-9]+) bytes stack frame");
  const std::regex used("Used ([0-9]+) registers");
  const std::regex smem("([0-9]+) bytes smem");
  std::smatch m;
  while (std::getline(log, line)) {
    if (std::regex_search(line, m, compiling)) entry = m[1];
    if (std::regex_search(line, m, function)) properties = m[1];
    if (std::regex_search(line, m, frame) && properties == entry) out[entry].stack_frame = std::stoul(m[1]);
    if (std::regex_search(line, m, used) && !entry.empty()) {
      out[entry].registers = std::stoul(m[1]);
      if (std::regex_search(line, m, smem)) out[entry].shared = std::stoul(m[1]);
    }
  }
  return out;
}

TEST(Cubin, RealCubinMatchesPtxasFigures) {
  const Cubin cubin = parse_file(kDir + "/resources.cubin");
  EXPECT_EQ(cubin.arch, 75u);
  const auto log = ptxas_log(kDir + "/resources.ptxas.txt");
  ASSERT_EQ(log.size(), 4u) << "four kernels in resources.cu";
  ASSERT_EQ(cubin.kernels.size(), 4u) << "device function helper() is not a kernel";
  for (const auto& [name, figures] : log) {
    const KernelResources* k = cubin.find(name);
    ASSERT_NE(k, nullptr) << name;
    EXPECT_EQ(k->registers, figures.registers) << name;
    EXPECT_EQ(k->frame_bytes, figures.stack_frame) << name;
    EXPECT_EQ(k->static_shared_bytes, figures.shared) << name;
  }
}

TEST(Cubin, ReadsSharedLocalAndThreadLimits) {
  const Cubin cubin = parse_file(kDir + "/resources.cubin");
  const KernelResources* shared = cubin.find("static_shared");
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->static_shared_bytes, 16u * 17u * 4u);  // the dynamic part is not in the image
  EXPECT_EQ(shared->local_bytes, 0u);
  EXPECT_EQ(shared->param_bytes, 8u);

  const KernelResources* local = cubin.find("local_frame");
  ASSERT_NE(local, nullptr);
  EXPECT_GE(local->frame_bytes, 64u * 4u);  // the run-time-indexed int[64]
  EXPECT_EQ(local->local_bytes, std::max(local->frame_bytes, local->min_stack_bytes));

  const KernelResources* bounded = cubin.find("bounded");
  ASSERT_NE(bounded, nullptr);
  EXPECT_EQ(bounded->max_threads, 128u);                 // __launch_bounds__(128, 4)
  EXPECT_EQ(bounded->max_registers, 65536u / (128 * 4));  // ptxas's cap for 4 CTAs of 128
  EXPECT_EQ(bounded->required_threads, 0u);

  const Cubin reqntid = parse_file(kDir + "/reqntid.cubin");
  const KernelResources* required = reqntid.find("required_threads");
  ASSERT_NE(required, nullptr);
  EXPECT_EQ(required->required_threads, 96u * 2u);
  EXPECT_EQ(cubin.find("helper"), nullptr);
  EXPECT_EQ(cubin.find("no_such_kernel"), nullptr);
}

TEST(Cubin, ArchitectureMatchAndChoice) {
  EXPECT_EQ(arch_match(75, 75), ArchMatch::kExact);
  EXPECT_EQ(arch_match(75, 70), ArchMatch::kSameMajor);
  EXPECT_EQ(arch_match(86, 80), ArchMatch::kSameMajor);
  EXPECT_EQ(arch_match(75, 60), ArchMatch::kNone);
  EXPECT_EQ(arch_match(80, 75), ArchMatch::kNone);
  EXPECT_EQ(arch_match(0, 70), ArchMatch::kNone);
  EXPECT_EQ(best_cubin({75, 80, 86}, 86), 2);
  EXPECT_EQ(best_cubin({75, 80, 86}, 70), 0);
  EXPECT_EQ(best_cubin({75, 80, 86}, 89), 2);
  EXPECT_EQ(best_cubin({86, 80}, 83), 1);  // equally far: the lower
  EXPECT_EQ(best_cubin({75, 80, 86}, 60), -1);
  EXPECT_EQ(best_cubin({}, 70), -1);
}

TEST(Cubin, FatbinOffersTheCubinForEachDevice) {
  const std::string bytes = slurp(kDir + "/multiarch.fatbin");
  std::string error;
  const auto fatbin = cudart::parse_fatbin(bytes.data(), bytes.size(), &error);
  ASSERT_TRUE(fatbin) << error;
  for (const auto& [cc, expected] : std::map<uint32_t, uint32_t>{{70, 75}, {75, 75}, {80, 80}, {86, 86}, {89, 86}}) {
    const cudart::FatbinEntry* entry = fatbin->best_cubin(cc);
    ASSERT_NE(entry, nullptr) << "cc " << cc;
    EXPECT_EQ(entry->arch, expected) << "cc " << cc;
    const auto cubin = parse_cubin(entry->payload.data(), entry->payload.size(), &error);
    ASSERT_TRUE(cubin) << error;
    EXPECT_EQ(cubin->arch, expected) << "e_flags agree with the fatbin entry";
    EXPECT_NE(cubin->find("static_shared"), nullptr);
  }
  EXPECT_EQ(fatbin->best_cubin(60), nullptr) << "no cubin of major 6";
}

// ---- Bad input: every failure is a message naming what is wrong, never a crash.

struct Image {
  std::string bytes;
  template <typename T>
  T get(std::size_t at) const {
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    return v;
  }
  template <typename T>
  void put(std::size_t at, T v) {
    std::memcpy(bytes.data() + at, &v, sizeof v);
  }
  // Offset of the section header of the section named `name`.
  std::size_t header_of(const std::string& name) const {
    const uint64_t shoff = get<uint64_t>(40);
    const uint16_t shnum = get<uint16_t>(60), shstrndx = get<uint16_t>(62);
    const uint64_t strings = get<uint64_t>(shoff + shstrndx * 64u + 24);
    for (uint16_t i = 0; i < shnum; ++i) {
      const std::size_t h = shoff + i * 64u;
      if (std::strcmp(bytes.data() + strings + get<uint32_t>(h), name.c_str()) == 0) return h;
    }
    ADD_FAILURE() << "no section " << name;
    return 0;
  }
  std::string parse_error() const {
    std::string error;
    const auto cubin = parse_cubin(bytes.data(), bytes.size(), &error);
    return cubin ? std::string() : error;
  }
};

Image real() { return Image{slurp(kDir + "/resources.cubin")}; }

TEST(CubinBadInput, HeaderErrorsAreNamed) {
  EXPECT_NE(Image{std::string(10, '\0')}.parse_error().find("shorter than an ELF header"), std::string::npos);
  Image i = real();
  i.bytes[1] = 'X';
  EXPECT_NE(i.parse_error().find("no ELF magic"), std::string::npos);
  i = real();
  i.bytes[4] = 1;
  EXPECT_NE(i.parse_error().find("not ELF64"), std::string::npos);
  i = real();
  i.bytes[5] = 2;
  EXPECT_NE(i.parse_error().find("little endian"), std::string::npos);
  i = real();
  i.put<uint16_t>(18, 62);  // x86-64
  EXPECT_NE(i.parse_error().find("EM_CUDA"), std::string::npos);
  i = real();
  i.put<uint64_t>(40, i.bytes.size() - 10);
  EXPECT_NE(i.parse_error().find("section headers at"), std::string::npos);
  i = real();
  i.put<uint16_t>(58, 40);
  EXPECT_NE(i.parse_error().find("section header size"), std::string::npos);
  i = real();
  i.put<uint16_t>(62, 999);
  EXPECT_NE(i.parse_error().find("name table index"), std::string::npos);
  i = real();
  i.put<uint16_t>(60, 0);
  EXPECT_NE(i.parse_error().find("no section headers"), std::string::npos);
  EXPECT_NE(Image{}.parse_error().find("cubin:"), std::string::npos);
}

TEST(CubinBadInput, SectionAndAttributeErrorsAreNamed) {
  Image i = real();
  std::size_t h = i.header_of(".nv.info.bounded");
  i.put<uint64_t>(h + 32, 1u << 30);  // size past the end of the image
  EXPECT_NE(i.parse_error().find("overruns the image"), std::string::npos);

  // A record whose payload size runs past its section.
  i = real();
  h = i.header_of(".nv.info.bounded");
  const uint64_t info = i.get<uint64_t>(h + 24);
  ASSERT_EQ(static_cast<uint8_t>(i.bytes[info]), 4) << "first record is an SVAL";
  i.put<uint16_t>(info + 2, 0xfff0);
  EXPECT_NE(i.parse_error().find(".nv.info.bounded: record at 0"), std::string::npos) << i.parse_error();

  i = real();
  i.bytes[info] = 9;  // unknown format
  EXPECT_NE(i.parse_error().find("unknown format 9"), std::string::npos) << i.parse_error();

  // A .text section naming a symbol beyond the symbol table.
  i = real();
  h = i.header_of(".text.bounded");
  i.put<uint32_t>(h + 44, (i.get<uint32_t>(h + 44) & 0xff000000u) | 0xfffffu);
  EXPECT_NE(i.parse_error().find(".text.bounded names symbol"), std::string::npos) << i.parse_error();

  // A section name offset outside the name table.
  i = real();
  h = i.header_of(".nv.info.bounded");
  i.put<uint32_t>(h, 0x7fffffffu);
  EXPECT_NE(i.parse_error().find("outside the section name table"), std::string::npos);
}

// Found by the fatbin fuzzer (bench/fuzz/regressions/fatbin): a section of type SHT_NULL whose
// offset and size point outside the image, used as the section name table or as an .nv.info
// section. SHT_NULL's fields mean nothing; its bytes are never read.
TEST(CubinBadInput, NullSectionsAreNeverRead) {
  Image i = real();
  const std::size_t shoff = i.get<uint64_t>(40);
  const std::size_t names = shoff + i.get<uint16_t>(62) * 64u;
  i.put<uint32_t>(names + 4, 0);                    // the name table becomes SHT_NULL
  i.put<uint64_t>(names + 24, i.bytes.size() - 8);  // ... near the end of the image
  i.put<uint64_t>(names + 32, uint64_t{1} << 20);   // ... and far longer than what is left
  EXPECT_NE(i.parse_error().find("outside the section name table"), std::string::npos) << i.parse_error();

  i = real();
  const std::size_t h = i.header_of(".nv.info.bounded");
  i.put<uint32_t>(h + 4, 0);
  i.put<uint64_t>(h + 24, i.bytes.size() - 8);
  i.put<uint64_t>(h + 32, uint64_t{1} << 20);
  EXPECT_NE(i.parse_error().find(".nv.info.bounded has no contents"), std::string::npos) << i.parse_error();
}

TEST(CubinBadInput, EveryTruncationAndByteFlipIsHandled) {
  const Image whole = real();
  // Every prefix: parsed or refused, never read past the end (the sanitizer builds check the
  // reads; here every call must return).
  const std::size_t headers_end = whole.get<uint64_t>(40) + whole.get<uint16_t>(60) * 64u;
  for (std::size_t n = 0; n < whole.bytes.size(); ++n) {
    std::string error;
    const auto cubin = parse_cubin(whole.bytes.data(), n, &error);
    if (n < headers_end) {
      EXPECT_FALSE(cubin) << "a prefix of " << n << " bytes lacks section headers";
    }
    if (!cubin) {
      EXPECT_EQ(error.rfind("cubin: ", 0), 0u) << n;
    }
  }
  // Deterministic single-byte corruptions over the headers and the attribute sections.
  uint32_t state = 12345;
  for (int round = 0; round < 4000; ++round) {
    Image i = whole;
    state = state * 1664525u + 1013904223u;
    const std::size_t at = state % i.bytes.size();
    i.bytes[at] = static_cast<char>(i.bytes[at] ^ static_cast<char>(1u << (state >> 29)));
    std::string error;
    const auto cubin = parse_cubin(i.bytes.data(), i.bytes.size(), &error);
    if (!cubin) {
      EXPECT_FALSE(error.empty());
    }
  }
}

}  // namespace
}  // namespace gpuvp::cubin
