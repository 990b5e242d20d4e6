// SMs grouped in a cluster that shares one crossbar port, and GpuCore: the CTA scheduler plus
// clusters of SMs, one memory port per cluster.
//
// SmCluster
//   in  (multi_passthrough_target_socket): one binding per SM, in SM order
//   out (simple_initiator_socket): toward the crossbar (AT, 4 phases)
// Requests are forwarded in arrival order, one BEGIN_REQ outstanding downstream until its
// END_REQ (which then goes back to the SM that sent it); waiting SMs get END_REQ when their
// request is forwarded. Responses are routed by GpuExtension::sm_id and completed at once.
//
// GpuCore: `sm.count` SMs in clusters of `sm.cluster_size`, the CTA scheduler over all of
// them, and one SmStepper stepping every SM (`sim.threads` host threads); bind each
// cluster(i).out to the memory side, then submit kernels.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/sm/sm.h"
#include "models/gpu/sm/sm_stepper.h"
#include "models/tlm/tlm_monitor.h"

namespace gpuvp::gpu {

class SmCluster : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<SmCluster> in;
  tlm_utils::simple_initiator_socket<SmCluster> out;

  // SMs first_sm .. first_sm + size - 1 bind to `in` in that order.
  SmCluster(sc_core::sc_module_name name, uint32_t first_sm, uint32_t size);
  SmCluster(const SmCluster&) = delete;
  SmCluster& operator=(const SmCluster&) = delete;

 private:
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void forward_next();  // SC_METHOD on wake_
  // Sends gp downstream; returns true when the port is free again (END_REQ came back at once).
  bool send(int id, tlm::tlm_generic_payload& gp);

  uint32_t first_sm_;
  uint32_t size_;
  bool busy_ = false;  // a request awaits END_REQ downstream
  int busy_id_ = -1;
  tlm::tlm_generic_payload* busy_gp_ = nullptr;
  std::deque<std::pair<int, tlm::tlm_generic_payload*>> waiting_;
  sc_core::sc_event wake_;
};

class GpuCore : public sc_core::sc_module {
 public:
  // Binds SM `sm`'s memory port to its cluster's input; null binds them directly. The
  // unified-memory model uses it to put an L1 TLB between the two.
  using MemoryPathBinder = std::function<void(Sm& sm, uint32_t index, SmCluster& cluster)>;

  // `tracer` (optional): SM -> cluster links bound through monitors it selects; CTA spans.
  // `bind_memory_path` (optional) replaces the direct SM -> cluster binding (and its tracing).
  GpuCore(sc_core::sc_module_name name, const SmParams& params, const ClockDomain& core_clock, stats::Registry& stats,
          TraceObserver* tracer = nullptr, const MemoryPathBinder& bind_memory_path = nullptr);
  ~GpuCore() override;
  GpuCore(const GpuCore&) = delete;
  GpuCore& operator=(const GpuCore&) = delete;

  uint32_t cluster_count() const { return static_cast<uint32_t>(clusters_.size()); }
  SmCluster& cluster(uint32_t i) { return *clusters_[i]; }
  Sm& sm(uint32_t i) { return *sms_[i]; }
  CtaScheduler& scheduler() { return *scheduler_; }
  SmStepper& stepper() { return *stepper_; }
  // Queues a kernel; `done` runs when it completed.
  // `graph_node`: a kernel node of a CUDA graph (CtaScheduler::submit).
  void submit(ptx::KernelRun& run, uint64_t kernel_id, std::function<void()> done, bool graph_node = false);
  // Last core cycle any SM worked.
  uint64_t last_cycle() const;

 private:
  std::vector<std::unique_ptr<Sm>> sms_;
  std::vector<std::unique_ptr<SmCluster>> clusters_;
  std::unique_ptr<CtaScheduler> scheduler_;
  std::unique_ptr<SmStepper> stepper_;
  std::vector<std::unique_ptr<TlmMonitor>> monitors_;  // traced SM -> cluster links
};

}  // namespace gpuvp::gpu
