#include "platform/derived_figures.h"

#include <cmath>
#include <cstdio>

#include "platform/config/units.h"

namespace gpuvp {
namespace {

std::string number(double value) { return config::format_number(value); }

std::string with_prefix(double value, const std::string& unit) {
  static const char* const kPrefixes[] = {"", "K", "M", "G", "T", "P"};
  int prefix = 0;
  while (std::fabs(value) >= 1000 && prefix < 5) {
    value /= 1000;
    ++prefix;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f %s%s", value, kPrefixes[prefix], unit.c_str());
  return buffer;
}

}  // namespace

std::vector<DerivedFigure> derive_figures(const PlatformParams& p) {
  std::vector<DerivedFigure> figures;
  const double clock_mhz = p.sm.clock_hz / 1e6;
  figures.push_back({"sm_count", "SMs", static_cast<double>(p.sm.count), "",
                     number(p.sm.count) + " SMs at " + number(clock_mhz) + " MHz"});
  figures.push_back({"peak_fp32_flops", "Peak FP32", p.sm.peak_fp32_flops(), "FLOP/s",
                     "2 (FMA) x " + number(p.sm.count) + " SMs x " + number(p.sm.fp32_lanes) +
                         " lanes x " + number(clock_mhz) + " MHz"});
  figures.push_back({"peak_fp64_flops", "Peak FP64", p.sm.peak_fp64_flops(), "FLOP/s",
                     "2 (FMA) x " + number(p.sm.count) + " SMs x " + number(p.sm.fp64_lanes) +
                         " lanes x " + number(clock_mhz) + " MHz"});
  figures.push_back({"max_resident_threads", "Resident threads", static_cast<double>(p.sm.max_resident_threads()),
                     "", number(p.sm.count) + " SMs x " + number(p.sm.max_threads) + " threads"});
  figures.push_back({"l2_capacity", "L2 capacity", static_cast<double>(p.l2.capacity_bytes()), "B",
                     number(p.l2.slices) + " slices x " +
                         config::format_quantity(static_cast<double>(p.l2.slice_bytes), config::Dimension::Size)});
  figures.push_back({"hbm_capacity", "HBM capacity", static_cast<double>(p.hbm.capacity_bytes), "B",
                     number(p.hbm.stacks) + " stacks"});
  figures.push_back({"peak_hbm_bandwidth", "Peak HBM bandwidth", p.hbm.peak_bandwidth(), "B/s",
                     number(p.hbm.stacks) + " stacks x " + number(static_cast<double>(p.hbm.bus_width_bits_per_stack())) +
                         " bit x " + number(p.hbm.data_rate_per_pin() / 1e6) + " MT/s (2 x " +
                         number(p.hbm.clock_hz / 1e6) + " MHz) / 8"});
  figures.push_back({"crossbar_bandwidth", "Crossbar bandwidth", p.crossbar.total_bandwidth, "B/s",
                     "configured aggregate; " +
                         config::format_quantity(p.crossbar.port_bandwidth(), config::Dimension::Bandwidth) +
                         " per port (" + number(p.crossbar.links_per_port) + " links)"});
  figures.push_back({"pcie_peak_bandwidth", "PCIe bandwidth (peak)", p.pcie.bandwidth, "B/s",
                     "per direction, latency " + config::format_quantity(p.pcie.latency_ps, config::Dimension::Time)});
  const std::string curve = p.pcie.transfer_model == uvm::PcieTransferModel::Peak
                                ? "transfer model 'peak': size does not matter"
                                : "seed 003 Table 1 curve, capped at peak";
  figures.push_back({"pcie_4k_bandwidth", "PCIe bandwidth (4 KiB transfers)", p.pcie.effective_bandwidth(4096),
                     "B/s", curve});
  figures.push_back({"pcie_1m_bandwidth", "PCIe bandwidth (1 MiB transfers)", p.pcie.effective_bandwidth(1 << 20),
                     "B/s", curve});
  return figures;
}

std::string format_figure(const DerivedFigure& figure) {
  if (figure.unit == "B") return config::format_quantity(figure.value, config::Dimension::Size);
  if (figure.unit.empty()) return number(figure.value);
  return with_prefix(figure.value, figure.unit);
}

}  // namespace gpuvp
