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
#include <queue>
#include <utility>
#include <vector>

#include <systemc>

namespace gpuvp::memory {

class WakeQueue {
 public:
  using Handler = std::function<void(uint32_t key)>;
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  // Spawns the method process: call while the owning module is being constructed.
  WakeQueue(const char* name, uint32_t keys, Handler handler) : due_(keys, kNever), handler_(std::move(handler)) {
    std::vector<Item> storage;
    storage.reserve(std::size_t{keys} * 2 + 16);
    heap_ = Heap(std::greater<Item>(), std::move(storage));
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
    if (t_ps >= due_[key]) return;
    due_[key] = t_ps;
    heap_.push(Item{t_ps, key});
    if (!running_ && t_ps < armed_) arm(t_ps);
  }
  uint64_t due(uint32_t key) const { return due_[key]; }

 private:
  using Item = std::pair<uint64_t, uint32_t>;  // (time, key): the smallest runs first
  using Heap = std::priority_queue<Item, std::vector<Item>, std::greater<Item>>;

  void arm(uint64_t t_ps) {
    armed_ = t_ps;
    const uint64_t now = sc_core::sc_time_stamp().value();
    event_.notify(t_ps > now ? sc_core::sc_time::from_value(t_ps - now) : sc_core::SC_ZERO_TIME);
  }

  void run() {
    const uint64_t now = sc_core::sc_time_stamp().value();
    armed_ = kNever;
    running_ = true;
    while (!heap_.empty() && heap_.top().first <= now) {
      const Item it = heap_.top();
      heap_.pop();
      if (due_[it.second] != it.first) continue;  // replaced by an earlier wake that already ran
      due_[it.second] = kNever;
      handler_(it.second);
    }
    running_ = false;
    // Drop replaced wakes at the top, so that the process is not woken for nothing.
    while (!heap_.empty() && due_[heap_.top().second] != heap_.top().first) heap_.pop();
    if (!heap_.empty()) arm(heap_.top().first);
  }

  std::vector<uint64_t> due_;  // per key: time of its pending wake, kNever if none
  Heap heap_;
  Handler handler_;
  sc_core::sc_event event_;
  uint64_t armed_ = kNever;  // time event_ is notified for (kNever: not notified)
  bool running_ = false;
};

}  // namespace gpuvp::memory
