// The host-thread pool (platform/parallel) and the PTX functional model's per-SM staging
// (ptx::StepStage) that the parallel SM phase of issue 6 is built on.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/kernel_run.h"
#include "models/gpu/ptx/memory.h"
#include "models/gpu/ptx/module.h"
#include "platform/parallel/thread_pool.h"
#include "tests/parallel/kernels.h"
#include "tests/parallel/mini_stepper.h"

namespace gpuvp::test {
namespace {

using parallel::Distribution;
using parallel::ThreadPool;

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
  for (uint32_t threads : {1u, 2u, 3u, 4u, 8u}) {
    ThreadPool pool(threads);
    for (Distribution d : {Distribution::kStatic, Distribution::kDynamic}) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{100}, size_t{1000}}) {
        std::vector<int> hits(count, 0);  // each index touched by one thread only
        pool.run(count, d, [&](size_t i) { ++hits[i]; });
        EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), static_cast<long>(count))
            << threads << " threads, " << to_string(d) << ", " << count << " items";
      }
    }
  }
}

// Workers spin for a while after a phase, then sleep: phases that come back to back (the
// workers still spinning), after a pause longer than the spin (asleep), and a mix of both hand
// every phase over, with every index run once and its effects visible to the caller afterwards.
TEST(ThreadPool, BackToBackAndSpacedPhasesAreAllRun) {
  ThreadPool pool(4);
  std::vector<uint64_t> sums(8, 0);
  uint64_t expected = 0;
  for (int phase = 0; phase < 3000; ++phase) {
    if (phase % 500 == 499)
      std::this_thread::sleep_for(std::chrono::microseconds(4 * ThreadPool::kSpinMicros));
    pool.run(8, phase % 2 ? Distribution::kDynamic : Distribution::kStatic,
             [&](size_t i) { sums[i] += static_cast<uint64_t>(phase) + i; });
    expected += static_cast<uint64_t>(phase);
    ASSERT_EQ(sums[7], expected + 7u * static_cast<uint64_t>(phase + 1)) << "phase " << phase;
  }
  for (size_t i = 0; i < sums.size(); ++i) EXPECT_EQ(sums[i], expected + i * 3000u);
  EXPECT_EQ(pool.parallel_phases(), 3000u);
}

// start() hands a phase to the workers and returns; the caller works on something else (the
// SM stepper: the memory side's phase) and join() runs what no worker took, waits for the rest
// and rethrows. With one thread start() runs nothing and join() everything.
TEST(ThreadPool, StartReturnsAndJoinFinishesThePhase) {
  for (uint32_t threads : {1u, 2u, 4u}) {
    ThreadPool pool(threads);
    for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{200}}) {
      std::vector<int> hits(count, 0);
      const std::function<void(size_t)> body = [&](size_t i) { ++hits[i]; };
      pool.start(count, body);
      EXPECT_TRUE(pool.started());
      if (threads == 1) {
        EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 0) << "no worker: nothing runs yet";
      }
      uint64_t caller_work = 0;  // the caller's own work between the two calls
      for (uint64_t k = 0; k < 100000; ++k) caller_work += k;
      EXPECT_EQ(caller_work, 4999950000u);
      pool.join();
      EXPECT_FALSE(pool.started());
      EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), static_cast<long>(count)) << threads << " threads, " << count;
      pool.join();  // joining again: nothing to do
    }
    const std::function<void(size_t)> failing = [](size_t i) {
      if (i == 3 || i == 9) throw std::runtime_error("item " + std::to_string(i));
    };
    pool.start(12, failing);
    EXPECT_THROW(pool.start(1, failing), std::logic_error) << "a second start before the join";
    try {
      pool.join();
      ADD_FAILURE() << "join() did not rethrow";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "item 3");
    }
    pool.run(3, Distribution::kStatic, [](size_t) {});  // usable afterwards
  }
}

TEST(ThreadPool, StaticBlocksRunOnTheirOwnThreads) {
  ThreadPool pool(4);
  std::vector<std::thread::id> ran(8);
  pool.run(8, Distribution::kStatic, [&](size_t i) { ran[i] = std::this_thread::get_id(); });
  EXPECT_EQ(ran[0], std::this_thread::get_id());  // the caller is thread 0
  EXPECT_EQ(ran[0], ran[1]);
  EXPECT_EQ(ran[2], ran[3]);
  const std::set<std::thread::id> distinct{ran[0], ran[2], ran[4], ran[6]};
  EXPECT_EQ(distinct.size(), 4u);
  EXPECT_EQ(pool.parallel_phases(), 1u);
  pool.run(1, Distribution::kStatic, [&](size_t i) { ran[i] = std::this_thread::get_id(); });
  EXPECT_EQ(pool.parallel_phases(), 1u);  // one item: run on the caller, workers left asleep
}

