// Knobs of unified virtual memory: TLBs, GMMU page walks, far-fault handling, prefetcher and
// eviction policy (seed 003 §B, §C.1 Listing 1; see configs/*.yaml for the cited values).
#pragma once

#include <cstdint>

#include "models/uvm/eviction/eviction_policy.h"
#include "models/uvm/prefetch/prefetcher.h"
#include "platform/config/params.h"

namespace gpuvp::uvm {

enum class ShootdownKind {
  WholeTlb,  // a migration or eviction flushes every TLB (seed 003 §C.3)
  PerEntry,  // only the entries of the pages that moved
};

struct UvmParams {
  uint32_t l1_tlb_entries = 0;
  uint32_t l1_tlb_associativity = 0;  // ways; = entries for fully associative
  uint64_t l1_tlb_latency = 0;        // SM cycles
  uint32_t l1_tlb_pending = 0;        // managed requests one L1 TLB holds
  uint32_t l2_tlb_entries = 0;
  uint32_t l2_tlb_associativity = 0;
  uint64_t l2_tlb_latency = 0;        // SM cycles
  uint64_t page_walk_latency = 0;     // SM cycles
  double fault_latency_ps = 0;
  uint32_t far_fault_mshrs = 0;
  uint32_t fault_batch = 0;
  uint64_t device_memory = 0;         // bytes for managed pages; 0 = all of HBM
  PrefetcherKind prefetcher = PrefetcherKind::Tbn;
  EvictionKind eviction = EvictionKind::Lru4K;
  ShootdownKind shootdown = ShootdownKind::WholeTlb;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.integer(&UvmParams::l1_tlb_entries, "uvm.l1_tlb.entries", 64, 1, 1 << 20, "entries of each SM's L1 TLB");
    k.integer(&UvmParams::l1_tlb_associativity, "uvm.l1_tlb.associativity", 64, 1, 1 << 20,
              "ways of the L1 TLB (= entries: fully associative)");
    k.quantity(&UvmParams::l1_tlb_latency, "uvm.l1_tlb.latency", Dimension::Cycles, "1 cycles", "0 cycles",
               "1000 cycles", "L1 TLB lookup, SM cycles");
    k.integer(&UvmParams::l1_tlb_pending, "uvm.l1_tlb.pending", 32, 1, 1 << 16,
              "managed requests an L1 TLB holds (looking up, faulted, to forward) before the SM must wait");
    k.integer(&UvmParams::l2_tlb_entries, "uvm.l2_tlb.entries", 1024, 1, 1 << 24, "entries of the shared L2 TLB");
    k.integer(&UvmParams::l2_tlb_associativity, "uvm.l2_tlb.associativity", 16, 1, 1 << 24, "ways of the L2 TLB");
    k.quantity(&UvmParams::l2_tlb_latency, "uvm.l2_tlb.latency", Dimension::Cycles, "10 cycles", "0 cycles",
               "10000 cycles", "L2 TLB lookup, SM cycles");
    k.quantity(&UvmParams::page_walk_latency, "uvm.page_walk_latency", Dimension::Cycles, "100 cycles", "0 cycles",
               "100000 cycles", "GMMU page-table walk, SM cycles");
    k.quantity(&UvmParams::fault_latency_ps, "uvm.fault_latency", Dimension::Time, "45 us", "0 ps", "1 s",
               "far-fault handling by the host driver, per batch, before the PCIe transfers");
    k.integer(&UvmParams::far_fault_mshrs, "uvm.far_fault_mshrs", 256, 1, 1 << 20,
              "far-fault MSHR entries (distinct faulting pages outstanding)");
    k.integer(&UvmParams::fault_batch, "uvm.fault_batch", 256, 1, 1 << 20, "most faults serviced in one batch");
    k.quantity(&UvmParams::device_memory, "uvm.device_memory", Dimension::Size, "0 B", "0 B", "1 TiB",
               "device memory for managed pages (0: all of memory.hbm.capacity); smaller oversubscribes");
    k.choice(&UvmParams::prefetcher, "uvm.prefetcher", "tbn",
             {{"none", PrefetcherKind::None},
              {"random", PrefetcherKind::Random},
              {"sequential_local", PrefetcherKind::SequentialLocal},
              {"tbn", PrefetcherKind::Tbn}},
             "hardware prefetcher on far faults (seed 003 B.3)");
    k.choice(&UvmParams::eviction, "uvm.eviction", "lru_4k",
             {{"lru_4k", EvictionKind::Lru4K},
              {"lru_2m", EvictionKind::Lru2M},
              {"random", EvictionKind::Random},
              {"sequential_local", EvictionKind::SequentialLocal},
              {"lfu", EvictionKind::Lfu}},
             "page eviction policy when device memory is full");
    k.choice(&UvmParams::shootdown, "uvm.shootdown", "whole",
             {{"whole", ShootdownKind::WholeTlb}, {"entry", ShootdownKind::PerEntry}},
             "TLB shootdown on migration and eviction: flush whole TLBs or only the moved pages' entries");
  }
};

}  // namespace gpuvp::uvm
