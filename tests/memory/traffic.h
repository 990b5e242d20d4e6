// A traffic generator for the memory-side tests and benchmark: one AT initiator that keeps up to
// `max_outstanding` requests in flight, issuing request i of a stream to base + i * stride as
// soon as the target accepts the previous one (END_REQ). Pooled payloads, no allocation per
// request after warm-up; completes every BEGIN_RESP at once.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/tlm/gpu_extension.h"
#include "models/tlm/payload_pool.h"

namespace gpuvp::memory::testing {

class TrafficGenerator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TrafficGenerator> socket;

  struct Stream {
    uint64_t base = 0;
    uint64_t stride = 128;
    uint64_t count = 0;
    tlm::tlm_command command = tlm::TLM_READ_COMMAND;
    unsigned length = 128;
    AccessKind kind = AccessKind::Load;
  };

  TrafficGenerator(sc_core::sc_module_name name, const Stream& stream, uint32_t max_outstanding)
      : sc_core::sc_module(name), socket("socket"), stream_(stream), max_outstanding_(max_outstanding) {
    socket.register_nb_transport_bw(this, &TrafficGenerator::nb_transport_bw);
    SC_METHOD(issue);
    sensitive << issue_event_;
  }
  TrafficGenerator(const TrafficGenerator&) = delete;
  TrafficGenerator& operator=(const TrafficGenerator&) = delete;
  SC_HAS_PROCESS(TrafficGenerator);

  uint64_t issued() const { return issued_; }
  uint64_t completed() const { return completed_; }
  bool done() const { return completed_ == stream_.count; }
  uint64_t first_issue_ps() const { return first_issue_ps_; }
  uint64_t last_completion_ps() const { return last_completion_ps_; }
  uint64_t latency_sum_ps() const { return latency_sum_ps_; }
  const sc_core::sc_event& finished() const { return finished_; }

 private:
  void issue() {
    while (!blocked_ && outstanding_ < max_outstanding_ && issued_ < stream_.count) {
      const uint64_t address = stream_.base + issued_ * stream_.stride;
      tlm::tlm_generic_payload* gp = pool_.allocate(stream_.command, address, stream_.length);
      GpuExtension* ext = gpu_extension(*gp);
      ext->kind = stream_.kind;
      ext->sector_mask = GpuExtension::sector_mask_for(address, stream_.length);
      ext->kernel_id = sc_core::sc_time_stamp().value();  // test traffic: the issue time rides along
      if (issued_ == 0) first_issue_ps_ = sc_core::sc_time_stamp().value();
      ++issued_;
      ++outstanding_;
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      const tlm::tlm_sync_enum s = socket->nb_transport_fw(*gp, phase, delay);
      if (!(s == tlm::TLM_UPDATED && phase == tlm::END_REQ)) blocked_ = gp;
    }
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    if (phase == tlm::END_REQ) {
      blocked_ = nullptr;
      issue_event_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_ACCEPTED;
    }
    // BEGIN_RESP implies END_REQ for its own transaction only.
    if (blocked_ == &gp) blocked_ = nullptr;
    const uint64_t now = (sc_core::sc_time_stamp() + delay).value();  // an annotated delay: answered then
    latency_sum_ps_ += now - gpu_extension(gp)->kernel_id;
    ++completed_;
    --outstanding_;
    last_completion_ps_ = now;
    gp.release();
    if (done()) finished_.notify(sc_core::SC_ZERO_TIME);
    issue_event_.notify(sc_core::SC_ZERO_TIME);
    return tlm::TLM_COMPLETED;
  }

  Stream stream_;
  uint32_t max_outstanding_;
  PayloadPool pool_;
  sc_core::sc_event issue_event_, finished_;
  tlm::tlm_generic_payload* blocked_ = nullptr;  // BEGIN_REQ awaiting END_REQ
  uint32_t outstanding_ = 0;
  uint64_t issued_ = 0, completed_ = 0;
  uint64_t first_issue_ps_ = 0, last_completion_ps_ = 0, latency_sum_ps_ = 0;
};

}  // namespace gpuvp::memory::testing
