#include "models/gpu/ptx/memory.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>

namespace gpuvp::ptx {
namespace {
std::string hex(uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}
}  // namespace

uint64_t DeviceMemory::allocate(uint64_t size, uint64_t alignment) {
  before_change();
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) throw std::invalid_argument("allocation alignment must be a power of two");
  const uint64_t bytes = std::max<uint64_t>(size, 1);
  uint64_t base = (next_free_ + alignment - 1) & ~(alignment - 1);
  // Each allocation gets its own pages, so a released one really faults afterwards.
  base = (base + kPageBytes - 1) & ~(kPageBytes - 1);
  map(base, bytes);
  allocations_[base] = bytes;
  next_free_ = base + ((bytes + kPageBytes - 1) & ~(kPageBytes - 1));
  return base;
}

uint64_t DeviceMemory::reserve(uint64_t size) {
  before_change();
  const uint64_t base = (next_free_ + kPageBytes - 1) & ~(kPageBytes - 1);
  next_free_ = base + ((std::max<uint64_t>(size, 1) + kPageBytes - 1) & ~(kPageBytes - 1));
  return base;
}

void DeviceMemory::release(uint64_t address) {
  before_change();
  auto it = allocations_.find(address);
  if (it == allocations_.end()) throw IllegalHostAccess("release of " + hex(address) + ", which is not an allocation");
  const uint64_t first = address / kPageBytes;
  const uint64_t last = (address + it->second - 1) / kPageBytes;
  for (uint64_t page = first; page <= last; ++page) pages_.erase(page);
  cache_epoch_ = next_cache_epoch();  // pages are gone: every thread's cached page is stale
  allocations_.erase(it);
}

void DeviceMemory::map(uint64_t address, uint64_t size) {
  before_change();
  if (size == 0) return;
  if (address + size < address) throw std::invalid_argument("mapping wraps around the address space");
  const uint64_t first = address / kPageBytes;
  const uint64_t last = (address + size - 1) / kPageBytes;
  for (uint64_t page = first; page <= last; ++page) {
    auto& slot = pages_[page];
    if (!slot) {
      slot.reset(new uint8_t[kPageBytes]);
      std::memset(slot.get(), 0, kPageBytes);
    }
  }
}

namespace {
// One-entry translation cache per host thread (SMs read global memory from several threads in
// a parallel step phase; the map itself is only read then). An epoch names one DeviceMemory in
// one mapping state: unique over the process, renewed when pages are unmapped.
struct PageCache {
  uint64_t epoch = 0;
  uint64_t page_number = ~0ULL;
  uint8_t* page = nullptr;
};
thread_local PageCache page_cache;
std::atomic<uint64_t> epoch_source{0};
}  // namespace

uint64_t DeviceMemory::next_cache_epoch() { return epoch_source.fetch_add(1, std::memory_order_relaxed) + 1; }

uint8_t* DeviceMemory::find_page(uint64_t page_number) const {
  PageCache& cache = page_cache;
  if (cache.epoch == cache_epoch_ && page_number == cache.page_number) return cache.page;
  uint8_t* page = nullptr;
  if (auto it = pages_.find(page_number); it != pages_.end()) {
    page = it->second.get();
  } else if (foreign_pages_.empty()) {
    return nullptr;
  } else if (auto f = foreign_pages_.find(page_number); f != foreign_pages_.end()) {
    page = f->second;
  } else {
    return nullptr;
  }
  cache.epoch = cache_epoch_;
  cache.page_number = page_number;
  cache.page = page;
  return cache.page;
}

void DeviceMemory::map_foreign(uint64_t address, uint64_t size, uint8_t* bytes) {
  before_change();
  if (address % kPageBytes != 0 || size == 0 || address + size < address) {
    throw std::invalid_argument("foreign mapping at " + hex(address) + " is not page aligned or wraps");
  }
  const uint64_t first = address / kPageBytes;
  const uint64_t count = (size + kPageBytes - 1) / kPageBytes;
  for (uint64_t i = 0; i < count; ++i) {
    if (pages_.count(first + i) != 0 || foreign_pages_.count(first + i) != 0) {
      throw std::invalid_argument("foreign mapping at " + hex(address) + " overlaps mapped page " +
                                  hex((first + i) * kPageBytes));
    }
  }
  for (uint64_t i = 0; i < count; ++i) foreign_pages_[first + i] = bytes + i * kPageBytes;
}

