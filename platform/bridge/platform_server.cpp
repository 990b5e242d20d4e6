#include "platform/bridge/platform_server.h"

#include <poll.h>

#include <iostream>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/gpu/command_processor/command_processor.h"
#include "models/tlm/tlm_monitor.h"
#include "models/uvm/pcie/pcie_link.h"
#include "platform/bridge/bridge.h"

namespace gpuvp::bridge {
namespace {

// Nothing on the host side initiates transactions toward the GPU yet (no BAR accesses): the
// link's host_in is bound to an initiator that stays idle, its device_out to a target that
// answers every access with an address error.
class IdleInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<IdleInitiator> socket;
  explicit IdleInitiator(sc_core::sc_module_name name) : sc_module(name), socket("socket") {}
};

class NoBar : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<NoBar> socket;
  explicit NoBar(sc_core::sc_module_name name) : sc_module(name), socket("socket") {
    socket.register_b_transport(this, &NoBar::b_transport);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time&) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
};

constexpr int kMaxSleepMs = 100;  // stop_when is evaluated at least this often

}  // namespace

struct PlatformServer::Impl {
  sc_core::sc_simcontext* context = nullptr;
  stats::Registry& stats;
  std::unique_ptr<Bridge> bridge;
  std::unique_ptr<uvm::PcieLink> pcie;
  std::unique_ptr<gpu::CommandProcessor> command_processor;
  std::unique_ptr<IdleInitiator> host;
  std::unique_ptr<NoBar> bar;

  std::vector<std::unique_ptr<TlmMonitor>> monitors;  // traced links (none when tracing is off)
  gpu::KernelModel kernel_model;
  uint32_t window;  // sim.window: > 1, the SMs run in windows (an approximation the report names)
  bool hbm_partition;  // memory.hbm.partition: its front end is an approximation too

  Impl(const PlatformParams& params, stats::Registry& registry, TraceObserver* tracer,
       const std::function<void(const std::string&)>& listening)
      : stats(registry), kernel_model(params.command_processor.kernel_model), window(params.sm.window),
        hbm_partition(params.hbm.partition) {
    // A fresh SystemC context: one platform per process at a time, elaborated from scratch.
    context = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = context;
    sc_core::sc_default_global_context = context;
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    // run() calls sc_start() whenever the host may have news, also when the models have nothing
    // to do at this instant (the timing model parks its processes on events): SystemC's W571
    // "no activity" warning is expected there, and it would land in the program's stdout.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ID_NO_SC_START_ACTIVITY_, sc_core::SC_DO_NOTHING);
    stats.set_time_source([] { return sc_core::sc_time_stamp().value(); });

    bridge = std::make_unique<Bridge>("bridge", params, stats);
    if (listening) listening(bridge->socket_path());  // a client's handshake waits for start()
    pcie = std::make_unique<uvm::PcieLink>("pcie", params.pcie, stats, "pcie");
    command_processor = std::make_unique<gpu::CommandProcessor>("command_processor", params, stats, tracer);
    command_processor->set_notice_sink([](const std::string& notice) { std::cerr << "gpuvp: " << notice << "\n"; });
    host = std::make_unique<IdleInitiator>("host");
    bar = std::make_unique<NoBar>("bar");
    bridge->command_out.bind(command_processor->command_in);
    bind_traced(command_processor->dma_out, pcie->device_in, tracer, monitors, "pcie");
    pcie->host_out.bind(bridge->host_memory);
    host->socket.bind(pcie->host_in);
    pcie->device_out.bind(bar->socket);
    bridge->start();
  }

  ~Impl() {
    bridge->shut_down();
    bar.reset();
    host.reset();
    command_processor.reset();
    monitors.clear();
    pcie.reset();
    bridge.reset();
    stats.set_time_source({});
    if (sc_core::sc_curr_simcontext == context) {
      delete context;  // ends the platform's processes
      sc_core::sc_curr_simcontext = nullptr;
      sc_core::sc_default_global_context = nullptr;
    }
  }

  bool should_stop(const std::function<bool()>& stop_when) const {
    return bridge->stop_requested() || (stop_when && stop_when());
  }

  void run(const std::function<bool()>& stop_when) {
    while (!should_stop(stop_when)) {
      if (bridge->time_may_advance()) {
        sc_core::sc_start();  // until a wait is satisfied (the bridge pauses), a poll tick, or starvation
      } else {
        do {
          sc_core::sc_start(sc_core::SC_ZERO_TIME);  // this instant's activity only: time stands still
        } while (sc_core::sc_pending_activity_at_current_time() && !bridge->time_may_advance() &&
                 !bridge->stop_requested());
      }
      // The windowed SMs' window may go on running on the pool while the simulation is paused
      // here (a poll tick returns every platform.bridge.poll_interval of wall time): it touches
      // only its SMs' own state and stages their stores, which nothing out here reads; the
      // statistics and every host-side change of device memory join it themselves. It is
      // joined before the loop sleeps and when it ends.
      if (should_stop(stop_when)) break;
      // A satisfied HostWaiting is answered only once this instant has no activity left, so the
      // woken program's next commands find the same platform state however fast it runs.
      if (bridge->holding_completions() &&
          (bridge->time_may_advance() || !sc_core::sc_pending_activity_at_current_time())) {
        bridge->post_held_completions();
      }
      const bool busy = bridge->time_may_advance() ? sc_core::sc_pending_activity()
                                                   : sc_core::sc_pending_activity_at_current_time();
      if (!busy) {
        command_processor->quiesce();
        pollfd wake{bridge->wake_fd(), POLLIN, 0};
        ::poll(&wake, 1, kMaxSleepMs);
      }
      bridge->clear_wake();
    }
    // Let this instant's pending work (I/O news, statistics) settle; time does not move.
    for (int i = 0; i < 16 && sc_core::sc_pending_activity_at_current_time(); ++i) {
      sc_core::sc_start(sc_core::SC_ZERO_TIME);
    }
    command_processor->quiesce();
    if (bridge->holding_completions()) bridge->post_held_completions();
    bridge->clear_stop();
  }
};

