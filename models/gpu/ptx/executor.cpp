// SIMT functional executor.
//
// Reconvergence: every lane keeps its own program counter (with its call depth and
// function), and each step the warp issues the instruction of the lanes with the smallest
// key (deepest call first, then lowest PC), so the lanes that share that key execute
// together. For the reducible control flow nvcc emits, this reconverges lanes at the first
// common instruction after a divergent region, with no CFG analysis, and stays correct for
// any control flow (exit in divergent code, early returns, break/continue, calls at
// different depths) because lanes never need a stack entry to meet again. The common case
// costs nothing extra: after a non-branch instruction the group simply advances by one,
// and lanes are rescanned only when a waiting lane's key is reached or after divergence.
//
// Registers are structure-of-arrays per warp (register-major, 32 lanes contiguous); each
// function owns a fixed register range, saved per lane on calls so recursion works.
#include "models/gpu/ptx/executor.h"
#include "models/gpu/ptx/device_heap.h"
#include "models/gpu/ptx/device_runtime.h"

#include "models/gpu/ptx/kernel_run.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "models/gpu/ptx/float_util.h"
#include "models/gpu/ptx/ir.h"
#include "models/gpu/ptx/texture.h"

namespace gpuvp::ptx {
namespace {

using ir::Instruction;
using ir::Opcode;
using ir::Operand;
using ir::OperandKind;
using ir::Type;

// 128-bit arithmetic for mul.hi.u64 and carries (a GCC/Clang extension).
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

constexpr int kWarpSize = 32;
constexpr uint32_t kFullMask = 0xffffffffu;
// Generic-address windows for the per-CTA and per-thread spaces; everything else is global.
constexpr uint64_t kSharedWindow = 0x0001'0000'0000'0000ULL;
constexpr uint64_t kLocalWindow = 0x0002'0000'0000'0000ULL;
constexpr uint64_t kParamWindow = 0x0003'0000'0000'0000ULL;
constexpr uint64_t kWindowBytes = 1ULL << 32;
constexpr uint32_t kMaxCallDepth = 4096;
constexpr uint64_t kExitedKey = ~0ULL;
constexpr int kBarrierCount = 16;
constexpr uint64_t kWarpSlice = 2048;  // instructions a warp runs before others get a turn

inline uint64_t make_key(uint32_t depth, uint32_t function, uint32_t pc) {
  return (static_cast<uint64_t>(kMaxCallDepth - depth) << 48) | (static_cast<uint64_t>(function) << 28) | pc;
}
inline uint32_t key_depth(uint64_t key) { return kMaxCallDepth - static_cast<uint32_t>(key >> 48); }
inline uint32_t key_function(uint64_t key) { return static_cast<uint32_t>((key >> 28) & 0xfffff); }
inline uint32_t key_pc(uint64_t key) { return static_cast<uint32_t>(key & 0xfffffff); }

// Bit count without a libgcc call (the build targets generic x86-64, where __builtin_popcount
// becomes __popcountdi2).
inline uint32_t popcount32(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

// A kernel fault; caught by launch() and turned into a LaunchResult.
struct KernelFault {
  LaunchStatus status;
  std::string message;
};

template <typename T>
struct TypeTag {
  using type = T;
};

// Lane loop over a mask; the full-mask case is a plain counted loop the compiler unrolls.
template <typename F>
inline void for_lanes(uint32_t mask, F&& f) {
  if (mask == kFullMask) {
    for (int lane = 0; lane < kWarpSize; ++lane) f(lane);
  } else {
    while (mask) {
      int lane = __builtin_ctz(mask);
      f(lane);
      mask &= mask - 1;
    }
  }
}

template <typename T>
inline T from_bits(uint64_t bits) {
  if constexpr (std::is_same_v<T, float>) {
    return fp::f32(bits);
  } else if constexpr (std::is_same_v<T, double>) {
    return fp::f64(bits);
  } else {
    return static_cast<T>(bits);
  }
}
template <typename T>
inline uint64_t to_bits(T value) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return fp::bits(value);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(value));
  } else {
    return static_cast<uint64_t>(value);
  }
}

// Calls f(TypeTag<T>) for the C++ type of an integer PTX type.
template <typename F>
inline bool dispatch_int(Type type, F&& f) {
  switch (type) {
    case Type::kU8: case Type::kB8: f(TypeTag<uint8_t>{}); return true;
    case Type::kS8: f(TypeTag<int8_t>{}); return true;
    case Type::kU16: case Type::kB16: f(TypeTag<uint16_t>{}); return true;
    case Type::kS16: f(TypeTag<int16_t>{}); return true;
    case Type::kU32: case Type::kB32: f(TypeTag<uint32_t>{}); return true;
    case Type::kS32: f(TypeTag<int32_t>{}); return true;
    case Type::kU64: case Type::kB64: f(TypeTag<uint64_t>{}); return true;
    case Type::kS64: f(TypeTag<int64_t>{}); return true;
    default: return false;
  }
}

template <typename T>
inline T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
inline T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
inline T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(T) < 4), uint32_t, U>;  // avoid int promotion overflow
  return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}

template <typename T>
inline T mul_hi(T a, T b) {
  if constexpr (sizeof(T) == 8) {
    using W = std::conditional_t<std::is_signed_v<T>, Int128, UInt128>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> 64);
  } else {
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> (8 * sizeof(T)));
  }
}

template <typename T>
inline uint64_t mul_wide(T a, T b) {
  using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  return static_cast<uint64_t>(static_cast<W>(a) * static_cast<W>(b));
}

struct Barrier {
  uint32_t arrived = 0;
  uint32_t expected = 0;  // 0: every live thread of the CTA
  uint32_t red_popc = 0;
  bool red_and = true;
  bool red_or = false;
};

struct Frame {
  uint32_t return_function;
  uint32_t return_pc;
  uint32_t caller_frame_base;
  uint32_t call_pc;  // the call instruction, for copying return values back
  uint32_t callee;
};

// An allocator whose resize() leaves new elements uninitialised: init_cta clears the registers
// that need it (a fresh warp's registers are not zeroed twice, nor those its kernel defines first).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U> struct rebind { using other = UninitializedAllocator<U>; };
  UninitializedAllocator() = default;
  template <typename U> UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
  template <typename U, typename... Args> void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

struct Warp {
  uint32_t index = 0;
  uint32_t valid_mask = 0;
  uint32_t exited_mask = 0;
  uint32_t blocked_mask = 0;  // waiting at a barrier
  std::array<uint32_t, kBarrierCount> barrier_waiters{};
  std::vector<uint64_t, UninitializedAllocator<uint64_t>> registers;  // [register][lane]
  std::vector<uint32_t> predicates; // [predicate] -> lane mask
  std::array<uint64_t, kWarpSize> keys{};
  std::array<uint32_t, kWarpSize> frame_base{};
  std::array<std::vector<Frame>, kWarpSize> frames;
  std::array<std::vector<uint64_t>, kWarpSize> saved_registers;
  std::array<std::vector<uint8_t>, kWarpSize> local;
  std::array<const Instruction*, kWarpSize> pending_bar_red{};
  std::array<uint32_t, kWarpSize> pending_bar_red_function{};
  std::array<uint32_t, kWarpSize> tid_x{}, tid_y{}, tid_z{};
  std::array<uint8_t, kWarpSize> carry{};
  // The group being issued: lanes whose key equals current_key.
  uint32_t current_mask = 0;
  uint64_t current_key = kExitedKey;
  uint64_t next_other_key = kExitedKey;  // smallest key of runnable lanes outside the group
  // Live lanes exist outside the group (running elsewhere, at a barrier, or waiting at a warp
  // collective): the group must check each warp collective it reaches (reschedule).
  bool partial_group = false;
  // Lanes that spin on an mbarrier wait that failed: other lanes of the warp go first, as
  // independent thread scheduling lets them, until these are the only ones that can run.
  uint32_t yielded_mask = 0;
  bool yield_requested = false;  // set by a failed wait of the whole group; the step reschedules
  uint64_t issued = 0;                   // instructions issued (drives %clock without a timing model)
  // Set by a timing model before an instruction that reads the time: the SM's cycle and the
  // simulated time at its issue (KernelRun::set_issue_time).
  bool timed = false;
  uint64_t timed_cycle = 0;
  uint64_t timed_ns = 0;

  uint32_t runnable() const { return valid_mask & ~exited_mask & ~blocked_mask; }
};

struct Cta {
  Dim3 id;
  uint32_t linear = 0;
  std::vector<uint8_t> shared;
  uint32_t live_threads = 0;
  std::array<Barrier, kBarrierCount> barriers{};
};

// A resident CTA's functional state; slots are reused so warps keep their buffers.
struct CtaState {
  Cta cta;
  std::vector<Warp> warps;
  bool in_use = false;
};

// What one step works on besides the warp: the bound CTA, where results go, scratch lane
// arrays and the caller's StepStage. Per host thread (issue 6: SMs of one kernel step in
// parallel on several threads, each through its own copy); constant-initialized, so a
// thread_local costs a segment-relative access and no guard.
struct StepScratch {
  Cta* cta = nullptr;
  std::vector<Warp>* warps = nullptr;   // the bound CTA's warps
  StepResult* out = nullptr;            // step results requested (timing model)
  StepResult* capture = nullptr;        // ...and this step is a memory op: record lane accesses
  StepStage* stage = nullptr;           // global stores, counters and faults staged (parallel phase)
  StepStage* log = nullptr;             // unstaged: what the step did outside its CTA, also recorded
  std::array<std::array<uint64_t, kWarpSize>, 4> scratch{};
  std::array<uint64_t, kWarpSize> sink{};
  std::array<uint64_t, kWarpSize> result{};
};
thread_local StepScratch tls_step;

}  // namespace

namespace detail {

class LaunchRun {
 public:
  LaunchRun(const LoadedModule& loaded, const Kernel& kernel, const LaunchConfig& config,
            std::vector<uint8_t> params, MemoryInterface& global, const ExecutorOptions& options)
      : kernel_(kernel),
        config_(config),
        program_(loaded.module().program()),
        loaded_(loaded),
        params_(std::move(params)),
        global_(global),
        options_(options) {
    try {
      validate();
      layout();
    } catch (const KernelFault& f) {
      fail(f);
    }
  }

  // ---------------------------------------------------------------- stepping API (kernel_run.h)
  LaunchStatus status_ = LaunchStatus::kSuccess;
  std::string message_;
  bool finished_ = false;

  void fail(const KernelFault& f) {
    if (StepStage* stage = tls_step.stage) {
      if (stage->status == LaunchStatus::kSuccess) {
        stage->status = f.status;
        stage->message = f.message;
      }
      return;
    }
    if (status_ != LaunchStatus::kSuccess) return;
    if (StepStage* log = tls_step.log; log != nullptr && log->status == LaunchStatus::kSuccess) {
      log->status = f.status;
      log->message = f.message;
    }
    status_ = f.status;
    message_ = f.message;
  }
  bool ok() const { return status_ == LaunchStatus::kSuccess; }
  bool observed() const { return static_cast<bool>(options_.memory_observer); }
  // Warp instructions committed plus this thread's staged ones (a staged step must not read
  // another SM's count: it would depend on thread timing).
  uint64_t counted_instructions() const {
    return warp_instructions_ + (tls_step.stage != nullptr ? tls_step.stage->warp_instructions : 0);
  }

  uint32_t start_cta(uint64_t linear) {
    const uint32_t slot = reserve_cta(linear);
    init_cta_public(slot);
    return slot;
  }
  uint32_t reserve_cta(uint64_t linear) {
    uint32_t slot = 0;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<uint32_t>(ctas_.size());
      ctas_.push_back(std::make_unique<CtaState>());  // its warps: at init (below)
    }
    CtaState& state = *ctas_[slot];
    state.in_use = true;
    state.cta.linear = static_cast<uint32_t>(linear);
    return slot;
  }
  void init_cta_public(uint32_t slot) {
    CtaState& state = *ctas_[slot];
    if (state.warps.empty()) {
      // A new slot's warps (kilobytes each) are built here, on the thread that steps the CTA,
      // not in reserve_cta: a windowed launch reserves on the SystemC thread, and the first
      // launches of a kernel fill every SM at once.
      state.warps.resize(warps_per_cta_);
      for (auto& warp : state.warps) {
        warp.registers.resize(static_cast<size_t>(total_registers_) * kWarpSize);  // init_cta clears
      }
    }
    bind(state);
    init_cta(state.cta.linear);
  }
  bool can_start_cta_in_place() const { return !free_slots_.empty() || ctas_.size() < ctas_.capacity(); }
  void retire_cta(uint32_t slot) {
    CtaState& state = *ctas_[slot];
    if (!state.in_use) return;
    state.in_use = false;
    free_slots_.push_back(slot);
  }
  void bind(CtaState& state) {
    tls_step.cta = &state.cta;
    tls_step.warps = &state.warps;
  }
  Warp& warp_at(uint32_t slot, uint32_t w) { return ctas_[slot]->warps[w]; }
  const Warp& warp_at(uint32_t slot, uint32_t w) const { return ctas_[slot]->warps[w]; }
  bool warp_ready(uint32_t slot, uint32_t w) {
    if (!ok()) return false;
    Warp& warp = warp_at(slot, w);
    return warp.current_mask != 0 || reschedule(warp);
  }
  const InstructionInfo& info_of(const Warp& warp) const {
    return info_[key_function(warp.current_key)][key_pc(warp.current_key)];
  }
  bool step_public(uint32_t slot, uint32_t w, StepResult* out, StepStage* stage = nullptr, StepStage* log = nullptr) {
    if (!ok()) return false;
    if (stage != nullptr && stage->status != LaunchStatus::kSuccess) return false;
    tls_step.stage = stage;
    tls_step.log = stage == nullptr ? log : nullptr;
    CtaState& state = *ctas_[slot];
    bind(state);
    Warp& warp = state.warps[w];
    if (warp.current_mask == 0 && !reschedule(warp)) return true;
    if (out != nullptr) {
      const InstructionInfo& info = info_of(warp);
      out->info = &info;
      out->active_mask = warp.current_mask;
      out->exec_mask = 0;
      out->access_mask = 0;
      out->barrier_wait = false;
      out->printf = false;
      out->runtime_call_cycles = 0;
      tls_step.out = out;
      tls_step.capture = info.access != AccessOp::kNone ? out : nullptr;
    }
    try {
      step(warp);
    } catch (const KernelFault& f) {
      fail(f);
    }
    if (out != nullptr) {
      out->warp_exited = (warp.valid_mask & ~warp.exited_mask) == 0;
      tls_step.out = nullptr;
      tls_step.capture = nullptr;
    }
    tls_step.stage = nullptr;
    tls_step.log = nullptr;
    return ok() && (stage == nullptr || stage->status == LaunchStatus::kSuccess);
  }
  // Stages a global store. One that continues the previous store (the next lane's word of a
  // coalesced warp store) extends it, so that commit writes the whole range at once: the same
  // bytes in the same order, one memory call instead of one per lane.
  static void stage_store(StepStage& stage, uint64_t address, const void* data, uint32_t size) {
    const auto offset = static_cast<uint32_t>(stage.bytes.size());
    stage.mark(address, size);
    stage.bytes.insert(stage.bytes.end(), static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
    if (!stage.stores.empty()) {
      StepStage::Store& last = stage.stores.back();
      if (last.address + last.size == address && last.offset + last.size == offset) {
        last.size += size;
        return;
      }
    }
    stage.stores.push_back(StepStage::Store{address, offset, size});
  }
  void commit(StepStage& stage) {
    warp_instructions_ += stage.warp_instructions;
    thread_instructions_ += stage.thread_instructions;
    for (const StepStage::Store& store : stage.stores) {
      if (!global_.write(store.address, stage.bytes.data() + store.offset, store.size)) {
        fail(KernelFault{LaunchStatus::kIllegalAddress, "illegal address " + hex(store.address) + " (global store, " +
                                                            std::to_string(store.size) + " bytes)"});
        break;
      }
    }
    printf_output_.insert(printf_output_.end(), stage.printf_lines.begin(), stage.printf_lines.end());
    stage.printf_lines.clear();
    if (stage.status != LaunchStatus::kSuccess) fail(KernelFault{stage.status, stage.message});
    if (!stage.stores.empty()) stage.line_filter.fill(0);
    stage.stores.clear();
    stage.bytes.clear();
    stage.warp_instructions = 0;
    stage.thread_instructions = 0;
    stage.status = LaunchStatus::kSuccess;
    stage.message.clear();
  }
  uint64_t run_warp_public(uint32_t slot, uint32_t w, uint64_t budget) {
    if (!ok()) return 0;
    CtaState& state = *ctas_[slot];
    bind(state);
    Warp& warp = state.warps[w];
    const uint64_t before = warp.issued;
    try {
      run_warp(warp, budget);
    } catch (const KernelFault& f) {
      fail(f);
    }
    return warp.issued - before;
  }
  void report_deadlock_public(uint32_t slot) {
    if (!ok()) return;
    bind(*ctas_[slot]);
    try {
      report_deadlock();
    } catch (const KernelFault& f) {
      fail(f);
    }
  }
  LaunchResult finish() {
    LaunchResult result;
    result.status = status_;
    result.message = message_;
    result.warp_instructions = warp_instructions_;
    result.thread_instructions = thread_instructions_;
    if (!finished_ && options_.printf_sink) {
      for (const auto& text : printf_output_) options_.printf_sink(text);
    }
    finished_ = true;
    return result;
  }

  KernelRun::CodeRange entry_code() const {
    uint64_t first = 0;
    for (uint32_t f = 0; f < kernel_.function_index; ++f) first += program_.functions[f].body.size();
    return {first * 16, program_.functions[kernel_.function_index].body.size() * 16};
  }

  const Kernel& kernel_;
  const LaunchConfig config_;
  uint32_t warps_per_cta_ = 0;
  uint32_t total_registers_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> clear_ranges_;  // [first, end) register rows init_cta clears
  uint32_t total_predicates_ = 0;
  uint32_t shared_bytes_ = 0;
  std::vector<std::unique_ptr<CtaState>> ctas_;
  std::vector<uint32_t> free_slots_;
  std::vector<std::vector<InstructionInfo>> info_;  // [function][pc]; reachable functions only
  uint64_t warp_instructions_ = 0;
  uint64_t thread_instructions_ = 0;

 private:
  // ---------------------------------------------------------------- setup
  void validate() {
    auto invalid = [](const std::string& message) { throw KernelFault{LaunchStatus::kInvalidLaunch, message}; };
    // The kernel must come from this module: its function index refers to this program.
    bool found = false;
    for (const auto& k : program_.kernels) found |= (&k == &kernel_);
    if (!found) invalid("kernel " + kernel_.name + " does not belong to module " + program_.file_name);
    const Dim3& g = config_.grid;
    const Dim3& b = config_.block;
    if (g.x == 0 || g.y == 0 || g.z == 0 || g.y > 65535 || g.z > 65535) invalid("invalid grid dimensions");
    if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || b.count() > 1024) {
      invalid("invalid block dimensions (" + std::to_string(b.x) + "," + std::to_string(b.y) + "," + std::to_string(b.z) + ")");
    }
    if (kernel_.max_threads_per_cta > 0 && b.count() > static_cast<uint64_t>(kernel_.max_threads_per_cta)) {
      invalid("block of " + std::to_string(b.count()) + " threads exceeds the kernel's .maxntid/.reqntid");
    }
    if (params_.size() != kernel_.param_bytes) {
      invalid("parameter buffer has " + std::to_string(params_.size()) + " bytes, kernel " + kernel_.name + " expects " +
              std::to_string(kernel_.param_bytes));
    }
    if (config_.dynamic_shared_bytes > 227 * 1024) invalid("dynamic shared memory exceeds 227 KiB");
  }

