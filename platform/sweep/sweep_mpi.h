// Sweep points spread over MPI ranks (`mpirun -np K gpuvp sweep --mpi SPEC`).
//
// Rank 0 hands out points one at a time to whichever rank asks (dynamic: a slow point holds
// up one rank only), runs points itself too, and alone writes records and results. Workers
// send a heartbeat while a point runs; a worker silent for longer than `rank_timeout_s` is
// taken for dead: its point is recorded as lost (a resumed sweep reruns it) and it gets no
// more work; once the rest is done and the results are written, rank 0 ends the job with
// MPI_Abort (MPI_Finalize would wait for the dead rank). Run mpirun with --enable-recovery, or
// Open MPI ends the whole job as soon as one rank dies (the points recorded so far are kept and
// a rerun resumes). Built when Open MPI is found (CMake option GPUVP_MPI).
#pragma once

#include <functional>
#include <iosfwd>

#include "platform/sweep/sweep_runner.h"

namespace gpuvp::sweep {

// True when this gpuvp was built with MPI.
bool mpi_available();

// Initializes MPI, runs the sweep over every rank, and on rank 0 calls `report` (write the
// results, say what happened; it returns the exit code) before MPI ends. Returns the process
// exit code (other ranks: 0, or 1 on an MPI failure).
int run_mpi(const SweepSpec& spec, const RunOptions& options, double rank_timeout_s, std::ostream& log,
            const std::function<int(const RunSummary&)>& report);

}  // namespace gpuvp::sweep
