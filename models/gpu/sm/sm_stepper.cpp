#include "models/gpu/sm/sm_stepper.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
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
      fresh_(sms_.size(), 1),
      suspended_(sms_.size(), 0),
      window_(std::max<uint32_t>(params.window, 1)),
      windowed_(window_ > 1),
      window_profile_(params.window_profile),
      overlap_(params.overlap),
      sm_cpu_seconds_(sms_.size(), 0.0),
      next_send_(sms_.size(), kNever),
      owned_(sms_.size(), 1),
      pool_(std::max<uint32_t>(params.threads, 1)) {
  for (uint32_t i = 0; i < sms_.size(); ++i) {
    if (sms_[i]->index() != i) throw std::invalid_argument("SmStepper: SM " + std::to_string(i) + " has index " +
                                                           std::to_string(sms_[i]->index()));
    sms_[i]->set_stepper(this);
    sms_[i]->set_windowed(windowed_);
  }
  due_.reserve(sms_.size());
  window_body_ = [this](size_t k) {
    const uint32_t i = stepped_[k];
    if (!window_profile_) {
      next_[i] = run_sm(i, next_[i], window_end_, true);
      return;
    }
    const double cpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    next_[i] = run_sm(i, next_[i], window_end_, true);
    sm_cpu_seconds_[i] += cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  };
  phase_body_ = [this](size_t k) {
    if (k < partitions_.size()) {
      advance_partition(k);
    } else {
      window_body_(k - partitions_.size());
    }
  };
  SC_HAS_PROCESS(SmStepper);
  SC_THREAD(thread);
  SC_METHOD(deliver_accepted);
  sensitive << deferred_ready_;
  dont_initialize();
}

void SmStepper::deliver_accepted() {
  // A request was accepted: its SM's next ones whose cycle has come go now, the rest at theirs.
  // Only the SMs with a delivery queue (delivering_, in index order) can have any.
  const uint64_t now = clock_.cycle_at(current_time());
  uint64_t next = kNever;
  for (const uint32_t i : delivering_) {
    if (next_send_[i] <= now) {
      sms_[i]->deliver_deferred(now);
      next_send_[i] = sms_[i]->next_deferred();
    }
    next = std::min(next, next_send_[i]);
  }
  if (next != kNever && !in_cycle_) next_trigger(clock_.time_of_cycle(next) - current_time(), deferred_ready_);
}

SmStepper::~SmStepper() {
  try {
    quiesce();
  } catch (...) {  // a window's error has nobody left to report to
  }
  if (window_profile_) {
    for (const double seconds : sm_cpu_seconds_) window_cpu_seconds_ += seconds;
    // CPU seconds of every thread of the process: the windows' part can be shared by threads,
    // the rest (boundaries, the memory side, SystemC, the host program's calls) cannot.
    const double process_cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    std::fprintf(stderr,
                 "gpuvp: sm_stepper: %llu windows of %u cycles, %u threads, %llu joined before their phase's end: "
                 "wall %.3f s in windows, %.3f s at boundaries; CPU %.3f s in windows, %.3f s in partitions, %.3f s "
                 "elsewhere in the process\n",
                 static_cast<unsigned long long>(windows_), window_, threads(),
                 static_cast<unsigned long long>(early_joins_), window_seconds_, boundary_seconds_,
                 window_cpu_seconds_, partition_cpu_seconds_,
                 process_cpu - window_cpu_seconds_ - partition_cpu_seconds_);
  }
}

uint64_t SmStepper::arrival_cycle(uint64_t cycle) const {
  // While SystemC time is in phase p the SMs run (or ran) window p + 1: an outside event takes
  // effect at the start of window p + 2 at the earliest, whether or not the SM is busy (windows
  // are aligned to multiples of the window length, so idle skipping changes nothing). An event
  // announced for a later cycle (a response with the crossbar's cluster latency as its annotated
  // delay) takes effect at its own cycle: no SM has run that far.
  if (!windowed_) return cycle;
  return std::max(cycle, (clock_.cycle_at(current_time()) / window_ + 2) * window_);
}

void SmStepper::join_window() {
  window_running_ = false;
  pool_.join();
}

void SmStepper::add_partition(parallel::TimePartition* partition) {
  if (partition == nullptr) return;
  partitions_.push_back(partition);
}

