// Sanitizer builds only (GPUVP_SANITIZE): a munmap that clears AddressSanitizer's shadow of the
// range before unmapping it. libsystemc maps the stacks of its coroutines with mmap and returns
// them with munmap; ASan leaves the shadow of unmapped memory as it was, so a stack later mapped
// at the same place carries the redzones of frames that the previous process never returned
// from. Writes into fresh frames there were reported as stack overflows or unknown crashes, and
// describing such a report tripped ASan's own CHECK (asan_thread.cpp:371). Unmapped memory holds
// no object, so clearing its shadow hides nothing (docs/hardening.md has the evidence).
//
// Every target of a sanitizer tree links this library; as a shared library after the ASan
// runtime and before libsystemc and libc, its munmap is the one libsystemc's calls reach.
#include <dlfcn.h>
#include <sanitizer/asan_interface.h>

#include <cstddef>
#include <cstdlib>

extern "C" int munmap(void* address, size_t length) {
  using Munmap = int (*)(void*, size_t);
  static const Munmap real = reinterpret_cast<Munmap>(dlsym(RTLD_NEXT, "munmap"));
  if (real == nullptr) std::abort();
  __asan_unpoison_memory_region(address, length);
  return real(address, length);
}
