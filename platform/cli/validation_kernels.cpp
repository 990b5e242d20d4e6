#include "platform/cli/validation_kernels.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpuvp::cli {
namespace {

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the " + std::string(what) + " '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

ValidationKernels::ValidationKernels(const std::string& ptx_path, const std::string& cubin_path, uint32_t device_cc)
    : ptx_(read_file(ptx_path, "kernels' PTX")), cubin_path_(cubin_path) {
  const std::string image = read_file(cubin_path, "kernels' cubin");
  std::string error;
  std::optional<cubin::Cubin> parsed = cubin::parse_cubin(image.data(), image.size(), &error);
  if (!parsed) throw std::runtime_error(cubin_path + ": " + error);
  switch (cubin::arch_match(parsed->arch, device_cc)) {
    case cubin::ArchMatch::kExact: source_ = ptx::ResourceSource::kCubinExact; break;
    case cubin::ArchMatch::kSameMajor: source_ = ptx::ResourceSource::kCubinNearest; break;
    case cubin::ArchMatch::kNone: return;  // registers estimated; resources() warns per kernel
  }
  cubin_ = std::move(parsed);
}

ptx::KernelResources ValidationKernels::resources(const std::string& kernel) const {
  ptx::KernelResources told;
  const cubin::KernelResources* sass = cubin_ ? cubin_->find(kernel) : nullptr;
  if (sass == nullptr) {
    if (warned_.insert(kernel).second) {
      std::fprintf(stderr, "gpuvp validate: warning: kernel %s: no SASS resources in %s for this device's "
                   "architecture; registers per thread estimated from the PTX\n", kernel.c_str(), cubin_path_.c_str());
    }
    return told;
  }
  told.source = source_;
  told.sass_arch = cubin_->arch;
  told.registers_per_thread = sass->registers;
  told.static_shared_bytes = sass->static_shared_bytes;
  told.local_bytes_per_thread = sass->local_bytes;
  return told;
}

}  // namespace gpuvp::cli
