#include "platform/parallel/thread_pool.h"

#include <chrono>
#include <limits>
#include <stdexcept>

namespace gpuvp::parallel {

const char* to_string(Distribution distribution) noexcept {
  return distribution == Distribution::kStatic ? "static" : "dynamic";
}

Distribution parse_distribution(const std::string& text) {
  if (text == "static") return Distribution::kStatic;
  if (text == "dynamic") return Distribution::kDynamic;
  throw std::invalid_argument("unknown SM work distribution '" + text + "' (expected static or dynamic)");
}

ThreadPool::ThreadPool(uint32_t threads) {
  if (threads == 0) throw std::invalid_argument("ThreadPool: threads must be at least 1");
  failed_index_.assign(threads, std::numeric_limits<size_t>::max());
  failure_.resize(threads);
  workers_.reserve(threads - 1);
  for (uint32_t t = 1; t < threads; ++t) workers_.emplace_back([this, t] { worker(t); });
}

namespace {
// Spins until `done()` or kSpinMicros have passed; true when done() held.
template <class Done>
bool spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(ThreadPool::kSpinMicros);
  for (uint32_t k = 1;; ++k) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if ((k & 63) == 0 && std::chrono::steady_clock::now() >= deadline) return done();
  }
}
}  // namespace

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  start_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_share(uint32_t thread) {
  const std::function<void(size_t)>& body = *body_;
  auto one = [&](size_t i) {
    try {
      body(i);
    } catch (...) {
      if (i < failed_index_[thread]) {
        failed_index_[thread] = i;
        failure_[thread] = std::current_exception();
      }
    }
  };
  if (distribution_ == Distribution::kStatic) {
    const size_t n = threads();
    const size_t begin = count_ * thread / n, end = count_ * (thread + 1) / n;
    for (size_t i = begin; i < end; ++i) one(i);
  } else {
    for (size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_;
         i = next_.fetch_add(1, std::memory_order_relaxed)) {
      one(i);
    }
  }
}

void ThreadPool::worker(uint32_t thread) {
  uint64_t seen = 0;
  while (true) {
    auto started = [&] {
      return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen;
    };
    if (!spin_until(started)) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_workers_;
      start_.wait(lock, started);
      --sleeping_workers_;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    run_share(thread);
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (caller_sleeping_) done_.notify_one();
    }
  }
}

void ThreadPool::run(size_t count, Distribution distribution, const std::function<void(size_t)>& body) {
  if (workers_.empty() || count < 2) {
    for (size_t i = 0; i < count; ++i) body(i);  // nothing to share: no wake-up
    return;
  }
  begin(count, distribution, body);
  finish();
}

void ThreadPool::start(size_t count, const std::function<void(size_t)>& body) {
  if (started_) throw std::logic_error("ThreadPool::start: the last phase was not joined");
  started_ = true;
  pooled_ = !workers_.empty() && count != 0;
  if (pooled_) {
    begin(count, Distribution::kDynamic, body);
  } else {
    count_ = count;
    body_ = &body;
  }
}

void ThreadPool::join() {
  if (!started_) return;
  started_ = false;
  if (pooled_) {
    finish();
    return;
  }
  const std::function<void(size_t)>& body = *body_;
  const size_t count = count_;
  body_ = nullptr;
  for (size_t i = 0; i < count; ++i) body(i);
}

void ThreadPool::begin(size_t count, Distribution distribution, const std::function<void(size_t)>& body) {
  ++phases_;
  count_ = count;
  distribution_ = distribution;
  body_ = &body;
  next_.store(0, std::memory_order_relaxed);
  for (auto& f : failed_index_) f = std::numeric_limits<size_t>::max();
  for (auto& e : failure_) e = nullptr;
  running_.store(static_cast<uint32_t>(workers_.size()), std::memory_order_relaxed);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
    wake = sleeping_workers_ != 0;
  }
  if (wake) start_.notify_all();
}

void ThreadPool::finish() {
  run_share(0);
  auto finished = [&] { return running_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(finished)) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_ = true;
    done_.wait(lock, finished);
    caller_sleeping_ = false;
  }
  body_ = nullptr;
  size_t lowest = std::numeric_limits<size_t>::max();
  std::exception_ptr first;
  for (size_t t = 0; t < failure_.size(); ++t) {
    if (failure_[t] && failed_index_[t] < lowest) {
      lowest = failed_index_[t];
      first = failure_[t];
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace gpuvp::parallel