  void layout() {
    // Only the kernel and the functions it can call get registers: other kernels of the
    // module would only make every CTA's register reset more expensive.
    std::vector<bool> reachable(program_.functions.size(), false);
    std::vector<uint32_t> pending{kernel_.function_index};
    reachable[kernel_.function_index] = true;
    while (!pending.empty()) {
      const uint32_t f = pending.back();
      pending.pop_back();
      for (const auto& inst : program_.functions[f].body) {
        if (inst.opcode != Opcode::kCall) continue;
        if (inst.operands[0].kind == OperandKind::kRegister) {  // indirect: any function may be the target
          std::fill(reachable.begin(), reachable.end(), true);
          pending.clear();
          break;
        }
        const uint32_t callee = inst.operands[0].index;
        if (!reachable[callee]) {
          reachable[callee] = true;
          pending.push_back(callee);
        }
      }
    }
    register_base_.assign(program_.functions.size(), 0);
    predicate_base_.assign(program_.functions.size(), 0);
    for (size_t f = 0; f < program_.functions.size(); ++f) {
      if (!reachable[f]) continue;
      register_base_[f] = total_registers_;
      predicate_base_[f] = total_predicates_;
      total_registers_ += program_.functions[f].register_count;
      total_predicates_ += program_.functions[f].predicate_count;
      if (program_.functions[f].body.size() >= (1u << 28)) throw KernelFault{LaunchStatus::kInvalidLaunch, "function too large"};
    }
    shared_offsets_ = &program_.kernel_shared_offsets[static_cast<size_t>(&kernel_ - program_.kernels.data())];
    dynamic_shared_offset_ = static_cast<uint32_t>((kernel_.static_shared_bytes + program_.dynamic_shared_alignment - 1) /
                                                   program_.dynamic_shared_alignment * program_.dynamic_shared_alignment);
    shared_bytes_ = dynamic_shared_offset_ + config_.dynamic_shared_bytes;
    const uint64_t threads = config_.block.count();
    warps_per_cta_ = static_cast<uint32_t>((threads + kWarpSize - 1) / kWarpSize);
    info_.assign(program_.functions.size(), {});
    for (size_t f = 0; f < program_.functions.size(); ++f) {
      if (reachable[f]) build_info(static_cast<uint32_t>(f));
    }
    build_clear_ranges();
  }

  // Registers a reused CTA slot must clear (its previous CTA's values must not leak into a
  // result): every register except those of the kernel function that its straight-line entry
  // prefix writes before any read. Every lane starts at pc 0 and runs that prefix (unguarded,
  // no control transfer, whitelisted opcodes that write whole 64-bit slots of every active
  // lane) before anything else, so those registers are defined before they can be read. Only
  // used for full warps (a partial warp's invalid lanes never write, and shfl may read them).
  void build_clear_ranges() {
    const ir::Function& function = program_.functions[kernel_.function_index];
    std::vector<uint8_t> state(function.register_count, 0);  // 1 defined first, 2 read first
    auto read = [&](const Operand& op) {
      if ((op.kind == OperandKind::kRegister || (op.kind == OperandKind::kMemory && op.memory_base == ir::MemoryBase::kRegister)) &&
          op.index < state.size() && state[op.index] == 0)
        state[op.index] = 2;
    };
    for (const Instruction& inst : function.body) {
      bool ok = !inst.has_guard && inst.operand_count >= 1;
      switch (inst.opcode) {
        case Opcode::kLd: ok = ok && inst.space == ir::Space::kParam; break;
        case Opcode::kMov: case Opcode::kCvta: case Opcode::kMad: case Opcode::kMul: case Opcode::kAdd:
        case Opcode::kSub: case Opcode::kShl: case Opcode::kShr: case Opcode::kAnd: case Opcode::kOr:
        case Opcode::kXor: case Opcode::kCvt: case Opcode::kSetp:
          break;
        default: ok = false; break;
      }
      if (!ok) break;
      for (int i = 0; i < inst.operand_count; ++i) {
        if (inst.operands[i].kind == OperandKind::kVector) ok = false;
      }
      if (!ok) break;
      const int ndst = inst.opcode == Opcode::kSetp ? 2 : 1;
      for (int i = 0; i < inst.operand_count; ++i) {
        if (i >= ndst || inst.operands[i].kind == OperandKind::kMemory) read(inst.operands[i]);
      }
      for (int i = 0; i < ndst && i < inst.operand_count; ++i) {
        const Operand& op = inst.operands[i];
        if (op.kind == OperandKind::kRegister && op.index < state.size() && state[op.index] == 0) state[op.index] = 1;
      }
    }
    clear_ranges_.clear();
    const uint32_t base = register_base_[kernel_.function_index];
    uint32_t start = 0;
    bool open = false;
    for (uint32_t r = 0; r <= total_registers_; ++r) {
      const bool skip = r < total_registers_ && r >= base && r - base < state.size() && state[r - base] == 1;
      const bool clear = r < total_registers_ && !skip;
      if (clear && !open) { start = r; open = true; }
      if (!clear && open) { clear_ranges_.push_back({start, r}); open = false; }
    }
  }

  void build_info(uint32_t fi);

  // ---------------------------------------------------------------- CTA loop
  void init_cta(uint64_t linear) {
    Cta& cta = *tls_step.cta;
    cta.barriers.fill(Barrier{});
    cta.linear = static_cast<uint32_t>(linear);
    cta.id = Dim3(static_cast<uint32_t>(linear % config_.grid.x),
                  static_cast<uint32_t>((linear / config_.grid.x) % config_.grid.y),
                  static_cast<uint32_t>(linear / (uint64_t{config_.grid.x} * config_.grid.y)));
    cta.shared.assign(shared_bytes_, 0);
    const uint32_t threads = static_cast<uint32_t>(config_.block.count());
    cta.live_threads = threads;
    const auto& kernel_function = program_.functions[kernel_.function_index];
    for (uint32_t w = 0; w < tls_step.warps->size(); ++w) {
      Warp& warp = (*tls_step.warps)[w];
      warp.index = w;
      const uint32_t first = w * kWarpSize;
      const uint32_t lanes = std::min<uint32_t>(kWarpSize, threads - first);
      warp.valid_mask = lanes == 32 ? kFullMask : ((1u << lanes) - 1);
      warp.exited_mask = 0;
      warp.blocked_mask = 0;
      warp.barrier_waiters.fill(0);
      if (warp.valid_mask == kFullMask) {
        for (const auto& range : clear_ranges_)
          std::fill(warp.registers.begin() + static_cast<ptrdiff_t>(range.first) * kWarpSize,
                    warp.registers.begin() + static_cast<ptrdiff_t>(range.second) * kWarpSize, 0);
      } else {
        std::fill(warp.registers.begin(), warp.registers.end(), 0);
      }
      warp.predicates.assign(total_predicates_, 0);
      warp.issued = 0;
      warp.timed = false;
      // Thread index of lane 0 by division, then counted up lane by lane (no division per lane).
      uint32_t tid_x = first % config_.block.x;
      uint32_t tid_y = (first / config_.block.x) % config_.block.y;
      uint32_t tid_z = first / (config_.block.x * config_.block.y);
      for (int lane = 0; lane < kWarpSize; ++lane) {
        warp.tid_x[lane] = tid_x;
        warp.tid_y[lane] = tid_y;
        warp.tid_z[lane] = tid_z;
        if (++tid_x == config_.block.x) {
          tid_x = 0;
          if (++tid_y == config_.block.y) {
            tid_y = 0;
            ++tid_z;
          }
        }
        warp.keys[lane] = (warp.valid_mask >> lane) & 1 ? make_key(0, kernel_.function_index, 0) : kExitedKey;
        warp.frame_base[lane] = 0;
        warp.frames[lane].clear();
        warp.saved_registers[lane].clear();
        warp.pending_bar_red[lane] = nullptr;
        warp.carry[lane] = 0;
        auto& local = warp.local[lane];
        if (local.size() < kernel_function.frame_bytes) local.resize(kernel_function.frame_bytes);
        std::fill(local.begin(), local.begin() + kernel_function.frame_bytes, 0);
      }
      warp.current_mask = 0;
      warp.current_key = kExitedKey;
      warp.yielded_mask = 0;
      warp.yield_requested = false;
      reschedule(warp);
    }
  }

  [[noreturn]] void report_deadlock() {
    std::ostringstream message;
    message << "barrier deadlock in kernel " << kernel_.name << ", CTA " << dim(tls_step.cta->id) << ": ";
    for (const auto& warp : *tls_step.warps) {
      if (warp.blocked_mask == 0) continue;
      int lane = __builtin_ctz(warp.blocked_mask);
      message << "warp " << warp.index << " waits at " << location(key_function(warp.keys[lane]), key_pc(warp.keys[lane]) - 1)
              << " (" << __builtin_popcount(warp.blocked_mask) << " threads); ";
    }
    message << tls_step.cta->live_threads << " threads still running";
    throw KernelFault{LaunchStatus::kBarrierDeadlock, message.str()};
  }

  // Picks the lanes with the smallest key as the group to issue. Returns false when no lane
  // of the warp can run (all exited or waiting at a barrier).
  //
  // Warp collectives (shfl/vote/match/redux/bar.warp.sync, all .sync): a lane waits at one until
  // every non-exited lane of its membermask has arrived there (the PTX ISA's rule). A group at a
  // collective whose members are elsewhere is passed over, so the other lanes' paths run first
  // and merge with it when they reach its key. When every runnable group waits so (members that
  // can never arrive: at a different collective or a barrier, which the PTX ISA leaves
  // undefined), the smallest key issues with the lanes that are there.
  bool reschedule(Warp& warp) {
    // Write the group's key back to its lanes (the fast path only tracks current_key).
    for_lanes(warp.current_mask, [&](int lane) { warp.keys[lane] = warp.current_key; });
    const uint32_t runnable = warp.runnable();
    // Lanes that yielded (a failed mbarrier wait) are candidates once no other group can run.
    uint32_t yielded = runnable & warp.yielded_mask;
    uint32_t candidates = runnable & ~yielded;
    uint32_t fallback = 0;  // the smallest-key group, should every group wait for members
    uint64_t fallback_key = kExitedKey;
    while (true) {
      if (candidates == 0 && yielded != 0) {
        candidates = yielded;
        yielded = 0;
        warp.yielded_mask = 0;
      }
      uint64_t best = kExitedKey;
      for_lanes(candidates, [&](int lane) { best = std::min(best, warp.keys[lane]); });
      if (best == kExitedKey) {
        if (fallback == 0) {
          warp.current_mask = 0;
          warp.current_key = kExitedKey;
          return false;
        }
        set_group(warp, fallback, fallback_key, runnable);
        return true;
      }
      // The group: every runnable lane at that key (yielded lanes that others reached join it).
      // next_other_key leaves yielded lanes out, so the group is not rescheduled at their key.
      uint32_t group = 0;
      uint64_t other = kExitedKey;
      const uint32_t not_yielded = ~warp.yielded_mask;
      for_lanes(runnable, [&](int lane) {
        if (warp.keys[lane] == best) {
          group |= 1u << lane;
        } else if ((not_yielded >> lane) & 1) {
          other = std::min(other, warp.keys[lane]);
        }
      });
      if (!waits_for_members(warp, best, group)) {
        warp.yielded_mask &= ~group;
        warp.current_mask = group;
        warp.current_key = best;
        warp.next_other_key = other;
        warp.partial_group = group != (warp.valid_mask & ~warp.exited_mask);
        return true;
      }
      if (fallback == 0) {
        fallback = group;
        fallback_key = best;
      }
      candidates &= ~group;
      yielded &= ~group;
    }
  }
  void set_group(Warp& warp, uint32_t group, uint64_t key, uint32_t runnable) {
    uint64_t other = kExitedKey;
    for_lanes(runnable & ~group & ~warp.yielded_mask, [&](int lane) { other = std::min(other, warp.keys[lane]); });
    warp.yielded_mask &= ~group;
    warp.current_mask = group;
    warp.current_key = key;
    warp.next_other_key = other;
    warp.partial_group = group != (warp.valid_mask & ~warp.exited_mask);
  }

