#include "models/uvm/gmmu/fault_service.h"

#include <algorithm>
#include <stdexcept>

namespace gpuvp::uvm {

FaultService::FaultService(const FaultServiceParams& params, PageTable& table, MigrationPort& port,
                           stats::Group& g)
    : params_(params),
      table_(table),
      port_(port),
      mshrs_(params.mshr_entries),
      prefetcher_(make_prefetcher(params.prefetcher, params.seed)),
      eviction_(make_eviction_policy(params.eviction, params.seed ^ 0x9e3779b97f4a7c15ULL)),
      far_faults_(g.counter("far_faults", "fault", "translations of non-resident pages given an MSHR")),
      coalesced_faults_(g.counter("coalesced_faults", "fault", "faults merged into an outstanding MSHR")),
      mshr_full_(g.counter("mshr_full", "fault", "faults refused because every far-fault MSHR was taken")),
      batches_(g.counter("batches", "batch", "fault batches serviced")),
      faults_per_batch_(g.histogram("faults_per_batch", "fault", "far faults serviced per batch", stats::Buckets::log2(16))),
      mshr_occupancy_(g.histogram("mshr_occupancy", "entry", "MSHR entries in use when a fault arrives",
                                  stats::Buckets::log2(21))),
      migrations_(g.counter("migrations", "transfer", "host->device PCIe transfers")),
      migrated_bytes_(g.counter("migrated_bytes", "B", "bytes migrated host->device (faults, prefetches, explicit)")),
      prefetched_pages_(g.counter("prefetched_pages", "page", "pages a hardware prefetcher migrated")),
      useful_prefetches_(g.counter("useful_prefetches", "page", "prefetched pages later accessed")),
      evicted_pages_(g.counter("evicted_pages", "page", "pages evicted from device memory")),
      evicted_bytes_(g.counter("evicted_bytes", "B", "bytes evicted from device memory")),
      writeback_bytes_(g.counter("writeback_bytes", "B", "dirty bytes written back device->host")),
      explicit_prefetch_bytes_(g.counter("explicit_prefetch_bytes", "B", "bytes migrated by cudaMemPrefetchAsync")) {
  auto& needed = g.counter("needed_pages", "page", "far faults plus useful prefetches (pages a prefetcher could cover)");
  needed_pages_ = &needed;
  inflight_faults_ = &g.counter("inflight_faults", "fault", "translations that waited for a page already migrating");
  host_accesses_ = &g.counter("host_accesses", "access", "host accesses to managed ranges (the runtime's host faults, copies)");
  host_migrated_pages_ =
      &g.counter("host_migrated_pages", "page", "device-resident pages that went back to the host on a host access");
  advice_calls_ = &g.counter("advice_calls", "call", "cudaMemAdvise calls (MemAdvise commands) applied");
  read_duplicated_pages_ =
      &g.counter("read_duplicated_pages", "page", "read-mostly pages given a device copy while the host kept its own");
  duplicate_host_reads_ =
      &g.counter("duplicate_host_reads", "page", "host reads of read-duplicated pages (nothing migrated)");
  duplicate_collapses_ =
      &g.counter("duplicate_collapses", "page", "read duplicates collapsed by a write (host or device) or by Unset");
  remote_mappings_ =
      &g.counter("remote_mappings", "page", "host-resident pages mapped for remote device access (advice)");
  remote_accesses_ = &g.counter("remote_accesses", "request", "device requests served from host memory over PCIe");
  remote_bytes_ = &g.counter("remote_bytes", "B", "bytes of remote device accesses over PCIe");
  preferred_evictions_ = &g.counter(
      "preferred_evictions", "page", "pages preferring the device evicted because no other page could go");
  g.ratio("prefetch_accuracy", "useful prefetches per prefetched page", useful_prefetches_, prefetched_pages_);
  g.ratio("prefetch_coverage", "share of needed pages a prefetch brought", useful_prefetches_, needed);
}

FaultService::Admit FaultService::fault(uint64_t page, uint64_t requester) {
  const PageInfo& info = table_.info(page);  // throws for an unmanaged page
  const PageState s = info.state;
  if ((s == PageState::Device || info.remote()) && !mshrs_.contains(page)) return Admit::Resident;
  mshr_occupancy_.sample(mshrs_.occupancy());
  switch (mshrs_.record(page, requester)) {
    case FarFaultMshrs::Outcome::Allocated:
      if (s == PageState::Migrating) {
        ++*inflight_faults_;  // already on its way (a prefetch): waits, migrates nothing more
      } else {
        ++far_faults_;
        ++*needed_pages_;
      }
      return Admit::Allocated;
    case FarFaultMshrs::Outcome::Coalesced:
      ++coalesced_faults_;
      return Admit::Coalesced;
    case FarFaultMshrs::Outcome::Full:
      ++mshr_full_;
      return Admit::Full;
  }
  return Admit::Full;
}

uint64_t FaultService::free_frames() const {
  uint64_t used = table_.device_pages() + table_.migrating_pages();
  return params_.device_pages > used ? params_.device_pages - used : 0;
}

bool FaultService::make_room(uint64_t pages, uint64_t now_ps, uint64_t& writeback_done_ps) {
  writeback_done_ps = now_ps;
  uint64_t free = free_frames();
  if (free >= pages) return true;
  std::vector<uint64_t> victims = eviction_->victims(table_, pages - free, any_preferred_device_);
  if (any_preferred_device_ && victims.size() < pages - free) {
    // Pages preferring the device resist eviction only while something else can go.
    victims = eviction_->victims(table_, pages - free, false);
    for (uint64_t v : victims)
      if (table_.info(v).preferred == Preferred::Device) ++*preferred_evictions_;
  }
  // Runs of consecutive victims: one invalidation, and one write-back per run of dirty pages.
  for (std::size_t i = 0; i < victims.size();) {
    std::size_t j = i + 1;
    while (j < victims.size() && victims[j] == victims[j - 1] + 1) ++j;
    PageRange run{victims[i], j - i};
    port_.invalidated(run);
    for (uint64_t k = i; k < j;) {
      if (!table_.info(victims[k]).dirty) {
        ++k;
        continue;
      }
      uint64_t d = k;
      while (d < j && table_.info(victims[d]).dirty) ++d;
      PageRange dirty{victims[k], d - k};
      writeback_done_ps = std::max(writeback_done_ps, port_.write_back(dirty, now_ps));
      writeback_bytes_ += dirty.bytes();
      k = d;
    }
    for (std::size_t k = i; k < j; ++k) table_.set_host(victims[k]);
    evicted_pages_ += run.count;
    evicted_bytes_ += run.bytes();
    i = j;
  }
  return free_frames() >= 1;
}

void FaultService::schedule(PageRange range, uint64_t arrival_ps) {
  landings_.emplace(arrival_ps, Landing{range, false});
  ++migrations_;
  migrated_bytes_ += range.bytes();
}

uint32_t FaultService::service_batch(uint64_t now_ps) {
  std::vector<uint64_t> batch = mshrs_.take_batch(params_.batch_size);
  if (batch.empty()) return 0;
  const uint64_t start_ps = now_ps + params_.fault_latency_ps;
  uint32_t serviced = 0;
  for (uint64_t page : batch) {
    if (table_.state(page) != PageState::Host) {  // landed or on its way (an earlier prefetch)
      ++serviced;
      continue;
    }
    const PageInfo& info = table_.info(page);
    if (info.preferred == Preferred::Host) {
      // Preferred location host: the driver maps the page for remote access, nothing migrates.
      if (!info.remote()) landings_.emplace(start_ps, Landing{{page, 1}, true});
      ++serviced;
      continue;
    }
    MigrationPlan plan = prefetcher_->plan(table_, page);
    if (any_advice_) keep_migratable(plan, page);
    uint64_t writeback_done = start_ps;
    if (!make_room(plan.pages(), start_ps, writeback_done)) {
      mshrs_.requeue(page);  // every frame is in flight: wait for landings
      continue;
    }
    // Keep as much of the plan as fits, faulting page first.
    uint64_t room = free_frames();
    uint64_t issue_ps = std::max(start_ps, writeback_done);
    for (PageRange t : plan.transfers) {
      if (room == 0) break;
      t.count = std::min(t.count, room);
      room -= t.count;
      bool prefetch = t.first != page;
      for (uint64_t p = t.first; p < t.end(); ++p) {
        table_.set_migrating(p, prefetch);
        table_.stamp(p, ++clock_);  // arriving pages are recent: not the next victims
      }
      if (prefetch) prefetched_pages_ += t.count;
      uint64_t arrival = port_.migrate_in(t, issue_ps);
      schedule(t, arrival);
    }
    ++serviced;
  }
  if (serviced > 0) {
    ++batches_;
    faults_per_batch_.sample(serviced);
  }
  return serviced;
}

std::vector<FaultService::Replay> FaultService::advance(uint64_t now_ps) {
  std::vector<Replay> out;
  while (!landings_.empty() && landings_.begin()->first <= now_ps) {
    const Landing landing = landings_.begin()->second;
    const PageRange r = landing.range;
    landings_.erase(landings_.begin());
    for (uint64_t p = r.first; p < r.end(); ++p) {
      if (!table_.managed(p)) continue;  // freed meanwhile
      PageInfo& info = table_.advice_info(p);
      if (landing.map_remote) {
        if (info.state != PageState::Host || info.preferred != Preferred::Host || info.remote()) continue;
        info.remote_mapped = true;
        ++*remote_mappings_;
      } else {
        if (info.state != PageState::Migrating) continue;  // freed meanwhile
        table_.set_resident(p);
        if (info.read_mostly) {  // the host keeps its copy: a read duplicate
          info.duplicated = true;
          ++*read_duplicated_pages_;
        }
      }
      if (mshrs_.contains(p)) out.push_back({p, mshrs_.complete(p)});
    }
  }
  // Faults on pages that were already mapped when their batch ran (or became so).
  for (uint64_t p : mshrs_.pages()) {
    const PageInfo& info = table_.info(p);
    if (info.state == PageState::Device || info.remote()) out.push_back({p, mshrs_.complete(p)});
  }
  return out;
}

uint64_t FaultService::next_landing_ps() const {
  return landings_.empty() ? ~uint64_t{0} : landings_.begin()->first;
}

uint64_t FaultService::prefetch_to_device(PageRange range, uint64_t now_ps) {
  uint64_t done = now_ps;
  uint64_t p = range.first;
  while (p < range.end()) {
    if (!table_.managed(p) || table_.state(p) != PageState::Host) {
      ++p;
      continue;
    }
    PageRange run{p, 0};
    while (run.end() < range.end() && run.count < kPagesPerLargePage && table_.managed(run.end()) &&
           table_.state(run.end()) == PageState::Host)
      ++run.count;
    uint64_t writeback_done = now_ps;
    if (!make_room(run.count, now_ps, writeback_done)) break;  // all frames in flight
    run.count = std::min(run.count, free_frames());
    for (uint64_t q = run.first; q < run.end(); ++q) {
      table_.set_migrating(q, false);
      table_.stamp(q, ++clock_);
    }
    uint64_t arrival = port_.migrate_in(run, std::max(now_ps, writeback_done));
    schedule(run, arrival);
    explicit_prefetch_bytes_ += run.bytes();
    done = std::max(done, arrival);
    p = run.end();
  }
  return done;
}

uint64_t FaultService::evict_to_host(PageRange range, uint64_t now_ps) { return to_host(range, now_ps, false, false); }

uint64_t FaultService::host_access(PageRange range, bool write, uint64_t now_ps) {
  ++*host_accesses_;
  return to_host(range, now_ps, true, write);
}

uint64_t FaultService::to_host(PageRange range, uint64_t now_ps, bool host_touch, bool write) {
  uint64_t done = now_ps;
  for (uint64_t p = range.first; p < range.end();) {
    const PageInfo* info = table_.find(p);
    if (info == nullptr || info->state == PageState::Host) {
      ++p;
      continue;
    }
    if (info->state == PageState::Migrating)
      throw std::logic_error("uvm: host access to a page still migrating to the device");
    if (info->read_mostly && !write) {
      // Read duplication: the page stays on the device, the host gets (or has) a valid copy.
      if (info->duplicated) {
        if (host_touch) ++*duplicate_host_reads_;
      } else {
        PageInfo& rw = table_.advice_info(p);
        if (rw.dirty) {
          done = std::max(done, port_.write_back({p, 1}, now_ps));
          writeback_bytes_ += kPageBytes;
          rw.dirty = false;
        }
        rw.duplicated = true;
        ++*read_duplicated_pages_;
      }
      ++p;
      continue;
    }
    PageRange run{p, 0};
    while (run.end() < range.end()) {
      const PageInfo* next = table_.find(run.end());
      if (next == nullptr || next->state != PageState::Device || (next->read_mostly && !write)) break;
      ++run.count;
    }
    if (host_touch) *host_migrated_pages_ += run.count;
    if (write && any_advice_) {  // a host write collapses read duplicates (clean: nothing to write back)
      for (uint64_t k = run.first; k < run.end(); ++k)
        if (table_.info(k).duplicated) ++*duplicate_collapses_;
    }
    port_.invalidated(run);
    for (uint64_t k = run.first; k < run.end();) {
      if (!table_.info(k).dirty) {
        ++k;
        continue;
      }
      uint64_t d = k;
      while (d < run.end() && table_.info(d).dirty) ++d;
      PageRange dirty{k, d - k};
      done = std::max(done, port_.write_back(dirty, now_ps));
      writeback_bytes_ += dirty.bytes();
      k = d;
    }
    for (uint64_t k = run.first; k < run.end(); ++k) table_.set_host(k);
    p = run.end();
  }
  return done;
}

void FaultService::touch(uint64_t page, uint64_t now, bool write) {
  clock_ = std::max(clock_ + 1, now);
  if (table_.touch(page, clock_, write)) {
    ++useful_prefetches_;
    ++*needed_pages_;
  }
  if (write && any_advice_) {
    PageInfo& info = table_.advice_info(page);
    if (info.duplicated) {  // a device write collapses the duplicates: the device's copy wins
      info.duplicated = false;
      ++*duplicate_collapses_;
    }
  }
}

void FaultService::remote_access(uint64_t bytes, bool) {
  ++*remote_accesses_;
  *remote_bytes_ += bytes;
}

void FaultService::keep_migratable(MigrationPlan& plan, uint64_t faulting_page) const {
  std::vector<PageRange> kept;
  for (const PageRange& t : plan.transfers) {
    PageRange run{t.first, 0};
    for (uint64_t p = t.first; p <= t.end(); ++p) {
      bool keep = false;
      if (p < t.end()) {
        const PageInfo& info = table_.info(p);
        keep = p == faulting_page || (info.preferred != Preferred::Host && !info.remote());
      }
      if (keep) {
        if (run.count == 0) run.first = p;
        ++run.count;
      } else if (run.count > 0) {
        kept.push_back(run);
        run = PageRange{p + 1, 0};
      }
    }
  }
  plan.transfers = std::move(kept);
}

void FaultService::advise(PageRange range, uint32_t advice, uint32_t location) {
  if (advice < 1 || advice > 6)
    throw std::invalid_argument("uvm: unknown advice " + std::to_string(advice) + " (1..6, cudaMemoryAdvise)");
  if (location > 1)
    throw std::invalid_argument("uvm: unknown advice location " + std::to_string(location) + " (0 device, 1 host)");
  const bool host = location == 1;
  any_advice_ = true;
  ++*advice_calls_;
  std::vector<PageRange> unmapped;  // device mappings the advice removed: shootdown
  auto unmap = [&](uint64_t p) {
    if (!unmapped.empty() && unmapped.back().end() == p) {
      ++unmapped.back().count;
    } else {
      unmapped.push_back({p, 1});
    }
  };
  for (uint64_t p = range.first; p < range.end(); ++p) {
    if (!table_.managed(p)) continue;
    PageInfo& info = table_.advice_info(p);
    const bool was_remote = info.remote();
    switch (advice) {
      case 1:  // SetReadMostly
        info.read_mostly = true;
        break;
      case 2:  // UnsetReadMostly: duplicates collapse to the device
        info.read_mostly = false;
        if (info.duplicated) {
          info.duplicated = false;
          ++*duplicate_collapses_;
        }
        break;
      case 3:  // SetPreferredLocation
        info.preferred = host ? Preferred::Host : Preferred::Device;
        if (!host) {
          info.remote_mapped = false;
          any_preferred_device_ = true;
        }
        break;
      case 4:  // UnsetPreferredLocation
        info.preferred = Preferred::None;
        info.remote_mapped = false;
        break;
      case 5:  // SetAccessedBy: the device maps the page now, wherever it is
        if (!host) info.accessed_by = true;
        break;
      case 6:  // UnsetAccessedBy
        if (!host) info.accessed_by = false;
        break;
    }
    if (!was_remote && info.remote()) ++*remote_mappings_;
    if (was_remote && !info.remote()) unmap(p);
  }
  for (const PageRange& r : unmapped) port_.invalidated(r);
}

}  // namespace gpuvp::uvm
