#include "models/uvm/pcie/pcie_params.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace gpuvp::uvm {
namespace {

struct CurvePoint {
  double bytes;
  double bandwidth;  // bytes/s
};

// Seed 003, Table 1: effective PCIe bandwidth by transfer size (KB taken as KiB, as page sizes are).
constexpr std::array<CurvePoint, 5> kMeasuredCurve{{
    {4.0 * 1024, 3.2219e9},
    {16.0 * 1024, 6.4437e9},
    {64.0 * 1024, 8.4771e9},
    {256.0 * 1024, 10.508e9},
    {1024.0 * 1024, 11.223e9},
}};

double measured_bandwidth(double bytes) {
  if (bytes <= kMeasuredCurve.front().bytes) return kMeasuredCurve.front().bandwidth;
  if (bytes >= kMeasuredCurve.back().bytes) return kMeasuredCurve.back().bandwidth;
  for (size_t i = 1; i < kMeasuredCurve.size(); ++i) {
    const CurvePoint& low = kMeasuredCurve[i - 1];
    const CurvePoint& high = kMeasuredCurve[i];
    if (bytes <= high.bytes) {
      const double t = (std::log2(bytes) - std::log2(low.bytes)) / (std::log2(high.bytes) - std::log2(low.bytes));
      return low.bandwidth + t * (high.bandwidth - low.bandwidth);
    }
  }
  return kMeasuredCurve.back().bandwidth;
}

}  // namespace

double PcieParams::effective_bandwidth(uint64_t bytes) const {
  if (transfer_model == PcieTransferModel::Peak) return bandwidth;
  return std::min(bandwidth, measured_bandwidth(static_cast<double>(bytes)));
}

double PcieParams::transfer_time_ps(uint64_t bytes) const {
  if (bytes == 0) return latency_ps;
  return latency_ps + static_cast<double>(bytes) / effective_bandwidth(bytes) * 1e12;
}

}  // namespace gpuvp::uvm
