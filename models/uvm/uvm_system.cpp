#include "models/uvm/uvm_system.h"

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace gpuvp::uvm {

// The host end of the GMMU's PCIe link: accepts the migrations' reads and write-backs (the data
// itself moves in the runtime's host mirror), and an idle host-side initiator.
struct UvmSystem::HostEnd : sc_core::sc_module {
  tlm_utils::simple_target_socket<HostEnd> memory{"memory"};
  tlm_utils::simple_initiator_socket<HostEnd> host{"host"};
  tlm_utils::simple_target_socket<HostEnd> device{"device"};
  explicit HostEnd(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    memory.register_b_transport(this, &HostEnd::accept);
    device.register_b_transport(this, &HostEnd::accept);
  }
  void accept(tlm::tlm_generic_payload& gp, sc_core::sc_time&) { gp.set_response_status(tlm::TLM_OK_RESPONSE); }
};

UvmSystem::UvmSystem(sc_core::sc_module_name name, const UvmParams& params, const PcieParams& pcie,
                     uint64_t device_bytes, uint64_t seed, const ClockDomain& core_clock, stats::Registry& stats,
                     TraceObserver* tracer)
    : sc_core::sc_module(name), params_(params), clock_(core_clock), stats_(stats), tracer_(tracer) {
  const uint64_t bytes = params.device_memory != 0 ? params.device_memory : device_bytes;
  link_ = std::make_unique<PcieLink>("pcie", pcie, stats, "uvm.pcie");
  host_end_ = std::make_unique<HostEnd>("host_end");
  gmmu_ = std::make_unique<Gmmu>("gmmu", params, bytes / kPageBytes, seed, core_clock, table_, stats, "uvm.gmmu",
                                 tracer);
  gmmu_->pcie.bind(link_->device_in);
  link_->host_out.bind(host_end_->memory);
  host_end_->host.bind(link_->host_in);
  link_->device_out.bind(host_end_->device);
}

UvmSystem::~UvmSystem() = default;

L1Tlb& UvmSystem::add_tlb(uint32_t sm) {
  if (sm >= tlbs_.size()) tlbs_.resize(sm + 1);
  if (!tlbs_[sm]) {
    tlbs_[sm] = std::make_unique<L1Tlb>(("l1_tlb_" + std::to_string(sm)).c_str(), params_, clock_, table_, stats_,
                                        "uvm.l1_tlb[" + std::to_string(sm) + "]",
                                        [this](uint64_t page, bool write, uint32_t bytes) { return gmmu_->access(page, write, bytes); });
    tlbs_[sm]->set_drained_event(&drained_);
    tlbs_[sm]->gmmu.bind(gmmu_->translate);
    gmmu_->notify.bind(tlbs_[sm]->notify);
  }
  return *tlbs_[sm];
}

PageRange UvmSystem::pages_of(uint64_t base, uint64_t bytes) {
  const uint64_t first = base / kPageBytes;
  const uint64_t end = (base + bytes + kPageBytes - 1) / kPageBytes;
  return {first, end - first};
}

void UvmSystem::tell(UvmOperation::Kind kind, uint64_t base, uint64_t bytes, uint32_t advice, uint32_t location) {
  if (tracer_ == nullptr) return;
  UvmOperation op;
  op.kind = kind;
  op.base = base;
  op.bytes = bytes;
  op.advice = advice;
  op.location = location;
  tracer_->uvm_operation(op, sc_core::sc_time_stamp());
}

void UvmSystem::map_managed(uint64_t base, uint64_t bytes) {
  tell(UvmOperation::Kind::kMap, base, bytes);
  table_.add_allocation(base, bytes);
}

void UvmSystem::unmap_managed(uint64_t base) {
  tell(UvmOperation::Kind::kUnmap, base, 0);
  for (const Allocation& a : table_.allocations())
    if (a.base == base) gmmu_->drop(pages_of(a.base, a.bytes));
  table_.remove_allocation(base);
}

void UvmSystem::prefetch(uint64_t base, uint64_t bytes, bool to_device) {
  if (bytes == 0) return;
  tell(to_device ? UvmOperation::Kind::kPrefetchToDevice : UvmOperation::Kind::kPrefetchToHost, base, bytes);
  gmmu_->prefetch(pages_of(base, bytes), to_device);
}

}  // namespace gpuvp::uvm

namespace gpuvp::uvm {

bool UvmSystem::holding_requests() const {
  for (const auto& tlb : tlbs_)
    if (tlb && tlb->held() > 0) return true;
  return false;
}

void UvmSystem::host_access(uint64_t base, uint64_t bytes, bool write) {
  if (bytes == 0) return;
  tell(write ? UvmOperation::Kind::kHostWrite : UvmOperation::Kind::kHostRead, base, bytes);
  gmmu_->host_access(pages_of(base, bytes), write);
}

void UvmSystem::advise(uint64_t base, uint64_t bytes, uint32_t advice, uint32_t location) {
  if (bytes == 0) return;
  gmmu_->advise(pages_of(base, bytes), advice, location);  // throws for a bad advice: nothing to tell
  tell(UvmOperation::Kind::kAdvise, base, bytes, advice, location);
}

}  // namespace gpuvp::uvm
