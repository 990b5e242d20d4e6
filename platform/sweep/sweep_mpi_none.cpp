// The MPI driver when gpuvp is built without MPI (GPUVP_MPI=OFF or Open MPI not found).
#include <ostream>

#include "platform/sweep/sweep_mpi.h"

namespace gpuvp::sweep {

bool mpi_available() { return false; }

int run_mpi(const SweepSpec&, const RunOptions&, double, std::ostream& log, const std::function<int(const RunSummary&)>&) {
  log << "gpuvp sweep --mpi: error: this gpuvp was built without MPI (install libopenmpi-dev, scripts/setup.sh does, "
         "and rebuild); run the sweep locally with -j N or on SLURM with --emit-slurm\n";
  return 1;
}

}  // namespace gpuvp::sweep