  // Operand holding the membermask of a warp collective; -1 for other instructions.
  static int membermask_operand(uint16_t opcode) {
    switch (static_cast<Opcode>(opcode)) {
      case Opcode::kShfl: return 5;
      case Opcode::kVote: case Opcode::kRedux: return 2;
      case Opcode::kMatch: return 3;
      case Opcode::kBarWarpSync: return 0;
      default: return -1;
    }
  }

  // Whether `lanes` (all at `key`) stand at a warp collective that names live lanes not among
  // them. Lanes whose guard predicate is false do not take part and wait for no one.
  bool waits_for_members(const Warp& warp, uint64_t key, uint32_t lanes) const {
    const uint32_t function_index = key_function(key);
    const uint32_t pc = key_pc(key);
    const int member_operand = membermask_operand(info_[function_index][pc].opcode);
    if (member_operand < 0) return false;
    const Instruction& inst = program_.functions[function_index].body[pc];
    uint32_t taking_part = lanes;
    if (inst.has_guard) {
      taking_part &= warp.predicates[predicate_base_[function_index] + inst.guard] ^ (inst.guard_negated ? kFullMask : 0);
    }
    if (taking_part == 0) return false;
    const Operand& op = inst.operands[member_operand];
    uint32_t members = kFullMask;
    if (op.kind == OperandKind::kImmediate) {
      members = static_cast<uint32_t>(op.value);
    } else if (op.kind == OperandKind::kRegister) {
      const uint64_t* values = warp.registers.data() + (static_cast<size_t>(register_base_[function_index]) + op.index) * kWarpSize;
      members = 0;
      for_lanes(taking_part, [&](int lane) { members |= static_cast<uint32_t>(values[lane]); });
    }
    return (members & warp.valid_mask & ~warp.exited_mask & ~lanes) != 0;
  }

  // Moves the group to `key` in its function (next instruction, uniform branch target), merging
  // with lanes already waiting there; a group without the whole warp rechecks a collective.
  inline void move_group(Warp& warp, uint64_t key) {
    warp.current_key = key;
    if (key >= warp.next_other_key ||
        (warp.partial_group && membermask_operand(info_[key_function(key)][key_pc(key)].opcode) >= 0)) {
      reschedule(warp);
    }
  }
  inline void advance(Warp& warp) { move_group(warp, warp.current_key + 1); }

  // Runs up to `budget` instructions; returns whether any instruction was issued.
  bool run_warp(Warp& warp, uint64_t budget) {
    bool issued_any = false;
    while (budget-- > 0) {
      if (warp.current_mask == 0 && !reschedule(warp)) break;
      step(warp);
      issued_any = true;
    }
    return issued_any;
  }

