#include "models/gpu/sm/sm_stepper.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpuvp::gpu {

namespace {
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
}

SmStepper::SmStepper(sc_core::sc_module_name name, const SmParams& params, const ClockDomain& clock, std::vector<Sm*> sms)
    : sc_core::sc_module(name),
      params_(params),
      clock_(clock),
      sms_(std::move(sms)),
      next_(sms_.size(), kNever),
      fresh_(sms_.size(), true),
      pool_(std::max<uint32_t>(params.threads, 1)) {
  for (uint32_t i = 0; i < sms_.size(); ++i) {
    if (sms_[i]->index() != i) throw std::invalid_argument("SmStepper: SM " + std::to_string(i) + " has index " +
                                                           std::to_string(sms_[i]->index()));
    sms_[i]->set_stepper(this);
  }
  due_.reserve(sms_.size());
  SC_HAS_PROCESS(SmStepper);
  SC_THREAD(thread);
}

SmStepper::~SmStepper() = default;

void SmStepper::wake(uint32_t sm, uint64_t cycle) {
  next_[sm] = std::min(next_[sm], cycle);
  earliest_ = std::min(earliest_, cycle);
  if (!in_cycle_) wake_.notify(sc_core::SC_ZERO_TIME);
}

void SmStepper::thread() {
  using sc_core::sc_time_stamp;
  while (true) {
    const uint64_t due = earliest_;
    if (due == kNever) {
      wait(wake_);
      continue;
    }
    const sc_core::sc_time at = clock_.time_of_cycle(due);
    if (at > current_time()) {
      wait(at - current_time(), wake_);
      if (current_time() < at) continue;  // woken before the edge: something may be due earlier
    }
    step_cycle(due);
  }
}

void SmStepper::step_cycle(uint64_t c) {
  in_cycle_ = true;
  due_.clear();
  bool observed = false;
  // earliest_ becomes the minimum of next_ after this cycle: SMs not due keep theirs (or a wake
  // lowers it, which also lowers earliest_), due SMs get theirs below.
  uint64_t earliest = kNever;
  earliest_ = kNever;
  for (uint32_t i = 0; i < sms_.size(); ++i) {
    if (next_[i] != c) {
      earliest = std::min(earliest, next_[i]);
      continue;
    }
    due_.push_back(i);
    next_[i] = kNever;  // wakes during this cycle lower it again
    Sm& sm = *sms_[i];
    if (!fresh_[i] && c > sm.last_cycle() + 1) sm.account_skipped(c - sm.last_cycle() - 1);
    fresh_[i] = false;
    observed = observed || sm.observed();
  }
  if (observed) {
    for (const uint32_t i : due_) sms_[i]->step_parallel(c);
  } else {
    pool_.run(due_.size(), params_.distribution, [this, c](size_t k) { sms_[due_[k]]->step_parallel(c); });
  }
  for (const uint32_t i : due_) {
    Sm& sm = *sms_[i];
    uint64_t next = sm.step_serial(c);
    if (sm.idle()) {
      next = kNever;
      fresh_[i] = true;
    } else if (!params_.idle_skip) {
      next = c + 1;
    }
    next_[i] = std::min(next_[i], next);
    earliest = std::min(earliest, next_[i]);
  }
  earliest_ = std::min(earliest_, earliest);
  in_cycle_ = false;
}

}  // namespace gpuvp::gpu
