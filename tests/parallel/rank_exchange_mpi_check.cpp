// The MPI rank exchange under mpirun (ctest runs it with 3 ranks): each rank gathers every
// rank's message (of a different size each, one empty) in rank order, and each rank in turn
// broadcasts one. Exits 1 naming the first mismatch, so any rank's failure fails the test.
#include <cstdio>
#include <string>
#include <vector>

#include "platform/parallel/rank_exchange.h"

namespace {

int check(bool ok, const std::string& what, uint32_t rank) {
  if (ok) return 0;
  std::fprintf(stderr, "rank %u: %s\n", rank, what.c_str());
  return 1;
}

}  // namespace

int main() {
  using gpuvp::parallel::Message;
  auto exchange = gpuvp::parallel::make_mpi_exchange();
  const uint32_t rank = exchange->rank(), ranks = exchange->ranks();
  int failures = check(ranks >= 2, "expected at least 2 ranks, got " + std::to_string(ranks), rank);
  for (int round = 0; round < 3; ++round) {
    // Rank r sends r * (round + 1) values: rank 0's message is empty.
    Message mine;
    for (uint32_t k = 0; k < rank * static_cast<uint32_t>(round + 1); ++k) mine.put<uint64_t>(uint64_t{rank} * 1000 + k);
    std::vector<Message> all;
    exchange->all_gather(mine, all);
    failures += check(all.size() == ranks, "all_gather gave " + std::to_string(all.size()) + " messages", rank);
    for (uint32_t r = 0; r < all.size(); ++r) {
      const size_t expected = size_t{r} * static_cast<size_t>(round + 1);
      failures += check(all[r].bytes().size() == expected * 8,
                        "rank " + std::to_string(r) + "'s message has " + std::to_string(all[r].bytes().size()) + " bytes",
                        rank);
      for (size_t k = 0; k < expected && all[r].bytes().size() == expected * 8; ++k) {
        failures += check(all[r].get<uint64_t>() == uint64_t{r} * 1000 + k, "rank " + std::to_string(r) + " value " +
                          std::to_string(k), rank);
      }
    }
  }
  for (uint32_t root = 0; root < ranks; ++root) {
    Message m;
    if (rank == root) m.put_string("from rank " + std::to_string(root));
    else m.put_string("stale text that must be replaced");
    exchange->broadcast(m, root);
    const std::string got = m.get_string();
    failures += check(got == "from rank " + std::to_string(root), "broadcast from " + std::to_string(root) + " gave '" + got + "'", rank);
    failures += check(m.at_end(), "broadcast left bytes over", rank);
  }
  if (failures == 0 && rank == 0) std::printf("rank exchange: %u ranks agree\n", ranks);
  return failures == 0 ? 0 : 1;
}