  // ---------------------------------------------------------------- diagnostics
  static std::string dim(const Dim3& d) {
    return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
  }
  std::string location(uint32_t function, uint32_t pc) const {
    const auto& f = program_.functions[function];
    uint32_t line = pc < f.body.size() ? f.body[pc].line : f.line;
    return program_.file_name + ":" + std::to_string(line);
  }
  std::string where(const Warp& warp, int lane) const {
    const uint64_t key = warp.current_key;
    const auto& f = program_.functions[key_function(key)];
    // Coordinates first: a completion record keeps only the first device::kMessageBytes of a
    // message, and kernel names (mangled C++) can be long.
    std::string text = "in CTA " + dim(tls_step.cta->id) + ", thread (" + std::to_string(warp.tid_x[lane]) + "," +
                       std::to_string(warp.tid_y[lane]) + "," + std::to_string(warp.tid_z[lane]) + ") of kernel " +
                       kernel_.name;
    if (key_function(key) != kernel_.function_index) text += " (function " + f.name + ")";
    text += " at " + location(key_function(key), key_pc(key));
    return text;
  }
  [[noreturn]] void fault(const Warp& warp, int lane, LaunchStatus status, const std::string& what) const {
    throw KernelFault{status, what + " " + where(warp, lane)};
  }
  static std::string hex(uint64_t value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, value);
    return buffer;
  }
  static const char* space_name(ir::Space space) {
    switch (space) {
      case ir::Space::kGlobal: return "global";
      case ir::Space::kShared: return "shared";
      case ir::Space::kLocal: return "local";
      case ir::Space::kConst: return "const";
      case ir::Space::kParam: return "param";
      default: return "generic";
    }
  }

  // ---------------------------------------------------------------- operands
  struct Context {
    Warp& warp;
    uint64_t* registers;   // this function's register rows
    uint32_t* predicates;  // this function's predicate masks
    const ir::Function& function;
    uint32_t function_index;
  };

  uint64_t* row(Context& c, uint32_t index) { return c.registers + static_cast<size_t>(index) * kWarpSize; }

  // Returns 32 lane values of a source operand (a register row, or values in scratch).
  const uint64_t* fetch(Context& c, const Operand& op, uint64_t* scratch, uint32_t mask) {
    switch (op.kind) {
      case OperandKind::kRegister:
        return row(c, op.index);
      case OperandKind::kImmediate: {
        const uint64_t v = static_cast<uint64_t>(op.value);
        for (int lane = 0; lane < kWarpSize; ++lane) scratch[lane] = v;
        return scratch;
      }
      case OperandKind::kPredicate: {
        const uint32_t p = c.predicates[op.index] ^ (op.negated ? kFullMask : 0);
        for (int lane = 0; lane < kWarpSize; ++lane) scratch[lane] = (p >> lane) & 1;
        return scratch;
      }
      case OperandKind::kSpecial:
        for_lanes(mask, [&](int lane) { scratch[lane] = special(c.warp, static_cast<ir::SpecialRegister>(op.index), lane); });
        return scratch;
      case OperandKind::kSymbol:
        for_lanes(mask, [&](int lane) { scratch[lane] = symbol_address(c.warp, op.symbol_kind, op.index, lane) + static_cast<uint64_t>(op.value); });
        return scratch;
      default:
        for (int lane = 0; lane < kWarpSize; ++lane) scratch[lane] = 0;
        return scratch;
    }
  }

  uint64_t* destination(Context& c, const Operand& op) {
    if (op.kind == OperandKind::kRegister) return row(c, op.index);
    return tls_step.sink.data();
  }

  uint32_t predicate_source(Context& c, const Operand& op) {
    if (op.kind == OperandKind::kPredicate) return c.predicates[op.index] ^ (op.negated ? kFullMask : 0);
    if (op.kind == OperandKind::kImmediate) return op.value ? kFullMask : 0;
    return 0;
  }
  void write_predicate(Context& c, const Operand& op, uint32_t mask, uint32_t values) {
    if (op.kind != OperandKind::kPredicate) return;
    uint32_t& p = c.predicates[op.index];
    p = (p & ~mask) | (values & mask);
  }

  uint64_t symbol_address(const Warp& warp, ir::SymbolKind kind, uint32_t index, int lane) const {
    switch (kind) {
      case ir::SymbolKind::kModuleVariable: return loaded_.variable_addresses()[index];
      case ir::SymbolKind::kShared: return (*shared_offsets_)[index];
      case ir::SymbolKind::kDynamicShared: return dynamic_shared_offset_;
      case ir::SymbolKind::kLocal: return warp.frame_base[lane];
      case ir::SymbolKind::kKernelParam: return kParamWindow;
      case ir::SymbolKind::kFrameParam: return warp.frame_base[lane];
    }
    return 0;
  }

  uint64_t special(const Warp& warp, ir::SpecialRegister reg, int lane) const {
    using ir::SpecialRegister;
    const uint32_t bit = 1u << lane;
    switch (reg) {
      case SpecialRegister::kTidX: return warp.tid_x[lane];
      case SpecialRegister::kTidY: return warp.tid_y[lane];
      case SpecialRegister::kTidZ: return warp.tid_z[lane];
      case SpecialRegister::kNtidX: return config_.block.x;
      case SpecialRegister::kNtidY: return config_.block.y;
      case SpecialRegister::kNtidZ: return config_.block.z;
      case SpecialRegister::kCtaidX: return tls_step.cta->id.x;
      case SpecialRegister::kCtaidY: return tls_step.cta->id.y;
      case SpecialRegister::kCtaidZ: return tls_step.cta->id.z;
      case SpecialRegister::kNctaidX: return config_.grid.x;
      case SpecialRegister::kNctaidY: return config_.grid.y;
      case SpecialRegister::kNctaidZ: return config_.grid.z;
      case SpecialRegister::kLaneid: return static_cast<uint64_t>(lane);
      case SpecialRegister::kWarpid: return warp.index;
      case SpecialRegister::kNwarpid: return 64;
      case SpecialRegister::kSmid: return tls_step.cta->linear % std::max<uint32_t>(options_.sm_count, 1);
      case SpecialRegister::kNsmid: return options_.sm_count;
      case SpecialRegister::kGridid: return 1;
      // With a timing model: the SM's cycle and the simulated ns at issue. Without one, time is
      // counted in instructions (4 per instruction), so functional runs stay deterministic.
      case SpecialRegister::kClock: return static_cast<uint32_t>(warp.timed ? warp.timed_cycle : warp.issued * 4);
      case SpecialRegister::kClock64: return warp.timed ? warp.timed_cycle : warp.issued * 4;
      case SpecialRegister::kGlobaltimer: return warp.timed ? warp.timed_ns : counted_instructions() * 4;
      case SpecialRegister::kGlobaltimerLo:
        return static_cast<uint32_t>(warp.timed ? warp.timed_ns : counted_instructions() * 4);
      case SpecialRegister::kGlobaltimerHi:
        return static_cast<uint32_t>((warp.timed ? warp.timed_ns : counted_instructions() * 4) >> 32);
      case SpecialRegister::kLanemaskEq: return bit;
      case SpecialRegister::kLanemaskLt: return bit - 1;
      case SpecialRegister::kLanemaskLe: return (bit - 1) | bit;
      case SpecialRegister::kLanemaskGt: return ~((bit - 1) | bit) & kFullMask;
      case SpecialRegister::kLanemaskGe: return ~(bit - 1) & kFullMask;
      case SpecialRegister::kDynamicSmemSize: return config_.dynamic_shared_bytes;
      case SpecialRegister::kTotalSmemSize: return shared_bytes_;
      case SpecialRegister::kWarpSize: return kWarpSize;
      default: break;
    }
    // The driver's environment registers: %envreg1:%envreg2 is the grid workspace of a
    // cooperative launch (high:low word; cooperative_groups' grid sync reads it), 0 otherwise.
    if (reg >= SpecialRegister::kEnvreg0 && reg <= SpecialRegister::kEnvreg31) {
      const uint32_t n = static_cast<uint32_t>(reg) - static_cast<uint32_t>(SpecialRegister::kEnvreg0);
      if (n == 1) return config_.grid_workspace >> 32;
      if (n == 2) return config_.grid_workspace & 0xffffffffu;
    }
    return 0;
  }

  // ---------------------------------------------------------------- memory
  uint64_t operand_address(Context& c, const Operand& op, int lane) {
    switch (op.memory_base) {
      case ir::MemoryBase::kRegister: return row(c, op.index)[lane] + static_cast<uint64_t>(op.value);
      case ir::MemoryBase::kSymbol: return symbol_address(c.warp, op.symbol_kind, op.index, lane) + static_cast<uint64_t>(op.value);
      case ir::MemoryBase::kAbsolute: return static_cast<uint64_t>(op.value);
    }
    return 0;
  }

  // Resolves a (space, address) to a host pointer for shared/local/param, or returns
  // nullptr with global_address set for global memory.
  uint8_t* resolve(Warp& warp, int lane, ir::Space space, uint64_t address, uint32_t size, bool is_write,
                   uint64_t& global_address, const char* what) {
    // Accesses are naturally aligned: a vector access to its whole size (sizes are powers of two).
    if ((address & (size - 1)) != 0) {
      fault(warp, lane, LaunchStatus::kMisalignedAddress,
            std::string("misaligned address ") + hex(address) + " for " + std::to_string(size) + "-byte " + what);
    }
    ir::Space effective = space;
    uint64_t offset = address;
    if (space == ir::Space::kGeneric) {
      if (address >= kSharedWindow && address < kSharedWindow + kWindowBytes) {
        effective = ir::Space::kShared;
        offset = address - kSharedWindow;
      } else if (address >= kLocalWindow && address < kLocalWindow + kWindowBytes) {
        effective = ir::Space::kLocal;
        offset = address - kLocalWindow;
      } else if (address >= kParamWindow && address < kParamWindow + kWindowBytes) {
        effective = ir::Space::kParam;
      } else {
        effective = ir::Space::kGlobal;
      }
    }
    auto illegal = [&]() {
      fault(warp, lane, LaunchStatus::kIllegalAddress,
            std::string("illegal address ") + hex(address) + " (" + space_name(effective) + " " + what + ", " +
                std::to_string(size) + " bytes)");
    };
    switch (effective) {
      case ir::Space::kShared:
        if (space == ir::Space::kShared && offset >= kSharedWindow && offset < kSharedWindow + kWindowBytes) offset -= kSharedWindow;
        if (offset > tls_step.cta->shared.size() || tls_step.cta->shared.size() - offset < size) illegal();
        return tls_step.cta->shared.data() + offset;
      case ir::Space::kLocal: {
        auto& local = warp.local[lane];
        if (offset > local.size() || local.size() - offset < size) illegal();
        return local.data() + offset;
      }
      case ir::Space::kParam: {
        if (address >= kParamWindow && address < kParamWindow + kWindowBytes) {
          if (is_write) illegal();
          const uint64_t param_offset = address - kParamWindow;
          if (param_offset > params_.size() || params_.size() - param_offset < size) illegal();
          return const_cast<uint8_t*>(params_.data()) + param_offset;
        }
        // .param of a device function or call site: lives in the thread's frame.
        auto& local = warp.local[lane];
        if (offset > local.size() || local.size() - offset < size) illegal();
        return local.data() + offset;
      }
      case ir::Space::kConst:
        if (is_write) illegal();
        global_address = address;
        return nullptr;
      default:
        if (address >= kSharedWindow && address < kParamWindow + kWindowBytes) illegal();  // not a global address
        global_address = address;
        return nullptr;
    }
  }

  // The resolved space and in-space address of an access (as the observer reports it).
  static MemoryAccess::Space resolved_space(ir::Space space, uint64_t& address, bool is_global) {
    if (is_global) return space == ir::Space::kConst ? MemoryAccess::Space::kConst : MemoryAccess::Space::kGlobal;
    ir::Space effective = space;
    if (space == ir::Space::kGeneric || space == ir::Space::kShared || space == ir::Space::kLocal) {
      if (address >= kSharedWindow && address < kSharedWindow + kWindowBytes) {
        effective = ir::Space::kShared;
        address -= kSharedWindow;
      } else if (address >= kLocalWindow && address < kLocalWindow + kWindowBytes) {
        effective = ir::Space::kLocal;
        address -= kLocalWindow;
      }
    }
    if (address >= kParamWindow && address < kParamWindow + kWindowBytes) {
      effective = ir::Space::kParam;
      address -= kParamWindow;
    }
    return effective == ir::Space::kShared  ? MemoryAccess::Space::kShared
           : effective == ir::Space::kParam ? MemoryAccess::Space::kParam
                                            : MemoryAccess::Space::kLocal;
  }

  // Records a lane's access of the current memory instruction for the timing model. A .param
  // access outside the kernel's parameter buffer is a device function's parameter in the
  // thread's call frame: the timing model sees it as the local memory it lives in.
  void record(int lane, ir::Space space, uint64_t address, uint32_t size, bool is_global) {
    LaneAccess& a = tls_step.capture->accesses[static_cast<size_t>(lane)];
    const bool frame_param = !is_global && space == ir::Space::kParam &&
                             !(address >= kParamWindow && address < kParamWindow + kWindowBytes);
    a.space = frame_param ? MemoryAccess::Space::kLocal : resolved_space(space, address, is_global);
    a.address = address;
    a.size = size;
    tls_step.capture->access_mask |= 1u << lane;
  }

  // Reports an access to the observer with its resolved space and in-space address.
  void observe(const Warp& warp, int lane, ir::Space space, uint64_t address, uint32_t size, bool is_write, bool is_global) {
    MemoryAccess access;
    if (is_global) {
      access.space = space == ir::Space::kConst ? MemoryAccess::Space::kConst : MemoryAccess::Space::kGlobal;
    } else {
      ir::Space effective = space;
      if (space == ir::Space::kGeneric || space == ir::Space::kShared || space == ir::Space::kLocal) {
        if (address >= kSharedWindow && address < kSharedWindow + kWindowBytes) {
          effective = ir::Space::kShared;
          address -= kSharedWindow;
        } else if (address >= kLocalWindow && address < kLocalWindow + kWindowBytes) {
          effective = ir::Space::kLocal;
          address -= kLocalWindow;
        }
      }
      if (address >= kParamWindow && address < kParamWindow + kWindowBytes) {
        effective = ir::Space::kParam;
        address -= kParamWindow;
      }
      access.space = effective == ir::Space::kShared ? MemoryAccess::Space::kShared
                     : effective == ir::Space::kParam ? MemoryAccess::Space::kParam
                                                      : MemoryAccess::Space::kLocal;
    }
    access.is_write = is_write;
    access.address = address;
    access.size = size;
    access.cta = tls_step.cta->id;
    access.warp = warp.index;
    access.lane = static_cast<uint32_t>(lane);
    const auto& f = program_.functions[key_function(warp.current_key)];
    const uint32_t pc = key_pc(warp.current_key);
    access.ptx_line = pc < f.body.size() ? f.body[pc].line : f.line;
    options_.memory_observer(access);
  }

  void load_bytes(Warp& warp, int lane, ir::Space space, uint64_t address, void* out, uint32_t size, const char* what) {
    address = in_space(space, address);
    uint64_t global_address = 0;
    uint8_t* host = resolve(warp, lane, space, address, size, false, global_address, what);
    if (options_.memory_observer) observe(warp, lane, space, address, size, false, host == nullptr);
    if (tls_step.capture != nullptr) record(lane, space, address, size, host == nullptr);
    if (host != nullptr) {
      std::memcpy(out, host, size);
    } else if (!global_.read(global_address, out, size)) {
      fault(warp, lane, LaunchStatus::kIllegalAddress,
            std::string("illegal address ") + hex(address) + " (global " + what + ", " + std::to_string(size) + " bytes)");
    } else if (const StepStage* stage = tls_step.stage) {
      stage->overlay(global_address, out, size);  // this SM's own staged stores
    }
  }
  void store_bytes(Warp& warp, int lane, ir::Space space, uint64_t address, const void* in, uint32_t size, const char* what) {
    address = in_space(space, address);
    uint64_t global_address = 0;
    uint8_t* host = resolve(warp, lane, space, address, size, true, global_address, what);
    if (options_.memory_observer) observe(warp, lane, space, address, size, true, host == nullptr);
    if (tls_step.capture != nullptr) record(lane, space, address, size, host == nullptr);
    if (host != nullptr) {
      std::memcpy(host, in, size);
    } else if (StepStage* stage = tls_step.stage) {
      // Parallel phase: memory stays as it was; the store is applied at commit. Probe the
      // address now so an illegal store faults at its own step, as it does unstaged.
      uint8_t probe[16];
      bool mapped = true;
      for (uint32_t done = 0; done < size && mapped; done += sizeof probe) {
        mapped = global_.read(global_address + done, probe, std::min<uint32_t>(sizeof probe, size - done));
      }
      if (!mapped) {
        fault(warp, lane, LaunchStatus::kIllegalAddress,
              std::string("illegal address ") + hex(address) + " (global " + what + ", " + std::to_string(size) + " bytes)");
      }
      stage_store(*stage, global_address, in, size);
    } else if (!global_.write(global_address, in, size)) {
      fault(warp, lane, LaunchStatus::kIllegalAddress,
            std::string("illegal address ") + hex(address) + " (global " + what + ", " + std::to_string(size) + " bytes)");
    } else if (StepStage* log = tls_step.log) {
      stage_store(*log, global_address, in, size);
    }
  }

  // .shared addresses are 32 bits wide: their arithmetic wraps at 2^32 as the hardware's does
  // (optimised code keeps `base - 64` in a 32-bit register and accesses [r+68]). A generic
  // shared-window address used with .shared keeps its offset (the window is 2^32-aligned).
  static uint64_t in_space(ir::Space space, uint64_t address) {
    return space == ir::Space::kShared ? (address & 0xffff'ffffULL) : address;
  }

  static uint64_t extend_loaded(uint64_t raw, Type type) {
    switch (type) {
      case Type::kS8: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(raw)));
      case Type::kS16: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(raw)));
      case Type::kS32: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(raw)));
      default: return raw;
    }
  }

  // The capture record record() writes for a plain (aligned, in-space) kBytes access of one lane
  // to .global (kGlobal) or .shared.
  template <uint32_t kBytes, bool kGlobal>
  static void record_plain(StepResult& capture, int lane, uint64_t base) {
    LaneAccess& a = capture.accesses[static_cast<size_t>(lane)];
    a.space = kGlobal ? MemoryAccess::Space::kGlobal : MemoryAccess::Space::kShared;
    a.address = base;
    a.size = kBytes;
  }
  // Host bytes of the page window holding every lane's address, or nullptr when the lanes
  // span more than one window or the memory offers none for it (callers then go lane by lane).
  uint8_t* common_page_window(const uint64_t* bases, uint32_t mask) {
    const uint64_t first = bases[__builtin_ctz(mask)];
    uint64_t differing_bits = 0;
    for_lanes(mask, [&](int lane) { differing_bits |= bases[lane] ^ first; });
    if (differing_bits >= MemoryInterface::kDirectPageBytes) return nullptr;
    return global_.direct_page(first);
  }

  // The direct per-lane path of exec_load for loads of kWidth elements of kElement bytes (a
  // scalar or a .v2/.v4 vector of kBytes = kElement * kWidth, at most 16) from .global (kGlobal)
  // or .shared: the address from its register row, the capture record written in place (what
  // record() writes for these spaces), fixed-size copies; a misaligned lane or one outside
  // the plain space goes through load_bytes (same checks, same faults, same order). `d` holds
  // each element's destination row (nullptr: a sink).
  template <uint32_t kElement, uint32_t kWidth, bool kGlobal>
  void load_direct(Context& c, const Instruction& inst, uint64_t* const* d, uint32_t mask) {
    constexpr uint32_t kBytes = kElement * kWidth;
    static_assert(kBytes <= 16 && (kBytes & (kBytes - 1)) == 0, "a plain access is a power of two up to 16 bytes");
    using Unsigned = std::conditional_t<kElement == 1, uint8_t, std::conditional_t<kElement == 2, uint16_t,
                     std::conditional_t<kElement == 4, uint32_t, uint64_t>>>;
    using Signed = std::make_signed_t<Unsigned>;
    // Element i of a lane's kBytes at `src`, extended as the type says, into its row.
    auto put = [&](int lane, const uint8_t* src) __attribute__((always_inline)) {
      for (uint32_t i = 0; i < kWidth; ++i) {
        if (d[i] == nullptr) continue;
        Unsigned v;
        std::memcpy(&v, src + i * kElement, kElement);
        d[i][lane] = ir::is_signed(inst.type) ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<Signed>(v)))
                                              : static_cast<uint64_t>(v);
      }
    };
    const Operand& address = inst.operands[1];
    StepResult* const capture = tls_step.capture;
    const std::vector<uint8_t>& shared = tls_step.cta->shared;
    const uint8_t* const shared_data = shared.data();
    const uint64_t shared_size = shared.size();
    const Type type = inst.type;
    auto is_plain = [&](uint64_t base) {
      return kGlobal ? ((base & (kBytes - 1)) == 0 && !(base >= kSharedWindow && base < kParamWindow + kWindowBytes))
                     : ((base & (kBytes - 1)) == 0 && base < shared_size && shared_size - base >= kBytes);
    };
    // Every lane's address first (a lane's load never changes another lane's address register).
    uint64_t bases[kWarpSize];
    uint32_t plain = 0;
    if (address.memory_base == ir::MemoryBase::kRegister) {
      const uint64_t* const base_row = row(c, address.index);
      const uint64_t displacement = static_cast<uint64_t>(address.value);
      for_lanes(mask, [&](int lane) {
        const uint64_t base = kGlobal ? base_row[lane] + displacement : (base_row[lane] + displacement) & 0xffff'ffffULL;
        bases[lane] = base;
        plain |= static_cast<uint32_t>(is_plain(base)) << lane;
      });
    } else {
      for_lanes(mask, [&](int lane) {
        const uint64_t base = in_space(inst.space, operand_address(c, address, lane));
        bases[lane] = base;
        plain |= static_cast<uint32_t>(is_plain(base)) << lane;
      });
    }
    if constexpr (kGlobal) {
      // Lanes that may read this SM's own staged stores take load_bytes (which overlays them).
      if (const StepStage* stage = tls_step.stage; stage != nullptr && !stage->stores.empty()) {
        for_lanes(mask, [&](int lane) {
          if (stage->may_hold(bases[lane], kBytes)) plain &= ~(1u << lane);
        });
      }
    }
    // Every lane plainly inside shared memory, or inside one mapped page window of global
    // memory: no fault possible, so records, reads and the extension run as tight loops.
    const uint8_t* plain_data = nullptr;  // host bytes of `plain_origin` in the lanes' space
    uint64_t plain_origin = 0;
    if (plain == mask && mask != 0) {
      if constexpr (kGlobal) {
        plain_data = common_page_window(bases, mask);
        plain_origin = bases[__builtin_ctz(mask)] & ~(MemoryInterface::kDirectPageBytes - 1);
      } else {
        plain_data = shared_data;
      }
    }
    if (plain_data != nullptr) {
      if (capture != nullptr) {
        LaneAccess* const accesses = capture->accesses.data();
        const auto space = kGlobal ? MemoryAccess::Space::kGlobal : MemoryAccess::Space::kShared;
        for_lanes(mask, [&](int lane) { accesses[lane] = LaneAccess{bases[lane], kBytes, space}; });
        capture->access_mask |= mask;
      }
      if constexpr (kWidth > 1) {
        for_lanes(mask, [&](int lane) { put(lane, plain_data + (bases[lane] - plain_origin)); });
      } else if (ir::is_signed(type)) {
        uint64_t* const row0 = d[0];
        for_lanes(mask, [&](int lane) {
          Unsigned v;
          std::memcpy(&v, plain_data + (bases[lane] - plain_origin), kBytes);
          row0[lane] = static_cast<uint64_t>(static_cast<int64_t>(static_cast<Signed>(v)));
        });
      } else {
        uint64_t* const row0 = d[0];
        for_lanes(mask, [&](int lane) {
          Unsigned v;
          std::memcpy(&v, plain_data + (bases[lane] - plain_origin), kBytes);
          row0[lane] = v;
        });
      }
      return;
    }
    // Global lanes read through the memory's page window when it offers one (one lookup per
    // page the warp touches), else through read().
    uint64_t window = ~uint64_t{0};
    const uint8_t* page = nullptr;
    for_lanes(mask, [&](int lane) {
      const uint64_t base = bases[lane];
      alignas(16) uint8_t value[kBytes] = {};
      if (!((plain >> lane) & 1)) {
        load_bytes(c.warp, lane, inst.space, base, value, kBytes, kWidth == 1 ? "load" : "vector load");
      } else {
        if (capture != nullptr) {
          record_plain<kBytes, kGlobal>(*capture, lane, base);
          capture->access_mask |= 1u << lane;
        }
        if constexpr (kGlobal) {
          const uint64_t start = base & ~(MemoryInterface::kDirectPageBytes - 1);
          if (start != window) {
            window = start;
            page = global_.direct_page(base);
          }
          if (page != nullptr) {
            std::memcpy(value, page + (base - start), kBytes);
          } else if (!global_.read(base, value, kBytes)) {
            fault(c.warp, lane, LaunchStatus::kIllegalAddress,
                  std::string("illegal address ") + hex(base) + " (global load, " + std::to_string(kBytes) + " bytes)");
          }
        } else {
          std::memcpy(value, shared_data + base, kBytes);
        }
      }
      put(lane, value);
    });
  }

  void exec_load(Context& c, const Instruction& inst, uint32_t mask) {
    const uint32_t element = static_cast<uint32_t>(ir::type_bytes(inst.type));
    const uint32_t width = inst.vector_width;
    const Operand& data = inst.operands[0];
    const Operand& address = inst.operands[1];
    if (element > 8) fault(c.warp, __builtin_ctz(mask ? mask : 1), LaunchStatus::kInvalidInstruction, "128-bit loads are not supported");
    // Kernel parameters are the same for every lane: read once (load_bytes for the first lane:
    // checks, fault, capture record), broadcast; the other lanes get the same capture record
    // as load_bytes would write (param space, offset in the buffer).
    if (width == 1 && address.memory_base == ir::MemoryBase::kSymbol && address.symbol_kind == ir::SymbolKind::kKernelParam &&
        data.kind == OperandKind::kRegister && !options_.memory_observer && mask != 0) {
      uint64_t value = 0;
      const int first = __builtin_ctz(mask);
      load_bytes(c.warp, first, inst.space, kParamWindow + static_cast<uint64_t>(address.value), &value, element, "load");
      if (StepResult* const capture = tls_step.capture) {
        const LaneAccess record = capture->accesses[static_cast<size_t>(first)];
        for_lanes(mask, [&](int lane) { capture->accesses[static_cast<size_t>(lane)] = record; });
        capture->access_mask |= mask;
      }
      value = extend_loaded(value, inst.type);
      uint64_t* d = row(c, data.index);
      for_lanes(mask, [&](int lane) { d[lane] = value; });
      return;
    }
    // Scalar global/shared loads without an observer are most of the per-lane work: a lane whose
    // address is aligned and plainly inside its space reads directly, with the same capture
    // record as load_bytes; any other lane takes load_bytes (same checks, same faults, same order).
    if (width == 1 && data.kind == OperandKind::kRegister && !options_.memory_observer &&
        (inst.space == ir::Space::kGlobal || inst.space == ir::Space::kShared)) {
      uint64_t* const d[1] = {row(c, data.index)};
      const bool global = inst.space == ir::Space::kGlobal;
      switch (element) {
        case 1: global ? load_direct<1, 1, true>(c, inst, d, mask) : load_direct<1, 1, false>(c, inst, d, mask); return;
        case 2: global ? load_direct<2, 1, true>(c, inst, d, mask) : load_direct<2, 1, false>(c, inst, d, mask); return;
        case 4: global ? load_direct<4, 1, true>(c, inst, d, mask) : load_direct<4, 1, false>(c, inst, d, mask); return;
        case 8: global ? load_direct<8, 1, true>(c, inst, d, mask) : load_direct<8, 1, false>(c, inst, d, mask); return;
        default: break;
      }
    }
    // Vector loads of up to 16 bytes (tiles read as float2/float4, packed halves) likewise.
    if (width > 1 && element * width <= 16 && !options_.memory_observer &&
        (inst.space == ir::Space::kGlobal || inst.space == ir::Space::kShared)) {
      uint64_t* d[4] = {};
      for (uint32_t i = 0; i < width; ++i) {
        const Operand& e = c.function.vector_elements[data.index + i];
        d[i] = e.kind == OperandKind::kRegister ? row(c, e.index) : nullptr;
      }
      const bool global = inst.space == ir::Space::kGlobal;
#define GPUVP_LOAD_VECTOR(kElement, kWidth)                                                   \
  if (element == (kElement) && width == (kWidth)) {                                           \
    global ? load_direct<kElement, kWidth, true>(c, inst, d, mask)                            \
           : load_direct<kElement, kWidth, false>(c, inst, d, mask);                          \
    return;                                                                                   \
  }
      GPUVP_LOAD_VECTOR(1, 2)
      GPUVP_LOAD_VECTOR(1, 4)
      GPUVP_LOAD_VECTOR(2, 2)
      GPUVP_LOAD_VECTOR(2, 4)
      GPUVP_LOAD_VECTOR(4, 2)
      GPUVP_LOAD_VECTOR(4, 4)
      GPUVP_LOAD_VECTOR(8, 2)
#undef GPUVP_LOAD_VECTOR
    }
    for_lanes(mask, [&](int lane) {
      const uint64_t base = operand_address(c, address, lane);
      uint64_t values[8];
      values[0] = 0;
      if (width == 1) {
        load_bytes(c.warp, lane, inst.space, base, &values[0], element, "load");
      } else {
        uint8_t buffer[64];
        load_bytes(c.warp, lane, inst.space, base, buffer, element * width, "vector load");
        for (uint32_t i = 0; i < width; ++i) {
          values[i] = 0;
          std::memcpy(&values[i], buffer + i * element, element);
        }
      }
      if (width == 1) {
        if (data.kind == OperandKind::kRegister) row(c, data.index)[lane] = extend_loaded(values[0], inst.type);
      } else {
        for (uint32_t i = 0; i < width; ++i) {
          const Operand& e = c.function.vector_elements[data.index + i];
          if (e.kind == OperandKind::kRegister) row(c, e.index)[lane] = extend_loaded(values[i], inst.type);
        }
      }
    });
  }

  // store_direct's path for a global store whose lanes are all aligned and inside one mapped
  // page window (false, having done nothing, otherwise): no fault or probe possible, so records
  // and writes run as tight loops. A staged store whose lanes write consecutive words in lane
  // order is staged as one range: what stage_store makes of the lanes one by one.
  template <uint32_t kBytes>
  bool store_plain_window(const uint64_t* base_row, uint64_t displacement, const uint64_t* source,
                          uint32_t mask) {
    uint64_t bases[kWarpSize];
    bool plain = true;
    for_lanes(mask, [&](int lane) {
      const uint64_t base = base_row[lane] + displacement;
      bases[lane] = base;
      plain &= (base & (kBytes - 1)) == 0 && !(base >= kSharedWindow && base < kParamWindow + kWindowBytes);
    });
    if (!plain) return false;
    uint8_t* const page = common_page_window(bases, mask);
    if (page == nullptr) return false;
    const uint64_t first = bases[__builtin_ctz(mask)];
    const uint64_t origin = first & ~(MemoryInterface::kDirectPageBytes - 1);
    if (StepResult* const capture = tls_step.capture) {
      for_lanes(mask, [&](int lane) { record_plain<kBytes, true>(*capture, lane, bases[lane]); });
      capture->access_mask |= mask;
    }
    StepStage* const stage = tls_step.stage;
    if (stage == nullptr) {
      for_lanes(mask, [&](int lane) { std::memcpy(page + (bases[lane] - origin), &source[lane], kBytes); });
      if (StepStage* log = tls_step.log) {
        for_lanes(mask, [&](int lane) { stage_store(*log, bases[lane], &source[lane], kBytes); });
      }
      return true;
    }
    uint8_t packed[kWarpSize * kBytes];
    uint32_t packed_bytes = 0;
    bool consecutive = true;
    for_lanes(mask, [&](int lane) {
      consecutive &= bases[lane] == first + packed_bytes;
      std::memcpy(packed + packed_bytes, &source[lane], kBytes);
      packed_bytes += kBytes;
    });
    if (consecutive) {
      stage_store(*stage, first, packed, packed_bytes);
    } else {
      for_lanes(mask, [&](int lane) { stage_store(*stage, bases[lane], &source[lane], kBytes); });
    }
    return true;
  }

  // The direct per-lane path of exec_store for scalar kBytes stores to .global (kGlobal) or
  // .shared, like load_direct: what store_bytes does for a plain aligned lane (capture record,
  // shared write, or global write / staged store with the same probe), other lanes through
  // store_bytes.
  template <uint32_t kBytes, bool kGlobal>
  void store_direct(Context& c, const Instruction& inst, const uint64_t* source, uint32_t mask) {
    const Operand& address = inst.operands[0];
    StepResult* const capture = tls_step.capture;
    StepStage* const stage = tls_step.stage;
    const uint64_t* const base_row = address.memory_base == ir::MemoryBase::kRegister ? row(c, address.index) : nullptr;
    const uint64_t displacement = static_cast<uint64_t>(address.value);
    std::vector<uint8_t>& shared = tls_step.cta->shared;
    uint8_t* const shared_data = shared.data();
    const uint64_t shared_size = shared.size();
    if constexpr (kGlobal) {
      if (base_row != nullptr && mask != 0 && store_plain_window<kBytes>(base_row, displacement, source, mask)) return;
    }
    uint64_t window = ~uint64_t{0};  // the page window of the last global lane (see load_direct)
    uint8_t* page = nullptr;
    for_lanes(mask, [&](int lane) {
      const uint64_t base =
          in_space(inst.space, base_row != nullptr ? base_row[lane] + displacement : operand_address(c, address, lane));
      const uint64_t value = source[lane];
      const bool plain = kGlobal ? ((base & (kBytes - 1)) == 0 && !(base >= kSharedWindow && base < kParamWindow + kWindowBytes))
                                 : ((base & (kBytes - 1)) == 0 && base < shared_size && shared_size - base >= kBytes);
      if (!plain) {
        store_bytes(c.warp, lane, inst.space, base, &value, kBytes, "store");
        return;
      }
      if (capture != nullptr) {
        record_plain<kBytes, kGlobal>(*capture, lane, base);
        capture->access_mask |= 1u << lane;
      }
      if constexpr (kGlobal) {
        const uint64_t start = base & ~(MemoryInterface::kDirectPageBytes - 1);
        if (start != window) {
          window = start;
          page = global_.direct_page(base);
        }
        if (stage != nullptr) {
          uint8_t probe[kBytes];
          if (page == nullptr && !global_.read(base, probe, kBytes)) {
            fault(c.warp, lane, LaunchStatus::kIllegalAddress,
                  std::string("illegal address ") + hex(base) + " (global store, " + std::to_string(kBytes) + " bytes)");
          }
          stage_store(*stage, base, &value, kBytes);
        } else if (page != nullptr) {
          std::memcpy(page + (base - start), &value, kBytes);
          if (tls_step.log != nullptr) stage_store(*tls_step.log, base, &value, kBytes);
        } else if (!global_.write(base, &value, kBytes)) {
          fault(c.warp, lane, LaunchStatus::kIllegalAddress,
                std::string("illegal address ") + hex(base) + " (global store, " + std::to_string(kBytes) + " bytes)");
        } else if (tls_step.log != nullptr) {
          stage_store(*tls_step.log, base, &value, kBytes);
        }
      } else {
        std::memcpy(shared_data + base, &value, kBytes);
      }
    });
  }

  void exec_store(Context& c, const Instruction& inst, uint32_t mask) {
    const uint32_t element = static_cast<uint32_t>(ir::type_bytes(inst.type));
    const uint32_t width = inst.vector_width;
    const Operand& address = inst.operands[0];
    const Operand& data = inst.operands[1];
    if (element > 8) fault(c.warp, __builtin_ctz(mask ? mask : 1), LaunchStatus::kInvalidInstruction, "128-bit stores are not supported");
    const uint64_t* sources[8] = {};
    if (width == 1) {
      sources[0] = fetch(c, data, tls_step.scratch[0].data(), mask);
    } else {
      for (uint32_t i = 0; i < width; ++i) {
        sources[i] = fetch(c, c.function.vector_elements[data.index + i], tls_step.scratch[i % 4].data() , mask);
        if (c.function.vector_elements[data.index + i].kind != OperandKind::kRegister && i >= 4) {
          // Up to four scratch rows; wider immediates vectors are not emitted by nvcc.
          fault(c.warp, 0, LaunchStatus::kInvalidInstruction, "vector store with more than four constant elements");
        }
      }
    }
    // Scalar global/shared stores without an observer: the direct path, as for loads.
    if (width == 1 && !options_.memory_observer && (inst.space == ir::Space::kGlobal || inst.space == ir::Space::kShared)) {
      const bool global = inst.space == ir::Space::kGlobal;
      switch (element) {
        case 1: global ? store_direct<1, true>(c, inst, sources[0], mask) : store_direct<1, false>(c, inst, sources[0], mask); return;
        case 2: global ? store_direct<2, true>(c, inst, sources[0], mask) : store_direct<2, false>(c, inst, sources[0], mask); return;
        case 4: global ? store_direct<4, true>(c, inst, sources[0], mask) : store_direct<4, false>(c, inst, sources[0], mask); return;
        case 8: global ? store_direct<8, true>(c, inst, sources[0], mask) : store_direct<8, false>(c, inst, sources[0], mask); return;
        default: break;
      }
    }
    for_lanes(mask, [&](int lane) {
      const uint64_t base = operand_address(c, address, lane);
      if (width == 1) {
        uint64_t value = sources[0][lane];
        store_bytes(c.warp, lane, inst.space, base, &value, element, "store");
      } else {
        uint8_t buffer[64];
        for (uint32_t i = 0; i < width; ++i) {
          uint64_t value = sources[i][lane];
          std::memcpy(buffer + i * element, &value, element);
        }
        store_bytes(c.warp, lane, inst.space, base, buffer, element * width, "vector store");
      }
    });
  }

  template <typename T>
  static T atomic_apply(ir::AtomOp op, T old, T b, T c) {
    switch (op) {
      case ir::AtomOp::kAdd:
        if constexpr (std::is_floating_point_v<T>) return old + b; else return wrap_add(old, b);
      case ir::AtomOp::kMin: return std::is_floating_point_v<T> ? std::fmin(old, b) : std::min(old, b);
      case ir::AtomOp::kMax: return std::is_floating_point_v<T> ? std::fmax(old, b) : std::max(old, b);
      case ir::AtomOp::kExch: return b;
      case ir::AtomOp::kCas: return old == b ? c : old;
      case ir::AtomOp::kInc:
        if constexpr (std::is_integral_v<T>) return old >= b ? T(0) : static_cast<T>(old + 1); else return old;
      case ir::AtomOp::kDec:
        if constexpr (std::is_integral_v<T>) return (old == 0 || old > b) ? b : static_cast<T>(old - 1); else return old;
      case ir::AtomOp::kAnd: if constexpr (std::is_integral_v<T>) return old & b; else return old;
      case ir::AtomOp::kOr: if constexpr (std::is_integral_v<T>) return old | b; else return old;
      case ir::AtomOp::kXor: if constexpr (std::is_integral_v<T>) return old ^ b; else return old;
      default: return old;
    }
  }

  void exec_atomic(Context& c, const Instruction& inst, uint32_t mask) {
    const Operand& address = inst.operands[1];
    const uint64_t* b = fetch(c, inst.operands[2], tls_step.scratch[0].data(), mask);
    const uint64_t* cv = inst.atom_op == ir::AtomOp::kCas ? fetch(c, inst.operands[3], tls_step.scratch[1].data(), mask) : b;
    uint64_t* d = destination(c, inst.operands[0]);
    const uint32_t size = static_cast<uint32_t>(ir::type_bytes(inst.type));
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      for_lanes(mask, [&](int lane) {  // lane order: deterministic serialisation
        const uint64_t addr = operand_address(c, address, lane);
        uint64_t raw = 0;
        load_bytes(c.warp, lane, inst.space, addr, &raw, size, "atomic");
        const T old = from_bits<T>(raw);
        const T result = atomic_apply<T>(inst.atom_op, old, from_bits<T>(b[lane]), from_bits<T>(cv[lane]));
        uint64_t out = to_bits(result);
        store_bytes(c.warp, lane, inst.space, addr, &out, size, "atomic");
        d[lane] = extend_loaded(raw, inst.type);
      });
    };
    const bool bitwise = inst.atom_op == ir::AtomOp::kAnd || inst.atom_op == ir::AtomOp::kOr || inst.atom_op == ir::AtomOp::kXor ||
                         inst.atom_op == ir::AtomOp::kExch || inst.atom_op == ir::AtomOp::kCas;
    if (inst.type == Type::kF32 && !bitwise) run(TypeTag<float>{});
    else if (inst.type == Type::kF64 && !bitwise) run(TypeTag<double>{});
    else if (inst.type == Type::kF32) run(TypeTag<uint32_t>{});
    else if (inst.type == Type::kF64) run(TypeTag<uint64_t>{});
    else if (!dispatch_int(inst.type, run)) invalid(c, inst, mask, "atomic type");
  }

  [[noreturn]] void invalid(Context& c, const Instruction& inst, uint32_t mask, const char* what) {
    (void)inst;
    fault(c.warp, mask ? __builtin_ctz(mask) : 0, LaunchStatus::kInvalidInstruction, std::string("unsupported ") + what);
  }

  // ---------------------------------------------------------------- arithmetic helpers
  template <typename T, typename F>
  void map1(Context& c, const Instruction& inst, uint32_t mask, F&& f) {
    const uint64_t* a = fetch(c, inst.operands[1], tls_step.scratch[0].data(), mask);
    uint64_t* d = destination(c, inst.operands[0]);
    for_lanes(mask, [&](int lane) { d[lane] = to_bits(f(from_bits<T>(a[lane]))); });
  }
  template <typename T, typename F>
  void map2(Context& c, const Instruction& inst, uint32_t mask, F&& f) {
    const uint64_t* a = fetch(c, inst.operands[1], tls_step.scratch[0].data(), mask);
    const uint64_t* b = fetch(c, inst.operands[2], tls_step.scratch[1].data(), mask);
    uint64_t* d = destination(c, inst.operands[0]);
    for_lanes(mask, [&](int lane) { d[lane] = to_bits(f(from_bits<T>(a[lane]), from_bits<T>(b[lane]))); });
  }
  template <typename T, typename F>
  void map3(Context& c, const Instruction& inst, uint32_t mask, F&& f) {
    const uint64_t* a = fetch(c, inst.operands[1], tls_step.scratch[0].data(), mask);
    const uint64_t* b = fetch(c, inst.operands[2], tls_step.scratch[1].data(), mask);
    const uint64_t* e = fetch(c, inst.operands[3], tls_step.scratch[2].data(), mask);
    uint64_t* d = destination(c, inst.operands[0]);
    for_lanes(mask, [&](int lane) { d[lane] = to_bits(f(from_bits<T>(a[lane]), from_bits<T>(b[lane]), from_bits<T>(e[lane]))); });
  }

  // f32 result post-processing: .ftz flushes subnormal results, .sat clamps to [0, 1].
  template <typename F>
  static F finish_float(const Instruction& inst, F value) {
    if (inst.ftz) value = fp::flush_subnormal(value);
    if (inst.saturate) value = fp::saturate01(value);
    return value;
  }
  template <typename F>
  static F input_float(const Instruction& inst, F value) {
    return inst.ftz ? fp::flush_subnormal(value) : value;
  }

  // f32/f64 add/sub/mul/div with ftz/sat and the instruction's rounding mode (in software,
  // see float_util.h); f16/bf16 go through double with one final rounding.
  bool float_binary(Context& c, const Instruction& inst, uint32_t mask, fp::ExactOp op) {
    const ir::Rounding rounding = inst.rounding;
    if (inst.type == Type::kF32) {
      if (rounding == ir::Rounding::kDefault || rounding == ir::Rounding::kRn) {
        // Fast path: host round-to-nearest is what PTX asks for.
        switch (op) {
          case fp::ExactOp::kAdd: map2<float>(c, inst, mask, [&](float a, float b) { return finish_float(inst, input_float(inst, a) + input_float(inst, b)); }); return true;
          case fp::ExactOp::kSub: map2<float>(c, inst, mask, [&](float a, float b) { return finish_float(inst, input_float(inst, a) - input_float(inst, b)); }); return true;
          case fp::ExactOp::kMul: map2<float>(c, inst, mask, [&](float a, float b) { return finish_float(inst, input_float(inst, a) * input_float(inst, b)); }); return true;
          default: map2<float>(c, inst, mask, [&](float a, float b) { return finish_float(inst, input_float(inst, a) / input_float(inst, b)); }); return true;
        }
      }
      map2<float>(c, inst, mask, [&](float a, float b) {
        return finish_float(inst, fp::f32_op(op, input_float(inst, a), input_float(inst, b), 0.0f, rounding));
      });
      return true;
    }
    if (inst.type == Type::kF64) {
      map2<double>(c, inst, mask, [&](double a, double b) { return finish_float(inst, fp::f64_op(op, a, b, 0.0, rounding)); });
      return true;
    }
    if (is_half_type(inst.type)) {
      half_binary(c, inst, mask, [&](double a, double b) {
        switch (op) {
          case fp::ExactOp::kAdd: return a + b;
          case fp::ExactOp::kSub: return a - b;
          case fp::ExactOp::kMul: return a * b;
          default: return a / b;
        }
      });
      return true;
    }
    return false;
  }

  // f16/bf16 (and x2) arithmetic: exact in double, then one rounding to the narrow format.
  template <typename F>
  void half_binary(Context& c, const Instruction& inst, uint32_t mask, F&& f) {
    const bool bf = inst.type == Type::kBF16 || inst.type == Type::kBF16x2;
    const int halves = (inst.type == Type::kF16x2 || inst.type == Type::kBF16x2) ? 2 : 1;
    map2<uint32_t>(c, inst, mask, [&](uint32_t a, uint32_t b) {
      uint32_t out = 0;
      for (int h = 0; h < halves; ++h) {
        double x = bf ? fp::bf16_to_double(a >> (16 * h)) : fp::half_to_double(a >> (16 * h));
        double y = bf ? fp::bf16_to_double(b >> (16 * h)) : fp::half_to_double(b >> (16 * h));
        double r = f(x, y);
        if (inst.saturate) r = fp::saturate01(r);
        if (inst.relu && !(r > 0)) r = std::isnan(r) ? r : 0.0;
        uint32_t bits = bf ? fp::double_to_bf16(r, inst.rounding) : fp::double_to_half(r, inst.rounding);
        if (inst.ftz && !bf && (bits & 0x7c00) == 0) bits &= 0x8000;
        out |= (bits & 0xffff) << (16 * h);
      }
      return out;
    });
  }

  template <typename F>
  void half_ternary(Context& c, const Instruction& inst, uint32_t mask, F&& f) {
    const bool bf = inst.type == Type::kBF16 || inst.type == Type::kBF16x2;
    const int halves = (inst.type == Type::kF16x2 || inst.type == Type::kBF16x2) ? 2 : 1;
    map3<uint32_t>(c, inst, mask, [&](uint32_t a, uint32_t b, uint32_t e) {
      uint32_t out = 0;
      for (int h = 0; h < halves; ++h) {
        auto conv = [&](uint32_t v) { return bf ? fp::bf16_to_double(v >> (16 * h)) : fp::half_to_double(v >> (16 * h)); };
        double r = f(conv(a), conv(b), conv(e));
        if (inst.saturate) r = fp::saturate01(r);
        if (inst.relu && !(r > 0)) r = std::isnan(r) ? r : 0.0;
        uint32_t bits = bf ? fp::double_to_bf16(r, inst.rounding) : fp::double_to_half(r, inst.rounding);
        out |= (bits & 0xffff) << (16 * h);
      }
      return out;
    });
  }

  template <typename F>
  void half_unary(Context& c, const Instruction& inst, uint32_t mask, F&& f) {
    const bool bf = inst.type == Type::kBF16 || inst.type == Type::kBF16x2;
    const int halves = (inst.type == Type::kF16x2 || inst.type == Type::kBF16x2) ? 2 : 1;
    map1<uint32_t>(c, inst, mask, [&](uint32_t a) {
      uint32_t out = 0;
      for (int h = 0; h < halves; ++h) {
        double x = bf ? fp::bf16_to_double(a >> (16 * h)) : fp::half_to_double(a >> (16 * h));
        uint32_t bits = bf ? fp::double_to_bf16(f(x), inst.rounding) : fp::double_to_half(f(x), inst.rounding);
        out |= (bits & 0xffff) << (16 * h);
      }
      return out;
    });
  }

  static bool is_half_type(Type t) {
    return t == Type::kF16 || t == Type::kF16x2 || t == Type::kBF16 || t == Type::kBF16x2;
  }

  static double fmin_ptx(double a, double b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == 0 && b == 0) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  }
  static double fmax_ptx(double a, double b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == 0 && b == 0) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  }

  template <typename T>
  static bool compare(ir::Compare cmp, T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      const bool unordered = std::isnan(a) || std::isnan(b);
      switch (cmp) {
        case ir::Compare::kEq: return !unordered && a == b;
        case ir::Compare::kNe: return !unordered && a != b;
        case ir::Compare::kLt: return !unordered && a < b;
        case ir::Compare::kLe: return !unordered && a <= b;
        case ir::Compare::kGt: return !unordered && a > b;
        case ir::Compare::kGe: return !unordered && a >= b;
        case ir::Compare::kEqu: return unordered || a == b;
        case ir::Compare::kNeu: return unordered || a != b;
        case ir::Compare::kLtu: return unordered || a < b;
        case ir::Compare::kLeu: return unordered || a <= b;
        case ir::Compare::kGtu: return unordered || a > b;
        case ir::Compare::kGeu: return unordered || a >= b;
        case ir::Compare::kNum: return !unordered;
        case ir::Compare::kNan: return unordered;
        default: return false;
      }
    } else {
      using U = std::make_unsigned_t<T>;
      switch (cmp) {
        case ir::Compare::kEq: return a == b;
        case ir::Compare::kNe: return a != b;
        case ir::Compare::kLt: return a < b;
        case ir::Compare::kLe: return a <= b;
        case ir::Compare::kGt: return a > b;
        case ir::Compare::kGe: return a >= b;
        case ir::Compare::kLo: return static_cast<U>(a) < static_cast<U>(b);
        case ir::Compare::kLs: return static_cast<U>(a) <= static_cast<U>(b);
        case ir::Compare::kHi: return static_cast<U>(a) > static_cast<U>(b);
        case ir::Compare::kHs: return static_cast<U>(a) >= static_cast<U>(b);
        default: return false;
      }
    }
  }

  static bool combine(ir::BoolOp op, bool value, bool c) {
    switch (op) {
      case ir::BoolOp::kAnd: return value && c;
      case ir::BoolOp::kOr: return value || c;
      case ir::BoolOp::kXor: return value != c;
      default: return value;
    }
  }

  // Lane mask of compare results (per half for x2 types: the low half).
  uint32_t compare_lanes(Context& c, const Instruction& inst, Type type, const Operand& a_op, const Operand& b_op,
                         uint32_t mask, uint32_t* high_half = nullptr) {
    const uint64_t* a = fetch(c, a_op, tls_step.scratch[0].data(), mask);
    const uint64_t* b = fetch(c, b_op, tls_step.scratch[1].data(), mask);
    uint32_t result = 0;
    uint32_t high = 0;
    if (type == Type::kF32) {
      for_lanes(mask, [&](int lane) {
        float x = input_float(inst, fp::f32(a[lane])), y = input_float(inst, fp::f32(b[lane]));
        result |= static_cast<uint32_t>(compare(inst.compare, x, y)) << lane;
      });
    } else if (type == Type::kF64) {
      for_lanes(mask, [&](int lane) { result |= static_cast<uint32_t>(compare(inst.compare, fp::f64(a[lane]), fp::f64(b[lane]))) << lane; });
    } else if (is_half_type(type)) {
      const bool bf = type == Type::kBF16 || type == Type::kBF16x2;
      for_lanes(mask, [&](int lane) {
        auto conv = [&](uint64_t v, int h) { return bf ? fp::bf16_to_double(static_cast<uint32_t>(v >> (16 * h))) : fp::half_to_double(static_cast<uint32_t>(v >> (16 * h))); };
        result |= static_cast<uint32_t>(compare(inst.compare, conv(a[lane], 0), conv(b[lane], 0))) << lane;
        high |= static_cast<uint32_t>(compare(inst.compare, conv(a[lane], 1), conv(b[lane], 1))) << lane;
      });
    } else {
      bool ok = dispatch_int(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for_lanes(mask, [&](int lane) { result |= static_cast<uint32_t>(compare(inst.compare, from_bits<T>(a[lane]), from_bits<T>(b[lane]))) << lane; });
      });
      if (!ok) invalid(c, inst, mask, "comparison type");
    }
    if (high_half) *high_half = high;
    return result;
  }

  // ---------------------------------------------------------------- conversions
  static bool is_int_type(Type t) { return !ir::is_float(t) && t != Type::kPred && t != Type::kNone; }

  // Reads a source value of `type` as an exact double (integers up to 2^53 exact).
  static long double source_as_long_double(uint64_t raw, Type type) {
    switch (type) {
      case Type::kF32: return fp::f32(raw);
      case Type::kF64: return fp::f64(raw);
      case Type::kF16: return fp::half_to_double(static_cast<uint32_t>(raw));
      case Type::kBF16: return fp::bf16_to_double(static_cast<uint32_t>(raw));
      case Type::kS8: return static_cast<int8_t>(raw);
      case Type::kS16: return static_cast<int16_t>(raw);
      case Type::kS32: return static_cast<int32_t>(raw);
      case Type::kS64: return static_cast<int64_t>(raw);
      case Type::kU8: case Type::kB8: return static_cast<uint8_t>(raw);
      case Type::kU16: case Type::kB16: return static_cast<uint16_t>(raw);
      case Type::kU32: case Type::kB32: return static_cast<uint32_t>(raw);
      default: return static_cast<long double>(raw);
    }
  }

  // Rounds to an integral value, keeping the sign of zero (cvt.rni.f32.f32 of -0.3 is -0).
  static long double round_integer(long double x, ir::Rounding r) {
    return std::copysign(round_integer_magnitude(x, r), x);
  }
  static long double round_integer_magnitude(long double x, ir::Rounding r) {
    switch (r) {
      case ir::Rounding::kRzi: return std::trunc(x);
      case ir::Rounding::kRmi: return std::floor(x);
      case ir::Rounding::kRpi: return std::ceil(x);
      case ir::Rounding::kRni: {
        long double f = std::floor(x);
        long double d = x - f;
        if (d > 0.5L || (d == 0.5L && std::fmod(f, 2.0L) != 0)) f += 1;
        return f;
      }
      default: return std::trunc(x);  // float->int without .rXi is a PTX error; nvcc always writes one
    }
  }

  uint64_t convert(const Instruction& inst, uint64_t raw) {
    const Type dst = inst.type;
    const Type src = inst.type2;
    // Integer <- integer: truncate or extend; .sat clamps to the destination range.
    if (is_int_type(dst) && is_int_type(src)) {
      if (inst.saturate) return clamp_to_int(source_as_long_double(raw, src), dst);
      uint64_t extended = extend_loaded(raw & size_mask(src), signed_variant(src));
      return extended & size_mask(dst);
    }
    // Integer <- float: round as asked, saturate (NaN -> 0), as PTX defines.
    if (is_int_type(dst)) {
      long double v = source_as_long_double(raw, src);
      if (inst.ftz && src == Type::kF32) v = fp::flush_subnormal(static_cast<float>(v));
      if (std::isnan(v)) return 0;
      return clamp_to_int(round_integer(v, inst.rounding), dst);
    }
    // Float <- anything.
    const bool integer_rounding = inst.rounding == ir::Rounding::kRni || inst.rounding == ir::Rounding::kRzi ||
                                  inst.rounding == ir::Rounding::kRmi || inst.rounding == ir::Rounding::kRpi;
    if (dst == Type::kF32) {
      float result;
      if (src == Type::kF32) {
        float v = input_float(inst, fp::f32(raw));
        result = integer_rounding ? static_cast<float>(round_integer(v, inst.rounding)) : v;
      } else if (src == Type::kF64 && integer_rounding) {
        result = static_cast<float>(round_integer(fp::f64(raw), inst.rounding));
      } else if (src == Type::kF64) {
        result = fp::round_to_f32(fp::f64(raw), 0.0, inst.rounding);
      } else if (src == Type::kS64 || src == Type::kU64) {
        double hi, lo;
        if (src == Type::kS64) fp::integer_as_double(static_cast<int64_t>(raw), hi, lo);
        else fp::integer_as_double(raw, hi, lo);
        result = fp::round_to_f32(hi, lo, inst.rounding);
      } else if (is_int_type(src)) {
        result = fp::round_to_f32(static_cast<double>(source_as_long_double(raw, src)), 0.0, inst.rounding);
      } else {
        result = static_cast<float>(source_as_long_double(raw, src));  // f16/bf16: exact
      }
      return fp::bits(finish_float(inst, result));
    }
    if (dst == Type::kF64) {
      double result;
      if (src == Type::kF64) {
        result = integer_rounding ? static_cast<double>(round_integer(fp::f64(raw), inst.rounding)) : fp::f64(raw);
      } else if (src == Type::kS64 || src == Type::kU64) {
        double hi, lo;
        if (src == Type::kS64) fp::integer_as_double(static_cast<int64_t>(raw), hi, lo);
        else fp::integer_as_double(raw, hi, lo);
        result = fp::round_to_f64(hi, lo, inst.rounding);
      } else {
        result = static_cast<double>(source_as_long_double(raw, src));
        if (src == Type::kF32 && inst.ftz) result = fp::flush_subnormal(fp::f32(raw));
      }
      if (inst.saturate) result = fp::saturate01(result);
      return fp::bits(result);
    }
    if (dst == Type::kF16 || dst == Type::kBF16) {
      long double v = source_as_long_double(raw, src);
      if ((src == Type::kU64 || src == Type::kS64) && std::fabs(v) > 9.0e15L) v = static_cast<long double>(static_cast<double>(v));
      if (integer_rounding) v = round_integer(v, inst.rounding);
      double d = static_cast<double>(v);
      if (inst.saturate) d = fp::saturate01(d);
      if (inst.relu && !(d > 0)) d = std::isnan(d) ? d : 0.0;
      ir::Rounding r = integer_rounding ? ir::Rounding::kRn : inst.rounding;
      return dst == Type::kF16 ? fp::double_to_half(d, r) : fp::double_to_bf16(d, r);
    }
    return raw;
  }

  static uint64_t size_mask(Type t) {
    const int bytes = ir::type_bytes(t);
    return bytes >= 8 ? ~0ULL : ((1ULL << (8 * bytes)) - 1);
  }
  static Type signed_variant(Type t) { return t; }

  static uint64_t clamp_to_int(long double v, Type dst) {
    const int bits = 8 * ir::type_bytes(dst);
    if (ir::is_signed(dst)) {
      const long double lo = -std::ldexp(1.0L, bits - 1);
      const long double hi = std::ldexp(1.0L, bits - 1) - 1;
      int64_t r = v <= lo ? static_cast<int64_t>(lo) : v >= hi ? (bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi))
                                                                : static_cast<int64_t>(v);
      return static_cast<uint64_t>(r) & size_mask(dst);
    }
    const long double hi = std::ldexp(1.0L, bits) - 1;
    if (v <= 0) return 0;
    if (v >= hi) return bits == 64 ? ~0ULL : static_cast<uint64_t>(hi);
    return static_cast<uint64_t>(v);
  }

  // ---------------------------------------------------------------- the interpreter
  void step(Warp& warp);
  void exec_alu(Context& c, const Instruction& inst, uint32_t mask);
  void exec_texture(Context& c, const Instruction& inst, uint32_t mask);  // executor_texture.inc
  void exec_float_special(Context& c, const Instruction& inst, uint32_t mask);
  void exec_integer_extra(Context& c, const Instruction& inst, uint32_t mask);
  void exec_cp_async(Context& c, const Instruction& inst, uint32_t mask);
  void exec_wmma_load(Context& c, const Instruction& inst, uint32_t mask);
  void exec_wmma_store(Context& c, const Instruction& inst, uint32_t mask);
  void exec_wmma_mma(Context& c, const Instruction& inst, uint32_t mask);
  void exec_mbarrier(Context& c, const Instruction& inst, uint32_t mask);
  void exec_mma(Context& c, const Instruction& inst, uint32_t mask);
  void exec_ldmatrix(Context& c, const Instruction& inst, uint32_t mask);
  void exec_call(Context& c, const Instruction& inst, uint32_t exec, uint32_t active);
  void exec_indirect_call(Context& c, const Instruction& inst, uint32_t exec, uint32_t active);
  void enter_function(Context& c, const Instruction& inst, uint32_t lanes, uint32_t callee_index);
  void exec_ret(Context& c, uint32_t exec, uint32_t active);
  void exit_lanes(Warp& warp, uint32_t lanes);
  void arrive_at_barrier(Context& c, const Instruction& inst, uint32_t exec, bool wait);
  void check_barriers();
  void release_barrier(int id);
  void do_printf(Context& c, const Instruction& inst, int lane);
  void do_assert(Context& c, const Instruction& inst, int lane);
  // malloc/free and the device runtime's launch calls (executor_device_calls.inc).
  void do_device_call(Context& c, const Instruction& inst, int lane, ir::Function::External external);
  void do_set_conditional(Context& c, const Instruction& inst, int lane);
  std::string read_string(Warp& warp, int lane, uint64_t address);

  const ir::Program& program_;
  const LoadedModule& loaded_;
  const std::vector<uint8_t> params_;
  MemoryInterface& global_;
  const ExecutorOptions options_;

  std::vector<uint32_t> register_base_;
  std::vector<uint32_t> predicate_base_;
  uint32_t dynamic_shared_offset_ = 0;
  const std::vector<uint32_t>* shared_offsets_ = nullptr;  // this kernel's static shared layout
  std::vector<std::string> printf_output_;
  // Child launches between cudaGetParameterBufferV2 and cudaLaunchDeviceV2, by buffer address.
  struct PendingChild {
    const Kernel* kernel = nullptr;
    LaunchConfig config;
  };
  std::map<uint64_t, PendingChild> pending_children_;
  uint64_t device_streams_ = 0;  // device streams created (handles)
  std::map<uint64_t, uint32_t> last_errors_;  // a thread's last device-runtime error (cudaGetLastError)
};

