// Modules loaded at run time from an image the program holds (the driver API's cuModuleLoad*),
// error names, and the device's UUID: the parts of the runtime core that libcuda.so.1 needs
// beside what libcudart.so.13 uses.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sw/cudart/runtime.h"

namespace gpuvp::cudart {
namespace {

namespace dev = gpuvp::device;

constexpr uint32_t kControlQueue = dev::kQueuesPerChannel - 1;  // as runtime.cpp: modules, symbols

dev::Command control(dev::Opcode opcode, uint64_t a) {
  dev::Command cmd{};
  cmd.opcode = static_cast<uint32_t>(opcode);
  cmd.body.generic.a = a;
  return cmd;
}

// The architecture of PTX text: its `.target sm_XX` directive (0 when there is none).
uint32_t ptx_target(const std::string& text) {
  const std::size_t at = text.find(".target");
  if (at == std::string::npos) return 0;
  const std::size_t sm = text.find("sm_", at);
  const std::size_t line_end = text.find('\n', at);
  if (sm == std::string::npos || (line_end != std::string::npos && sm > line_end)) return 0;
  return static_cast<uint32_t>(std::strtoul(text.c_str() + sm + 3, nullptr, 10));
}

// What a runtime-loaded image holds, as a Fatbin: its own containers, or PTX text as one entry.
std::optional<Fatbin> image_contents(const void* image, std::string* error) {
  uint32_t magic = 0;
  std::memcpy(&magic, image, sizeof magic);
  if (magic == kFatbinMagic || magic == kFatbinWrapperMagic) return parse_registered_fatbin(image, error);
  const char* bytes = static_cast<const char*>(image);
  if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0) {
    *error = "the image is a cubin (SASS only); gpuvp runs PTX: load PTX text or a fatbin that carries PTX";
    return std::nullopt;
  }
  Fatbin fatbin;
  FatbinEntry entry;
  entry.kind = FatbinKind::Ptx;
  entry.payload = bytes;  // PTX text is NUL-terminated (cuModuleLoadData's contract)
  entry.arch = ptx_target(entry.payload);
  fatbin.bytes = entry.payload.size() + 1;
  fatbin.entries.push_back(std::move(entry));
  return fatbin;
}

}  // namespace

const char* Runtime::error_name(cudaError_t error) {
  switch (error) {
#define GPUVP_ERROR(name, text) \
  case name:                    \
    return #name;
#include "sw/cudart/error_names.inc"
#undef GPUVP_ERROR
    default:
      return "cudaErrorUnknown";
  }
}

const char* Runtime::error_text(cudaError_t error) {
  switch (error) {
#define GPUVP_ERROR(name, text) \
  case name:                    \
    return text;
#include "sw/cudart/error_names.inc"
#undef GPUVP_ERROR
    default:
      return "unrecognized error code";
  }
}

cudaUUID_t Runtime::device_uuid() const {
  // FNV-1a of the device name, twice with different seeds: 16 bytes that name the preset.
  const dev::DeviceInfo& d = info();
  const std::size_t length = strnlen(d.name, sizeof d.name);
  cudaUUID_t uuid{};
  for (int half = 0; half < 2; ++half) {
    uint64_t hash = half == 0 ? 0xcbf29ce484222325ull : 0x84222325cbf29ce4ull;
    for (std::size_t i = 0; i < length; ++i) hash = (hash ^ static_cast<uint8_t>(d.name[i])) * 0x100000001b3ull;
    std::memcpy(uuid.bytes + 8 * half, &hash, 8);
  }
  return uuid;
}

cudaError_t Runtime::load_image(const void* image, Module** out, std::string* log) {
  if (image == nullptr || out == nullptr) return cudaErrorInvalidValue;
  auto module = std::make_unique<Module>();
  std::string error;
  module->fatbin = image_contents(image, &error);
  if (!module->fatbin) {
    std::fprintf(stderr, "gpuvp: cannot load the module: %s\n", error.c_str());
    if (log != nullptr) *log = error;
    return cudaErrorInvalidKernelImage;
  }
  if (const cudaError_t e = load_module(*module); e != cudaSuccess) {
    if (log != nullptr) *log = module->load_message;
    return e;
  }
  modules_.push_back(std::move(module));
  *out = modules_.back().get();
  return cudaSuccess;
}

bool Runtime::is_loaded_image(const Module* module) const {
  return module != nullptr && std::any_of(modules_.begin(), modules_.end(), [&](const std::unique_ptr<Module>& m) {
           return m.get() == module && m->loaded;
         });
}

cudaError_t Runtime::unload_image(Module* module) {
  if (!is_loaded_image(module)) return cudaErrorInvalidResourceHandle;
  wait_idle();  // kernels of the module may still be running
  const driver::Completion done = call(kControlQueue, control(dev::Opcode::UnloadModule, module->handle));
  for (auto it = functions_.begin(); it != functions_.end();) {
    it = it->second->module == module ? functions_.erase(it) : std::next(it);
  }
  for (auto it = variables_.begin(); it != variables_.end();) {
    it = it->second->module == module ? variables_.erase(it) : std::next(it);
  }
  modules_.erase(std::find_if(modules_.begin(), modules_.end(),
                              [&](const std::unique_ptr<Module>& m) { return m.get() == module; }));
  if (done.lost) return cudaErrorDevicesUnavailable;
  return done.ok() ? cudaSuccess : status_error(done, "cuModuleUnload");
}

cudaError_t Runtime::module_function(Function** out, Module& module, const std::string& name) {
  for (const auto& entry : functions_) {
    if (entry.second->module == &module && entry.second->name == name) {
      *out = entry.second.get();
      return cudaSuccess;
    }
  }
  auto function = std::make_unique<Function>();
  function->module = &module;
  function->name = name;
  if (const cudaError_t e = resolve(*function); e != cudaSuccess) return e;
  Function* raw = function.get();
  functions_[raw] = std::move(function);  // keyed by itself: it has no host stub
  *out = raw;
  return cudaSuccess;
}

bool Runtime::is_module_function(const Function* function) const {
  const auto it = functions_.find(function);
  return it != functions_.end() && it->second.get() == function;
}

cudaError_t Runtime::module_global(uint64_t* address, std::size_t* bytes, Module& module, const std::string& name) {
  Variable* variable = nullptr;
  for (const auto& entry : variables_) {
    if (entry.second->module == &module && entry.second->name == name) variable = entry.second.get();
  }
  if (variable == nullptr) {
    auto created = std::make_unique<Variable>();
    created->module = &module;
    created->name = name;
    if (const cudaError_t e = resolve(*created); e != cudaSuccess) return e;
    variable = created.get();
    variables_[variable] = std::move(created);  // keyed by itself: it has no host shadow
  }
  if (address != nullptr) *address = variable->address;
  if (bytes != nullptr) *bytes = variable->size;
  return cudaSuccess;
}

}  // namespace gpuvp::cudart
