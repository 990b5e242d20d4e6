// Unified virtual memory for the GPU timing top level: the managed-page table, the GMMU (shared
// L2 TLB, walker, far-fault engine), one L1 TLB per SM on the SM's memory path, and the PCIe
// link the GMMU migrates pages over (its host end is a sink: the values live in the runtime's
// host mirror and the functional model; this link carries the migrations' timing).
//
//   GpuCore's memory-path binder calls add_tlb(i) and binds  Sm.mem -> tlb.in, tlb.out -> cluster.
//   The command processor calls map_managed / unmap_managed (cudaMallocManaged / cudaFree),
//   prefetch (cudaMemPrefetchAsync), host_access (the host reads or writes a managed range:
//   its pages leave the device, dirty ones written back; read-mostly pages are duplicated),
//   the last two from an SC_THREAD, and advise (cudaMemAdvise).
//
// Statistics: uvm.gmmu, uvm.l1_tlb[i], uvm.pcie.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "models/tlm/clock_domain.h"
#include "models/tlm/trace_observer.h"
#include "models/uvm/gmmu/gmmu.h"
#include "models/uvm/pcie/pcie_link.h"
#include "models/uvm/residency/page_table.h"
#include "models/uvm/tlb/l1_tlb.h"
#include "models/uvm/uvm_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::uvm {

class UvmSystem : public sc_core::sc_module {
 public:
  // `device_bytes`: memory for managed pages when uvm.device_memory is 0 (all of HBM).
  // `tracer` (may be null) goes to the GMMU: far-fault activity as trace counter tracks; the
  // operations below are told to it (TraceObserver::uvm_operation).
  UvmSystem(sc_core::sc_module_name name, const UvmParams& params, const PcieParams& pcie, uint64_t device_bytes,
            uint64_t seed, const ClockDomain& core_clock, stats::Registry& stats, TraceObserver* tracer = nullptr);
  ~UvmSystem() override;
  UvmSystem(const UvmSystem&) = delete;
  UvmSystem& operator=(const UvmSystem&) = delete;

  // The L1 TLB of SM `sm` (created on first call; before the end of elaboration).
  L1Tlb& add_tlb(uint32_t sm);

  void map_managed(uint64_t base, uint64_t bytes);
  void unmap_managed(uint64_t base);
  void prefetch(uint64_t base, uint64_t bytes, bool to_device);
  // The host reads (write = false) or writes managed [base, base + bytes) (the runtime's host
  // faults and copies): FaultService::host_access.
  void host_access(uint64_t base, uint64_t bytes, bool write);
  // cudaMemAdvise over managed [base, base + bytes); throws std::invalid_argument for a bad
  // advice or location (device.h's MemAdvice, AdviceLocation).
  void advise(uint64_t base, uint64_t bytes, uint32_t advice, uint32_t location);

  // Managed requests still inside an L1 TLB (waiting for a translation or a far fault, or
  // crossing PCIe to a remote page): a kernel is not complete while its stores are held here.
  bool holding_requests() const;
  // Notified when an L1 TLB lets go of its last held request.
  const sc_core::sc_event& drained() const { return drained_; }

  const PageTable& table() const { return table_; }
  Gmmu& gmmu() { return *gmmu_; }

 private:
  struct HostEnd;
  static PageRange pages_of(uint64_t base, uint64_t bytes);
  // Tells the tracer (elastic trace capture) an operation begins.
  void tell(UvmOperation::Kind kind, uint64_t base, uint64_t bytes, uint32_t advice = 0, uint32_t location = 0);

  UvmParams params_;
  const ClockDomain& clock_;
  stats::Registry& stats_;
  TraceObserver* tracer_;
  PageTable table_;
  std::unique_ptr<PcieLink> link_;
  std::unique_ptr<HostEnd> host_end_;
  std::unique_ptr<Gmmu> gmmu_;
  std::vector<std::unique_ptr<L1Tlb>> tlbs_;
  sc_core::sc_event drained_;
};

}  // namespace gpuvp::uvm
