// The PCIe link between host and GPU: latency per transaction and bandwidth by transfer size.
//
// Small transfers reach a fraction of the link's peak: per-transfer overheads (TLP headers, DMA
// set-up, completions) dominate. Seed 003 (UVMSmart, Table 1) measured the effective bandwidth of
// 4 KB to 1 MB transfers; gpuvp interpolates that curve in log2(size) as UVMSmart does, and caps
// it at the configured peak.
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::uvm {

enum class PcieTransferModel {
  MeasuredCurve,  // effective bandwidth from seed 003 Table 1, capped at `bandwidth`
  Peak,           // every transfer moves at `bandwidth`
};

struct PcieParams {
  double latency_ps = 0;
  double bandwidth = 0;  // bytes/s, peak per direction
  PcieTransferModel transfer_model = PcieTransferModel::MeasuredCurve;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.quantity(&PcieParams::latency_ps, "pcie.latency", Dimension::Time, "23840 ps", "0 ps", "1 ms",
               "one-way latency of a host<->GPU transaction");
    k.quantity(&PcieParams::bandwidth, "pcie.bandwidth", Dimension::Bandwidth, "16 GB/s", "1 MB/s", "10 TB/s",
               "peak link bandwidth per direction");
    k.choice(&PcieParams::transfer_model, "pcie.transfer_model", "measured",
             {{"measured", PcieTransferModel::MeasuredCurve}, {"peak", PcieTransferModel::Peak}},
             "bandwidth by transfer size: 'measured' follows seed 003 Table 1, 'peak' ignores size");
  }

  // Bytes per second a single transfer of `bytes` achieves.
  double effective_bandwidth(uint64_t bytes) const;
  // Picoseconds from the first byte leaving to the last byte arriving, latency included.
  double transfer_time_ps(uint64_t bytes) const;
};

}  // namespace gpuvp::uvm
