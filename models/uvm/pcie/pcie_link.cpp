#include "models/uvm/pcie/pcie_link.h"

#include <algorithm>
#include <cmath>

namespace gpuvp::uvm {
namespace {

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }  // the platform runs at 1 ps resolution

uint64_t round_ps(double ps) { return static_cast<uint64_t>(std::llround(ps)); }

}  // namespace

PcieLink::PcieLink(sc_core::sc_module_name name, const PcieParams& params, stats::Registry& stats,
                   const std::string& stats_path)
    : sc_module(name), device_in("device_in"), host_out("host_out"), host_in("host_in"),
      device_out("device_out"), params_(params) {
  device_in.register_b_transport(this, &PcieLink::from_device);
  host_in.register_b_transport(this, &PcieLink::from_host);
  device_in.register_transport_dbg(this, &PcieLink::debug_from_device);
  // Direct access to host memory (zero-copy mappings): the values only; the timing of such
  // accesses is modelled where they are made (the GMMU's remote accesses).
  device_in.register_get_direct_mem_ptr(this, &PcieLink::direct_from_device);
  host_in.register_transport_dbg(this, &PcieLink::debug_from_host);

  stats::Group& group = stats.group(stats_path);
  const char* names[2] = {"downstream", "upstream"};
  for (int i = 0; i < 2; ++i) {
    const std::string lane = names[i];
    LaneState& state = lanes_[i];
    state.transfers = &group.counter(lane + "_transfers", "transfer",
                                     "transactions crossing the " + lane + " lane (read requests carry no data)");
    state.bytes = &group.counter(lane + "_bytes", "B", "bytes carried " + lane + " (host->device is downstream)");
    state.busy_ps = &group.counter(lane + "_busy", "ps", "time the " + lane + " lane spent serializing data");
    state.queued_ps = &group.counter(lane + "_queued", "ps", "time transfers waited for the busy " + lane + " lane");
    group.ratio(lane + "_bandwidth", "achieved " + lane + " bandwidth while busy, GB/s", *state.bytes,
                *state.busy_ps, 1e3);
  }
  transfer_sizes_ = &group.histogram("transfer_size", "B", "bytes per transaction", stats::Buckets::log2(32));
  errors_ = &group.counter("errors", "transaction", "transactions the far side answered with an error");
}

uint64_t PcieLink::traverse(Lane lane, uint64_t ready_ps, uint64_t bytes) {
  LaneState& state = lanes_[static_cast<int>(lane)];
  const uint64_t start_ps = std::max(ready_ps, state.free_at_ps);
  const uint64_t serialization_ps =
      bytes == 0 ? 0 : round_ps(static_cast<double>(bytes) / params_.effective_bandwidth(bytes) * 1e12);
  state.free_at_ps = start_ps + serialization_ps;
  ++*state.transfers;
  *state.bytes += bytes;
  *state.busy_ps += serialization_ps;
  *state.queued_ps += start_ps - ready_ps;
  return state.free_at_ps + round_ps(params_.latency_ps);
}

template <class Socket>
void PcieLink::carry(Socket& out, Lane request_lane, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const Lane response_lane = request_lane == Lane::Downstream ? Lane::Upstream : Lane::Downstream;
  const uint64_t issued_ps = now_ps() + delay.value();
  const uint64_t bytes = payload.get_data_length();
  transfer_sizes_->sample(bytes);

  if (payload.is_write()) {
    // Posted write: data crosses once, toward the target.
    const uint64_t arrival_ps = traverse(request_lane, issued_ps, bytes);
    delay = sc_core::sc_time::from_value(arrival_ps - now_ps());
    out->b_transport(payload, delay);
  } else {
    // Read: a header-only request crosses, the completion carries the data back.
    const uint64_t request_arrival_ps = traverse(request_lane, issued_ps, 0);
    delay = sc_core::sc_time::from_value(request_arrival_ps - now_ps());
    out->b_transport(payload, delay);
    const uint64_t data_ready_ps = now_ps() + delay.value();
    const uint64_t completion_ps = traverse(response_lane, data_ready_ps, payload.is_read() ? bytes : 0);
    delay = sc_core::sc_time::from_value(completion_ps - now_ps());
  }
  if (payload.is_response_error()) ++*errors_;
}

void PcieLink::from_device(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  carry(host_out, Lane::Upstream, payload, delay);
}

bool PcieLink::direct_from_device(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) {
  return host_out->get_direct_mem_ptr(payload, dmi);
}

unsigned int PcieLink::debug_from_device(tlm::tlm_generic_payload& payload) { return host_out->transport_dbg(payload); }

unsigned int PcieLink::debug_from_host(tlm::tlm_generic_payload& payload) { return device_out->transport_dbg(payload); }

void PcieLink::from_host(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  carry(device_out, Lane::Downstream, payload, delay);
}

}  // namespace gpuvp::uvm