void LaunchRun::step(Warp& warp) {
  const uint64_t key = warp.current_key;
  const uint32_t function_index = key_function(key);
  const ir::Function& function = program_.functions[function_index];
  const uint32_t pc = key_pc(key);
  const Instruction& inst = function.body[pc];
  const uint32_t active = warp.current_mask;
  Context c{warp, warp.registers.data() + static_cast<size_t>(register_base_[function_index]) * kWarpSize,
            warp.predicates.data() + predicate_base_[function_index], function, function_index};
  uint32_t exec = active;
  if (inst.has_guard) exec &= c.predicates[inst.guard] ^ (inst.guard_negated ? kFullMask : 0);
  if (tls_step.out != nullptr) tls_step.out->exec_mask = exec;

  uint64_t counted = 0;  // warp instructions so far, as this step sees them
  if (StepStage* stage = tls_step.stage) {
    ++stage->warp_instructions;
    stage->thread_instructions += static_cast<uint64_t>(popcount32(active));
    counted = warp_instructions_ + stage->warp_instructions;
  } else {
    ++warp_instructions_;
    thread_instructions_ += static_cast<uint64_t>(popcount32(active));
    counted = warp_instructions_;
    if (StepStage* log = tls_step.log) {
      ++log->warp_instructions;
      log->thread_instructions += static_cast<uint64_t>(popcount32(active));
    }
  }
  ++warp.issued;
  if (options_.instruction_limit != 0 && counted > options_.instruction_limit) {
    fault(warp, __builtin_ctz(active), LaunchStatus::kInstructionLimit,
          "instruction limit of " + std::to_string(options_.instruction_limit) + " warp instructions reached");
  }

  switch (inst.opcode) {
    case Opcode::kBra: {
      const uint32_t target = inst.operands[0].index;
      if (exec == active) {
        move_group(warp, make_key(key_depth(key), function_index, target));
      } else if (exec == 0) {
        advance(warp);
      } else {
        const uint64_t taken = make_key(key_depth(key), function_index, target);
        for_lanes(active, [&](int lane) { warp.keys[lane] = (exec >> lane) & 1 ? taken : key + 1; });
        warp.current_mask = 0;
        reschedule(warp);
      }
      return;
    }
    case Opcode::kExit:
      warp.current_mask = active & ~exec;
      exit_lanes(warp, exec);
      if (warp.current_mask != 0) {
        advance(warp);
      } else {
        reschedule(warp);
      }
      return;
    case Opcode::kRet:
      exec_ret(c, exec, active);
      return;
    case Opcode::kCall:
      exec_call(c, inst, exec, active);
      return;
    case Opcode::kTrap:
    case Opcode::kBrkpt:
      if (exec) fault(warp, __builtin_ctz(exec), LaunchStatus::kTrap, inst.opcode == Opcode::kTrap ? "trap" : "brkpt");
      advance(warp);
      return;
    case Opcode::kBarSync:
    case Opcode::kBarRed:
      if (exec) {
        if (tls_step.out != nullptr) tls_step.out->barrier_wait = true;
        arrive_at_barrier(c, inst, exec, true);
        // Lanes that arrived wait; the rest (guard false) go on.
        for_lanes(active, [&](int lane) { warp.keys[lane] = key + 1; });
        warp.current_mask = 0;
        check_barriers();
        reschedule(warp);
      } else {
        advance(warp);
      }
      return;
    case Opcode::kBarArrive:
      if (exec) {
        arrive_at_barrier(c, inst, exec, false);
        check_barriers();
      }
      advance(warp);
      return;
    default:
      break;
  }
  if (exec != 0) exec_alu(c, inst, exec);
  if (warp.current_mask != 0) advance(warp);
  if (warp.yield_requested) {
    warp.yield_requested = false;
    reschedule(warp);
  }
}

