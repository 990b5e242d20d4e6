#include "platform/stats/progress.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

namespace gpuvp::progress {
namespace {

// The figures the models publish. Relaxed atomics: the display needs no ordering between them,
// only values that are not torn.
struct Figures {
  std::atomic<bool> active{false};
  std::atomic<uint64_t> sim_ps{0};
  std::atomic<uint64_t> kernels_done{0};
  std::atomic<uint64_t> current_kernel{~0ull};
  std::atomic<uint64_t> ctas_done{0};
  std::atomic<uint64_t> ctas_total{0};
  std::mutex name_mutex;  // taken once per kernel start and once per redraw
  std::string current_name;
};

Figures& figures() {
  static Figures f;
  return f;
}

// The latest time a model reported (a command that runs several platforms one after another,
// as validate does, shows the current one's time).
void raise_time(uint64_t now_ps) { figures().sim_ps.store(now_ps, std::memory_order_relaxed); }

std::string format_time(double ps) {
  char buffer[32];
  if (ps >= 1e12) std::snprintf(buffer, sizeof buffer, "%.3f s", ps / 1e12);
  else if (ps >= 1e9) std::snprintf(buffer, sizeof buffer, "%.3f ms", ps / 1e9);
  else std::snprintf(buffer, sizeof buffer, "%.3f us", ps / 1e6);
  return buffer;
}

}  // namespace

bool active() { return figures().active.load(std::memory_order_relaxed); }

void kernel_begin(uint64_t kernel_id, const std::string& name, uint64_t ctas_total) {
  Figures& f = figures();
  if (!f.active.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard<std::mutex> lock(f.name_mutex);
    f.current_name = name;
  }
  f.ctas_done.store(0, std::memory_order_relaxed);
  f.ctas_total.store(ctas_total, std::memory_order_relaxed);
  f.current_kernel.store(kernel_id, std::memory_order_relaxed);
}

void cta_done(uint64_t kernel_id, uint64_t now_ps) {
  Figures& f = figures();
  if (!f.active.load(std::memory_order_relaxed)) return;
  if (f.current_kernel.load(std::memory_order_relaxed) == kernel_id) f.ctas_done.fetch_add(1, std::memory_order_relaxed);
  raise_time(now_ps);
}

void sim_time(uint64_t now_ps) {
  if (active()) raise_time(now_ps);
}

void kernel_end(uint64_t kernel_id, uint64_t now_ps) {
  Figures& f = figures();
  if (!f.active.load(std::memory_order_relaxed)) return;
  f.kernels_done.fetch_add(1, std::memory_order_relaxed);
  if (f.current_kernel.load(std::memory_order_relaxed) == kernel_id) {
    f.ctas_done.store(f.ctas_total.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  raise_time(now_ps);
}

std::string line(double wall_seconds) {
  Figures& f = figures();
  const double ps = static_cast<double>(f.sim_ps.load(std::memory_order_relaxed));
  std::string name;
  {
    std::lock_guard<std::mutex> lock(f.name_mutex);
    name = f.current_name;
  }
  std::string text = "simulated " + format_time(ps) + " | " +
                     std::to_string(f.kernels_done.load(std::memory_order_relaxed)) + " kernels done";
  if (!name.empty()) {
    if (name.size() > 40) name = name.substr(0, 37) + "...";
    text += " | " + name + " CTAs " + std::to_string(f.ctas_done.load(std::memory_order_relaxed)) + "/" +
            std::to_string(f.ctas_total.load(std::memory_order_relaxed));
  }
  if (wall_seconds > 0) text += " | " + format_time(ps / wall_seconds) + "/s";
  return text;
}

Display::Display(Mode mode, std::string label) : label_(std::move(label)) {
  enabled_ = mode == Mode::kOn || (mode == Mode::kAuto && isatty(STDERR_FILENO) == 1);
  if (!enabled_) return;
  figures().active.store(true, std::memory_order_relaxed);
  thread_ = std::thread([this] { loop(); });
}

Display::~Display() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
  figures().active.store(false, std::memory_order_relaxed);
}

void Display::loop() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  bool drawn = false;
  // The first line after half a second (a short run shows none), then one a second.
  auto period = std::chrono::milliseconds(500);
  while (!stop_cv_.wait_for(lock, period, [this] { return stop_; })) {
    period = std::chrono::milliseconds(1000);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // \r and erase-line: the line is redrawn in place; output of the program may scroll it away,
    // and the next redraw puts it back.
    std::fprintf(stderr, "\r\033[Kgpuvp %s: %s", label_.c_str(), line(wall).c_str());
    std::fflush(stderr);
    drawn = true;
  }
  if (drawn) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

}  // namespace gpuvp::progress
