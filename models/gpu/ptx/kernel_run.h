// Warp-stepping API of the PTX functional model (execute-at-issue, as GPGPU-Sim does): a
// timing model decides WHEN a warp issues; the functional model computes WHAT it does at
// that moment. Executor::launch is a plain loop over this same API.
//
//   KernelRun run(memory, options, loaded, kernel, {grid, block, dyn_smem}, params);
//   if (!run.ok()) ...                                   // invalid launch (run.message())
//   uint32_t slot = run.start_cta(linear_cta);           // functional state of a resident CTA
//   for each cycle, for each warp w of the CTA:
//     if (!run.warp_ready(slot, w)) continue;            // exited, or all lanes at a barrier
//     const InstructionInfo& next = run.next(slot, w);   // unit, registers, memory space: no side effect
//     ... scoreboard / functional-unit checks on `next` ...
//     StepResult r;  run.step(slot, w, &r);              // executes it; per-lane addresses in r
//   if (run.cta_done(slot)) run.retire_cta(slot);        // slot is reused by a later start_cta
//   LaunchResult result = run.finish();                  // counters, first fault, printf flushed
//
// A fault (illegal address, trap, ...) ends the kernel: step() returns false, status() and
// message() tell why, every later call is a no-op. Thread safety: only step() with a StepStage
// may run concurrently (different CTAs, different stages); everything else from one thread.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/kernel_resources.h"

namespace gpuvp::ptx {

namespace detail {
class LaunchRun;
}

// Functional-unit class an instruction is dispatched to.
enum class UnitClass : uint8_t {
  kFp32,     // f32/f16 arithmetic, compares, conversions between floats of <= 32 bits
  kFp64,     // f64 arithmetic, compares, conversions involving f64
  kInt,      // integer/logic, moves, shuffles and votes
  kSfu,      // sin, cos, lg2, ex2, rcp/sqrt/rsqrt f32, tanh, f32 division
  kLdst,     // ld, st, atom, red, prefetch (any state space), mbarrier operations
  kBranch,   // bra, call, ret, exit, trap, nanosleep
  kBarrier,  // bar.sync/arrive/red, bar.warp.sync
  kOther,    // membar, fence, cp.async.commit_group/wait_group
  kTensor,   // wmma.mma: the tensor cores
};
constexpr int kUnitClassCount = 9;
const char* to_string(UnitClass unit) noexcept;

enum class AccessOp : uint8_t { kNone, kLoad, kStore, kAtomic, kReduction };

// Static facts about one decoded instruction, known before it executes.
struct InstructionInfo {
  static constexpr int kMaxDst = 8;   // a wmma accumulator fragment
  static constexpr int kMaxSrc = 24;  // wmma.mma: a, b and c fragments
  UnitClass unit = UnitClass::kOther;
  AccessOp access = AccessOp::kNone;
  // Declared state space for memory ops (generic addresses are resolved per lane at step).
  // kParam: a kernel parameter named by its symbol; a device function's .param named by its
  // symbol is kLocal (it lives in the thread's frame); a .param address in a register may be
  // either kind of parameter and is kGeneric (resolved per lane).
  enum class Space : uint8_t { kNone, kGeneric, kGlobal, kShared, kLocal, kConst, kParam } space = Space::kNone;
  uint8_t dst_count = 0;
  uint8_t src_count = 0;
  // Warp-register ids in [0, KernelRun::register_slots()): registers, then predicates, of
  // the whole call tree, so the scoreboard is one flat array per warp. Beyond kMax* the
  // operands are not tracked (no nvcc instruction we know of has more).
  std::array<uint32_t, kMaxDst> dst{};
  std::array<uint32_t, kMaxSrc> src{};
  uint32_t ptx_line = 0;
  // Byte offset of the instruction in the kernel's code: 16 bytes per instruction (the size of
  // a Volta SASS instruction), the call tree's functions one after another.
  uint32_t code_offset = 0;
  uint16_t opcode = 0;  // ir::Opcode, for tracing
  bool l1_bypass = false;  // a load that is not cached in L1 (ld.cg, ld.cv, ld.volatile)
  bool reads_time = false;  // reads %clock, %clock64 or %globaltimer*: see KernelRun::set_issue_time
  // Has side effects beyond its warp, its CTA and staged global stores (atomics and reductions
  // outside shared memory, calls: printf, assert, indirect targets): never stepped with a
  // StepStage, only in the serial phase.
  bool serial = false;
  // cp.async: a global read (access kLoad, space kGlobal) whose completion counts toward the
  // warp's open copy group, not toward a register; commit_group closes that group; a wait
  // (wait_group N, wait_all: N = 0) issues once at most N committed groups are in flight.
  bool async_copy = false;
  bool async_commit = false;
  static constexpr uint32_t kNoAsyncWait = ~0u;
  // cp.async.mbarrier.arrive: issues once every copy of the warp has landed, those of the open
  // (uncommitted) group too.
  static constexpr uint32_t kAsyncWaitAll = ~1u;
  uint32_t async_wait_groups = kNoAsyncWait;
  // wmma.mma: multiply-adds of the warp instruction (M x N x K), for the tensor units' rate.
  uint32_t tensor_fma = 0;
};

// One lane's memory access in a step, after generic-address resolution. kParam is the kernel's
// parameter buffer (offset in it); a device function's .param lives in the thread's call frame
// and is reported as kLocal (offset in the thread's local window).
struct LaneAccess {
  uint64_t address = 0;  // device address (global/const) or offset in its space
  uint32_t size = 0;     // bytes (vector accesses: the whole vector)
  MemoryAccess::Space space = MemoryAccess::Space::kGlobal;
};

// What one issued warp instruction did, for the timing model.
struct StepResult {
  const InstructionInfo* info = nullptr;
  uint32_t active_mask = 0;   // lanes issued together (the SIMT group)
  uint32_t exec_mask = 0;     // of those, lanes whose guard predicate held
  uint32_t access_mask = 0;   // lanes with an entry in `accesses` (memory ops only)
  std::array<LaneAccess, 32> accesses;
  bool barrier_wait = false;  // lanes arrived at bar.sync/bar.red and now wait
  bool warp_exited = false;   // every thread of the warp has exited
  bool printf = false;        // device printf ran
  // A device-runtime call (malloc, free, a child launch) ran: the timing model holds the warp
  // this many core cycles (DeviceRuntime::call_cycles).
  uint32_t runtime_call_cycles = 0;
};

// Per-SM staging of a step's effects outside its CTA, for a parallel step phase or a whole
// time window of steps (platform/parallel): stepping with a stage, global stores are recorded
// here, instruction counts are added here and a fault is recorded here, so steps of different
// CTAs can run on different host threads. A staged load reads memory as it was when the stage
// was last committed, overlaid with the stage's own stores (an SM reads its own writes; other
// SMs' stores appear at the commit). KernelRun::commit() applies a stage; the caller commits
// stages in a fixed order (SM index), so results do not depend on threads.
struct StepStage {
  struct Store {
    uint64_t address;
    uint32_t offset;  // into bytes
    uint32_t size;
  };
  std::vector<Store> stores;
  std::vector<uint8_t> bytes;
  uint64_t warp_instructions = 0;
  uint64_t thread_instructions = 0;
  LaunchStatus status = LaunchStatus::kSuccess;  // first fault staged
  std::string message;
  std::vector<std::string> printf_lines;  // a log's (KernelRun::step with a log); commit appends them
  bool runtime_call = false;  // a log's: a device-runtime call ran (its effects are not recorded)
  // One bit per hashed 128 B line holding a staged store: loads of other lines skip the overlay.
  std::array<uint64_t, 64> line_filter{};

