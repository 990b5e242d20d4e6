// The GMMU's far-fault engine (seed 003 §B.2 steps 3-6, §B.3, eviction), independent of SystemC:
// faults enter bounded far-fault MSHRs (coalescing per page, refusing when full); a batch of up
// to `fault_batch` queued faults is serviced together: after the fault-handling latency the
// prefetcher's plan for each fault is migrated over PCIe (through a MigrationPort, which moves
// the data and says when it lands), evicting resident pages first when device memory is full
// (dirty ones are written back). advance(now) lands every transfer due by `now` and returns
// the MSHR waiters to replay.
//
// The TLM GMMU module wraps it; the unit tests drive it with a port that models the PCIe lanes.
//
// Statistics (group given at construction): far_faults (faults that migrate), inflight_faults
// (faults waiting for a page already migrating), coalesced_faults, mshr_full,
// batches, faults_per_batch, mshr_occupancy, migrations, migrated_bytes, prefetched_pages,
// useful_prefetches, prefetch_accuracy, prefetch_coverage, evicted_pages, evicted_bytes,
// writeback_bytes, explicit_prefetch_bytes; host accesses (host_accesses, host_migrated_pages);
// cudaMemAdvise (advice_calls, read_duplicated_pages, duplicate_host_reads, duplicate_collapses,
// remote_mappings, remote_accesses, remote_bytes, preferred_evictions).
//
// Advice (advise(), the numbering of cudaMemoryAdvise) acts as NVIDIA's driver does on a PCIe
// system, where the device can map host memory but the host cannot map device memory:
//   read-mostly            a device fault copies the page in and the host keeps its copy
//                          (duplicated); a host read of a duplicate moves nothing; a host read of
//                          a non-duplicated read-mostly page writes it back if dirty and makes it
//                          a duplicate; a write by either side collapses the duplicates (a host
//                          write: the page is the host's again; a device write: the device's).
//   preferred location     device: eviction spares the page while other pages can go. host: a
//                          device fault maps the page for remote access (after the fault
//                          latency, no migration, no prefetch); device accesses then cross PCIe.
//   accessed by (device)   the device maps the range now, wherever it lives: host-resident pages
//                          are accessed remotely, without a fault or a migration.
//   (accessed by the host is accepted and recorded: the host cannot map device memory over PCIe)
// Unset* clears the advice; mappings it made go (TLB shootdown), duplicates collapse to the device.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "models/uvm/eviction/eviction_policy.h"
#include "models/uvm/gmmu/far_fault_mshrs.h"
#include "models/uvm/prefetch/prefetcher.h"
#include "models/uvm/residency/page_table.h"
#include "platform/stats/registry.h"

namespace gpuvp::uvm {

// Moves pages between host and device memory and times it (PCIe). Times are absolute ps.
class MigrationPort {
 public:
  virtual ~MigrationPort() = default;
  // Copies `range` host->device, starting no earlier than `ready_ps`; returns when it has landed.
  virtual uint64_t migrate_in(PageRange range, uint64_t ready_ps) = 0;
  // Copies `range` device->host (dirty pages leaving); returns when the host has it.
  virtual uint64_t write_back(PageRange range, uint64_t ready_ps) = 0;
  // `range` is no longer valid on the device (TLB shootdown); called for every eviction.
  virtual void invalidated(PageRange /*range*/) {}
};

struct FaultServiceParams {
  uint64_t fault_latency_ps = 45'000'000;  // seed 003 Listing 1: 45 us
  uint32_t mshr_entries = 256;
  uint32_t batch_size = 256;
  uint64_t device_pages = ~uint64_t{0};    // frames for managed pages
  PrefetcherKind prefetcher = PrefetcherKind::Tbn;
  EvictionKind eviction = EvictionKind::Lru4K;
  uint64_t seed = 1;
};

class FaultService {
 public:
  enum class Admit {
    Resident,   // the page is on the device: translate now
    Allocated,  // new far fault, queued for the next batch
    Coalesced,  // joined an outstanding fault on the same page
    Full,       // MSHRs full: retry later (back-pressure)
  };
  struct Replay {
    uint64_t page;
    std::vector<uint64_t> requesters;  // as given to fault(), arrival order
  };

  FaultService(const FaultServiceParams& params, PageTable& table, MigrationPort& port, stats::Group& stats);
  FaultService(const FaultService&) = delete;
  FaultService& operator=(const FaultService&) = delete;

  // A translation of managed `page` for `requester` (an opaque id). Throws std::out_of_range
  // for an unmanaged page.
  Admit fault(uint64_t page, uint64_t requester);
  // True when queued faults wait for a batch.
  bool batch_pending() const { return mshrs_.queued() > 0; }
  // Services up to batch_size queued faults starting at `now_ps`; returns the number serviced.
  // Faults that cannot get a frame (every frame is in flight) stay queued.
  uint32_t service_batch(uint64_t now_ps);
  // Lands every transfer due at or before `now_ps`; returns the faults that can replay.
  std::vector<Replay> advance(uint64_t now_ps);
  // Earliest pending landing, or ~0 when nothing is in flight.
  uint64_t next_landing_ps() const;

