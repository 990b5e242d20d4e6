// One SystemC method process and one sc_event for many timed wake-ups of a module: what would
// otherwise be one sc_event and one process per channel or per output port. SystemC's timed
// queue then holds at most one entry per module instead of one per port (each SystemC timed
// notification costs a heap insert, a heap extract over all pending events of the simulation
// and a process dispatch; here a wake is a push and a pop on a small heap of this module).
//
// Semantics per key are those of an sc_event notified with a delay: at(key, t) asks for
// handler(key) at absolute time t (>= now); while a wake is pending for the key, an earlier
// request replaces it and a later one is ignored. Explicit, deterministic order: wakes due at
// the same time run in increasing key order; a wake requested for the current time from inside
// a handler runs in the same pass, after the wakes of lower keys (where an sc_event would run
// in the next delta cycle); one requested for the current time from outside runs in the next
// delta cycle.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include <systemc>

#include "models/tlm/clock_domain.h"

namespace gpuvp::memory {

class WakeQueue {
 public:
  using Handler = std::function<void(uint32_t key)>;
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  // Spawns the method process: call while the owning module is being constructed.
  WakeQueue(const char* name, uint32_t keys, Handler handler)
      : slot_(keys, kNotQueued), handler_(std::move(handler)) {
    heap_.reserve(keys);
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&event_);
    sc_core::sc_spawn([this] { run(); }, sc_core::sc_gen_unique_name(name), &opts);
  }
  WakeQueue(const WakeQueue&) = delete;
  WakeQueue& operator=(const WakeQueue&) = delete;

  // handler(key) at absolute time t_ps (at least the current time).
  void at(uint32_t key, uint64_t t_ps) {
    if (t_ps >= due(key)) return;
    if (slot_[key] == kNotQueued) {
      slot_[key] = static_cast<uint32_t>(heap_.size());
      heap_.push_back(Item{t_ps, key});
    } else {
      heap_[slot_[key]].first = t_ps;  // earlier than before: the entry can only move up
    }
    sift_up(slot_[key]);
    if (!running_ && t_ps < armed_) arm(t_ps);
  }
  // Time of the key's pending wake, kNever if none.
  uint64_t due(uint32_t key) const { return slot_[key] == kNotQueued ? kNever : heap_[slot_[key]].first; }

 private:
  // An indexed binary min-heap: one entry per key with a pending wake, slot_ says where, so an
  // earlier wake moves the key's entry up instead of leaving a stale one behind. Entries are
  // unique (time, key) pairs, so the order they come out in is that of (time, key) alone.
  using Item = std::pair<uint64_t, uint32_t>;  // (time, key): the smallest runs first
  static constexpr uint32_t kNotQueued = std::numeric_limits<uint32_t>::max();

  void place(uint32_t slot, const Item& item) {
    heap_[slot] = item;
    slot_[item.second] = slot;
  }
  void sift_up(uint32_t slot) {
    const Item item = heap_[slot];
    while (slot > 0) {
      const uint32_t parent = (slot - 1) / 2;
      if (!(item < heap_[parent])) break;
      place(slot, heap_[parent]);
      slot = parent;
    }
    place(slot, item);
  }
  void pop_top() {
    slot_[heap_.front().second] = kNotQueued;
    const Item last = heap_.back();
    heap_.pop_back();
    if (heap_.empty()) return;
    const auto size = static_cast<uint32_t>(heap_.size());
    uint32_t slot = 0;
    for (;;) {
      uint32_t child = 2 * slot + 1;
      if (child >= size) break;
      if (child + 1 < size && heap_[child + 1] < heap_[child]) ++child;
      if (!(heap_[child] < last)) break;
      place(slot, heap_[child]);
      slot = child;
    }
    place(slot, last);
  }

  void arm(uint64_t t_ps) {
    armed_ = t_ps;
    const uint64_t now = current_time().value();
    event_.notify(t_ps > now ? sc_core::sc_time::from_value(t_ps - now) : sc_core::SC_ZERO_TIME);
  }

  void run() {
    const uint64_t now = current_time().value();
    armed_ = kNever;
    running_ = true;
    while (!heap_.empty() && heap_.front().first <= now) {
      const uint32_t key = heap_.front().second;
      pop_top();
      handler_(key);
    }
    running_ = false;
    if (!heap_.empty()) arm(heap_.front().first);
  }

  std::vector<uint32_t> slot_;  // per key: index of its entry in heap_, kNotQueued if none
  std::vector<Item> heap_;      // min-heap on (time, key)
  Handler handler_;
  sc_core::sc_event event_;
  uint64_t armed_ = kNever;  // time event_ is notified for (kNever: not notified)
  bool running_ = false;
};

}  // namespace gpuvp::memory