TEST(ThreadPool, RethrowsTheLowestFailingIndex) {
  for (Distribution d : {Distribution::kStatic, Distribution::kDynamic}) {
    ThreadPool pool(3);
    try {
      pool.run(30, d, [](size_t i) {
        if (i == 7 || i == 25) throw std::runtime_error("item " + std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "item 7");
    }
    std::vector<int> hits(10, 0);  // still usable afterwards
    pool.run(10, d, [&](size_t i) { ++hits[i]; });
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 10);
  }
}

TEST(ThreadPool, BadArgumentsAreRejected) {
  EXPECT_THROW(ThreadPool(0), std::invalid_argument);
  EXPECT_EQ(parallel::parse_distribution("static"), Distribution::kStatic);
  EXPECT_EQ(parallel::parse_distribution("dynamic"), Distribution::kDynamic);
  try {
    parallel::parse_distribution("guided");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("guided"), std::string::npos);
  }
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Between phases the workers sleep: a busy-waiting pool of 4 would burn ~3 CPU-seconds per
// wall second while the caller sleeps.
TEST(ThreadPool, WorkersSleepBetweenPhases) {
  ThreadPool pool(4);
  std::vector<int> hits(16, 0);
  pool.run(16, Distribution::kDynamic, [&](size_t i) { ++hits[i]; });
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LT(process_cpu_seconds() - before, 0.1);
}

struct Launch {
  ptx::DeviceMemory memory;
  std::unique_ptr<ptx::LoadedModule> module;
  uint64_t in = 0, out = 0, sums = 0, total = 0;
  static constexpr uint32_t kBlocks = 12, kThreads = 96;

  Launch() {
    module = std::make_unique<ptx::LoadedModule>(ptx::Module::parse(parallel_kernel(), "mix.ptx"), memory);
    in = memory.allocate(kBlocks * kThreads * 4);
    out = memory.allocate(kBlocks * kThreads * 4);
    sums = memory.allocate(kBlocks * 4);
    total = memory.allocate(4);
    std::vector<uint32_t> host(kBlocks * kThreads);
    for (uint32_t i = 0; i < host.size(); ++i) host[i] = i * 2654435761u;
    memory.copy_to_device(in, host.data(), host.size() * 4);
    memory.fill(total, 0, 4);
  }
  std::unique_ptr<ptx::KernelRun> run() {
    const auto& k = module->kernel("mix");
    return std::make_unique<ptx::KernelRun>(memory, ptx::ExecutorOptions{}, *module, k,
                                            ptx::LaunchConfig{ptx::Dim3{kBlocks}, ptx::Dim3{kThreads}, 0},
                                            ptx::pack_params(k, in, out, sums, total));
  }
  std::vector<uint32_t> results() const {
    std::vector<uint32_t> r(kBlocks * kThreads + kBlocks + 1);
    memory.copy_from_device(r.data(), out, kBlocks * kThreads * 4);
    memory.copy_from_device(r.data() + kBlocks * kThreads, sums, kBlocks * 4);
    memory.copy_from_device(r.data() + kBlocks * kThreads + kBlocks, total, 4);
    return r;
  }
};

std::vector<uint32_t> reference(uint64_t* warp_instructions) {
  Launch l;
  ptx::Executor executor(l.memory);
  const auto& k = l.module->kernel("mix");
  const ptx::LaunchResult r = executor.launch(*l.module, k, {ptx::Dim3{Launch::kBlocks}, ptx::Dim3{Launch::kThreads}, 0},
                                              ptx::pack_params(k, l.in, l.out, l.sums, l.total));
  EXPECT_TRUE(r.ok()) << r.message;
  *warp_instructions = r.warp_instructions;
  return l.results();
}

TEST(StepStage, StagedStoresBecomeVisibleAtCommit) {
  Launch l;
  auto run = l.run();
  ASSERT_TRUE(run->ok()) << run->message();
  const uint32_t slot = run->start_cta(0);
  ptx::StepStage stage;
  ptx::StepResult result;
  uint32_t steps = 0;
  // Step warp 0 to its global store, staged.
  while (run->warp_ready(slot, 0) && run->next(slot, 0).access != ptx::AccessOp::kStore && steps < 100) {
    ASSERT_TRUE(run->step(slot, 0, &result, &stage));
    ++steps;
  }
  ASSERT_EQ(run->next(slot, 0).access, ptx::AccessOp::kStore);
  ASSERT_TRUE(run->step(slot, 0, &result, &stage));
  ++steps;
  EXPECT_EQ(stage.bytes.size(), 32u * 4);  // 32 lanes' words (adjacent ones staged as one store)
  EXPECT_FALSE(stage.stores.empty());
  EXPECT_EQ(stage.warp_instructions, steps);
  EXPECT_EQ(run->warp_instructions(), 0u);        // counted at commit
  EXPECT_EQ(l.memory.load<uint32_t>(l.out), 0u);  // not written yet
  run->commit(stage);
  EXPECT_TRUE(stage.empty());
  EXPECT_EQ(run->warp_instructions(), steps);
  const uint32_t in0 = l.memory.load<uint32_t>(l.in), in1 = l.memory.load<uint32_t>(l.in + 4);
  EXPECT_EQ(l.memory.load<uint32_t>(l.out), in0 * 3 + in1);
}

// A whole window of steps with one stage never committed in between (windowed SM stepping):
// the SM's loads see its own staged stores (scalar and vector loads), memory does not.
TEST(StepStage, StagedLoadsReadTheStagesOwnStores) {
  ptx::DeviceMemory memory;
  auto module = std::make_unique<ptx::LoadedModule>(ptx::Module::parse(own_writes_kernel(), "own.ptx"), memory);
  constexpr uint32_t kThreads = 64;
  const uint64_t buf = memory.allocate(kThreads * 4), out = memory.allocate(kThreads * 4);
  memory.fill(buf, 0, kThreads * 4);
  memory.fill(out, 0, kThreads * 4);
  const auto& k = module->kernel("own");
  ptx::KernelRun run(memory, ptx::ExecutorOptions{}, *module, k, ptx::LaunchConfig{ptx::Dim3{1}, ptx::Dim3{kThreads}, 0},
                     ptx::pack_params(k, buf, out));
  ASSERT_TRUE(run.ok()) << run.message();
  const uint32_t slot = run.start_cta(0);
  ptx::StepStage stage;
  ptx::StepResult result;
  for (uint32_t w = 0; w < kThreads / 32; ++w) {
    for (uint32_t steps = 0; run.warp_ready(slot, w) && steps < 100; ++steps) ASSERT_TRUE(run.step(slot, w, &result, &stage));
  }
  EXPECT_EQ(memory.load<uint32_t>(buf), 0u);  // nothing committed yet
  EXPECT_EQ(memory.load<uint32_t>(out), 0u);
  EXPECT_TRUE(stage.may_hold(buf, 4));
  EXPECT_FALSE(stage.may_hold(buf + (1u << 20), 4));  // a line nothing was staged to
  run.commit(stage);
  EXPECT_FALSE(stage.may_hold(buf, 4));
  for (uint32_t t = 0; t < kThreads; ++t) {
    const uint32_t neighbour = (t ^ 1) + 7, pair = (t & ~1u) + 7 + (t & ~1u) + 1 + 7;
    EXPECT_EQ(memory.load<uint32_t>(out + 4 * t), neighbour + pair) << "thread " << t;
  }
}

TEST(StepStage, AtomicsAndCallsAreSerialOnly) {
  Launch l;
  auto run = l.run();
  const uint32_t slot = run->start_cta(0);
  uint32_t atomics = 0, checked = 0;
  ptx::StepResult result;
  for (bool progress = true; progress;) {
    progress = false;
    for (uint32_t w = 0; w < run->warps_per_cta(); ++w) {
      if (!run->warp_ready(slot, w)) continue;
      const ptx::InstructionInfo& next = run->next(slot, w);
      EXPECT_EQ(next.serial, next.access == ptx::AccessOp::kAtomic) << "line " << next.ptx_line;
      atomics += next.access == ptx::AccessOp::kAtomic ? 1 : 0;
      ++checked;
      ASSERT_TRUE(run->step(slot, w, &result));
      progress = true;
    }
  }
  EXPECT_TRUE(run->cta_done(slot));
  EXPECT_EQ(atomics, run->warps_per_cta());
  EXPECT_GT(checked, 20u);
}

TEST(StepStage, IllegalStagedStoreFaultsAtCommitInOrder) {
  Launch l;
  auto run = l.run();
  const uint32_t slot = run->start_cta(0);
  ptx::StepStage stage;
  ptx::StepResult result;
  l.memory.release(l.out);  // the kernel's stores now hit unmapped memory
  while (run->warp_ready(slot, 0) && run->step(slot, 0, &result, &stage)) {
  }
  EXPECT_NE(stage.status, ptx::LaunchStatus::kSuccess);
  EXPECT_NE(stage.message.find("illegal address"), std::string::npos) << stage.message;
  EXPECT_TRUE(run->ok());  // staged, not yet the run's
  run->commit(stage);
  EXPECT_FALSE(run->ok());
  EXPECT_NE(run->message().find("illegal address"), std::string::npos) << run->message();
}

TEST(StepStage, ParallelPhasesMatchTheSerialExecutor) {
  uint64_t expected_instructions = 0;
  const std::vector<uint32_t> expected = reference(&expected_instructions);
  for (uint32_t threads : {1u, 2u, 4u}) {
    for (Distribution d : {Distribution::kStatic, Distribution::kDynamic}) {
      Launch l;
      auto run = l.run();
      ASSERT_TRUE(run_mini_stepper(*run, 5, threads, d)) << run->message();
      EXPECT_EQ(l.results(), expected) << threads << " threads " << to_string(d);
      EXPECT_EQ(run->warp_instructions(), expected_instructions);
    }
  }
}

}  // namespace
}  // namespace gpuvp::test