PlatformServer::PlatformServer(const PlatformParams& params, stats::Registry& stats, TraceObserver* tracer,
                               const std::function<void(const std::string&)>& listening)
    : impl_(std::make_unique<Impl>(params, stats, tracer, listening)) {}

PlatformServer::~PlatformServer() = default;

const std::string& PlatformServer::socket_path() const { return impl_->bridge->socket_path(); }

uint64_t PlatformServer::region_bytes() const { return impl_->bridge->region_bytes(); }

void PlatformServer::run(std::function<bool()> stop_when) { impl_->run(stop_when); }

void PlatformServer::stop() { impl_->bridge->request_stop(); }

uint64_t PlatformServer::simulated_ps() const { return sc_core::sc_time_stamp().value(); }

PlatformActivity PlatformServer::activity() const { return impl_->bridge->activity(); }

std::string PlatformServer::kernel_report(const std::string& prefix) const {
  auto plural = [](uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  const stats::Group* group = impl_->stats.find_group("gpu.command_processor");
  const stats::Counter* launched = group != nullptr ? group->find_counter("kernels_launched") : nullptr;
  const uint64_t launches = launched != nullptr ? launched->value() : 0;
  uint64_t fallbacks = 0, faults = 0, estimated = 0;
  std::string fallen_back, faulted, estimated_names;
  for (const gpu::KernelIncidents& k : impl_->command_processor->incidents()) {
    if (k.estimated != 0) {
      estimated += k.estimated;
      estimated_names += "\n" + prefix + "  " + k.kernel + " (" + plural(k.estimated, "launch", "launches") + ")";
    }
    if (k.fallbacks != 0) {
      fallbacks += k.fallbacks;
      fallen_back += "\n" + prefix + "  " + k.kernel + " (" + plural(k.fallbacks, "launch", "launches") +
                     "): " + k.fallback_reason;
    }
    if (k.faults != 0) {
      faults += k.faults;
      faulted += "\n" + prefix + "  " + k.kernel + " (" + plural(k.faults, "launch", "launches") +
                 "), first: " + k.first_fault;
    }
  }
  std::string report;
  if (impl_->kernel_model == gpu::KernelModel::kTiming) {
    if (fallbacks < launches || launches == 0) {
      const std::string which =
          fallbacks == 0 ? std::string("kernels") : plural(launches - fallbacks, "kernel launch", "kernel launches");
      report += prefix + which +
                " ran on the timing model (SMs, crossbar, L2, HBM; values from the PTX model); simulated time and "
                "cycles are modeled.\n";
      if (impl_->window > 1) {
        report += prefix + "the SMs ran in windows of " + std::to_string(impl_->window) +
                  " core cycles (sim.window): CTA launches, and responses announced less than two windows "
                  "ahead, took effect at the start of the window after next (platform/parallel/README.md).\n";
      }
      if (impl_->hbm_partition) {
        report += prefix + "the HBM controllers ran as a partition of their own (memory.hbm.partition): a DRAM "
                           "request that found its pseudo-channel's queue full waited in the controller's front end "
                           "instead of holding back its L2 slice (platform/parallel/README.md).\n";
      }
    }
    if (estimated != 0) {
      report += prefix + plural(estimated, "kernel launch", "kernel launches") +
                " had no resources from the SASS (no cubin of the device's major architecture): registers per "
                "thread estimated from the PTX, occupancy approximate:" + estimated_names + "\n";
    }
    if (fallbacks != 0) {
      report += prefix + plural(fallbacks, "kernel launch", "kernel launches") +
                " ran on the functional model instead of the timing model; their time is an estimate:" + fallen_back +
                "\n";
    }
  } else {
    report += prefix + "kernels ran on the functional model (PTX executor; sim.kernel_model=functional); kernel time "
                       "is an estimate.\n";
  }
  if (faults != 0) report += prefix + plural(faults, "kernel launch", "kernel launches") + " faulted:" + faulted + "\n";
  return report;
}

void PlatformServer::set_rank_exchange(parallel::RankExchange* exchange) {
  impl_->command_processor->set_rank_exchange(exchange);
}

std::string PlatformServer::stats_json() const { return impl_->stats.json(); }

std::string PlatformServer::stats_summary() const { return impl_->stats.summary(); }

}  // namespace gpuvp::bridge
