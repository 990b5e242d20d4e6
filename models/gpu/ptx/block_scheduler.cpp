#include "models/gpu/ptx/block_scheduler.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuvp::ptx::ir {
namespace {

// Latencies that set the critical path, in the order of magnitude ptxas assumes: what matters
// is that a global or local load outweighs any chain of arithmetic it could hide behind.
constexpr uint32_t kGlobalLoadLatency = 400;
constexpr uint32_t kSharedLoadLatency = 24;
constexpr uint32_t kConstantLoadLatency = 8;
constexpr uint32_t kLongArithmeticLatency = 16;  // SFU, division, f64
constexpr uint32_t kArithmeticLatency = 4;

// State spaces an access may touch, as bits.
constexpr uint8_t kGlobalBit = 1, kSharedBit = 2, kLocalBit = 4, kConstBit = 8, kParamBit = 16;

uint8_t space_bits(Space space) {
  switch (space) {
    case Space::kGeneric: return kGlobalBit | kSharedBit | kLocalBit | kConstBit;
    case Space::kGlobal: return kGlobalBit;
    case Space::kShared: return kSharedBit;
    case Space::kLocal: return kLocalBit;
    case Space::kConst: return kConstBit;
    case Space::kParam: return kParamBit;
  }
  return 0xff;
}

// Instructions nothing may move across; the control ones also end a basic block.
bool ends_block(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kBra: case Opcode::kBrx: case Opcode::kCall: case Opcode::kRet: case Opcode::kExit:
    case Opcode::kTrap: case Opcode::kBrkpt:
      return true;
    default:
      return false;
  }
}

bool is_fence(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kMembar: case Opcode::kFence: case Opcode::kAtom: case Opcode::kRed: case Opcode::kNanosleep:
    case Opcode::kBarSync: case Opcode::kBarArrive: case Opcode::kBarRed: case Opcode::kBarWarpSync:
    case Opcode::kShfl: case Opcode::kVote: case Opcode::kMatch: case Opcode::kActivemask: case Opcode::kRedux:
    case Opcode::kCpAsync: case Opcode::kCpAsyncCommit: case Opcode::kCpAsyncWait:
    case Opcode::kWmmaLoad: case Opcode::kWmmaStore: case Opcode::kWmmaMma: case Opcode::kMbarrier:
    case Opcode::kMma: case Opcode::kLdmatrix:
      return true;
    default:
      break;
  }
  return ends_block(inst) || inst.ordered || reads_time(inst);
}

uint32_t result_latency(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kTex: case Opcode::kTld4: case Opcode::kSuld:
      return kGlobalLoadLatency;
    case Opcode::kLd: case Opcode::kLdu:
      switch (inst.space) {
        case Space::kShared: return kSharedLoadLatency;
        case Space::kConst: case Space::kParam: return kConstantLoadLatency;
        default: return kGlobalLoadLatency;
      }
    case Opcode::kDiv: case Opcode::kRem: case Opcode::kRcp: case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kSin:
    case Opcode::kCos: case Opcode::kLg2: case Opcode::kEx2: case Opcode::kTanh:
      return kLongArithmeticLatency;
    default:
      return inst.type == Type::kF64 || inst.type2 == Type::kF64 ? kLongArithmeticLatency : kArithmeticLatency;
  }
}

// Registers, predicates and the carry flag share one id space per function.
struct Access {
  std::vector<uint32_t> reads, writes;
  uint8_t memory_spaces = 0;  // 0: no memory access
  bool memory_write = false;
};

Access access_of(const Function& function, const Instruction& inst) {
  Access a;
  const uint32_t predicate_base = function.register_count;
  const uint32_t carry = predicate_base + function.predicate_count;
  auto add = [&](bool write, const Operand& op) {
    if (op.kind == OperandKind::kRegister) (write ? a.writes : a.reads).push_back(op.index);
    if (op.kind == OperandKind::kPredicate) (write ? a.writes : a.reads).push_back(predicate_base + op.index);
    if (op.kind == OperandKind::kMemory && op.memory_base == MemoryBase::kRegister) a.reads.push_back(op.index);
  };
  if (inst.has_guard) a.reads.push_back(predicate_base + inst.guard);
  const int destinations = destination_operand_count(inst);
  for (int i = 0; i < inst.operand_count; ++i) {
    const Operand& op = inst.operands[i];
    const bool write = i < destinations && op.kind != OperandKind::kMemory;
    if (op.kind == OperandKind::kVector) {
      for (uint32_t e = 0; e < op.count; ++e) add(write, function.vector_elements[op.index + e]);
    } else {
      add(write, op);
    }
  }
  if (inst.set_carry) a.writes.push_back(carry);
  if (inst.opcode == Opcode::kAddCarry || inst.opcode == Opcode::kSubCarry || inst.opcode == Opcode::kMadCarry) {
    a.reads.push_back(carry);
  }
  if (inst.opcode == Opcode::kLd || inst.opcode == Opcode::kLdu || inst.opcode == Opcode::kSt ||
      inst.opcode == Opcode::kPrefetch || inst.opcode == Opcode::kTex || inst.opcode == Opcode::kTld4 ||
      inst.opcode == Opcode::kTxq || inst.opcode == Opcode::kSuld || inst.opcode == Opcode::kSust ||
      inst.opcode == Opcode::kSuq) {
    a.memory_spaces = space_bits(inst.space);
    a.memory_write = inst.opcode == Opcode::kSt || inst.opcode == Opcode::kSust;
  }
  return a;
}

