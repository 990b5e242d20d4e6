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
//
// A WakeDomain runs several modules' queues in one process (the memory side: crossbar, HBM, L2
// slices): wakes due at one time run in (time, queue's order of joining, key) order, and a wake
// one module asks of another for the current time runs in the same pass. What runs first at one
// simulated time then no longer depends on SystemC's timed-event queue, whose order among equal
// times follows its history (so a trace replay, which feeds the same requests from other
// processes, sees the memory side act in the same order as the run it was captured from).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <systemc>

#include "models/tlm/clock_domain.h"

namespace gpuvp::memory {

class WakeQueue;

// One method process for the wake queues of several modules (see above; a queue given none makes
// a domain of its own). Build it before the modules, during elaboration, and hand it to each
// module's WakeQueue; it outlives them.
// A domain built with kOffSystemC has no process: its owner runs it on whatever thread it
// simulates on, with its own clock (next_time, run_next), outside SystemC time (a partition
// of platform/parallel/README.md).
class WakeDomain {
 public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  struct OffSystemC {};
  static constexpr OffSystemC kOffSystemC{};
  explicit WakeDomain(OffSystemC) : off_systemc_(true) {}
  explicit WakeDomain(const char* name) {
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&event_);
    sc_core::sc_spawn([this] { run(); }, sc_core::sc_gen_unique_name(name), &opts);
  }
  WakeDomain(const WakeDomain&) = delete;
  WakeDomain& operator=(const WakeDomain&) = delete;

  // Off SystemC: the time of the earliest wake of any member queue (kNever: none), and running
  // it (the earliest; among equal times the queue that joined first, then the lower key).
  inline uint64_t next_time() const;
  inline void run_next();

 private:
  friend class WakeQueue;
  void join(WakeQueue* queue) { queues_.push_back(queue); }
  void leave(WakeQueue* queue) {
    for (auto& q : queues_) {
      if (q == queue) q = nullptr;
    }
  }
  // A member queue has a wake at t_ps.
  void request(uint64_t t_ps) {
    if (!off_systemc_ && !running_ && t_ps < armed_) arm(t_ps);
  }
  void arm(uint64_t t_ps) {
    armed_ = t_ps;
    const uint64_t now = current_time().value();
    event_.notify(t_ps > now ? sc_core::sc_time::from_value(t_ps - now) : sc_core::SC_ZERO_TIME);
  }
  inline void run();

  std::vector<WakeQueue*> queues_;  // in the order they joined: that order breaks time ties
  sc_core::sc_event event_;
  uint64_t armed_ = kNever;  // time event_ is notified for (kNever: not notified)
  bool running_ = false;
  bool off_systemc_ = false;  // no process: the owner runs the wakes (next_time, run_next)
};

class WakeQueue {
 public:
  using Handler = std::function<void(uint32_t key)>;
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  // Joins `domain`, or spawns a process of its own (a domain of one queue): call while the owning
  // module is being constructed.
  WakeQueue(const char* name, uint32_t keys, Handler handler, WakeDomain* domain = nullptr)
      : slot_(keys, kNotQueued),
        handler_(std::move(handler)),
        own_domain_(domain == nullptr ? std::make_unique<WakeDomain>(name) : nullptr),
        domain_(domain == nullptr ? own_domain_.get() : domain) {
    heap_.reserve(keys);
    domain_->join(this);
  }
  ~WakeQueue() { domain_->leave(this); }
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
    domain_->request(t_ps);
  }
  // Time of the key's pending wake, kNever if none.
  uint64_t due(uint32_t key) const { return slot_[key] == kNotQueued ? kNever : heap_[slot_[key]].first; }

 private:
  friend class WakeDomain;
  uint64_t front_time() const { return heap_.empty() ? kNever : heap_.front().first; }
  void run_front() {
    const uint32_t key = heap_.front().second;
    pop_top();
    handler_(key);
  }

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

  std::vector<uint32_t> slot_;  // per key: index of its entry in heap_, kNotQueued if none
  std::vector<Item> heap_;      // min-heap on (time, key)
  Handler handler_;
  std::unique_ptr<WakeDomain> own_domain_;  // the process of a queue given no domain
  WakeDomain* domain_;                      // runs this queue's wakes
};

// Every due wake of every member queue, the earliest first; among equal times the queue that
// joined first, and within a queue the lower key. Wakes asked for now by a handler run in this
// pass.
void WakeDomain::run() {
  const uint64_t now = current_time().value();
  armed_ = kNever;
  running_ = true;
  for (;;) {
    WakeQueue* next = nullptr;
    uint64_t best = kNever;
    for (WakeQueue* q : queues_) {
      if (q == nullptr) continue;
      const uint64_t t = q->front_time();
      if (t <= now && t < best) {
        best = t;
        next = q;
      }
    }
    if (next == nullptr) break;
    next->run_front();
  }
  running_ = false;
  const uint64_t earliest = next_time();
  if (earliest != kNever) arm(earliest);
}

uint64_t WakeDomain::next_time() const {
  uint64_t best = kNever;
  for (const WakeQueue* q : queues_) {
    if (q != nullptr) best = std::min(best, q->front_time());
  }
  return best;
}

void WakeDomain::run_next() {
  WakeQueue* next = nullptr;
  uint64_t best = kNever;
  for (WakeQueue* q : queues_) {
    if (q != nullptr && q->front_time() < best) {
      best = q->front_time();
      next = q;
    }
  }
  if (next != nullptr) next->run_front();
}

}  // namespace gpuvp::memory
