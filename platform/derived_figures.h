// Figures derived from a configuration (`gpuvp info`): what the modeled machine can do at peak.
#pragma once

#include <string>
#include <vector>

#include "platform/platform_params.h"

namespace gpuvp {

struct DerivedFigure {
  std::string key;      // stable machine-readable name: "peak_fp32_flops"
  std::string label;    // "Peak FP32"
  double value = 0;     // in `unit`
  std::string unit;     // "FLOP/s", "B", "B/s", ""
  std::string formula;  // how it was computed, with the numbers
};

std::vector<DerivedFigure> derive_figures(const PlatformParams& params);

// "14.11 TFLOP/s", "6 MiB", "898.05 GB/s": a value with a decimal prefix (binary for bytes).
std::string format_figure(const DerivedFigure& figure);

}  // namespace gpuvp
