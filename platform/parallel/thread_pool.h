// A fixed pool of host threads for deterministic parallel phases (SMs stepped in parallel
// inside the SystemC process). The calling thread is thread 0 and takes part; the other
// threads - 1 workers sleep on a condition variable between phases (no busy waiting while the
// host or the rest of the simulation runs). Waits spin for a short while (kSpinMicros) before
// they block: phases come back to back, and a futex wake-up costs tens of microseconds on a
// virtual machine, more than a small phase's work.
//
//   ThreadPool pool(4);
//   pool.run(n, Distribution::kDynamic, [&](size_t i) { ... touches only item i ... });
//
// Distribution::kStatic: thread t runs the t-th contiguous block of [0, n) (no shared state
// while running). kDynamic: threads take the next index from one shared counter (balances
// uneven items; one atomic increment per item). The body runs on several threads at once; it
// must touch only its item's state. An exception from the body is rethrown on the caller
// after the phase: the one of the lowest index, so what is reported does not depend on timing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpuvp::parallel {

enum class Distribution : uint8_t { kStatic, kDynamic };
const char* to_string(Distribution distribution) noexcept;
// "static" / "dynamic"; throws std::invalid_argument naming the value otherwise.
Distribution parse_distribution(const std::string& text);

class ThreadPool {
 public:
  // threads >= 1 (1: no workers, run() is a plain loop).
  explicit ThreadPool(uint32_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  uint32_t threads() const { return static_cast<uint32_t>(workers_.size()) + 1; }
  // Runs body(i) for every i in [0, count) and returns when all are done. Not reentrant.
  void run(size_t count, Distribution distribution, const std::function<void(size_t)>& body);
  // The same in two halves, so that the caller can do other work while the workers run items:
  // start() hands [0, count) to the workers (taken one by one) and returns at once; join() runs
  // on the caller the items no worker took yet, waits for the workers and rethrows as run()
  // does. `body` must stay alive until join() returns. With no workers start() only records the
  // phase and join() runs every item. No run() or start() between the two.
  void start(size_t count, const std::function<void(size_t)>& body);
  void start(size_t count, std::function<void(size_t)>&& body) = delete;  // a temporary dies before join()
  void join();
  bool started() const { return started_; }
  // Phases that woke the workers (count >= 2 and threads >= 2), for tests and statistics.
  uint64_t parallel_phases() const { return phases_; }
  // How long a worker waiting for the next phase, or the caller waiting for the workers, spins
  // before it sleeps on its condition variable.
  static constexpr int64_t kSpinMicros = 50;

 private:
  void worker(uint32_t thread);
  void run_share(uint32_t thread);
  void begin(size_t count, Distribution distribution, const std::function<void(size_t)>& body);
  void finish();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_;  // workers wait for a new generation
  std::condition_variable done_;   // the caller waits for the running workers
  // Bumped under mutex_ (so a worker about to sleep cannot miss it); read by spinning workers.
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint32_t> running_{0};  // workers still in this phase
  uint32_t sleeping_workers_ = 0;     // guarded by mutex_
  bool caller_sleeping_ = false;      // guarded by mutex_
  std::atomic<bool> stop_{false};
  // The current phase (written before generation_ is bumped).
  size_t count_ = 0;
  Distribution distribution_ = Distribution::kStatic;
  const std::function<void(size_t)>* body_ = nullptr;
  std::atomic<size_t> next_{0};
  std::vector<size_t> failed_index_;              // per thread: lowest failing index (or SIZE_MAX)
  std::vector<std::exception_ptr> failure_;       // per thread: its exception
  uint64_t phases_ = 0;
  bool started_ = false;   // start() was called, join() not yet
  bool pooled_ = false;    // the started phase woke the workers
};

}  // namespace gpuvp::parallel