// List-schedules body[begin, end), a run of instructions none of which is a fence.
void schedule_region(Function& function, size_t begin, size_t end) {
  const size_t n = end - begin;
  if (n < 3) return;
  const uint32_t ids = function.register_count + function.predicate_count + 1;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> successors(n);  // (node, latency)
  std::vector<uint32_t> predecessors(n, 0);
  auto edge = [&](uint32_t from, uint32_t to, uint32_t latency) {
    successors[from].emplace_back(to, latency);
    ++predecessors[to];
  };
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> last_writer(ids, kNone);
  std::vector<std::vector<uint32_t>> readers_since_write(ids);
  std::vector<uint32_t> latency(n);
  std::vector<std::pair<uint32_t, Access>> memory;  // earlier memory accesses of the region
  for (uint32_t i = 0; i < n; ++i) {
    const Instruction& inst = function.body[begin + i];
    const Access a = access_of(function, inst);
    latency[i] = result_latency(inst);
    for (uint32_t r : a.reads) {
      if (last_writer[r] != kNone) edge(last_writer[r], i, latency[last_writer[r]]);
    }
    for (uint32_t w : a.writes) {
      if (last_writer[w] != kNone) edge(last_writer[w], i, 1);
      for (uint32_t reader : readers_since_write[w]) {
        if (reader != i) edge(reader, i, 0);
      }
    }
    for (uint32_t r : a.reads) readers_since_write[r].push_back(i);
    for (uint32_t w : a.writes) {
      last_writer[w] = i;
      readers_since_write[w].clear();
    }
    if (a.memory_spaces != 0) {
      for (const auto& [earlier, e] : memory) {
        if ((a.memory_write || e.memory_write) && (a.memory_spaces & e.memory_spaces) != 0) {
          edge(earlier, i, e.memory_write ? 1 : 0);
        }
      }
      memory.emplace_back(i, a);
    }
  }
  // Height: the longest latency path from a node to the region's end.
  std::vector<uint64_t> height(n, 0);
  for (uint32_t i = static_cast<uint32_t>(n); i-- > 0;) {
    uint64_t h = latency[i];
    for (const auto& [to, l] : successors[i]) h = std::max<uint64_t>(h, l + height[to]);
    height[i] = h;
  }
  // Ready nodes, highest first; equal heights keep program order.
  std::vector<uint32_t> ready, order;
  order.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (predecessors[i] == 0) ready.push_back(i);
  }
  auto before = [&](uint32_t a, uint32_t b) { return height[a] != height[b] ? height[a] > height[b] : a < b; };
  while (!ready.empty()) {
    const auto best = std::min_element(ready.begin(), ready.end(), before);
    const uint32_t node = *best;
    ready.erase(best);
    order.push_back(node);
    for (const auto& [to, l] : successors[node]) {
      if (--predecessors[to] == 0) ready.push_back(to);
    }
  }
  std::vector<Instruction> scheduled;
  scheduled.reserve(n);
  for (uint32_t node : order) scheduled.push_back(function.body[begin + node]);
  std::copy(scheduled.begin(), scheduled.end(), function.body.begin() + static_cast<std::ptrdiff_t>(begin));
}

}  // namespace

void schedule_basic_blocks(Function& function) {
  std::vector<bool> leader(function.body.size() + 1, false);
  for (const Instruction& inst : function.body) {
    for (int i = 0; i < inst.operand_count; ++i) {
      if (inst.operands[i].kind == OperandKind::kLabel) leader[inst.operands[i].index] = true;
    }
  }
  size_t region_begin = 0;
  for (size_t pc = 0; pc < function.body.size(); ++pc) {
    const Instruction& inst = function.body[pc];
    if (leader[pc] && pc > region_begin) {
      schedule_region(function, region_begin, pc);
      region_begin = pc;
    }
    if (is_fence(inst)) {
      schedule_region(function, region_begin, pc);
      region_begin = pc + 1;
    }
  }
  schedule_region(function, region_begin, function.body.size());
}

}  // namespace gpuvp::ptx::ir