void LaunchRun::exit_lanes(Warp& warp, uint32_t lanes) {
  if (lanes == 0) return;
  for_lanes(lanes, [&](int lane) { warp.keys[lane] = kExitedKey; });
  warp.exited_mask |= lanes;
  tls_step.cta->live_threads -= static_cast<uint32_t>(__builtin_popcount(lanes));
  check_barriers();
}

void LaunchRun::exec_ret(Context& c, uint32_t exec, uint32_t active) {
  Warp& warp = c.warp;
  const uint64_t key = warp.current_key;
  const uint32_t depth = key_depth(key);
  if (depth == 0) {
    // ret from the kernel itself ends the thread.
    exit_lanes(warp, exec);
  } else {
    const ir::Function& callee = c.function;
    for_lanes(exec, [&](int lane) {
      Frame frame = warp.frames[lane].back();
      warp.frames[lane].pop_back();
      const ir::Function& caller = program_.functions[frame.return_function];
      const Instruction& call = caller.body[frame.call_pc];
      const Operand& returns = call.operands[1];
      auto& local = warp.local[lane];
      for (uint32_t i = 0; i < returns.count; ++i) {
        const Operand& slot = caller.vector_elements[returns.index + i];
        const auto& ret = callee.returns[i];
        std::memmove(local.data() + frame.caller_frame_base + slot.value, local.data() + warp.frame_base[lane] + ret.offset, ret.size);
      }
      // Restore this function's registers as they were before the call (recursion).
      auto& saved = warp.saved_registers[lane];
      const uint32_t base = register_base_[frame.callee];
      const uint32_t count = callee.register_count;
      const uint32_t pcount = callee.predicate_count;
      const size_t start = saved.size() - count - pcount;
      for (uint32_t r = 0; r < count; ++r) warp.registers[(static_cast<size_t>(base) + r) * kWarpSize + lane] = saved[start + r];
      const uint32_t pbase = predicate_base_[frame.callee];
      for (uint32_t p = 0; p < pcount; ++p) {
        uint32_t& mask = warp.predicates[pbase + p];
        mask = (mask & ~(1u << lane)) | (static_cast<uint32_t>(saved[start + count + p] & 1) << lane);
      }
      saved.resize(start);
      warp.frame_base[lane] = frame.caller_frame_base;
      warp.keys[lane] = make_key(depth - 1, frame.return_function, frame.return_pc);
    });
  }
  for_lanes(active & ~exec, [&](int lane) { warp.keys[lane] = key + 1; });
  warp.current_mask = 0;
  reschedule(warp);
}

