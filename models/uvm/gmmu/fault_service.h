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
// writeback_bytes, explicit_prefetch_bytes.
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
  // Brings [first, first+count) back to the host (host access, prefetch to cpu): dirty resident
  // pages are written back, all become host resident. Returns when the last write-back is done.
  // In-flight pages must have landed (call advance first); throws std::logic_error otherwise.
  uint64_t evict_to_host(PageRange range, uint64_t now_ps);

  // A device access to a resident page (LRU/LFU bookkeeping, dirty bit, prefetch accuracy).
  // `now` is a logical time; uses and arrivals are ordered by max(previous + 1, now).
  void touch(uint64_t page, uint64_t now, bool write);

  const FarFaultMshrs& mshrs() const { return mshrs_; }
  const PageTable& table() const { return table_; }

 private:
  // Makes room for `pages` more frames; returns when the write-backs are done (>= now_ps).
  // Returns false when there is no room even after evicting every resident page.
  bool make_room(uint64_t pages, uint64_t now_ps, uint64_t& writeback_done_ps);
  void schedule(PageRange range, uint64_t arrival_ps);
  uint64_t free_frames() const;

  FaultServiceParams params_;
  PageTable& table_;
  MigrationPort& port_;
  FarFaultMshrs mshrs_;
  std::unique_ptr<Prefetcher> prefetcher_;
  std::unique_ptr<EvictionPolicy> eviction_;
  std::multimap<uint64_t, PageRange> landings_;
  uint64_t clock_ = 0;  // logical time of page uses and arrivals (LRU order)  // by arrival time, then issue order

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
};

}  // namespace gpuvp::uvm
