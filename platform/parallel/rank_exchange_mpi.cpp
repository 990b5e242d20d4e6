// The rank exchange over MPI (Open MPI): all_gather is MPI_Allgather of the sizes, then
// MPI_Allgatherv of the bytes.
#include <mpi.h>

#include <climits>
#include <numeric>

#include "platform/parallel/rank_exchange.h"

namespace gpuvp::parallel {

namespace {

void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(std::string("rank exchange: ") + what + " failed: " + text);
}

class MpiExchange final : public RankExchange {
 public:
  MpiExchange() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      finalize_ = true;
    }
    // Errors come back as codes (and become exceptions naming the call), not an abort.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank_ = static_cast<uint32_t>(rank);
    ranks_ = static_cast<uint32_t>(size);
    sizes_.resize(ranks_);
    offsets_.resize(ranks_);
  }
  ~MpiExchange() override {
    if (finalize_) MPI_Finalize();
  }
  MpiExchange(const MpiExchange&) = delete;
  MpiExchange& operator=(const MpiExchange&) = delete;

  uint32_t rank() const override { return rank_; }
  uint32_t ranks() const override { return ranks_; }

  void all_gather(const Message& mine, std::vector<Message>& all) override {
    if (mine.bytes().size() > static_cast<size_t>(INT_MAX)) throw std::runtime_error("rank exchange: message over 2 GiB");
    const int size = static_cast<int>(mine.bytes().size());
    check(MPI_Allgather(&size, 1, MPI_INT, sizes_.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    long total = 0;
    for (uint32_t r = 0; r < ranks_; ++r) {
      offsets_[r] = static_cast<int>(total);
      total += sizes_[r];
      if (total > INT_MAX) throw std::runtime_error("rank exchange: boundary messages over 2 GiB");
    }
    gathered_.resize(static_cast<size_t>(total));
    check(MPI_Allgatherv(mine.bytes().data(), size, MPI_BYTE, gathered_.data(), sizes_.data(), offsets_.data(), MPI_BYTE,
                         MPI_COMM_WORLD),
          "MPI_Allgatherv");
    all.resize(ranks_);
    for (uint32_t r = 0; r < ranks_; ++r) {
      all[r].clear();
      const auto begin = gathered_.begin() + offsets_[r];
      all[r].bytes().assign(begin, begin + sizes_[r]);
    }
  }

  void broadcast(Message& message, uint32_t root) override {
    if (message.bytes().size() > static_cast<size_t>(INT_MAX)) throw std::runtime_error("rank exchange: message over 2 GiB");
    int size = static_cast<int>(message.bytes().size());
    check(MPI_Bcast(&size, 1, MPI_INT, static_cast<int>(root), MPI_COMM_WORLD), "MPI_Bcast");
    if (rank_ != root) {
      message.clear();
      message.bytes().resize(static_cast<size_t>(size));
    }
    check(MPI_Bcast(message.bytes().data(), size, MPI_BYTE, static_cast<int>(root), MPI_COMM_WORLD), "MPI_Bcast");
    message.rewind();
  }

 private:
  uint32_t rank_ = 0, ranks_ = 1;
  bool finalize_ = false;
  std::vector<int> sizes_, offsets_;
  std::vector<uint8_t> gathered_;
};

}  // namespace

bool mpi_exchange_available() { return true; }

std::unique_ptr<RankExchange> make_mpi_exchange() { return std::make_unique<MpiExchange>(); }

}  // namespace gpuvp::parallel
