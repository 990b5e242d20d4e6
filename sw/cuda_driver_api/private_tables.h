// The driver's private tables that NVIDIA's static CUDA runtime asks for (cuGetExportTable).
#pragma once

#include "sw/cuda_driver_api/api.h"

namespace gpuvp::cuda_driver {

// The table with UUID `id`, or nullptr when gpuvp has none.
const void* private_table(const CUuuid& id);

// True for the table through which the static runtime authenticates the driver (a keyed answer
// to a challenge, checked by the runtime): gpuvp has no answer to give.
bool is_integrity_check(const CUuuid& id);

}  // namespace gpuvp::cuda_driver
