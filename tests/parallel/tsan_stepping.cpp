// ThreadSanitizer run of the parallel step protocol (built with -fsanitize=thread by
// tests/parallel/CMakeLists.txt): the PTX functional model's staged steps of different CTAs
// on 4 host threads sharing one KernelRun and one DeviceMemory, with the thread pool, as the
// SmStepper's parallel phase does. Exit 0: results equal the serial executor's and TSan (which
// exits with 66 on a report) found no race.
#include <cstdio>
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
  std::printf("parallel staged stepping: results equal the serial executor; no race reported\n");
  return 0;
}
