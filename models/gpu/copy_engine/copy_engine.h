// The copy engine's GPU side: the writes a launch and a module load make into device memory
// through the memory system, as the command processor's DMA engine makes them on hardware
// (its writes pass the crossbar into the L2 slices, which write-allocate: the lines are then
// in L2 when the first SM asks for them).
//
//   out (simple_initiator_socket): to a crossbar port (AT, 4 phases)
//
// What it writes today: constant bank 0 of every launch (the kernel's parameters, before its
// first CTA starts) and the code of a kernel the first time it launches (what a module load
// uploads). The memory-side models are timing-only, so no data travels: the functional model
// owns the values. Memory copies requested by the host are not routed here.
//
// Protocol. write() queues a range in 128-byte line pieces (sector masks at the ends); one
// BEGIN_REQ is outstanding at a time, the next goes out when END_REQ arrives; responses are
// completed at once. Writes are posted: nothing waits for their responses except drained().
//
// Statistics (group `stats_path`, e.g. "gpu.copy_engine"): writes (line pieces), bytes.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/tlm/delayed_responses.h"
#include "models/tlm/payload_pool.h"
#include "platform/stats/registry.h"

namespace gpuvp::gpu {

class CopyEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<CopyEngine> out;

  CopyEngine(sc_core::sc_module_name name, stats::Registry& stats, const std::string& stats_path);
  CopyEngine(const CopyEngine&) = delete;
  CopyEngine& operator=(const CopyEngine&) = delete;

  // Queues a write of [address, address + bytes) on behalf of kernel `kernel_id` (statistics
  // and traces attribute it there). Called from a SystemC process.
  void write(uint64_t address, uint64_t bytes, uint64_t kernel_id);
  // No write queued, in flight or unanswered.
  bool idle() const { return pending_.empty() && unanswered_ == 0; }
  // Notified when the engine becomes idle.
  const sc_core::sc_event& drained() const { return drained_; }

 private:
  struct Piece {
    uint64_t line;
    uint8_t sector_mask;
    uint64_t kernel_id;
  };
  void send();  // SC_METHOD: the next piece, if none is waiting for END_REQ
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void answered();

  PayloadPool pool_;
  std::deque<Piece> pending_;
  tlm::tlm_generic_payload* requesting_ = nullptr;  // sent, END_REQ not yet received
  uint64_t unanswered_ = 0;                         // sent, response not yet received
  sc_core::sc_event wake_, drained_;
  stats::Counter& writes_;
  stats::Counter& bytes_;
  DelayedResponses delayed_;  // BEGIN_RESP with an annotated delay (the crossbar's cluster latency)
};

}  // namespace gpuvp::gpu
