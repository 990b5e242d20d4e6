#include "models/uvm/residency/page_table.h"

#include <stdexcept>
#include <string>

namespace gpuvp::uvm {
namespace {
std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

void PageTable::add_allocation(uint64_t base, uint64_t bytes) {
  if (bytes == 0) throw std::invalid_argument("uvm page table: managed allocation at " + hex(base) + " has size 0");
  if (base % kPageBytes != 0)
    throw std::invalid_argument("uvm page table: managed allocation base " + hex(base) + " is not 4 KB aligned");
  Allocation a{base, bytes};
  auto next = regions_.lower_bound(a.first_page());
  if (next != regions_.end() && next->first < a.end_page())
    throw std::invalid_argument("uvm page table: managed allocation at " + hex(base) + " overlaps the one at " +
                                hex(next->second.alloc.base));
  if (next != regions_.begin()) {
    auto prev = std::prev(next);
    if (prev->second.alloc.end_page() > a.first_page())
      throw std::invalid_argument("uvm page table: managed allocation at " + hex(base) + " overlaps the one at " +
                                  hex(prev->second.alloc.base));
  }
  regions_.emplace(a.first_page(), Region{a, std::vector<PageInfo>(a.pages())});
}

void PageTable::remove_allocation(uint64_t base) {
  auto it = regions_.find(base / kPageBytes);
  if (base % kPageBytes != 0 || it == regions_.end())
    throw std::invalid_argument("uvm page table: no managed allocation at " + hex(base));
  for (auto& p : it->second.pages) change_state(p, PageState::Host);
  regions_.erase(it);
}

const Allocation* PageTable::allocation_of_page(uint64_t page) const {
  auto it = regions_.upper_bound(page);
  if (it == regions_.begin()) return nullptr;
  --it;
  return page < it->second.alloc.end_page() ? &it->second.alloc : nullptr;
}

std::vector<Allocation> PageTable::allocations() const {
  std::vector<Allocation> out;
  for (const auto& [first, r] : regions_) out.push_back(r.alloc);
  return out;
}

PageInfo& PageTable::mutable_info(uint64_t page) {
  auto it = regions_.upper_bound(page);
  if (it != regions_.begin()) {
    --it;
    if (page < it->second.alloc.end_page()) return it->second.pages[page - it->first];
  }
  throw std::out_of_range("uvm page table: page " + hex(page * kPageBytes) + " is not in a managed allocation");
}

const PageInfo& PageTable::info(uint64_t page) const { return const_cast<PageTable*>(this)->mutable_info(page); }

const PageInfo* PageTable::find(uint64_t page) const {
  auto it = regions_.upper_bound(page);
  if (it == regions_.begin()) return nullptr;
  --it;
  return page < it->second.alloc.end_page() ? &it->second.pages[page - it->first] : nullptr;
}

void PageTable::change_state(PageInfo& p, PageState to) {
  if (p.state == PageState::Device) --device_pages_;
  if (p.state == PageState::Migrating) --migrating_pages_;
  p.state = to;
  if (to == PageState::Device) ++device_pages_;
  if (to == PageState::Migrating) ++migrating_pages_;
}

void PageTable::set_migrating(uint64_t page, bool prefetched) {
  PageInfo& p = mutable_info(page);
  if (p.state != PageState::Host)
    throw std::logic_error("uvm page table: page " + hex(page * kPageBytes) + " migrated twice");
  change_state(p, PageState::Migrating);
  p.prefetched_unused = prefetched;
  p.remote_mapped = false;
  p.duplicated = false;
  p.dirty = false;
  p.uses = 0;
}

void PageTable::set_resident(uint64_t page) {
  PageInfo& p = mutable_info(page);
  if (p.state != PageState::Migrating)
    throw std::logic_error("uvm page table: page " + hex(page * kPageBytes) + " landed without a migration");
  change_state(p, PageState::Device);
}

void PageTable::set_host(uint64_t page) {
  PageInfo& p = mutable_info(page);
  change_state(p, PageState::Host);
  p.dirty = false;
  p.prefetched_unused = false;
  p.duplicated = false;
  p.uses = 0;
}

bool PageTable::touch(uint64_t page, uint64_t now, bool write) {
  PageInfo& p = mutable_info(page);
  p.last_use = now;
  ++p.uses;
  if (write) p.dirty = true;
  bool useful = p.prefetched_unused;
  p.prefetched_unused = false;
  return useful;
}

std::vector<uint64_t> PageTable::resident_pages(bool spare_preferred) const {
  std::vector<uint64_t> out;
  out.reserve(device_pages_);
  for (const auto& [first, r] : regions_)
    for (uint64_t i = 0; i < r.pages.size(); ++i)
      if (r.pages[i].state == PageState::Device && !(spare_preferred && r.pages[i].preferred == Preferred::Device))
        out.push_back(first + i);
  return out;
}

}  // namespace gpuvp::uvm
