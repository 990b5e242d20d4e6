// ThreadSanitizer run of the parallel step protocol (built with -fsanitize=thread by
// tests/parallel/CMakeLists.txt): the PTX functional model's staged steps of different CTAs
// on 4 host threads sharing one KernelRun and one DeviceMemory, with the thread pool, as the
// SmStepper's parallel phase does; and CTAs started and retired by another thread while they
// step (windowed launches). Exit 0: results equal the serial executor's and TSan (which exits
// with 66 on a report) found no race.
#include <cstdio>
#include <functional>
#include <vector>

#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/kernel_run.h"
#include "models/gpu/ptx/memory.h"
#include "models/gpu/ptx/module.h"
#include "tests/parallel/kernels.h"
#include "tests/parallel/mini_stepper.h"

namespace {

constexpr uint32_t kBlocks = 16, kThreads = 64;

struct Buffers {
  uint64_t in, out, sums, total;
};

Buffers prepare(gpuvp::ptx::DeviceMemory& memory) {
  Buffers b{memory.allocate(kBlocks * kThreads * 4), memory.allocate(kBlocks * kThreads * 4), memory.allocate(kBlocks * 4),
            memory.allocate(4)};
  std::vector<uint32_t> host(kBlocks * kThreads);
  for (uint32_t i = 0; i < host.size(); ++i) host[i] = i * 40503u + 7;
  memory.copy_to_device(b.in, host.data(), host.size() * 4);
  memory.fill(b.total, 0, 4);
  return b;
}

std::vector<uint32_t> results(gpuvp::ptx::DeviceMemory& memory, const Buffers& b) {
  std::vector<uint32_t> r(kBlocks * kThreads + kBlocks + 1);
  memory.copy_from_device(r.data(), b.out, kBlocks * kThreads * 4);
  memory.copy_from_device(r.data() + kBlocks * kThreads, b.sums, kBlocks * 4);
  memory.copy_from_device(r.data() + kBlocks * kThreads + kBlocks, b.total, 4);
  return r;
}

// Windowed launches and retirements beside a running window (SmStepper with sim.overlap): while
// the pool steps the resident CTAs (4 SMs, at most 2 CTAs each), the calling thread retires the
// CTAs the last boundary found done and reserves the next ones' slots (KernelRun::reserve_cta in
// place), which join their SM at the next boundary; the SM's window, on whichever pool thread runs
// it, sets up their state (KernelRun::init_cta) while other threads step other CTAs, as
// Sm::apply_arrivals does. `beside` counts the launches made while the window ran. Returns false
// on a fault.
bool run_with_launches_beside_windows(gpuvp::ptx::KernelRun& run, uint32_t* beside) {
  using namespace gpuvp;
  constexpr uint32_t kSms = 4, kResident = 2;
  std::vector<test::MiniSm> sms(kSms);
  uint64_t next_cta = 0;
  std::vector<uint32_t> free;  // an SM per free CTA position; one CTA starts per round, so
  for (uint32_t i = 0; i < kSms * kResident; ++i) free.push_back(i % kSms);  // CTAs are staggered
  std::vector<std::pair<uint32_t, uint32_t>> done, launched;  // (SM, slot)
  parallel::ThreadPool pool(4);
  std::vector<std::vector<uint32_t>> starting(kSms);  // per SM: slots its next window sets up
  // A std::function that outlives every phase: ThreadPool::start keeps a reference to it.
  const std::function<void(size_t)> window = [&](size_t i) {
    for (const uint32_t slot : starting[i]) {
      run.init_cta(slot);
      sms[i].slots.push_back(slot);
    }
    starting[i].clear();
    test::step_staged(run, sms[i]);
  };
  while (run.ok()) {
    bool resident = false;
    for (uint32_t i = 0; i < kSms; ++i) resident = resident || !sms[i].slots.empty() || !starting[i].empty();
    if (!resident && next_cta == run.cta_count()) break;
    pool.start(sms.size(), window);
    bool joined = false;
    // The phase, beside the window: retirements free slots, a launch takes one (as
    // Sm::launch_cta, after joining the window when the run's slot table must grow).
    launched.clear();
    for (const auto& [sm, slot] : done) {
      run.retire_cta(slot);
      free.push_back(sm);
    }
    done.clear();
    if (next_cta < run.cta_count() && !free.empty()) {
      if (!run.can_start_cta_in_place()) {
        pool.join();
        joined = true;
      } else {
        ++*beside;
      }
      launched.emplace_back(free.front(), run.reserve_cta(next_cta++));
      free.erase(free.begin());
    }
    if (!joined) pool.join();
    // The boundary, in SM order: stages commit, serial-only steps, launches join their SM.
    for (test::MiniSm& sm : sms) test::finish_serial(run, sm);
    for (const auto& [sm, slot] : launched) starting[sm].push_back(slot);
    for (uint32_t i = 0; i < kSms; ++i) {
      auto& slots = sms[i].slots;
      for (size_t k = 0; k < slots.size();) {
        if (!run.cta_done(slots[k])) {
          ++k;
          continue;
        }
        done.emplace_back(i, slots[k]);
        slots.erase(slots.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  }
  return run.ok();
}

}  // namespace

int main() {
  using namespace gpuvp;
  const ptx::LaunchConfig config{ptx::Dim3{kBlocks}, ptx::Dim3{kThreads}, 0};
  std::vector<uint32_t> expected;
  {
    ptx::DeviceMemory memory;
    ptx::LoadedModule module(ptx::Module::parse(test::parallel_kernel(), "mix.ptx"), memory);
    const Buffers b = prepare(memory);
    ptx::Executor executor(memory);
    const auto& k = module.kernel("mix");
    if (!executor.launch(module, k, config, ptx::pack_params(k, b.in, b.out, b.sums, b.total)).ok()) return 2;
    expected = results(memory, b);
  }
  for (const auto d : {parallel::Distribution::kStatic, parallel::Distribution::kDynamic}) {
    ptx::DeviceMemory memory;
    ptx::LoadedModule module(ptx::Module::parse(test::parallel_kernel(), "mix.ptx"), memory);
    const Buffers b = prepare(memory);
    const auto& k = module.kernel("mix");
    ptx::KernelRun run(memory, {}, module, k, config, ptx::pack_params(k, b.in, b.out, b.sums, b.total));
    if (!test::run_mini_stepper(run, 8, 4, d)) {
      std::fprintf(stderr, "kernel faulted: %s\n", run.message().c_str());
      return 1;
    }
    if (results(memory, b) != expected) {
      std::fprintf(stderr, "%s distribution: results differ from the serial executor\n", parallel::to_string(d));
      return 1;
    }
  }
  {
    ptx::DeviceMemory memory;
    ptx::LoadedModule module(ptx::Module::parse(test::parallel_kernel(), "mix.ptx"), memory);
    const Buffers b = prepare(memory);
    const auto& k = module.kernel("mix");
    ptx::KernelRun run(memory, {}, module, k, config, ptx::pack_params(k, b.in, b.out, b.sums, b.total));
    uint32_t beside = 0;
    if (!run_with_launches_beside_windows(run, &beside)) {
      std::fprintf(stderr, "launches beside windows: kernel faulted: %s\n", run.message().c_str());
      return 1;
    }
    // 16 CTAs: the first 8 grow the slot table (in place at sizes 3, 5, 6, 7), the rest reuse.
    if (beside < kBlocks / 2) {
      std::fprintf(stderr, "launches beside windows: only %u of %u CTAs started beside a window\n", beside, kBlocks);
      return 1;
    }
    if (results(memory, b) != expected) {
      std::fprintf(stderr, "launches beside windows: results differ from the serial executor\n");
      return 1;
    }
  }
  std::printf("parallel staged stepping, and CTAs started and retired beside it: results equal the serial "
              "executor; no race reported\n");
  return 0;
}
