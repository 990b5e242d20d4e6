// Small containers the memory-side modules share on their hot paths: a ring buffer of fixed
// capacity and a min-heap of timed items. Both reserve their storage at construction, so no
// request allocates; the heap breaks time ties by insertion order, so output is deterministic.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuvp::memory {

template <class T>
class Ring {
 public:
  explicit Ring(std::size_t capacity = 0) : slots_(capacity) {}
  void reset(std::size_t capacity) { slots_.assign(capacity, T{}); head_ = size_ = 0; }
  std::size_t capacity() const { return slots_.size(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == slots_.size(); }
  T& front() { return slots_[head_]; }
  // Index arithmetic wraps with a compare, not a division: these run in the schedulers' scans.
  T& at(std::size_t i) { return slots_[wrap(head_ + i)]; }  // i-th oldest
  void push(const T& v) { slots_[wrap(head_ + size_++)] = v; }  // caller checks full()
  void pop() {
    head_ = wrap(head_ + 1);
    --size_;
  }
  // Removes the i-th oldest, keeping the order of the rest. Moves whichever side of i is
  // shorter (schedulers mostly remove old entries, near the head).
  void erase(std::size_t i) {
    if (i < size_ / 2) {
      for (std::size_t k = i; k > 0; --k) at(k) = at(k - 1);
      head_ = wrap(head_ + 1);
    } else {
      for (std::size_t k = i; k + 1 < size_; ++k) at(k) = at(k + 1);
    }
    --size_;
  }

 private:
  std::size_t wrap(std::size_t k) const { return k >= slots_.size() ? k - slots_.size() : k; }  // k < 2 * capacity
  std::vector<T> slots_;
  std::size_t head_ = 0, size_ = 0;
};

template <class T>
class TimedHeap {
 public:
  struct Item {
    uint64_t time;
    uint64_t seq;
    T value;
  };
  explicit TimedHeap(std::size_t reserve = 0) { items_.reserve(reserve); }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  const Item& top() const { return items_.front(); }
  void push(uint64_t time, const T& v) {
    items_.push_back(Item{time, seq_++, v});
    std::push_heap(items_.begin(), items_.end(), later);
  }
  void pop() {
    std::pop_heap(items_.begin(), items_.end(), later);
    items_.pop_back();
  }

 private:
  static bool later(const Item& a, const Item& b) { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  std::vector<Item> items_;
  uint64_t seq_ = 0;
};

}  // namespace gpuvp::memory
