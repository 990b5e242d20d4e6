// Knobs of a kernel's launch and completion around its CTAs: how long the front end takes
// from accepting a launch to the first CTA it may dispatch, how long a CTA takes from the CTA
// scheduler to its SM, and how long a kernel takes from its last CTA's end to its completion
// (the completion is written and the stream's next command may start). The CTA scheduler
// applies them in whole core cycles (each rounded up).
//
// Published V100 figure behind the defaults: CSCS's ReFrame GPU kernel-latency check
// (reframe-hpc/reframe, cscs-checks/microbenchmarks/gpu/kernel_latency, reference for its V100
// nodes 'ault:intelv100' and 'ault:amdv100') launches 5000 empty <<<1,1>>> kernels back to back
// in one stream and measures 1.83 us per kernel (host wall time over the 5000): the whole
// per-kernel cost of the launch path (launch + one CTA dispatch + an empty CTA + completion),
// or an upper bound of it were the host's launch calls slower still. No published figure
// splits it; the defaults give half to the launch and half to the completion and nothing to
// the per-CTA dispatch, so an empty kernel costs the measured 1.83 us on the model (plus the
// few cycles its CTA runs).
//
// A kernel launched as a node of a CUDA graph skips the host launch call's front-end work (the
// graph was uploaded whole): NVIDIA's "Getting Started with CUDA Graphs" (Alan Gray, NVIDIA
// developer blog, 2019) measures on V100 20 short kernels x 1000 steps at 3.8 us per kernel
// launched back to back in a stream and 3.4 us per kernel launched as one graph per step, so a
// graph saves 0.4 us per kernel; `gpu.launch.graph_latency` is the stream launch latency less
// that (915 - 400 = 515 ns), the completion latency being the same for both.
#pragma once

#include <cstdint>

#include "platform/config/params.h"

namespace gpuvp::gpu {

struct LaunchParams {
  uint64_t launch_latency_ps = 0;
  uint64_t graph_launch_latency_ps = 0;
  uint64_t cta_dispatch_latency_ps = 0;
  uint64_t completion_latency_ps = 0;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    using config::Dimension;
    k.quantity(&LaunchParams::launch_latency_ps, "gpu.launch.latency", Dimension::Time, "915 ns", "0 ps", "1 ms",
               "front end: launch accepted -> its first CTA may be dispatched; default half of the 1.83 us per "
               "back-to-back empty kernel CSCS's ReFrame kernel-latency check measured on V100");
    k.quantity(&LaunchParams::graph_launch_latency_ps, "gpu.launch.graph_latency", Dimension::Time, "515 ns", "0 ps",
               "1 ms",
               "front end, for a kernel node of a launched CUDA graph (replaces gpu.launch.latency): default 915 ns "
               "less the 0.4 us per kernel a graph saved on V100 (NVIDIA blog 'Getting Started with CUDA Graphs')");
    k.quantity(&LaunchParams::cta_dispatch_latency_ps, "gpu.launch.dispatch_latency", Dimension::Time, "0 ps",
               "0 ps", "1 ms",
               "CTA scheduler -> SM, per CTA (its slot is held meanwhile); default 0: no published V100 figure "
               "separates it from the 1.83 us launch path");
    k.quantity(&LaunchParams::completion_latency_ps, "gpu.launch.completion_latency", Dimension::Time, "915 ns",
               "0 ps", "1 ms",
               "last CTA done -> kernel complete (completion written, the stream's next command may start); default "
               "the other half of the 1.83 us per empty kernel measured on V100 (CSCS ReFrame kernel-latency check)");
  }
};

}  // namespace gpuvp::gpu
