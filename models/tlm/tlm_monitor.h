// TlmMonitor: a transparent module put between an initiator socket and a target socket at
// binding time, so that a TraceObserver sees every phase of every transaction on that link
// without the modules knowing. It forwards every call (nb_transport, b_transport, DMI, debug,
// DMI invalidation) unchanged, with the same phase, delay and return status: timing and
// statistics are those of the direct binding.
//
//   target    (tlm_target_socket):    bind the initiator's socket here
//   initiator (tlm_initiator_socket): bind this to the target's socket
//
// bind_traced(initiator, target, observer, monitors, kind) is the one call a binding site
// needs: with observer == nullptr (tracing off) or a link the filters exclude it binds
// initiator to target directly, so tracing that is off costs nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/tlm/trace_observer.h"

namespace gpuvp {

class TlmMonitor : public sc_core::sc_module,
                   private tlm::tlm_fw_transport_if<>,
                   private tlm::tlm_bw_transport_if<> {
 public:
  tlm::tlm_target_socket<> target;
  tlm::tlm_initiator_socket<> initiator;

  TlmMonitor(sc_core::sc_module_name name, TraceObserver& observer, std::uint32_t link);
  TlmMonitor(const TlmMonitor&) = delete;
  TlmMonitor& operator=(const TlmMonitor&) = delete;

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) override;
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp) override;
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) override;

  void report(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase, const sc_core::sc_time& delay);

  TraceObserver& observer_;
  std::uint32_t link_;
};

// Binds `initiator` to `target`, through a new TlmMonitor (kept in `monitors`) when `observer`
// traces this link. Call during elaboration, inside the module that owns both ends.
template <typename InitiatorSocket, typename TargetSocket>
void bind_traced(InitiatorSocket& initiator, TargetSocket& target, TraceObserver* observer,
                 std::vector<std::unique_ptr<TlmMonitor>>& monitors, const char* kind) {
  const std::uint32_t link =
      observer != nullptr ? observer->add_link(initiator.name(), target.name(), kind) : TraceObserver::kNotTraced;
  if (link == TraceObserver::kNotTraced) {
    initiator.bind(target);
    return;
  }
  monitors.push_back(std::make_unique<TlmMonitor>(sc_core::sc_gen_unique_name("trace_monitor"), *observer, link));
  initiator.bind(monitors.back()->target);
  monitors.back()->initiator.bind(target);
}

}  // namespace gpuvp
