// Instruction scheduling of each basic block at decode time, as ptxas does before the hardware
// ever sees a kernel (private to models/gpu/ptx).
//
// nvcc's PTX is not scheduled: a load is followed at once by its use (`ld.global %f1; st.shared
// [..], %f1; ld.global %f2; ...`). Real GPUs issue in order, but they run ptxas' SASS, where the
// independent loads of a block were hoisted above their uses so their latencies overlap. An
// in-order timing model fed unscheduled PTX would serialise every such pair (one memory latency
// each). So, once per function at load time, each basic block is list-scheduled on its
// dependence graph, critical path first: registers and predicates (read after write, write after
// read, write after write), the carry flag, and memory (a store or ordered access stays in order
// with every access whose state space it may share; loads pass loads). Nothing moves across a
// block boundary (labels, branches, calls, returns) or across an instruction with effects beyond
// the thread's own registers and memory order: barriers, fences, atomics and reductions, warp
// collectives, clock and timer reads, ordered (.volatile/.relaxed/.acquire/.release) accesses,
// nanosleep and trap. Every thread computes exactly what the unscheduled program computes.
#pragma once

#include "models/gpu/ptx/ir.h"

namespace gpuvp::ptx::ir {

// Reorders every basic block of `function`'s body in place. Branch targets stay valid: a block's
// first instruction and its terminator keep their indices.
void schedule_basic_blocks(Function& function);

}  // namespace gpuvp::ptx::ir
