#include "platform/cli/validate_applications.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

#include "models/gpu/gpu_timing/gpu_timing.h"
#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/kernel_run.h"
#include "platform/cli/fresh_sim_context.h"
#include "platform/clock_domains.h"
#include "platform/stats/registry.h"

namespace gpuvp::cli {
namespace {

// One program on one GPU: the host part runs inside a SystemC thread and launches kernels back
// to back, as a CUDA program's stream does; each launch's cycles are added up.
class ProgramRun {
 public:
  ProgramRun(const PlatformParams& params, ptx::DeviceMemory& memory, const ptx::LoadedModule& module,
             const ValidationKernels& kernels, gpu::GpuTiming& timing)
      : params_(params), memory_(memory), module_(module), kernels_told_(kernels), timing_(timing) {}

  template <typename... Args>
  void launch(const std::string& name, ptx::Dim3 grid, ptx::Dim3 block, const Args&... args) {
    const ptx::Kernel& kernel = module_.kernel(name);
    ptx::ExecutorOptions options;
    options.sm_count = params_.sm.count;
    ptx::KernelRun run(memory_, options, module_, kernel, {grid, block, 0}, ptx::pack_params(kernel, args...));
    run.set_resources(kernels_told_.resources(name));
    const uint64_t cycles = timing_.run(run, launches_++).cycles;
    cycles_ += cycles;
    auto kernel_row = std::find_if(kernels_.begin(), kernels_.end(), [&](const KernelCycles& k) { return k.name == name; });
    if (kernel_row == kernels_.end()) kernel_row = kernels_.insert(kernels_.end(), KernelCycles{name, 0, 0, 0});
    ++kernel_row->launches;
    kernel_row->cycles += cycles;
    const ptx::LaunchResult result = run.finish();
    if (!result.ok()) throw std::runtime_error(name + ": " + result.message);
  }
  ptx::DeviceMemory& memory() { return memory_; }
  uint64_t cycles() const { return cycles_; }
  uint64_t launches() const { return launches_; }
  const std::vector<KernelCycles>& kernels() const { return kernels_; }

