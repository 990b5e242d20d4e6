// Text views of an elastic trace for `gpuvp trace inspect DIR`: a summary (capture header and
// per-kernel counts) and, on request, the records themselves (kernels, CTAs, warps, requests
// with their dependencies and gaps).
#pragma once

#include <cstdint>
#include <string>

#include "platform/elastic_trace/elastic_trace.h"

namespace gpuvp::elastic {

std::string trace_summary(const Trace& trace, uint64_t file_bytes);

// Records of kernel `kernel` (its index; kNone: every kernel), at most `limit` requests in all.
std::string trace_records(const Trace& trace, uint32_t kernel, uint64_t limit);

}  // namespace gpuvp::elastic
