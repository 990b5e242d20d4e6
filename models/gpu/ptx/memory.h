// Functional device memory for the PTX executor.
//
// The executor reaches global memory (and the .const/.global module variables placed in it)
// only through MemoryInterface, so the timing model and UVM can interpose later. Shared,
// local and param memory are per-CTA / per-thread / per-launch buffers owned by the executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpuvp::ptx {

// Byte-addressed device memory as the executor sees it. Accesses are functional and
// untimed; a false return means some byte of the range is not mapped (illegal address).
class MemoryInterface {
 public:
  virtual ~MemoryInterface() = default;
  virtual bool read(uint64_t address, void* destination, uint64_t size) = 0;
  virtual bool write(uint64_t address, const void* source, uint64_t size) = 0;
  // Host bytes of the mapped page-sized window [address & ~(kDirectPageBytes - 1), + kDirectPageBytes)
  // holding `address`, for the executor's per-lane fast paths (an aligned access of at most 8
  // bytes never crosses it); nullptr: use read()/write() (unmapped, or not offered).
  static constexpr uint64_t kDirectPageBytes = 4096;
  virtual uint8_t* direct_page(uint64_t address) { (void)address; return nullptr; }
};

// Thrown by the host-side helpers of DeviceMemory for unmapped addresses.
class IllegalHostAccess : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Sparse, paged device memory: pages exist only where a range was mapped, so a 64-bit
// device address space costs memory proportional to what is allocated. Mapped pages start
// zeroed. Accesses outside mapped pages fail (page granularity, like real GPUs).
class DeviceMemory final : public MemoryInterface {
 public:
  static constexpr uint64_t kPageBytes = 4096;
  // First address handed out by allocate(); far from 0 so null-pointer bugs fault.
  static constexpr uint64_t kHeapBase = 0x0000'0007'0000'0000ULL;

  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // Bump allocator over fresh pages (like cudaMalloc). Returns the device address.
  uint64_t allocate(uint64_t size, uint64_t alignment = 256);
  // Address space for `size` bytes, page aligned, with no pages behind it (for map_foreign).
  uint64_t reserve(uint64_t size);
  // Unmaps an allocation made by allocate(); later accesses to it fault.
  void release(uint64_t address);
  // Maps [address, address+size) at page granularity (zero-filled where new).
  void map(uint64_t address, uint64_t size);
  bool is_mapped(uint64_t address, uint64_t size) const;
  // Maps the pages of [address, address + size) (address page aligned) onto memory this object
  // does not own (`bytes`, e.g. host memory shared with the program: zero-copy), so every access
  // reads and writes it live. Throws std::invalid_argument if a page is mapped already.
  void map_foreign(uint64_t address, uint64_t size, uint8_t* bytes);
  void unmap_foreign(uint64_t address, uint64_t size);

  bool read(uint64_t address, void* destination, uint64_t size) override;
  bool write(uint64_t address, const void* source, uint64_t size) override;
  uint8_t* direct_page(uint64_t address) override { return find_page(address / kPageBytes); }
  static_assert(kPageBytes == kDirectPageBytes, "direct_page windows are this memory's pages");

  // Called first by every host-side change below (allocation, mapping, copies, fills; not by
  // write(), the executor's path): the timing model finishes a window that SMs on other host
  // threads may be running against this memory.
  void set_before_change(std::function<void()> hook) { before_change_ = std::move(hook); }

  // Host-side copies (cudaMemcpy); throw IllegalHostAccess naming the address.
  void copy_to_device(uint64_t address, const void* source, uint64_t size);
  void copy_from_device(void* destination, uint64_t address, uint64_t size) const;
  void fill(uint64_t address, uint8_t value, uint64_t size);

  template <typename T>
  T load(uint64_t address) const {
    T value;
    copy_from_device(&value, address, sizeof(T));
    return value;
  }
  template <typename T>
  void store(uint64_t address, const T& value) {
    copy_to_device(address, &value, sizeof(T));
  }

 private:
  using Page = std::unique_ptr<uint8_t[]>;
  uint8_t* find_page(uint64_t page_number) const;
  void before_change() {
    if (before_change_) before_change_();
  }
  // Calls visit(page_bytes_or_null, offset_in_range, chunk) for each page touched.
  template <typename Visit>
  bool for_each_chunk(uint64_t address, uint64_t size, Visit&& visit) const;

  std::unordered_map<uint64_t, Page> pages_;  // page number -> bytes (never iterated)
  std::unordered_map<uint64_t, uint8_t*> foreign_pages_;  // page number -> bytes owned elsewhere
  std::map<uint64_t, uint64_t> allocations_;  // base -> size, for release()
  uint64_t next_free_ = kHeapBase;
  std::function<void()> before_change_;
  // Most accesses hit the page of the previous one: each host thread keeps a one-entry cache
  // (memory.cpp) tagged with this epoch, so concurrent reads (a parallel SM phase) do not race.
  static uint64_t next_cache_epoch();
  uint64_t cache_epoch_ = next_cache_epoch();
};

}  // namespace gpuvp::ptx