void SmStepper::advance_partition(size_t k) {
  if (!window_profile_) {
    partitions_[k]->advance(partition_until_);
    return;
  }
  const double cpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  partitions_[k]->advance(partition_until_);
  partition_cpu_seconds_ += cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;  // one item per phase: no race
}

void SmStepper::detach_partitions() {
  if (!partitions_attached_) return;
  partitions_attached_ = false;
  for (parallel::TimePartition* partition : partitions_) partition->detach();
}

void SmStepper::wake(uint32_t sm, uint64_t cycle) {
  quiesce();  // next_ and fresh_ belong to the window's threads while it runs
  schedule(sm, arrival_cycle(cycle));
}

void SmStepper::schedule(uint32_t sm, uint64_t cycle) {
  // The SM may have run ahead of SystemC time: never before its last cycle.
  if (windowed_ && !fresh_[sm]) cycle = std::max(cycle, sms_[sm]->last_cycle() + 1);
  next_[sm] = std::min(next_[sm], cycle);
  earliest_ = std::min(earliest_, cycle);
  if (!in_cycle_) wake_.notify(sc_core::SC_ZERO_TIME);
}

void SmStepper::thread() {
  using sc_core::sc_time_stamp;
  while (true) {
    if (windowed_) {
      // Responses that arrived since the last look: no window is running now, and their cycles
      // were set when they arrived (arrival_cycle); each SM applies them when it next runs.
      for (const uint32_t i : arrived_) {
        const uint64_t first = sms_[i]->take_inbox();
        if (first != kNever) schedule(i, first);
      }
      arrived_.clear();
      const uint64_t phase = next_phase();
      if (phase == kNever) {
        detach_partitions();
        wait(wake_);
        continue;
      }
      const sc_core::sc_time at = clock_.time_of_cycle(phase * window_);
      if (at > current_time()) {
        detach_partitions();  // no phase follows at once: they must not lag behind the gap
        wait(at - current_time(), wake_);
        if (current_time() < at) continue;  // woken before: something may be due earlier
      }
      run_phase(std::max(phase, clock_.cycle_at(current_time()) / window_));
      continue;
    }
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

uint64_t SmStepper::run_sm(uint32_t i, uint64_t c, uint64_t end, bool staged) {
  if (!windowed_) return step_sm(i, c, end, staged);
  Sm& sm = *sms_[i];
  sm.apply_arrivals(end);
  // A launch for a later window keeps the SM due then, idle or not.
  return std::min(step_sm(i, c, end, staged), sm.next_launch_cycle());
}

uint64_t SmStepper::step_sm(uint32_t i, uint64_t c, uint64_t end, bool staged) {
  Sm& sm = *sms_[i];
  while (c < end) {
    if (!fresh_[i] && c > sm.last_cycle() + 1) sm.account_skipped(c - sm.last_cycle() - 1);
    fresh_[i] = 0;
    sm.step_parallel(c);
    if (staged && sm.suspended()) {
      suspended_[i] = 1;
      return c;
    }
    uint64_t next = sm.step_serial(c);
    if (sm.idle()) {
      fresh_[i] = 1;
      return kNever;
    }
    if (!params_.idle_skip) next = c + 1;
    if (next == kNever) return kNever;
    c = next;
  }
  return c;
}

double SmStepper::cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void SmStepper::run_due(size_t n, const std::function<void(size_t)>& body) {
  using steady = std::chrono::steady_clock;
  const uint64_t min_work = params_.parallel_min_work;
  if (pool_.threads() > 1 && n >= 2 && min_work != 0) {
    const uint64_t phase = phases_run_++ & 63;
    if (phase == 0) {  // timed on this thread: the estimate for the next 63
      const auto t0 = steady::now();
      for (size_t k = 0; k < n; ++k) body(k);
      sm_phase_ns_ = std::chrono::duration<double, std::nano>(steady::now() - t0).count() / static_cast<double>(n);
      return;
    }
    // Sharing pays when the work it saves beats what the pool costs on this host (wake-ups,
    // joins, imbalance: measured on the pool's own phases). Every 64th eligible phase goes to
    // the pool whatever the estimate, so that a cost inflated once is measured again.
    const double work = sm_phase_ns_ * static_cast<double>(n);
    const double sharers = static_cast<double>(std::min<size_t>(n, pool_.threads()));
    const double saved = work - work / sharers;
    if (work < static_cast<double>(min_work) || (saved < pool_cost_ns_ && phase != 32)) {
      for (size_t k = 0; k < n; ++k) body(k);
      return;
    }
    const auto t0 = steady::now();
    pool_.run(n, params_.distribution, body);
    const double wall = std::chrono::duration<double, std::nano>(steady::now() - t0).count();
    pool_cost_ns_ += (std::max(0.0, wall - work / sharers) - pool_cost_ns_) / 8;
    return;
  }
  pool_.run(n, params_.distribution, body);  // one thread, or one SM: a plain loop
}

uint64_t SmStepper::next_phase() const {
  // SM window w runs beside phase w - 1; a delivery stamped c belongs to phase c / W.
  uint64_t phase = kNever;
  if (earliest_ != kNever) phase = earliest_ / window_ == 0 ? 0 : earliest_ / window_ - 1;
  for (const uint32_t i : delivering_) {
    const uint64_t c = next_send_[i];
    if (c != kNever) phase = std::min(phase, c / window_);
  }
  return phase;
}

void SmStepper::run_phase(uint64_t phase) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const uint64_t phase_end = (phase + 1) * window_;
  window_end_ = phase_end + window_;
  in_cycle_ = true;
  due_.clear();
  bool observed = false, captured = false;
  for (uint32_t i = 0; i < sms_.size(); ++i) {
    if (next_[i] >= window_end_) continue;
    due_.push_back(i);
    observed = observed || sms_[i]->observed();
    captured = captured || sms_[i]->captures();
  }
  stepped_.clear();
  for (const uint32_t i : due_) {
    if (owned_[i]) stepped_.push_back(i);
  }
  if (!due_.empty()) {
    ++windows_;
    for (const uint32_t i : due_) sms_[i]->set_defer_commit(true);
    // Every phase with a window advances the partitions up to its start, whoever runs them, so
    // that what SystemC sees of them (exchanges at phase starts, their own process only between
    // such phases) is the same for any thread count.
    const bool pooled = !stepped_.empty() && overlap_ && pool_.threads() >= 2 && !observed && !captured;
    if (!partitions_.empty()) {
      if (!partitions_attached_) {
        for (parallel::TimePartition* partition : partitions_) partition->attach();
        partitions_attached_ = true;
      }
      for (parallel::TimePartition* partition : partitions_) partition->exchange();
      partition_until_ = current_time().value();
      if (!pooled) {
        for (size_t k = 0; k < partitions_.size(); ++k) advance_partition(k);
      }
    }
    if (stepped_.empty()) {
      // every due SM is another rank's: its window arrives at the boundary
    } else if (!pooled) {  // the window first, the phase after it
      if (observed) {
        for (size_t k = 0; k < stepped_.size(); ++k) window_body_(k);
      } else {
        run_due(stepped_.size(), window_body_);
      }
    } else if (!partitions_.empty()) {
      pool_.start(partitions_.size() + stepped_.size(), phase_body_);  // a worker takes a partition first
      window_running_ = true;
    } else {
      pool_.start(stepped_.size(), window_body_);
      window_running_ = true;
    }
  } else {
    detach_partitions();  // a phase without a window does not advance them: they drive themselves
  }
  in_cycle_ = false;  // wakes of the phase notify the loop, which looks again after it
  // The phase: what the last window sent, at its stamps, in (cycle, SM, sequence) order, with
  // the memory side running in SystemC time up to the phase's end. Requests behind one the
  // memory side has not accepted yet wait for it (deliver_accepted). A min-heap of (stamp, SM)
  // holds one entry per SM with something to send in this phase.
  const auto later = std::greater<std::pair<uint64_t, uint32_t>>();
  sends_.clear();
  for (const uint32_t i : delivering_) {
    const uint64_t c = next_send_[i];
    if (c < phase_end) sends_.emplace_back(c, i);
  }
  std::make_heap(sends_.begin(), sends_.end(), later);
  while (!sends_.empty()) {
    const uint64_t c = sends_.front().first;
    const sc_core::sc_time at = clock_.time_of_cycle(c);
    if (at > current_time()) wait(at - current_time());
    while (!sends_.empty() && sends_.front().first == c) {  // the SMs of stamp c, in index order
      const uint32_t i = sends_.front().second;
      std::pop_heap(sends_.begin(), sends_.end(), later);
      sends_.pop_back();
      sms_[i]->deliver_deferred(c);
      const uint64_t next = next_send_[i] = sms_[i]->next_deferred();
      if (next < phase_end) {
        sends_.emplace_back(std::max(next, c + 1), i);
        std::push_heap(sends_.begin(), sends_.end(), later);
      }
    }
  }
  const sc_core::sc_time end_time = clock_.time_of_cycle(phase_end);
  if (!due_.empty() && end_time > current_time()) wait(end_time - current_time());
  const auto t1 = clock::now();
  if (window_running_) join_window();
  const auto t2 = clock::now();
  in_cycle_ = true;
  if (!due_.empty()) boundary(window_end_);
  delivering_.erase(std::remove_if(delivering_.begin(), delivering_.end(),
                                   [this](uint32_t i) { return !sms_[i]->deferred_pending(); }),
                    delivering_.end());
  uint64_t earliest = kNever;
  for (const uint64_t n : next_) earliest = std::min(earliest, n);
  earliest_ = earliest;
  in_cycle_ = false;
  const auto t3 = clock::now();
  window_seconds_ += std::chrono::duration<double>(t2 - t1).count();
  boundary_seconds_ += std::chrono::duration<double>((t1 - t0) + (t3 - t2)).count();
}

void SmStepper::boundary(uint64_t end) {
  // In SM order: stores become visible to every SM; SMs stopped before a serial-only instruction
  // finish the window unstaged; deadlocks are reported; what the window sent joins the
  // delivery queues.
  if (exchange_ != nullptr) {
    exchange_windows(end);
  } else {
    commit_and_finish(end);
  }
  const size_t delivering = delivering_.size();
  for (const uint32_t i : due_) {
    if (exchange_ == nullptr) sms_[i]->finish_window();  // ranks: before the exchange
    sms_[i]->hand_over();
    next_send_[i] = sms_[i]->next_deferred();
    if (sms_[i]->deferred_pending()) delivering_.push_back(i);
  }
  std::inplace_merge(delivering_.begin(), delivering_.begin() + static_cast<long>(delivering), delivering_.end());
  delivering_.erase(std::unique(delivering_.begin(), delivering_.end()), delivering_.end());
}

void SmStepper::commit_and_finish(uint64_t end) {
  for (const uint32_t i : due_) {
    sms_[i]->commit_stages();
    sms_[i]->set_defer_commit(false);
  }
  for (const uint32_t i : due_) {
    if (!suspended_[i]) continue;
    suspended_[i] = 0;
    finish_unstaged(i, end);
  }
}

void SmStepper::finish_unstaged(uint32_t i, uint64_t end) {
  Sm& sm = *sms_[i];
  const uint64_t c = next_[i];
  uint64_t next = sm.step_serial(c);  // the rest of cycle c, the serial instruction included
  if (sm.idle()) {
    fresh_[i] = 1;
    next = kNever;
  } else if (!params_.idle_skip) {
    next = c + 1;
  }
  next_[i] = next == kNever ? sm.next_launch_cycle() : run_sm(i, next, end, false);
}

void SmStepper::set_rank_exchange(parallel::RankExchange* exchange) {
  if (exchange == nullptr || exchange->ranks() < 2) {
    exchange_ = nullptr;
    return;
  }
  if (!windowed_) {
    throw std::invalid_argument("SM partitions in several ranks need the windowed model (sim.window > 1, e.g. "
                                "--config v100_windowed); sim.window is " + std::to_string(window_));
  }
  exchange_ = exchange;
  for (uint32_t i = 0; i < sms_.size(); ++i) {
    owned_[i] = exchange->owner(i) == exchange->rank() ? 1 : 0;
    sms_[i]->set_partition(owned_[i] ? Sm::Partition::kOwned : Sm::Partition::kRemote);
  }
}

void SmStepper::exchange_windows(uint64_t end) {
  // Round 1: each rank sends, for each due SM it owns in index order, the SM's index, whether
  // its window stopped before a serial-only instruction, its stages (not committed yet), and
  // unless it stopped, its window (put_window). Every rank then commits every due SM's stages in
  // SM order, as one process does.
  outgoing_.clear();
  for (const uint32_t i : stepped_) {
    outgoing_.put(i);
    outgoing_.put(suspended_[i]);
    sms_[i]->export_stages(outgoing_);
    if (!suspended_[i]) put_window(i);
  }
  exchange_->all_gather(outgoing_, incoming_);
  bool any_suspended = false;
  for (const uint32_t i : due_) {
    Sm& sm = *sms_[i];
    if (owned_[i]) {
      sm.commit_stages();
    } else {
      parallel::Message& in = incoming_[exchange_->owner(i)];
      expect_sm(in, i);
      suspended_[i] = in.get<uint8_t>();
      sm.import_stages(in);
      if (!suspended_[i]) get_window(i, in);
    }
    sm.set_defer_commit(false);
    any_suspended = any_suspended || suspended_[i];
  }
  if (!any_suspended) return;
  // The SMs that stopped finish the window unstaged, one at a time in SM order (each sees the
  // stores and atomics of those before it): the owner runs it and records what it did outside
  // the SM, and the other ranks commit the record.
  for (const uint32_t i : due_) {
    if (!suspended_[i]) continue;
    Sm& sm = *sms_[i];
    serial_log_.clear();
    if (owned_[i]) {
      sm.begin_log();
      finish_unstaged(i, end);
      sm.export_log(serial_log_);
    }
    exchange_->broadcast(serial_log_, exchange_->owner(i));
    const bool runtime_call = owned_[i] ? serial_log_.get<uint8_t>() != 0 : sm.import_log(serial_log_);
    if (runtime_call) {  // every rank has the same flag, so every rank stops here with the same error
      throw std::runtime_error("SM " + std::to_string(i) +
                               " made a device-runtime call (malloc, free or a kernel launch from the device): SM "
                               "partitions in several MPI ranks cannot repeat it in every rank; run the program "
                               "without --mpi");
    }
  }
  // Round 2: the windows of the SMs that finished unstaged.
  outgoing_.clear();
  for (const uint32_t i : stepped_) {
    if (!suspended_[i]) continue;
    outgoing_.put(i);
    put_window(i);
  }
  exchange_->all_gather(outgoing_, incoming_);
  for (const uint32_t i : due_) {
    if (!suspended_[i]) continue;
    suspended_[i] = 0;
    if (owned_[i]) continue;
    parallel::Message& in = incoming_[exchange_->owner(i)];
    expect_sm(in, i);
    get_window(i, in);
  }
}

void SmStepper::put_window(uint32_t i) {
  Sm& sm = *sms_[i];
  sm.finish_window();
  sm.export_window(outgoing_);
  outgoing_.put(next_[i]);
  outgoing_.put(fresh_[i]);
}

void SmStepper::get_window(uint32_t i, parallel::Message& in) {
  sms_[i]->import_window(in);
  next_[i] = in.get<uint64_t>();
  fresh_[i] = in.get<uint8_t>();
}

void SmStepper::expect_sm(parallel::Message& in, uint32_t i) const {
  const auto sent = in.get<uint32_t>();
  if (sent == i) return;
  throw std::runtime_error("rank exchange: rank " + std::to_string(exchange_->owner(i)) + " sent SM " +
                           std::to_string(sent) + " where SM " + std::to_string(i) + " was due");
}

void SmStepper::gather_statistics() {
  if (exchange_ == nullptr) return;
  quiesce();
  outgoing_.clear();
  for (uint32_t i = 0; i < sms_.size(); ++i) {
    if (owned_[i]) sms_[i]->export_statistics(outgoing_);
  }
  exchange_->all_gather(outgoing_, incoming_);
  for (uint32_t i = 0; i < sms_.size(); ++i) {
    if (!owned_[i]) sms_[i]->import_statistics(incoming_[exchange_->owner(i)]);
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
    fresh_[i] = 0;
    observed = observed || sm.observed();
  }
  if (observed) {
    for (const uint32_t i : due_) sms_[i]->step_parallel(c);
  } else {
    run_due(due_.size(), [this, c](size_t k) { sms_[due_[k]]->step_parallel(c); });
  }
  for (const uint32_t i : due_) {
    Sm& sm = *sms_[i];
    uint64_t next = sm.step_serial(c);
    if (sm.idle()) {
      next = kNever;
      fresh_[i] = 1;
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