void LaunchRun::exec_call(Context& c, const Instruction& inst, uint32_t exec, uint32_t active) {
  Warp& warp = c.warp;
  const uint64_t key = warp.current_key;
  if (inst.operands[0].kind == OperandKind::kRegister) {
    exec_indirect_call(c, inst, exec, active);
    return;
  }
  const uint32_t callee_index = inst.operands[0].index;
  const ir::Function& callee = program_.functions[callee_index];
  if (callee.external != ir::Function::External::kNone) {
    for_lanes(exec, [&](int lane) {
      if (callee.external == ir::Function::External::kVprintf) do_printf(c, inst, lane);
      else if (callee.external == ir::Function::External::kAssertfail) do_assert(c, inst, lane);
      else if (callee.external == ir::Function::External::kGraphSetConditional) do_set_conditional(c, inst, lane);
      else do_device_call(c, inst, lane, callee.external);
    });
    advance(warp);
    return;
  }
  enter_function(c, inst, exec, callee_index);
  for_lanes(active & ~exec, [&](int lane) { warp.keys[lane] = key + 1; });
  warp.current_mask = 0;
  reschedule(warp);
}

// Lanes may call different functions through a pointer: each lane enters its own target.
void LaunchRun::exec_indirect_call(Context& c, const Instruction& inst, uint32_t exec, uint32_t active) {
  Warp& warp = c.warp;
  const uint64_t key = warp.current_key;
  const uint64_t* targets = row(c, inst.operands[0].index);
  uint32_t remaining = exec;
  while (remaining) {
    const uint64_t target = targets[__builtin_ctz(remaining)];
    uint32_t same = 0;
    for_lanes(remaining, [&](int lane) { same |= static_cast<uint32_t>(targets[lane] == target) << lane; });
    const uint64_t offset = target - ir::kFunctionAddressBase;
    const uint64_t index = offset / ir::kFunctionAddressStride;
    const int lane0 = __builtin_ctz(same);
    if (target < ir::kFunctionAddressBase || offset % ir::kFunctionAddressStride != 0 || index >= program_.functions.size()) {
      fault(warp, lane0, LaunchStatus::kIllegalAddress, "indirect call to " + hex(target) + ", which is not a function");
    }
    const ir::Function& callee = program_.functions[index];
    if (!callee.is_defined || callee.is_kernel || callee.params.size() != inst.operands[2].count ||
        callee.returns.size() != inst.operands[1].count) {
      fault(warp, lane0, LaunchStatus::kInvalidInstruction, "indirect call to '" + callee.name + "' does not match the call's prototype");
    }
    enter_function(c, inst, same, static_cast<uint32_t>(index));
    remaining &= ~same;
  }
  for_lanes(active & ~exec, [&](int lane) { warp.keys[lane] = key + 1; });
  warp.current_mask = 0;
  reschedule(warp);
}

// Pushes a frame for each lane of `lanes`: arguments copied into the callee's frame, the
// callee's registers saved (recursion), the lane's key moved to the callee's entry.
void LaunchRun::enter_function(Context& c, const Instruction& inst, uint32_t lanes, uint32_t callee_index) {
  Warp& warp = c.warp;
  const uint64_t key = warp.current_key;
  const ir::Function& callee = program_.functions[callee_index];
  const uint32_t depth = key_depth(key);
  const Operand& args = inst.operands[2];
  for_lanes(lanes, [&](int lane) {
    if (depth + 1 >= kMaxCallDepth) fault(warp, lane, LaunchStatus::kIllegalAddress, "call stack overflow (depth " + std::to_string(depth + 1) + ")");
    auto& local = warp.local[lane];
    const uint32_t caller_base = warp.frame_base[lane];
    const uint32_t new_base = caller_base + ((c.function.frame_bytes + 15) & ~15u);
    const uint64_t needed = uint64_t{new_base} + callee.frame_bytes;
    if (needed > options_.local_bytes_per_thread) {
      fault(warp, lane, LaunchStatus::kIllegalAddress,
            "stack overflow calling " + callee.name + ": " + std::to_string(needed) + " bytes of local memory exceed " +
                std::to_string(options_.local_bytes_per_thread));
    }
    if (local.size() < needed) local.resize(std::max<uint64_t>(needed, local.size() * 2));
    std::fill(local.begin() + new_base, local.begin() + static_cast<std::ptrdiff_t>(needed), 0);
    for (uint32_t i = 0; i < args.count; ++i) {
      const Operand& slot = c.function.vector_elements[args.index + i];
      const auto& param = callee.params[i];
      std::memcpy(local.data() + new_base + param.offset, local.data() + caller_base + slot.value, param.size);
    }
    // Save the callee's registers for this lane: an outer activation may own them.
    auto& saved = warp.saved_registers[lane];
    const uint32_t base = register_base_[callee_index];
    for (uint32_t r = 0; r < callee.register_count; ++r) saved.push_back(warp.registers[(static_cast<size_t>(base) + r) * kWarpSize + lane]);
    const uint32_t pbase = predicate_base_[callee_index];
    for (uint32_t p = 0; p < callee.predicate_count; ++p) saved.push_back((warp.predicates[pbase + p] >> lane) & 1);
    warp.frames[lane].push_back(Frame{c.function_index, key_pc(key) + 1, caller_base, key_pc(key), callee_index});
    warp.frame_base[lane] = new_base;
    warp.keys[lane] = make_key(depth + 1, callee_index, 0);
  });
}

void LaunchRun::arrive_at_barrier(Context& c, const Instruction& inst, uint32_t exec, bool wait) {
  Warp& warp = c.warp;
  const uint64_t* ids = fetch(c, inst.operands[0], tls_step.scratch[0].data(), exec);
  const int lane0 = __builtin_ctz(exec);
  const uint64_t id = ids[lane0];
  if (id >= kBarrierCount) fault(warp, lane0, LaunchStatus::kInvalidInstruction, "barrier id " + std::to_string(id) + " out of range 0..15");
  Barrier& barrier = tls_step.cta->barriers[id];
  const Operand& count_operand = inst.opcode == Opcode::kBarRed ? inst.operands[2] : inst.operands[1];
  if (inst.operand_count > 1 && count_operand.kind != OperandKind::kNone && count_operand.kind != OperandKind::kSink) {
    const uint64_t* counts = fetch(c, count_operand, tls_step.scratch[1].data(), exec);
    barrier.expected = static_cast<uint32_t>(counts[lane0]);
    if (barrier.expected == 0 || barrier.expected % kWarpSize != 0) {
      fault(warp, lane0, LaunchStatus::kInvalidInstruction, "barrier thread count " + std::to_string(barrier.expected) + " is not a positive multiple of 32");
    }
  }
  barrier.arrived += static_cast<uint32_t>(__builtin_popcount(exec));
  if (inst.opcode == Opcode::kBarRed) {
    const uint32_t p = predicate_source(c, inst.operands[3]);
    barrier.red_popc += static_cast<uint32_t>(__builtin_popcount(p & exec));
    barrier.red_and = barrier.red_and && ((p & exec) == exec);
    barrier.red_or = barrier.red_or || ((p & exec) != 0);
    for_lanes(exec, [&](int lane) {
      warp.pending_bar_red[lane] = &inst;
      warp.pending_bar_red_function[lane] = c.function_index;
    });
  }
  if (wait) {
    warp.blocked_mask |= exec;
    warp.barrier_waiters[id] |= exec;
  }
}

