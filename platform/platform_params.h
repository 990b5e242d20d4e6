// Every module's parameters in one place, and the catalogue of every knob they declare.
#pragma once

#include <cstdint>
#include <vector>

#include "models/gpu/command_processor/command_processor_params.h"
#include "models/gpu/crossbar/crossbar_params.h"
#include "models/gpu/cta_scheduler/launch_params.h"
#include "models/gpu/device_params.h"
#include "models/gpu/sm/sm_params.h"
#include "models/memory/hbm/hbm_params.h"
#include "models/memory/l2/l2_params.h"
#include "models/uvm/pcie/pcie_params.h"
#include "models/uvm/uvm_params.h"
#include "platform/bridge/bridge_params.h"
#include "platform/config/config.h"

namespace gpuvp {

struct SimParams {
  uint64_t seed = 0;

  template <class Knobs>
  static void declare_knobs(Knobs& k) {
    k.integer(&SimParams::seed, "sim.seed", 1, 0, (1LL << 53),
              "seed of every pseudo-random choice in the models; same seed, same results");
  }
};

struct PlatformParams {
  gpu::DeviceParams device;
  gpu::SmParams sm;
  gpu::LaunchParams launch;
  gpu::CrossbarParams crossbar;
  memory::L2Params l2;
  memory::HbmParams hbm;
  uvm::PcieParams pcie;
  uvm::UvmParams uvm;
  gpu::CommandProcessorParams command_processor;
  bridge::BridgeParams bridge;
  bridge::HostParams host;
  SimParams sim;

  // Loads every module's parameters and checks the rules that tie knobs together; throws
  // config::ConfigError naming the knobs (and where they were set) when one is broken.
  static PlatformParams load(const config::Config& config);
};

// Every knob of every module, built once at start-up.
config::KnobRegistry build_knob_registry();

}  // namespace gpuvp
