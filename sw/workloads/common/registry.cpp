#include "common/workloads.h"

namespace gpuvp::workloads {

const std::vector<WorkloadInfo>& all_workloads() {
  // Immutable after first use: built once from the X-macro list.
  static const std::vector<WorkloadInfo> workloads = {
#define GPUVP_REGISTER_WORKLOAD(name) WorkloadInfo{#name, &run_##name},
      GPUVP_WORKLOAD_LIST(GPUVP_REGISTER_WORKLOAD)
#undef GPUVP_REGISTER_WORKLOAD
  };
  return workloads;
}

const WorkloadInfo* find_workload(std::string_view name) {
  for (const WorkloadInfo& info : all_workloads()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace gpuvp::workloads
