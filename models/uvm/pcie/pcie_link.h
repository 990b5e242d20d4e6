// The PCIe link between the host and the GPU as a TLM-2.0 module: a full-duplex pipe that
// delays each transaction by the link latency and serializes its data on the direction the data
// travels, at the effective bandwidth for its size (pcie_params.h).
//
//   device_in  --(GPU-initiated: DMA reads/writes of host memory)-->  host_out
//   host_in    --(host-initiated: writes and reads of device memory)--> device_out
//
// Data travelling host->device (a device read of host memory, a host write to the device) uses
// the downstream lane; device->host data uses the upstream lane. Each lane carries one transfer
// at a time, so back-to-back transfers queue. Writes are posted: they cost one latency; reads
// cost a request latency plus the completion's latency and serialization.
//
// Loosely timed (b_transport with annotated delay): the link keeps absolute lane-free times, so
// results do not depend on the caller's quantum. Debug transport passes through untimed, and so
// do device-side requests for a direct (DMI) pointer to host memory: zero-copy mappings read and
// write the host's bytes through it, their timing modelled by whoever makes the accesses.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/uvm/pcie/pcie_params.h"
#include "platform/stats/registry.h"

namespace gpuvp::uvm {

class PcieLink : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<PcieLink> device_in;
  tlm_utils::simple_initiator_socket<PcieLink> host_out;
  tlm_utils::simple_target_socket<PcieLink> host_in;
  tlm_utils::simple_initiator_socket<PcieLink> device_out;

  // Statistics go to group `stats_path` of `stats` ("pcie" in the platform).
  PcieLink(sc_core::sc_module_name name, const PcieParams& params, stats::Registry& stats,
           const std::string& stats_path);
  PcieLink(const PcieLink&) = delete;
  PcieLink& operator=(const PcieLink&) = delete;

  const PcieParams& params() const { return params_; }

 private:
  enum class Lane { Downstream, Upstream };  // host->device, device->host
  struct LaneState {
    uint64_t free_at_ps = 0;  // absolute time the lane finishes its current transfer
    stats::Counter* transfers = nullptr;
    stats::Counter* bytes = nullptr;
    stats::Counter* busy_ps = nullptr;
    stats::Counter* queued_ps = nullptr;
  };

  void from_device(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  void from_host(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned int debug_from_device(tlm::tlm_generic_payload& payload);
  bool direct_from_device(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi);
  unsigned int debug_from_host(tlm::tlm_generic_payload& payload);
  // Forwards through `out`. The request travels on `request_lane`; write data goes with it,
  // read data comes back on the other lane.
  template <class Socket>
  void carry(Socket& out, Lane request_lane, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  // Occupies `lane` with `bytes` starting no earlier than `ready_ps`; returns the arrival time.
  uint64_t traverse(Lane lane, uint64_t ready_ps, uint64_t bytes);

  PcieParams params_;
  LaneState lanes_[2];
  stats::Histogram* transfer_sizes_ = nullptr;
  stats::Counter* errors_ = nullptr;
};

}  // namespace gpuvp::uvm
