#include <stdexcept>

#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/ir.h"

namespace gpuvp::ptx {

Module::Module(std::shared_ptr<const ir::Program> program) : program_(std::move(program)) {}

Module Module::parse(std::string_view text, std::string_view file_name) {
  return Module(std::make_shared<const ir::Program>(ir::parse_program(text, file_name)));
}

const Kernel* Module::find_kernel(std::string_view entry_name) const {
  auto it = program_->kernel_by_name.find(std::string(entry_name));
  return it == program_->kernel_by_name.end() ? nullptr : &program_->kernels[it->second];
}
const std::vector<Kernel>& Module::kernels() const { return program_->kernels; }
const std::vector<ModuleVariable>& Module::variables() const { return program_->variables; }
const std::string& Module::file_name() const { return program_->file_name; }
uint32_t Module::ptx_version_major() const { return program_->version_major; }
uint32_t Module::ptx_version_minor() const { return program_->version_minor; }
const std::string& Module::target() const { return program_->target; }

LoadedModule::LoadedModule(Module module, DeviceMemory& memory) : module_(std::move(module)) {
  const auto& variables = module_.variables();
  variable_addresses_.reserve(variables.size());
  for (const auto& variable : variables) {
    const uint64_t address = memory.allocate(variable.size, std::max<uint32_t>(variable.alignment, 256));
    if (!variable.initializer.empty()) memory.copy_to_device(address, variable.initializer.data(), variable.initializer.size());
    variable_addresses_.push_back(address);
  }
  for (const auto& reloc : module_.program().relocations) {
    const uint64_t value = variable_addresses_[reloc.target_variable] + static_cast<uint64_t>(reloc.addend);
    memory.store(variable_addresses_[reloc.variable] + reloc.offset, value);
  }
}

std::optional<Symbol> LoadedModule::symbol(std::string_view name) const {
  const auto& variables = module_.variables();
  for (size_t i = 0; i < variables.size(); ++i) {
    if (variables[i].name == name) return Symbol{variable_addresses_[i], variables[i].size, variables[i].space};
  }
  return std::nullopt;
}

const Kernel& LoadedModule::kernel(std::string_view entry_name) const {
  const Kernel* kernel = module_.find_kernel(entry_name);
  if (kernel == nullptr) throw std::out_of_range("no kernel named '" + std::string(entry_name) + "' in " + module_.file_name());
  return *kernel;
}

ParamPacker::ParamPacker(const Kernel& kernel) : kernel_(kernel), buffer_(kernel.param_bytes, 0) {}

ParamPacker& ParamPacker::add_bytes(const void* data, size_t size) {
  if (next_param_ >= kernel_.params.size()) {
    throw std::invalid_argument("too many arguments for kernel " + kernel_.name + " (" + std::to_string(kernel_.params.size()) + " parameters)");
  }
  const KernelParam& param = kernel_.params[next_param_];
  if (size != param.size) {
    throw std::invalid_argument("argument " + std::to_string(next_param_) + " of " + kernel_.name + " has " + std::to_string(size) +
                                " bytes, parameter " + param.name + " has " + std::to_string(param.size));
  }
  std::memcpy(buffer_.data() + param.offset, data, size);
  ++next_param_;
  return *this;
}

std::vector<uint8_t> ParamPacker::finish() const {
  if (next_param_ != kernel_.params.size()) {
    throw std::invalid_argument("kernel " + kernel_.name + " takes " + std::to_string(kernel_.params.size()) + " arguments, got " + std::to_string(next_param_));
  }
  return buffer_;
}

}  // namespace gpuvp::ptx