 private:
  const PlatformParams& params_;
  ptx::DeviceMemory& memory_;
  const ptx::LoadedModule& module_;
  const ValidationKernels& kernels_told_;  // the resources each launch tells
  gpu::GpuTiming& timing_;
  uint64_t cycles_ = 0;
  uint64_t launches_ = 0;
  std::vector<KernelCycles> kernels_;  // in order of first launch
};

ApplicationFigure run_program(const PlatformParams& params, const ValidationKernels& kernels, ApplicationFigure figure,
                              const std::function<void(ProgramRun&)>& program) {
  FreshSimContext context;
  stats::Registry stats;
  std::string error;
  {
    ptx::DeviceMemory memory;
    ptx::LoadedModule module(ptx::Module::parse(kernels.ptx(), "correlation.ptx"), memory);
    gpu::GpuTiming timing("timing", params, ClockDomains::from(params), stats);
    memory.set_before_change([&timing] { timing.quiesce(); });  // windowed SMs may be running
    ProgramRun run(params, memory, module, kernels, timing);
    sc_core::sc_spawn([&] {
      try {
        program(run);
      } catch (const std::exception& e) {
        error = figure.name + ": " + e.what();
      }
    });
    sc_core::sc_start();  // to starvation: every model idles once the program's last kernel ended
    timing.quiesce();
    figure.cycles = run.cycles();
    figure.launches = run.launches();
    std::vector<KernelCycles> measured = run.kernels();
    for (KernelCycles& k : measured) {
      for (const KernelCycles& published : figure.kernels) {
        if (published.name == k.name) k.reference_share = published.reference_share;
      }
    }
    figure.kernels = std::move(measured);
  }
  if (!error.empty()) throw std::runtime_error(error);
  return figure;
}

// The CUDA SDK's vectorAdd as seed 000 measured it: 163,840 elements, 256-thread CTAs.
void vector_add(ProgramRun& run) {
  constexpr int32_t n = 163840;
  std::vector<float> a(n), b(n), c(n);
  for (int32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000) * 0.5f;
    b[i] = static_cast<float>(i % 77) * 0.25f;
  }
  ptx::DeviceMemory& m = run.memory();
  const uint64_t da = m.allocate(4ull * n), db = m.allocate(4ull * n), dc = m.allocate(4ull * n);
  m.copy_to_device(da, a.data(), 4ull * n);
  m.copy_to_device(db, b.data(), 4ull * n);
  run.launch("corr_vector_add", ptx::Dim3{(n + 255) / 256}, ptx::Dim3{256}, da, db, dc, n);
  m.copy_from_device(c.data(), dc, 4ull * n);
  for (int32_t i = 0; i < n; ++i) {
    if (c[i] != a[i] + b[i]) throw std::runtime_error("element " + std::to_string(i) + " differs from a + b");
  }
}

// Rodinia's lud on a 256x256 matrix: per 16-column step a diagonal, a perimeter and an internal
// kernel, then the last diagonal block (46 launches). The matrix is diagonally dominant, so the
// factorisation without pivoting is stable; L*U is checked against the input.
void lud(ProgramRun& run) {
  constexpr int32_t dim = 256, bs = 16;
  std::vector<float> a(static_cast<size_t>(dim) * dim);
  uint32_t seed = 12345;
  for (int32_t i = 0; i < dim; ++i) {
    for (int32_t j = 0; j < dim; ++j) {
      seed = seed * 1664525u + 1013904223u;  // fixed LCG: the same matrix every run
      const float r = static_cast<float>(seed >> 8) / 16777216.0f;
      a[static_cast<size_t>(i) * dim + j] = i == j ? static_cast<float>(dim) + r : r - 0.5f;
    }
  }
  ptx::DeviceMemory& m = run.memory();
  const uint64_t dm = m.allocate(4ull * dim * dim);
  m.copy_to_device(dm, a.data(), 4ull * dim * dim);
  int32_t offset = 0;
  for (; offset < dim - bs; offset += bs) {
    const uint32_t rest = static_cast<uint32_t>((dim - offset) / bs - 1);
    run.launch("corr_lud_diagonal", ptx::Dim3{1}, ptx::Dim3{bs}, dm, dim, offset);
    run.launch("corr_lud_perimeter", ptx::Dim3{rest}, ptx::Dim3{2 * bs}, dm, dim, offset);
    run.launch("corr_lud_internal", ptx::Dim3{rest, rest}, ptx::Dim3{bs, bs}, dm, dim, offset);
  }
  run.launch("corr_lud_diagonal", ptx::Dim3{1}, ptx::Dim3{bs}, dm, dim, offset);
  std::vector<float> lu(a.size());
  m.copy_from_device(lu.data(), dm, 4ull * dim * dim);
  // (L * U)[i][j] with L unit lower and U upper, both packed in `lu`.
  double worst = 0;
  for (int32_t i = 0; i < dim; ++i) {
    for (int32_t j = 0; j < dim; ++j) {
      double sum = 0;
      for (int32_t k = 0; k <= std::min(i, j); ++k) {
        const double l = k == i ? 1.0 : static_cast<double>(lu[static_cast<size_t>(i) * dim + k]);
        sum += l * static_cast<double>(lu[static_cast<size_t>(k) * dim + j]);
      }
      worst = std::max(worst, std::fabs(sum - static_cast<double>(a[static_cast<size_t>(i) * dim + j])));
    }
  }
  if (!(worst < 1e-2)) throw std::runtime_error("L*U differs from the matrix by " + std::to_string(worst));
}

}  // namespace

std::vector<ApplicationFigure> run_application_table(const PlatformParams& params, const ValidationKernels& kernels) {
  std::vector<ApplicationFigure> table;
  table.push_back(run_program(params, kernels,
                              {"vectorAdd (163,840 elements)", 0, 0, 5271, "seed 000 Table 3 (P9/V100, nvprof)", {}},
                              vector_add));
  // Seed 000 §C.3: diagonal 63 %, perimeter 22 %, internal 14 % of lud's kernel time.
  table.push_back(run_program(params, kernels,
                              {"lud (256x256, 16x16 blocks)", 0, 0, 494519, "seed 000 Table 3 (P9/V100, nvprof)",
                               {{"corr_lud_diagonal", 0, 0, 0.63}, {"corr_lud_perimeter", 0, 0, 0.22},
                                {"corr_lud_internal", 0, 0, 0.14}}},
                              lud));
  return table;
}

}  // namespace gpuvp::cli
