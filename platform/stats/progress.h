// A one-line progress display on stderr for long simulations: simulated time, kernels done,
// the current kernel with its CTAs done/total, and the simulation rate (simulated time per
// second of wall time), redrawn about once a second.
//
// The models report through the free functions below (cheap relaxed atomics, safe from any
// thread); a Display, owned by the CLI command that runs a simulation, starts a wall-clock thread
// that only reads those figures and writes stderr. Nothing here feeds back into the model, so
// statistics and traces are identical with the display on or off. The figures are process-wide
// because the display is: one line per terminal, whichever platform instance the command runs.
//
//   progress::Display display(progress::Mode::kAuto, "run");  // on only when stderr is a terminal
//   ... progress::kernel_begin(id, "vecAdd", ctas); progress::cta_done(id, ps); ...
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace gpuvp::progress {

enum class Mode { kAuto, kOn, kOff };

// Whether a Display is drawing now (models skip their own occasional progress prints then).
bool active();

// A kernel starts running: it becomes the "current kernel" of the line.
void kernel_begin(uint64_t kernel_id, const std::string& name, uint64_t ctas_total);
// One CTA of `kernel_id` finished at simulated time `now_ps`.
void cta_done(uint64_t kernel_id, uint64_t now_ps);
// The simulation reached `now_ps` (any moment a model looks at the clock anyway).
void sim_time(uint64_t now_ps);
// A kernel finished at `now_ps`.
void kernel_end(uint64_t kernel_id, uint64_t now_ps);

// The figures as the line shows them, for tests and the final line.
std::string line(double wall_seconds);

class Display {
 public:
  // kAuto: draw only when stderr is a terminal. `label` names the command ("run", "boot").
  Display(Mode mode, std::string label);
  ~Display();
  Display(const Display&) = delete;
  Display& operator=(const Display&) = delete;
  bool enabled() const { return enabled_; }

 private:
  void loop();
  bool enabled_ = false;
  std::string label_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpuvp::progress
