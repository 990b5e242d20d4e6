// The exchange between processes (ranks) that each simulate some of the GPU's SM partitions.
//
// Every rank runs the whole platform and its own copy of the host program, and steps only the
// SMs it owns (`owner(sm)`); at each window boundary the ranks swap what their SMs' windows
// produced (platform/parallel/README.md, "SM partitions in other ranks"). Two implementations
// of one interface: `InProcessExchange` (one rank: the in-process run, every SM local) and the
// MPI one (`make_mpi_exchange`, Open MPI; built with the CMake option GPUVP_MPI). Calls are
// collective: every rank makes the same calls in the same order.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace gpuvp::parallel {

// A flat byte message: trivially copyable values and strings appended in order, read back in the
// same order. Reading past the end throws std::runtime_error (a rank sent something else).
class Message {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "Message::put takes plain values");
    const auto* p = reinterpret_cast<const uint8_t*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  void put_bytes(const void* data, size_t size) {
    put<uint64_t>(size);
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  void put_string(const std::string& s) { put_bytes(s.data(), s.size()); }

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>, "Message::get returns plain values");
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  // The next put_bytes() block: its size, and a pointer into the message.
  const uint8_t* get_bytes(size_t& size) {
    size = static_cast<size_t>(get<uint64_t>());
    return take(size);
  }
  std::string get_string() {
    size_t size = 0;
    const uint8_t* p = get_bytes(size);
    return std::string(reinterpret_cast<const char*>(p), size);
  }
  bool at_end() const { return read_ == bytes_.size(); }

  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  void clear() {
    bytes_.clear();
    read_ = 0;
  }
  void rewind() { read_ = 0; }

 private:
  const uint8_t* take(size_t size) {
    if (size > bytes_.size() - read_) {
      throw std::runtime_error("rank exchange: a message ended " + std::to_string(size - (bytes_.size() - read_)) +
                               " byte(s) early (the ranks disagree on what they exchange)");
    }
    const uint8_t* p = bytes_.data() + read_;
    read_ += size;
    return p;
  }
  std::vector<uint8_t> bytes_;
  size_t read_ = 0;
};

class RankExchange {
 public:
  virtual ~RankExchange() = default;
  virtual uint32_t rank() const = 0;
  virtual uint32_t ranks() const = 0;
  // The rank that steps SM `sm` of `count`: SMs dealt out in turn (neighbouring SMs, which the
  // CTA scheduler fills first, land on different ranks).
  uint32_t owner(uint32_t sm) const { return sm % ranks(); }
  // Collective: every rank's `mine`, in rank order, into `all` (resized to ranks(); each message
  // rewound for reading). Same result on every rank.
  virtual void all_gather(const Message& mine, std::vector<Message>& all) = 0;
  // Collective: rank `root`'s `message` to every rank (replacing theirs; rewound for reading).
  virtual void broadcast(Message& message, uint32_t root) = 0;
};

// One rank: every SM is local; all_gather hands back the rank's own message.
class InProcessExchange final : public RankExchange {
 public:
  uint32_t rank() const override { return 0; }
  uint32_t ranks() const override { return 1; }
  void all_gather(const Message& mine, std::vector<Message>& all) override {
    all.resize(1);
    all[0].clear();
    all[0].bytes() = mine.bytes();
  }
  void broadcast(Message& message, uint32_t) override { message.rewind(); }
};

// True when this gpuvp was built with MPI (GPUVP_MPI).
bool mpi_exchange_available();
// Initializes MPI (finalized when the exchange is destroyed) and returns the exchange over
// MPI_COMM_WORLD. Throws std::runtime_error when built without MPI or when MPI fails.
std::unique_ptr<RankExchange> make_mpi_exchange();

}  // namespace gpuvp::parallel
