// The list of workloads. Each entry names a folder sw/workloads/<name>/ whose host code defines
// run_<name>() and whose kernels build to <name>.ptx.
#pragma once

#include <string_view>
#include <vector>

#include "common/workload.h"

// X-macro so the declarations and the registry cannot drift apart.
#define GPUVP_WORKLOAD_LIST(X) \
  X(vector_add)                \
  X(blas1)                     \
  X(gemv)                      \
  X(gemm)                      \
  X(spmv_csr)                  \
  X(trsv)                      \
  X(batched_lu)                \
  X(hotspot)                   \
  X(pathfinder)                \
  X(needleman_wunsch)          \
  X(bfs)                       \
  X(kmeans)                    \
  X(srad)                      \
  X(lud)                       \
  X(backprop)                  \
  X(warp_reduce)               \
  X(warp_match)                \
  X(histogram)                 \
  X(bit_ops)                   \
  X(atomics)                   \
  X(float_rounding)            \
  X(half_precision)            \
  X(transpose)                 \
  X(nbody)                     \
  X(recursion)                 \
  X(function_pointers)         \
  X(printf)                    \
  X(device_fault)              \
  X(device_heap)               \
  X(dynamic_parallelism)

namespace gpuvp::workloads {

#define GPUVP_DECLARE_WORKLOAD(name) WorkloadResult run_##name(Device& device);
GPUVP_WORKLOAD_LIST(GPUVP_DECLARE_WORKLOAD)
#undef GPUVP_DECLARE_WORKLOAD

struct WorkloadInfo {
  std::string_view name;  // also the PTX module's base name
  WorkloadFunction run;
};

// Every workload, in the order of GPUVP_WORKLOAD_LIST.
const std::vector<WorkloadInfo>& all_workloads();
const WorkloadInfo* find_workload(std::string_view name);

}  // namespace gpuvp::workloads
