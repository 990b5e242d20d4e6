// The crossbar between SM clusters and L2 slices: a request network (clusters -> slices) and
// a reply network (slices -> clusters), each an input-buffered switch with virtual output
// queues, round-robin arbitration per output and one serial link per output.
//
//   cluster (multi_passthrough_target_socket):    bind `cluster_ports` initiators, one per cluster
//   slice   (multi_passthrough_initiator_socket): bind map.slices() targets, slice k as the k-th
//
// A request goes to the slice memory::AddressMap::slice names; its reply goes back to the port
// it came in on (the crossbar tags the payload with a small extension of its own while the
// request is inside the memory system, and removes it on the way back).
//
// Packets. A packet is gpu.crossbar.header_size bytes of header plus its data (write data on
// the request network, read data on the reply network), in whole flits of
// gpu.crossbar.flit_size. An output port moves one flit per flit_size / (link_bandwidth x
// links_per_port) (40 B / (4 x 37.5 GB/s) = 267 ps on the V100 preset) and the packet arrives
// gpu.crossbar.latency after its last flit left.
//
// Arbitration. Each output grants round-robin among the inputs that hold a packet for it.
// An idle link starts at the first crossbar clock edge at or after a packet is buffered; a busy
// link starts its next packet the moment the previous one's last flit has gone.
//
// Cluster latency (gpu.crossbar.cluster_latency, C; 0 on the presets): the network between the
// cluster ports and the arbiters. A request enters its input buffer C after the cluster sent it;
// the input's slots are the cluster's credits: one is spent when a request is accepted and
// comes back C after the arbiter took that packet out of the buffer. A reply leaves the wire
// `latency` after its last flit with C as its annotated delay (BEGIN_RESP, delay = C: it takes
// effect at the cluster C later; initiators behind the cluster honour it). Every message between
// the clusters and the rest of the crossbar is then at least C in flight: the lookahead that lets
// the SMs and the memory side run the same time window apart (platform/parallel/README.md).
//
// Back-pressure through the AT protocol, fixed-size buffers only. Each input buffers
// gpu.crossbar.input_buffer packets (shared by its virtual output queues): on the request
// network a full input returns TLM_ACCEPTED to BEGIN_REQ and sends END_REQ when a packet
// leaves; on the reply network a full input returns TLM_ACCEPTED to BEGIN_RESP and sends
// END_RESP when a packet leaves. Towards slices (and clusters) each output holds at most one
// unanswered BEGIN_REQ (BEGIN_RESP) and at most gpu.crossbar.wire_packets packets on the wire
// (sent, not yet arrived).
//
// Statistics (group `stats_path`, e.g. "gpu.crossbar"): request_packets, reply_packets,
// request_flits, reply_flits, request_busy_ps, reply_busy_ps (sum over links of serialization
// time), request_withheld, reply_withheld (packets whose acceptance waited for buffer room).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "models/gpu/crossbar/crossbar_params.h"
#include "models/memory/address_map.h"
#include "models/memory/wake_queue.h"
#include "models/tlm/clock_domain.h"
#include "platform/stats/registry.h"

namespace gpuvp::gpu {

class Crossbar : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Crossbar> cluster;
  tlm_utils::multi_passthrough_initiator_socket<Crossbar> slice;

  // `map` must outlive the crossbar; so must `wakes`, the memory side's shared wake process
  // (models/memory/wake_queue.h), when given (else the crossbar runs its own).
  Crossbar(sc_core::sc_module_name name, const CrossbarParams& params, const memory::AddressMap& map,
           uint32_t cluster_ports, stats::Registry& stats, const std::string& stats_path,
           memory::WakeDomain* wakes = nullptr);
  ~Crossbar() override;
  Crossbar(const Crossbar&) = delete;
  Crossbar& operator=(const Crossbar&) = delete;

  const CrossbarParams& params() const { return params_; }
  uint64_t flit_ps() const { return flit_ps_; }
  // Whole flits of a packet carrying `data_bytes` of data.
  uint32_t flits(uint64_t data_bytes) const;

 private:
  struct Net;
  struct RouteExtension;
  enum Dir { kRequest = 0, kReply = 1 };

  void end_of_elaboration() override;
  tlm::tlm_sync_enum cluster_fw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& d);
  tlm::tlm_sync_enum slice_bw(int id, tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase, sc_core::sc_time& d);
  bool enter(Dir dir, uint32_t input, tlm::tlm_generic_payload& gp);  // false: input buffer full
  void buffer(Dir dir, uint32_t input, tlm::tlm_generic_payload& gp);  // into its virtual output queue
  void free_slot(Dir dir, uint32_t input);  // a slot (credit) is back: take a withheld packet
  void input_due(uint32_t input);  // request input, with a cluster latency: arrivals and credits due
  void notify_input(uint32_t input);
  void arbitrate(Dir dir);
  void deliver(Dir dir, uint32_t output);
  void notify_arbiter(Dir dir, uint64_t at_ps);
  void notify_deliver(Dir dir, uint32_t output, uint64_t at_ps);

  CrossbarParams params_;
  const memory::AddressMap& map_;
  ClockDomain clock_;
  uint64_t flit_ps_, latency_ps_, cluster_latency_ps_;
  uint32_t first_input_key_ = 0;
  std::unique_ptr<Net> nets_[2];
  std::vector<std::unique_ptr<RouteExtension>> routes_;  // owns every route tag
  std::vector<RouteExtension*> free_routes_;
  std::unique_ptr<memory::WakeQueue> wakes_;  // every arbiter and delivery: one wake queue

  stats::Counter *packets_[2], *flits_[2], *busy_ps_[2], *withheld_[2];
};

}  // namespace gpuvp::gpu
