#include "models/tlm/tlm_monitor.h"

namespace gpuvp {
namespace {

TracePhase to_trace_phase(const tlm::tlm_phase& phase) {
  if (phase == tlm::BEGIN_REQ) return TracePhase::kBeginReq;
  if (phase == tlm::END_REQ) return TracePhase::kEndReq;
  if (phase == tlm::BEGIN_RESP) return TracePhase::kBeginResp;
  return TracePhase::kEndResp;
}

}  // namespace

TlmMonitor::TlmMonitor(sc_core::sc_module_name name, TraceObserver& observer, std::uint32_t link)
    : sc_core::sc_module(name), target("target"), initiator("initiator"), observer_(observer), link_(link) {
  target.bind(*this);
  initiator.bind(*this);
}

void TlmMonitor::report(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase, const sc_core::sc_time& delay) {
  // Only the four base-protocol phases are traced; anything else passes unseen.
  if (phase != tlm::BEGIN_REQ && phase != tlm::END_REQ && phase != tlm::BEGIN_RESP && phase != tlm::END_RESP) return;
  observer_.phase(link_, gp, to_trace_phase(phase), sc_core::sc_time_stamp() + delay);
}

tlm::tlm_sync_enum TlmMonitor::nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
  report(gp, phase, delay);
  const tlm::tlm_sync_enum status = initiator->nb_transport_fw(gp, phase, delay);
  if (status == tlm::TLM_UPDATED) {
    report(gp, phase, delay);
  } else if (status == tlm::TLM_COMPLETED) {
    observer_.phase(link_, gp, TracePhase::kCompleted, sc_core::sc_time_stamp() + delay);
  }
  return status;
}

tlm::tlm_sync_enum TlmMonitor::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
  report(gp, phase, delay);
  const tlm::tlm_sync_enum status = target->nb_transport_bw(gp, phase, delay);
  if (status == tlm::TLM_UPDATED) {
    report(gp, phase, delay);
  } else if (status == tlm::TLM_COMPLETED) {
    observer_.phase(link_, gp, TracePhase::kCompleted, sc_core::sc_time_stamp() + delay);
  }
  return status;
}

void TlmMonitor::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  // A blocking transaction is one span: BEGIN_REQ when called, completed when it returns.
  observer_.phase(link_, gp, TracePhase::kBeginReq, sc_core::sc_time_stamp() + delay);
  initiator->b_transport(gp, delay);
  observer_.phase(link_, gp, TracePhase::kCompleted, sc_core::sc_time_stamp() + delay);
}

bool TlmMonitor::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  return initiator->get_direct_mem_ptr(gp, dmi);
}

unsigned int TlmMonitor::transport_dbg(tlm::tlm_generic_payload& gp) { return initiator->transport_dbg(gp); }

void TlmMonitor::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  target->invalidate_direct_mem_ptr(start, end);
}

}  // namespace gpuvp