void DeviceMemory::unmap_foreign(uint64_t address, uint64_t size) {
  before_change();
  const uint64_t first = address / kPageBytes;
  const uint64_t count = (size + kPageBytes - 1) / kPageBytes;
  for (uint64_t i = 0; i < count; ++i) foreign_pages_.erase(first + i);
  cache_epoch_ = next_cache_epoch();  // every thread's cached page may be one of them
}

template <typename Visit>
bool DeviceMemory::for_each_chunk(uint64_t address, uint64_t size, Visit&& visit) const {
  if (size == 0) return true;
  if (address + size < address) return false;
  uint64_t done = 0;
  while (done < size) {
    const uint64_t current = address + done;
    uint8_t* page = find_page(current / kPageBytes);
    if (page == nullptr) return false;
    const uint64_t in_page = current % kPageBytes;
    const uint64_t chunk = std::min(size - done, kPageBytes - in_page);
    visit(page + in_page, done, chunk);
    done += chunk;
  }
  return true;
}

bool DeviceMemory::is_mapped(uint64_t address, uint64_t size) const {
  return for_each_chunk(address, size, [](uint8_t*, uint64_t, uint64_t) {});
}

bool DeviceMemory::read(uint64_t address, void* destination, uint64_t size) {
  // Fast path: the whole access inside one page (every aligned scalar access).
  const uint64_t in_page = address % kPageBytes;
  if (in_page + size <= kPageBytes) {
    uint8_t* page = find_page(address / kPageBytes);
    if (page == nullptr) return false;
    std::memcpy(destination, page + in_page, size);
    return true;
  }
  if (!is_mapped(address, size)) return false;
  auto* out = static_cast<uint8_t*>(destination);
  return for_each_chunk(address, size, [&](uint8_t* bytes, uint64_t done, uint64_t chunk) { std::memcpy(out + done, bytes, chunk); });
}

bool DeviceMemory::write(uint64_t address, const void* source, uint64_t size) {
  const uint64_t in_page = address % kPageBytes;
  if (in_page + size <= kPageBytes) {
    uint8_t* page = find_page(address / kPageBytes);
    if (page == nullptr) return false;
    std::memcpy(page + in_page, source, size);
    return true;
  }
  if (!is_mapped(address, size)) return false;  // all-or-nothing
  const auto* in = static_cast<const uint8_t*>(source);
  return for_each_chunk(address, size, [&](uint8_t* bytes, uint64_t done, uint64_t chunk) { std::memcpy(bytes, in + done, chunk); });
}

void DeviceMemory::copy_to_device(uint64_t address, const void* source, uint64_t size) {
  before_change();
  if (!write(address, source, size)) throw IllegalHostAccess("host write of " + std::to_string(size) + " bytes at unmapped device address " + hex(address));
}

void DeviceMemory::copy_from_device(void* destination, uint64_t address, uint64_t size) const {
  if (!is_mapped(address, size)) throw IllegalHostAccess("host read of " + std::to_string(size) + " bytes at unmapped device address " + hex(address));
  auto* out = static_cast<uint8_t*>(destination);
  for_each_chunk(address, size, [&](uint8_t* bytes, uint64_t done, uint64_t chunk) { std::memcpy(out + done, bytes, chunk); });
}

void DeviceMemory::fill(uint64_t address, uint8_t value, uint64_t size) {
  before_change();
  if (!is_mapped(address, size)) throw IllegalHostAccess("host fill of " + std::to_string(size) + " bytes at unmapped device address " + hex(address));
  for_each_chunk(address, size, [&](uint8_t* bytes, uint64_t, uint64_t chunk) { std::memset(bytes, value, chunk); });
}

}  // namespace gpuvp::ptx