void LaunchRun::check_barriers() {
  for (int id = 0; id < kBarrierCount; ++id) {
    Barrier& barrier = tls_step.cta->barriers[id];
    if (barrier.arrived == 0) continue;
    const uint32_t expected = barrier.expected ? barrier.expected : tls_step.cta->live_threads;
    if (barrier.arrived >= expected) release_barrier(id);
  }
}

void LaunchRun::release_barrier(int id) {
  Barrier& barrier = tls_step.cta->barriers[id];
  for (auto& warp : *tls_step.warps) {
    const uint32_t waiters = warp.barrier_waiters[id];
    if (waiters == 0) continue;
    for_lanes(waiters, [&](int lane) {
      const Instruction* red = warp.pending_bar_red[lane];
      if (red == nullptr) return;
      const uint32_t f = warp.pending_bar_red_function[lane];
      const Operand& d = red->operands[0];
      if (red->bool_op == ir::BoolOp::kPopc) {
        if (d.kind == OperandKind::kRegister) warp.registers[(static_cast<size_t>(register_base_[f]) + d.index) * kWarpSize + lane] = barrier.red_popc;
      } else if (d.kind == OperandKind::kPredicate) {
        const bool value = red->bool_op == ir::BoolOp::kAnd ? barrier.red_and : barrier.red_or;
        uint32_t& p = warp.predicates[predicate_base_[f] + d.index];
        p = (p & ~(1u << lane)) | (static_cast<uint32_t>(value) << lane);
      }
      warp.pending_bar_red[lane] = nullptr;
    });
    warp.blocked_mask &= ~waiters;
    warp.barrier_waiters[id] = 0;
    // Woken lanes join the schedule: the group rescans once it reaches their key.
    for_lanes(waiters, [&](int lane) { warp.next_other_key = std::min(warp.next_other_key, warp.keys[lane]); });
  }
  barrier = Barrier{};
}

std::string LaunchRun::read_string(Warp& warp, int lane, uint64_t address) {
  std::string text;
  for (int i = 0; i < 4096; ++i) {
    char ch = 0;
    load_bytes(warp, lane, ir::Space::kGeneric, address + static_cast<uint64_t>(i), &ch, 1, "printf string");
    if (ch == 0) break;
    text.push_back(ch);
  }
  return text;
}

// Device printf formats one conversion at a time with the host's snprintf; the format
// text comes from the kernel, so the non-literal-format warning does not apply here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
void LaunchRun::do_printf(Context& c, const Instruction& inst, int lane) {
  Warp& warp = c.warp;
  const Operand& args = inst.operands[2];
  auto& local = warp.local[lane];
  auto arg_value = [&](uint32_t i) {
    uint64_t v = 0;
    const Operand& slot = c.function.vector_elements[args.index + i];
    std::memcpy(&v, local.data() + warp.frame_base[lane] + slot.value, 8);
    return v;
  };
  const uint64_t format_address = arg_value(0);
  const uint64_t buffer = args.count > 1 ? arg_value(1) : 0;
  const std::string format = read_string(warp, lane, format_address);
  std::string out;
  uint64_t cursor = 0;
  uint32_t argument_count = 0;
  auto next_arg = [&](uint32_t size) {
    cursor = (cursor + size - 1) / size * size;
    uint64_t v = 0;
    load_bytes(warp, lane, ir::Space::kGeneric, buffer + cursor, &v, size, "printf argument");
    cursor += size;
    ++argument_count;
    return v;
  };
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out.push_back(format[i]);
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    // %[flags][width][.precision][length]conversion
    size_t j = i + 1;
    while (j < format.size() && std::strchr("-+ #0", format[j])) ++j;
    while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) ++j;
    if (j < format.size() && format[j] == '.') {
      ++j;
      while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) ++j;
    }
    int longs = 0;
    size_t length_start = j;
    while (j < format.size() && std::strchr("hlLqjzt", format[j])) {
      if (format[j] == 'l' || format[j] == 'L' || format[j] == 'q' || format[j] == 'j' || format[j] == 'z' || format[j] == 't') ++longs;
      ++j;
    }
    if (j >= format.size()) {
      out += format.substr(i);
      break;
    }
    const char conversion = format[j];
    std::string spec = format.substr(i, length_start - i);
    char buffer_text[512];
    switch (conversion) {
      case 'd': case 'i': {
        uint64_t v = next_arg(longs ? 8 : 4);
        long long value = longs ? static_cast<long long>(v) : static_cast<long long>(static_cast<int32_t>(v));
        std::snprintf(buffer_text, sizeof buffer_text, (spec + "lld").c_str(), value);
        out += buffer_text;
        break;
      }
      case 'u': case 'x': case 'X': case 'o': {
        uint64_t v = next_arg(longs ? 8 : 4);
        unsigned long long value = longs ? v : static_cast<uint32_t>(v);
        std::snprintf(buffer_text, sizeof buffer_text, (spec + "ll" + conversion).c_str(), value);
        out += buffer_text;
        break;
      }
      case 'c': {
        uint64_t v = next_arg(4);
        std::snprintf(buffer_text, sizeof buffer_text, (spec + "c").c_str(), static_cast<int>(v));
        out += buffer_text;
        break;
      }
      case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
        uint64_t v = next_arg(8);
        std::snprintf(buffer_text, sizeof buffer_text, (spec + conversion).c_str(), fp::f64(v));
        out += buffer_text;
        break;
      }
      case 's': {
        uint64_t v = next_arg(8);
        std::string s = v == 0 ? std::string("(null)") : read_string(warp, lane, v);
        std::snprintf(buffer_text, sizeof buffer_text, (spec + "s").c_str(), s.c_str());
        out += buffer_text;
        break;
      }
      case 'p': {
        uint64_t v = next_arg(8);
        std::snprintf(buffer_text, sizeof buffer_text, "0x%" PRIx64, v);
        out += buffer_text;
        break;
      }
      default:
        out += format.substr(i, j - i + 1);
        break;
    }
    i = j;
  }
  if (tls_step.log != nullptr) tls_step.log->printf_lines.push_back(out);
  printf_output_.push_back(std::move(out));
  if (tls_step.out != nullptr) tls_step.out->printf = true;
  // vprintf's return value: the number of arguments, as CUDA documents.
  const Operand& returns = inst.operands[1];
  if (returns.count > 0) {
    const Operand& slot = c.function.vector_elements[returns.index];
    const uint32_t value = argument_count;
    std::memcpy(local.data() + warp.frame_base[lane] + slot.value, &value, 4);
  }
}

#pragma GCC diagnostic pop

void LaunchRun::do_assert(Context& c, const Instruction& inst, int lane) {
  Warp& warp = c.warp;
  const Operand& args = inst.operands[2];
  auto& local = warp.local[lane];
  auto arg = [&](uint32_t i, uint32_t size) {
    uint64_t v = 0;
    if (i >= args.count) return v;
    const Operand& slot = c.function.vector_elements[args.index + i];
    std::memcpy(&v, local.data() + warp.frame_base[lane] + slot.value, size);
    return v;
  };
  std::string message = read_string(warp, lane, arg(0, 8));
  std::string file = read_string(warp, lane, arg(1, 8));
  const uint32_t line = static_cast<uint32_t>(arg(2, 4));
  std::string function = read_string(warp, lane, arg(3, 8));
  fault(warp, lane, LaunchStatus::kAssertFailed,
        file + ":" + std::to_string(line) + ": " + function + ": Assertion `" + message + "` failed,");
}

// cudaGraphSetConditional(handle, value): the handle is the address of the condition's 32-bit cell.
void LaunchRun::do_set_conditional(Context& c, const Instruction& inst, int lane) {
  Warp& warp = c.warp;
  const Operand& args = inst.operands[2];
  if (args.count != 2) {
    fault(warp, lane, LaunchStatus::kInvalidInstruction, "cudaGraphSetConditional takes (handle, value)");
  }
  uint64_t handle = 0;
  uint32_t value = 0;
  const auto& local = warp.local[lane];
  std::memcpy(&handle, local.data() + warp.frame_base[lane] + c.function.vector_elements[args.index].value, 8);
  std::memcpy(&value, local.data() + warp.frame_base[lane] + c.function.vector_elements[args.index + 1].value, 4);
  store_bytes(warp, lane, ir::Space::kGeneric, handle, &value, sizeof value, "cudaGraphSetConditional");
}

}  // namespace detail

// Implementation of the per-instruction ALU lives in executor_alu.inc so this file stays
// readable; it defines LaunchRun::exec_alu.
}  // namespace gpuvp::ptx

#include "models/gpu/ptx/executor_alu.inc"
#include "models/gpu/ptx/executor_texture.inc"
#include "models/gpu/ptx/executor_device_calls.inc"
#include "models/gpu/ptx/executor_integer.inc"
#include "models/gpu/ptx/executor_async.inc"
#include "models/gpu/ptx/executor_tensor.inc"
#include "models/gpu/ptx/executor_mbarrier.inc"
#include "models/gpu/ptx/instruction_info.inc"

namespace gpuvp::ptx {

Executor::Executor(MemoryInterface& global_memory, ExecutorOptions options)
    : global_memory_(global_memory), options_(std::move(options)) {}

Executor::~Executor() = default;

// Functional-only launch: CTAs in linear order, warps round-robin in slices, through the
// same stepping API a timing model uses.
LaunchResult Executor::launch(const LoadedModule& module, const Kernel& kernel, const LaunchConfig& config,
                              const std::vector<uint8_t>& params) {
  KernelRun run(global_memory_, options_, module, kernel, config, params);
  const uint64_t cta_count = run.ok() ? run.cta_count() : 0;
  const uint32_t warps = run.warps_per_cta();
  if (config.cooperative) {
    // Every CTA is resident at once (a grid-wide barrier needs them all): warps of all CTAs
    // take turns.
    std::vector<uint32_t> slots;
    slots.reserve(cta_count);
    for (uint64_t linear = 0; linear < cta_count && run.ok(); ++linear) slots.push_back(run.start_cta(linear));
    size_t live = slots.size();
    while (run.ok() && live > 0) {
      bool progressed = false;
      for (const uint32_t slot : slots) {
        if (run.cta_done(slot)) continue;
        for (uint32_t w = 0; w < warps; ++w) {
          if (run.run_warp(slot, w, kWarpSlice) != 0) progressed = true;
        }
        if (run.cta_done(slot)) --live;
      }
      if (!progressed) {
        for (const uint32_t slot : slots) {
          if (!run.cta_done(slot)) {
            run.report_deadlock(slot);
            break;
          }
        }
      }
    }
    for (const uint32_t slot : slots) run.retire_cta(slot);
    return run.finish();
  }
  for (uint64_t linear = 0; linear < cta_count && run.ok(); ++linear) {
    const uint32_t slot = run.start_cta(linear);
    while (run.ok() && !run.cta_done(slot)) {
      bool progressed = false;
      for (uint32_t w = 0; w < warps; ++w) {
        if (run.run_warp(slot, w, kWarpSlice) != 0) progressed = true;
      }
      if (!progressed) run.report_deadlock(slot);
    }
    run.retire_cta(slot);
  }
  return run.finish();
}

// ---------------------------------------------------------------- KernelRun

const char* to_string(UnitClass unit) noexcept {
  switch (unit) {
    case UnitClass::kFp32: return "fp32";
    case UnitClass::kFp64: return "fp64";
    case UnitClass::kInt: return "int";
    case UnitClass::kSfu: return "sfu";
    case UnitClass::kLdst: return "ldst";
    case UnitClass::kBranch: return "branch";
    case UnitClass::kBarrier: return "barrier";
    case UnitClass::kOther: return "other";
    case UnitClass::kTensor: return "tensor";
  }
  return "?";
}

KernelRun::KernelRun(MemoryInterface& global_memory, const ExecutorOptions& options, const LoadedModule& module,
                     const Kernel& kernel, const LaunchConfig& config, std::vector<uint8_t> params)
    : impl_(std::make_unique<detail::LaunchRun>(module, kernel, config, std::move(params), global_memory, options)) {}
KernelRun::~KernelRun() = default;

bool KernelRun::ok() const { return impl_->ok(); }
LaunchStatus KernelRun::status() const { return impl_->status_; }
const std::string& KernelRun::message() const { return impl_->message_; }
const Kernel& KernelRun::kernel() const { return impl_->kernel_; }
const LaunchConfig& KernelRun::config() const { return impl_->config_; }
uint64_t KernelRun::cta_count() const { return impl_->config_.grid.count(); }
uint32_t KernelRun::warps_per_cta() const { return impl_->warps_per_cta_; }
uint32_t KernelRun::register_slots() const { return impl_->total_registers_ + impl_->total_predicates_; }
uint32_t KernelRun::shared_bytes_per_cta() const { return impl_->shared_bytes_; }
KernelRun::CodeRange KernelRun::entry_code() const { return impl_->entry_code(); }
uint32_t KernelRun::start_cta(uint64_t linear) { return impl_->start_cta(linear); }
uint32_t KernelRun::reserve_cta(uint64_t linear) { return impl_->reserve_cta(linear); }
void KernelRun::init_cta(uint32_t slot) { impl_->init_cta_public(slot); }
bool KernelRun::can_start_cta_in_place() const { return impl_->can_start_cta_in_place(); }
uint64_t KernelRun::cta_linear(uint32_t slot) const { return impl_->ctas_[slot]->cta.linear; }
bool KernelRun::warp_ready(uint32_t slot, uint32_t w) { return impl_->warp_ready(slot, w); }
bool KernelRun::warp_exited(uint32_t slot, uint32_t w) const {
  const Warp& warp = impl_->warp_at(slot, w);
  return (warp.valid_mask & ~warp.exited_mask) == 0;
}
const InstructionInfo& KernelRun::next(uint32_t slot, uint32_t w) const { return impl_->info_of(impl_->warp_at(slot, w)); }
bool KernelRun::step(uint32_t slot, uint32_t w, StepResult* out) { return impl_->step_public(slot, w, out); }
bool KernelRun::step(uint32_t slot, uint32_t w, StepResult* out, StepStage* stage) {
  return impl_->step_public(slot, w, out, stage);
}
bool KernelRun::step(uint32_t slot, uint32_t w, StepResult* out, StepStage* stage, StepStage* log) {
  return impl_->step_public(slot, w, out, stage, log);
}
void KernelRun::set_issue_time(uint32_t slot, uint32_t w, uint64_t cycle, uint64_t ns) {
  auto& warp = impl_->warp_at(slot, w);
  warp.timed = true;
  warp.timed_cycle = cycle;
  warp.timed_ns = ns;
}
void KernelRun::commit(StepStage& stage) { impl_->commit(stage); }
bool KernelRun::observed() const { return impl_->observed(); }
uint64_t KernelRun::run_warp(uint32_t slot, uint32_t w, uint64_t budget) { return impl_->run_warp_public(slot, w, budget); }
bool KernelRun::cta_done(uint32_t slot) const { return impl_->ctas_[slot]->cta.live_threads == 0; }
void KernelRun::report_deadlock(uint32_t slot) { impl_->report_deadlock_public(slot); }
void KernelRun::retire_cta(uint32_t slot) { impl_->retire_cta(slot); }
uint64_t KernelRun::warp_instructions() const { return impl_->warp_instructions_; }
uint64_t KernelRun::thread_instructions() const { return impl_->thread_instructions_; }
LaunchResult KernelRun::finish() { return impl_->finish(); }

}  // namespace gpuvp::ptx
