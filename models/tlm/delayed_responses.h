// BEGIN_RESP with an annotated delay, for initiators that act on a response at once: the
// response is handed to `handler` at now + delay instead (a payload event queue, as in the
// Accellera AT examples). A delay of zero is left to the caller, so an initiator's timing
// without annotated delays does not change.
#pragma once

#include <functional>
#include <utility>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_get.h>

namespace gpuvp {

class DelayedResponses {
 public:
  using Handler = std::function<void(tlm::tlm_generic_payload&)>;

  // Spawns its method process: construct it while the owning module is elaborated.
  DelayedResponses(const char* name, Handler handler) : queue_(name), handler_(std::move(handler)) {
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&queue_.get_event());
    sc_core::sc_spawn([this] { drain(); }, sc_core::sc_gen_unique_name(name), &opts);
  }
  // The handler re-enters `module`'s backward path with BEGIN_RESP and no delay (the usual case:
  // DelayedResponses(name, this, &Initiator::nb_transport_bw)).
  template <class Module>
  DelayedResponses(const char* name, Module* module,
                   tlm::tlm_sync_enum (Module::*backward)(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&))
      : DelayedResponses(name, [module, backward](tlm::tlm_generic_payload& gp) {
          tlm::tlm_phase phase = tlm::BEGIN_RESP;
          sc_core::sc_time now = sc_core::SC_ZERO_TIME;
          (module->*backward)(gp, phase, now);
        }) {}
  DelayedResponses(const DelayedResponses&) = delete;
  DelayedResponses& operator=(const DelayedResponses&) = delete;

  // True when `delay` is not zero: `gp` goes to the handler then (the caller completes the
  // phase now, TLM_COMPLETED). False: the caller handles it now.
  bool defer(tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay) {
    if (delay == sc_core::SC_ZERO_TIME) return false;
    queue_.notify(gp, delay);
    return true;
  }

 private:
  void drain() {
    while (tlm::tlm_generic_payload* gp = queue_.get_next_transaction()) handler_(*gp);
  }

  tlm_utils::peq_with_get<tlm::tlm_generic_payload> queue_;
  Handler handler_;
};

}  // namespace gpuvp
