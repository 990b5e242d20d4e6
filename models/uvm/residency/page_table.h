// The GMMU's view of managed (cudaMallocManaged) memory: which 4 KB pages of each allocation
// live on the device, which are on their way there, and how each resident page has been used
// (for the eviction policies and the prefetch accuracy statistics).
//
// Geometry (seed 003 §B.3): pages are 4 KB; prefetchers and eviction policies reason about
// 64 KB basic blocks and 2 MB large pages. Blocks and large pages are counted from each
// allocation's base (UVMSmart builds its prefetch trees per allocation), so an allocation's
// base must be page aligned but need not be 2 MB aligned.
//
// Pure C++ (no SystemC): the GMMU module and the unit tests drive it directly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuvp::uvm {

inline constexpr uint64_t kPageBytes = 4096;
inline constexpr uint64_t kBasicBlockBytes = 64 * 1024;
inline constexpr uint64_t kLargePageBytes = 2 * 1024 * 1024;
inline constexpr uint64_t kPagesPerBlock = kBasicBlockBytes / kPageBytes;       // 16
inline constexpr uint64_t kPagesPerLargePage = kLargePageBytes / kPageBytes;    // 512

// A run of consecutive pages, by page number (virtual address / 4 KB).
struct PageRange {
  uint64_t first = 0;
  uint64_t count = 0;
  uint64_t end() const { return first + count; }
  uint64_t bytes() const { return count * kPageBytes; }
  bool operator==(const PageRange& o) const { return first == o.first && count == o.count; }
};

enum class PageState : uint8_t {
  Host,       // only the host copy is valid
  Migrating,  // a host->device transfer is scheduled; valid on the device once it lands
  Device,     // resident in device memory (the device copy is the valid one)
};

// cudaMemAdvise's preferred location of a page.
enum class Preferred : uint8_t { None, Device, Host };

struct PageInfo {
  PageState state = PageState::Host;
  bool dirty = false;               // written on the device since it arrived
  bool prefetched_unused = false;   // brought in by a prefetcher and not touched since
  // Advice (cudaMemAdvise) and what it led to.
  bool read_mostly = false;         // SetReadMostly: reads duplicate the page instead of moving it
  bool duplicated = false;          // state Device and the host's copy is valid too (read duplicate)
  bool accessed_by = false;         // SetAccessedBy(device): the device keeps a mapping wherever it lives
  bool remote_mapped = false;       // a fault on a preferred-host page mapped it for remote access
  Preferred preferred = Preferred::None;
  uint64_t last_use = 0;            // logical time of the last access (LRU)
  uint64_t uses = 0;                // accesses since it arrived (LFU)
  // On the host and mapped in the device's page table: device accesses go over PCIe (zero copy).
  bool remote() const { return state == PageState::Host && (accessed_by || remote_mapped); }
};

struct Allocation {
  uint64_t base = 0;   // byte address, page aligned
  uint64_t bytes = 0;  // as requested
  uint64_t first_page() const { return base / kPageBytes; }
  uint64_t pages() const { return (bytes + kPageBytes - 1) / kPageBytes; }
  uint64_t end_page() const { return first_page() + pages(); }
};

class PageTable {
 public:
  // Registers a managed allocation; every page starts host resident. Throws
  // std::invalid_argument for a zero size, an unaligned base or an overlap.
  void add_allocation(uint64_t base, uint64_t bytes);
  // Forgets an allocation (cudaFree). Throws std::invalid_argument when `base` is not one.
  void remove_allocation(uint64_t base);

  // The allocation holding `page`, or nullptr when the page is not managed.
  const Allocation* allocation_of_page(uint64_t page) const;
  bool managed(uint64_t page) const { return allocation_of_page(page) != nullptr; }
  // Every allocation, by base address.
  std::vector<Allocation> allocations() const;

  // Per-page state. Throws std::out_of_range for a page outside every allocation.
  const PageInfo& info(uint64_t page) const;
  // The page's state for the model's own updates (advice, duplicates, remote mappings). Throws
  // std::out_of_range like info(); state changes go through set_migrating/set_resident/set_host.
  PageInfo& advice_info(uint64_t page) { return mutable_info(page); }
  // The page's info, or nullptr when the page is not managed (one lookup).
  const PageInfo* find(uint64_t page) const;
  PageState state(uint64_t page) const { return info(page).state; }
  bool resident(uint64_t page) const { return state(page) == PageState::Device; }

  void set_migrating(uint64_t page, bool prefetched);
  void set_resident(uint64_t page);  // a migration landed
  void set_host(uint64_t page);      // evicted (or never moved)
  // A device access to a resident page at logical time `now`.
  // Returns true when this is the first use of a prefetched page (a useful prefetch).
  bool touch(uint64_t page, uint64_t now, bool write);
  // Sets the page's last use without counting an access (a page arriving counts as recent).
  void stamp(uint64_t page, uint64_t now) { mutable_info(page).last_use = now; }

  uint64_t device_pages() const { return device_pages_; }        // state Device
  uint64_t migrating_pages() const { return migrating_pages_; }  // state Migrating
  // Resident pages, ascending; with `spare_preferred`, without those whose preferred location is
  // the device (eviction takes them only when nothing else is left).
  std::vector<uint64_t> resident_pages(bool spare_preferred = false) const;

 private:
  struct Region {
    Allocation alloc;
    std::vector<PageInfo> pages;
  };
  PageInfo& mutable_info(uint64_t page);
  void change_state(PageInfo& p, PageState to);

  std::map<uint64_t, Region> regions_;  // by first page
  uint64_t device_pages_ = 0;
  uint64_t migrating_pages_ = 0;
};

}  // namespace gpuvp::uvm
