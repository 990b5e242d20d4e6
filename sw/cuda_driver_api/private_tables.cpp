// The driver's private tables (cuGetExportTable) that NVIDIA's static CUDA runtime
// (libcudart_static.a, nvcc's default) asks for before it runs anything. Their layouts are not
// published: what each slot does is what public reverse-engineering work reports and what the
// CUDA 13.0 static runtime was seen to call (README "Static runtime"). Each table is an array of
// pointers; most start with their own size in bytes. With these the static runtime gets as far
// as its integrity check of the driver, which gpuvp does not answer.
#include <cstring>
#include <map>
#include <utility>

#include "sw/cuda_driver_api/private_tables.h"

using gpuvp::cuda_driver::DriverState;
using gpuvp::cuda_driver::Runtime;
using gpuvp::cuda_driver::to_result;
using gpuvp::cuda_driver::with_driver;

namespace {

using Slot = const void*;

template <typename F>
Slot slot(F* function) {
  return reinterpret_cast<Slot>(function);
}

Slot size_word(std::size_t entries) { return reinterpret_cast<Slot>(entries * sizeof(Slot)); }

// ---- The runtime's interface (6bd5fb6c-...): fatbin registration and the primary context.

// Loads the module of a registered fatbin (a __fatBinC_Wrapper_t or a bare container), with or
// without a current context: the static runtime registers before it makes one current.
CUresult load_registered(CUmodule* module, const void* fatbin) {
  return with_driver([&](Runtime& runtime) {
    if (module == nullptr || fatbin == nullptr) return CUDA_ERROR_INVALID_VALUE;
    gpuvp::cudart::Module* loaded = nullptr;
    if (const cudaError_t error = runtime.load_image(fatbin, &loaded, nullptr); error != cudaSuccess) {
      return to_result(error);
    }
    *module = reinterpret_cast<CUmodule>(loaded);
    return CUDA_SUCCESS;
  });
}

CUresult module_from_fatbin(CUmodule* module, const void* wrapper) { return load_registered(module, wrapper); }

CUresult module_from_fatbin_with_options(CUmodule* module, const void* wrapper, void*, void*, unsigned) {
  return load_registered(module, wrapper);
}

CUresult module_from_fatbin_first(const void* fatbin, CUmodule* module, void*, void*, unsigned) {
  return load_registered(module, fatbin);
}

CUresult primary_context(CUcontext* context, CUdevice device) { return cuDevicePrimaryCtxRetain(context, device); }

void runtime_notice(uintptr_t) {}

CUresult load_compilers() { return CUDA_SUCCESS; }

const Slot kRuntimeInterface[13] = {size_word(13),
                                    slot(&module_from_fatbin),
                                    slot(&primary_context),
                                    nullptr,
                                    nullptr,
                                    nullptr,
                                    slot(&module_from_fatbin_with_options),
                                    slot(&runtime_notice),
                                    slot(&module_from_fatbin_first),
                                    nullptr,
                                    nullptr,
                                    nullptr,
                                    slot(&load_compilers)};

// ---- Tool callbacks (a094798c-...): no tool is attached, so the callbacks do nothing; two
// slots hand out scratch buffers the runtime writes into.

void tool_event(unsigned, void*) {}
void tool_span(void*, void*) {}

template <std::size_t Bytes>
void scratch(void** buffer, std::size_t* bytes) {
  static unsigned char storage[Bytes] = {};
  if (buffer != nullptr) *buffer = storage;
  if (bytes != nullptr) *bytes = Bytes;
}

const Slot kToolHooks[7] = {size_word(7), slot(&tool_event), slot(&scratch<1024>), nullptr, slot(&tool_span),
                            nullptr, slot(&scratch<14>)};

// ---- Tool thread-local storage (42d85a81-...).

void tool_thread_callback(void*) {}

const Slot kToolThreadStorage[4] = {size_word(4), nullptr, slot(&tool_thread_callback), nullptr};

// ---- Context-local storage (c693336e-...): values the runtime keeps per context and key.
// This table has no size word.

std::map<std::pair<const void*, const void*>, void*>& context_storage() {
  static std::map<std::pair<const void*, const void*>, void*> storage;
  return storage;
}

CUresult storage_put(CUcontext context, void* key, void* value, void*) {
  return with_driver([&](Runtime&) {
    const void* owner = DriverState::instance().named_or_current(context);
    if (owner == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    context_storage()[{owner, key}] = value;
    return CUDA_SUCCESS;
  });
}

CUresult storage_delete(CUcontext context, void* key) {
  return with_driver([&](Runtime&) {
    const void* owner = DriverState::instance().named_or_current(context);
    if (owner == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    context_storage().erase({owner, key});
    return CUDA_SUCCESS;
  });
}

CUresult storage_get(void** value, CUcontext context, void* key) {
  return with_driver([&](Runtime&) {
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const void* owner = DriverState::instance().named_or_current(context);
    if (owner == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    const auto it = context_storage().find({owner, key});
    *value = it != context_storage().end() ? it->second : nullptr;
    return it != context_storage().end() ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
  });
}

const Slot kContextStorage[4] = {slot(&storage_put), slot(&storage_delete), slot(&storage_get), nullptr};

// ---- Context checks (263e8860-...): every context passes.

CUresult context_check(CUcontext, unsigned* result, const void** detail) {
  if (result != nullptr) *result = 0;
  if (detail != nullptr) *detail = nullptr;
  return CUDA_SUCCESS;
}

unsigned context_check_flags() { return 0; }

const Slot kContextChecks[4] = {size_word(4), nullptr, slot(&context_check), slot(&context_check_flags)};

struct PrivateTable {
  unsigned char id[16];
  const Slot* table;
};

const PrivateTable kTables[] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9}, kRuntimeInterface},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66}, kToolHooks},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc}, kToolThreadStorage},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93}, kContextStorage},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e}, kContextChecks},
};

}  // namespace

namespace gpuvp::cuda_driver {

const void* private_table(const CUuuid& id) {
  for (const PrivateTable& entry : kTables) {
    if (std::memcmp(entry.id, id.bytes, sizeof entry.id) == 0) return entry.table;
  }
  return nullptr;
}

bool is_integrity_check(const CUuuid& id) {
  static constexpr unsigned char kIntegrityCheck[16] = {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
                                                        0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2};
  return std::memcmp(kIntegrityCheck, id.bytes, sizeof kIntegrityCheck) == 0;
}

}  // namespace gpuvp::cuda_driver
