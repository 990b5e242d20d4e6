// The rank exchange when gpuvp is built without MPI (GPUVP_MPI=OFF or Open MPI not found).
#include "platform/parallel/rank_exchange.h"

namespace gpuvp::parallel {

bool mpi_exchange_available() { return false; }

std::unique_ptr<RankExchange> make_mpi_exchange() {
  throw std::runtime_error("this gpuvp was built without MPI (install libopenmpi-dev, scripts/setup.sh does, and rebuild)");
}

}  // namespace gpuvp::parallel