  static uint32_t line_bit(uint64_t address) {
    return static_cast<uint32_t>(((address >> 7) * 0x9E3779B97F4A7C15ULL) >> 52);  // 4096 bits
  }
  // A staged store may overlap [address, address + size).
  bool may_hold(uint64_t address, uint32_t size) const {
    if (stores.empty()) return false;
    for (uint64_t line = address >> 7; line <= (address + size - 1) >> 7; ++line) {
      const uint32_t bit = line_bit(line << 7);
      if ((line_filter[bit >> 6] >> (bit & 63)) & 1) return true;
    }
    return false;
  }
  void mark(uint64_t address, uint32_t size) {
    for (uint64_t line = address >> 7; line <= (address + size - 1) >> 7; ++line) {
      const uint32_t bit = line_bit(line << 7);
      line_filter[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
  }
  // Copies the staged bytes that overlap [address, address + size) over `out` (later stores win).
  void overlay(uint64_t address, void* out, uint32_t size) const {
    if (!may_hold(address, size)) return;
    auto* dst = static_cast<uint8_t*>(out);
    for (const Store& s : stores) {
      const uint64_t lo = std::max(address, s.address), hi = std::min(address + size, s.address + s.size);
      if (lo < hi) std::memcpy(dst + (lo - address), bytes.data() + s.offset + (lo - s.address), hi - lo);
    }
  }

  bool empty() const {
    return stores.empty() && warp_instructions == 0 && thread_instructions == 0 && status == LaunchStatus::kSuccess &&
           printf_lines.empty() && !runtime_call;
  }
};

class KernelRun {
 public:
  // Validates the launch; on error ok() is false and status()/message() say why.
  KernelRun(MemoryInterface& global_memory, const ExecutorOptions& options, const LoadedModule& module,
            const Kernel& kernel, const LaunchConfig& config, std::vector<uint8_t> params);
  ~KernelRun();
  KernelRun(const KernelRun&) = delete;
  KernelRun& operator=(const KernelRun&) = delete;

  bool ok() const;
  LaunchStatus status() const;
  const std::string& message() const;

  const Kernel& kernel() const;
  const LaunchConfig& config() const;
  uint64_t cta_count() const;
  uint32_t warps_per_cta() const;
  uint32_t register_slots() const;        // scoreboard entries per warp (registers + predicates)
  uint32_t shared_bytes_per_cta() const;  // static (this kernel's) + dynamic, aligned
  // The kernel function's own code, in InstructionInfo::code_offset's terms (16 bytes per
  // instruction, the module's functions one after another): [offset, offset + bytes).
  struct CodeRange {
    uint64_t offset = 0, bytes = 0;
  };
  CodeRange entry_code() const;
  // The kernel's machine resources as the host told them (default: not told); the timing model
  // sizes occupancy by them, the functional model ignores them.
  void set_resources(const KernelResources& resources) { resources_ = resources; }
  const KernelResources& resources() const { return resources_; }

  // Creates the functional state of CTA `linear` (0 <= linear < cta_count()); returns its slot.
  uint32_t start_cta(uint64_t linear);
  // start_cta in two steps: reserve_cta takes the slot (it may grow the slot table), init_cta
  // sets up the CTA's state in it. init_cta touches only that slot, so it may run on the thread
  // that steps the CTA while other threads step this run's other CTAs (a windowed launch: the
  // SM's own thread, at the start of the window holding the CTA's first cycle).
  uint32_t reserve_cta(uint64_t linear);
  void init_cta(uint32_t slot);
  // start_cta / reserve_cta would reuse a slot or fill a reserved one, leaving the other CTAs'
  // state where it is: then it is safe while other threads step this run's other CTAs (a
  // windowed launch).
  bool can_start_cta_in_place() const;
  uint64_t cta_linear(uint32_t slot) const;
  // Whether warp w has lanes that can issue now (false: exited or all waiting at a barrier).
  bool warp_ready(uint32_t slot, uint32_t w);
  bool warp_exited(uint32_t slot, uint32_t w) const;
  // The instruction warp w issues next; precondition warp_ready(slot, w).
  const InstructionInfo& next(uint32_t slot, uint32_t w) const;
  // Executes that instruction. `out` (may be null) receives what the timing model needs.
  // Returns false when the kernel faulted (this step or before).
  bool step(uint32_t slot, uint32_t w, StepResult* out);
  // The same, staging effects outside the CTA in `stage` (may be null: direct). Precondition:
  // the instruction is not InstructionInfo::serial. Returns false when the kernel faulted,
  // committed or staged. Concurrent calls are safe for different CTAs with different stages
  // while nothing else of this run is called.
  bool step(uint32_t slot, uint32_t w, StepResult* out, StepStage* stage);
  // Unstaged (stage null) with a `log`: the step's effects apply here as usual and are also
  // recorded in `log` (global stores with the bytes written, atomics' included; instruction
  // counts; a fault; printf lines), so that commit(log) elsewhere repeats them: an SM partition
  // of another process (platform/parallel/rank_exchange.h). Serial instructions are allowed; a
  // device-runtime call only sets log->runtime_call (its allocations and launches are not
  // recorded).
  bool step(uint32_t slot, uint32_t w, StepResult* out, StepStage* stage, StepStage* log);
  // A timing model calls this before stepping an instruction whose info says reads_time: the
  // warp's %clock/%clock64 then read `cycle` (the SM's core cycle at issue) and %globaltimer
  // `ns` (simulated time). Without it they count instructions (4 per issued instruction).
  void set_issue_time(uint32_t slot, uint32_t w, uint64_t cycle, uint64_t ns);
  // Applies a stage (stores in order, counters, its fault unless one came first) and clears it.
  void commit(StepStage& stage);
  // A memory observer is set (ExecutorOptions): steps call it, so they must stay on one thread.
  bool observed() const;
  // Up to `budget` steps of warp w without results (the functional-only fast path); returns
  // the steps made (0: not ready or faulted).
  uint64_t run_warp(uint32_t slot, uint32_t w, uint64_t budget);
  // Every thread of the CTA has exited.
  bool cta_done(uint32_t slot) const;
  // Marks a CTA whose live warps can never issue again as a barrier deadlock (a fault).
  void report_deadlock(uint32_t slot);
  // Frees the slot for reuse.
  void retire_cta(uint32_t slot);

  uint64_t warp_instructions() const;
  uint64_t thread_instructions() const;
  // Counters and the first fault; flushes device printf output to the options' sink.
  LaunchResult finish();

 private:
  std::unique_ptr<detail::LaunchRun> impl_;
  KernelResources resources_;
};

}  // namespace gpuvp::ptx
