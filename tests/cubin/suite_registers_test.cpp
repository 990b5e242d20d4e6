// For every kernel of the conformance workloads and of `gpuvp validate`, the registers per thread
// the platform takes from the SASS equal what ptxas printed ("Used N registers") when the same
// source was compiled for sm_75 at build time. The workloads are read as libcudart reads them: the
// fatbin embedded in the nvcc-built program, its cubin chosen for the v100 preset (cc 7.0) by
// Fatbin::best_cubin, kernels looked up by name; the validate tables from the cubin gpuvp loads.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "sw/cubin/cubin.h"
#include "sw/cudart/fatbin.h"

namespace gpuvp::cubin {
namespace {

constexpr uint32_t kV100 = 70;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Entry function -> "Used N registers" of a ptxas -v log.
std::map<std::string, uint32_t> ptxas_registers(const std::string& path) {
  std::map<std::string, uint32_t> out;
  std::istringstream log(slurp(path));
  const std::regex compiling("Compiling entry function '([^']+)'");
  const std::regex used("Used ([0-9]+) registers");
  std::string line, entry;
  std::smatch m;
  while (std::getline(log, line)) {
    if (std::regex_search(line, m, compiling)) entry = m[1];
    if (std::regex_search(line, m, used) && !entry.empty()) {
      out[entry] = static_cast<uint32_t>(std::stoul(m[1]));
      entry.clear();
    }
  }
  return out;
}

// The kernels of every fatbin embedded in a program, through the runtime's choice of cubin.
std::map<std::string, KernelResources> program_kernels(const std::string& path, uint32_t cc, std::string* arch) {
  std::map<std::string, KernelResources> out;
  const std::string bytes = slurp(path);
  for (std::size_t at = 0; at + 16 <= bytes.size(); at += 8) {
    uint32_t magic;
    std::memcpy(&magic, bytes.data() + at, sizeof magic);
    if (magic != cudart::kFatbinMagic) continue;
    std::string error;
    const auto fatbin = cudart::parse_fatbin(bytes.data() + at, bytes.size() - at, &error);
    if (!fatbin) continue;  // the magic number inside other data
    const cudart::FatbinEntry* elf = fatbin->best_cubin(cc);
    if (elf == nullptr) continue;
    const auto cubin = parse_cubin(elf->payload.data(), elf->payload.size(), &error);
    EXPECT_TRUE(cubin) << path << ": " << error;
    if (!cubin) continue;
    *arch = "sm_" + std::to_string(cubin->arch);
    for (const KernelResources& k : cubin->kernels) out[k.name] = k;
  }
  return out;
}

void expect_same_registers(const std::string& what, const std::map<std::string, uint32_t>& ptxas,
                           const std::map<std::string, KernelResources>& platform) {
  ASSERT_FALSE(ptxas.empty()) << what << ": no kernel in the ptxas log";
  for (const auto& [name, registers] : ptxas) {
    const auto it = platform.find(name);
    ASSERT_NE(it, platform.end()) << what << ": kernel " << name << " is missing from the SASS the platform reads";
    EXPECT_EQ(it->second.registers, registers) << what << ": kernel " << name;
  }
}

TEST(SuiteRegisters, EveryWorkloadKernelHasPtxasRegisterCount) {
  std::stringstream list(GPUVP_WORKLOAD_LIST);
  std::string name;
  int workloads = 0, kernels = 0;
  while (std::getline(list, name, ',')) {
    SCOPED_TRACE(name);
    const auto ptxas = ptxas_registers(std::string(GPUVP_CUBIN_TEST_DIR) + "/" + name + ".ptxas.txt");
    std::string arch;
    const auto platform = program_kernels(std::string(GPUVP_WORKLOAD_BIN_DIR) + "/workload_" + name, kV100, &arch);
    EXPECT_EQ(arch, "sm_75") << "nvcc 13 builds sm_75 SASS; the v100 preset takes it as its nearest";
    expect_same_registers("workload_" + name, ptxas, platform);
    ++workloads;
    kernels += static_cast<int>(ptxas.size());
  }
  EXPECT_GE(workloads, 28);
  EXPECT_GE(kernels, workloads);
}

TEST(SuiteRegisters, EveryValidateKernelHasPtxasRegisterCount) {
  for (const auto& [table, cubin_path] : std::map<std::string, std::string>{{"ubench", GPUVP_UBENCH_CUBIN},
                                                                             {"correlation", GPUVP_CORRELATION_CUBIN}}) {
    SCOPED_TRACE(table);
    const std::string image = slurp(cubin_path);
    std::string error;
    const auto cubin = parse_cubin(image.data(), image.size(), &error);
    ASSERT_TRUE(cubin) << error;
    EXPECT_EQ(arch_match(cubin->arch, kV100), ArchMatch::kSameMajor);
    std::map<std::string, KernelResources> platform;
    for (const KernelResources& k : cubin->kernels) platform[k.name] = k;
    expect_same_registers(table, ptxas_registers(std::string(GPUVP_CUBIN_TEST_DIR) + "/" + table + ".ptxas.txt"),
                          platform);
  }
}

}  // namespace
}  // namespace gpuvp::cubin
