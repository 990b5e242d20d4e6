#include "models/gpu/sm/sm_cluster.h"

#include <algorithm>
#include <string>

namespace gpuvp::gpu {

SmCluster::SmCluster(sc_core::sc_module_name name, uint32_t first_sm, uint32_t size)
    : sc_core::sc_module(name), in("in"), out("out"), first_sm_(first_sm), size_(size) {
  in.register_nb_transport_fw(this, &SmCluster::nb_transport_fw);
  out.register_nb_transport_bw(this, &SmCluster::nb_transport_bw);
  SC_HAS_PROCESS(SmCluster);
  SC_METHOD(forward_next);
  sensitive << wake_;
  dont_initialize();
}

bool SmCluster::send(int id, tlm::tlm_generic_payload& gp) {
  busy_ = true;
  busy_id_ = id;
  busy_gp_ = &gp;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum status = out->nb_transport_fw(gp, phase, delay);
  if (status == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
    busy_ = false;
    return true;
  }
  if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
    busy_ = false;
    tlm::tlm_phase resp = tlm::BEGIN_RESP;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    in[id]->nb_transport_bw(gp, resp, d);
    return true;
  }
  return false;
}

tlm::tlm_sync_enum SmCluster::nb_transport_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                              sc_core::sc_time&) {
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;  // END_RESP: the SMs complete at once anyway
  if (!busy_ && waiting_.empty()) {
    busy_ = true;
    busy_id_ = id;
    busy_gp_ = &gp;
    tlm::tlm_phase down = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum status = out->nb_transport_fw(gp, down, delay);
    if (status == tlm::TLM_UPDATED && down == tlm::END_REQ) {
      busy_ = false;
      phase = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && down == tlm::BEGIN_RESP)) {
      busy_ = false;
      phase = tlm::BEGIN_RESP;
      return tlm::TLM_UPDATED;
    }
    return tlm::TLM_ACCEPTED;  // END_REQ comes through nb_transport_bw
  }
  waiting_.emplace_back(id, &gp);
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum SmCluster::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                              sc_core::sc_time& delay) {
  if (phase == tlm::END_REQ || (phase == tlm::BEGIN_RESP && busy_ && &gp == busy_gp_)) {
    if (busy_) {
      busy_ = false;
      tlm::tlm_phase end = tlm::END_REQ;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      if (phase == tlm::END_REQ) in[busy_id_]->nb_transport_bw(gp, end, d);
      wake_.notify(sc_core::SC_ZERO_TIME);
    }
    if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    const GpuExtension* ext = gpu_extension(gp);
    const int id = ext != nullptr ? static_cast<int>(ext->sm_id - first_sm_) : 0;
    tlm::tlm_phase resp = tlm::BEGIN_RESP;
    sc_core::sc_time d = delay;  // the crossbar's annotated delay: when the response takes effect
    in[id]->nb_transport_bw(gp, resp, d);  // the SM completes at once
    return tlm::TLM_COMPLETED;
  }
  return tlm::TLM_ACCEPTED;
}

void SmCluster::forward_next() {
  while (!busy_ && !waiting_.empty()) {
    const auto [id, gp] = waiting_.front();
    waiting_.pop_front();
    // The SM's request leaves its port now: tell it (END_REQ), then send it on.
    tlm::tlm_phase end = tlm::END_REQ;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    in[id]->nb_transport_bw(*gp, end, d);
    send(id, *gp);
  }
}

GpuCore::GpuCore(sc_core::sc_module_name name, const SmParams& params, const ClockDomain& core_clock,
                 stats::Registry& stats, TraceObserver* tracer, const MemoryPathBinder& bind_memory_path)
    : sc_core::sc_module(name) {
  const uint32_t per_cluster = std::max<uint32_t>(params.cluster_size, 1);
  std::vector<Sm*> pointers;
  for (uint32_t i = 0; i < params.count; ++i) {
    sms_.push_back(std::make_unique<Sm>(("sm_" + std::to_string(i)).c_str(), params, i, core_clock, stats));
    sms_.back()->set_trace_observer(tracer);
    pointers.push_back(sms_.back().get());
  }
  for (uint32_t first = 0; first < params.count; first += per_cluster) {
    const uint32_t size = std::min(per_cluster, params.count - first);
    clusters_.push_back(std::make_unique<SmCluster>(("cluster_" + std::to_string(clusters_.size())).c_str(), first, size));
    for (uint32_t i = first; i < first + size; ++i) {
      if (bind_memory_path)
        bind_memory_path(*sms_[i], i, *clusters_.back());
      else
        bind_traced(sms_[i]->mem, clusters_.back()->in, tracer, monitors_, "sm");
    }
  }
  scheduler_ = std::make_unique<CtaScheduler>("cta_scheduler", params, core_clock, pointers, stats, tracer);
  stepper_ = std::make_unique<SmStepper>("sm_stepper", params, core_clock, pointers);
}

GpuCore::~GpuCore() = default;

void GpuCore::submit(ptx::KernelRun& run, uint64_t kernel_id, std::function<void()> done, bool graph_node) {
  scheduler_->submit(run, kernel_id, std::move(done), graph_node);
}

uint64_t GpuCore::last_cycle() const {
  uint64_t c = 0;
  for (const auto& sm : sms_) c = std::max(c, sm->last_cycle());
  return c;
}

}  // namespace gpuvp::gpu