  // cudaMemPrefetchAsync to the device: migrates the host pages of [first, first+count) in
  // runs of up to 2 MB starting at `now_ps`, evicting as needed; returns when the last lands.
  uint64_t prefetch_to_device(PageRange range, uint64_t now_ps);
  // Brings [first, first+count) back to the host (prefetch to cpu): dirty resident pages are
  // written back, all become host resident (read-mostly pages become duplicates instead).
  // Returns when the last write-back is done. In-flight pages must have landed (call advance
  // first); throws std::logic_error otherwise.
  uint64_t evict_to_host(PageRange range, uint64_t now_ps);
  // The host reads (or writes) [first, first+count) (the runtime's host-fault handler): resident
  // pages leave the device as by evict_to_host, except read-mostly ones, which a read
  // duplicates and a write collapses to the host. Same preconditions and result.
  uint64_t host_access(PageRange range, bool write, uint64_t now_ps);

  // cudaMemAdvise over [first, first+count); `advice` and `location` as in gpuvp/device.h
  // (MemAdvice, AdviceLocation: 0 device, 1 host). Throws std::invalid_argument for others.
  void advise(PageRange range, uint32_t advice, uint32_t location);
  // A device access of `bytes` to a page mapped remotely (PageInfo::remote()): counted.
  void remote_access(uint64_t bytes, bool write);

  // A device access to a resident page (LRU/LFU bookkeeping, dirty bit, prefetch accuracy).
  // `now` is a logical time; uses and arrivals are ordered by max(previous + 1, now).
  void touch(uint64_t page, uint64_t now, bool write);

  const FarFaultMshrs& mshrs() const { return mshrs_; }
  const PageTable& table() const { return table_; }

 private:
  struct Landing {
    PageRange range;
    bool map_remote = false;  // no data: a preferred-host page gets its remote mapping
  };
  // Makes room for `pages` more frames; returns when the write-backs are done (>= now_ps).
  // Returns false when there is no room even after evicting every resident page.
  bool make_room(uint64_t pages, uint64_t now_ps, uint64_t& writeback_done_ps);
  void schedule(PageRange range, uint64_t arrival_ps);
  uint64_t free_frames() const;
  // Resident pages of `range` leave the device (invalidated, dirty ones written back).
  // A host `write` moves read-mostly pages too (collapsing duplicates); a read duplicates them.
  uint64_t to_host(PageRange range, uint64_t now_ps, bool host_touch, bool write);
  // Pages of the prefetcher's plan that may migrate (not preferred-host, not remotely mapped).
  void keep_migratable(MigrationPlan& plan, uint64_t faulting_page) const;

  FaultServiceParams params_;
  PageTable& table_;
  MigrationPort& port_;
  FarFaultMshrs mshrs_;
  std::unique_ptr<Prefetcher> prefetcher_;
  std::unique_ptr<EvictionPolicy> eviction_;
  std::multimap<uint64_t, Landing> landings_;  // by arrival time, then issue order
  uint64_t clock_ = 0;  // logical time of page uses and arrivals (LRU order)
  bool any_preferred_device_ = false;  // some page prefers the device: eviction spares those first
  bool any_advice_ = false;            // cudaMemAdvise was used: plans and writes check the advice

  stats::Counter& far_faults_;
  stats::Counter& coalesced_faults_;
  stats::Counter& mshr_full_;
  stats::Counter& batches_;
  stats::Histogram& faults_per_batch_;
  stats::Histogram& mshr_occupancy_;
  stats::Counter& migrations_;
  stats::Counter& migrated_bytes_;
  stats::Counter& prefetched_pages_;
  stats::Counter& useful_prefetches_;
  stats::Counter& evicted_pages_;
  stats::Counter& evicted_bytes_;
  stats::Counter& writeback_bytes_;
  stats::Counter& explicit_prefetch_bytes_;
  stats::Counter* needed_pages_ = nullptr;
  stats::Counter* inflight_faults_ = nullptr;
  stats::Counter* host_accesses_ = nullptr;
  stats::Counter* host_migrated_pages_ = nullptr;
  stats::Counter* advice_calls_ = nullptr;
  stats::Counter* read_duplicated_pages_ = nullptr;
  stats::Counter* duplicate_host_reads_ = nullptr;
  stats::Counter* duplicate_collapses_ = nullptr;
  stats::Counter* remote_mappings_ = nullptr;
  stats::Counter* remote_accesses_ = nullptr;
  stats::Counter* remote_bytes_ = nullptr;
  stats::Counter* preferred_evictions_ = nullptr;
};

}  // namespace gpuvp::uvm
