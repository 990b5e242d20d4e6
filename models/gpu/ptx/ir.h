// Internal form of a decoded PTX module (private to models/gpu/ptx).
//
// Everything the executor needs is resolved here at load time: opcodes and modifiers are
// enums, registers are function-relative indices, symbols are (kind, offset/index) pairs,
// labels are instruction indices into the function's body. Nothing is looked up by name
// while a kernel runs.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/gpu/ptx/module.h"

namespace gpuvp::ptx::ir {

enum class Type : uint8_t {
  kNone, kPred,
  kB8, kB16, kB32, kB64, kB128,
  kU8, kU16, kU32, kU64,
  kS8, kS16, kS32, kS64,
  kF16, kF16x2, kBF16, kBF16x2, kF32, kF64,
};

constexpr int type_bytes(Type type) {
  switch (type) {
    case Type::kB8: case Type::kU8: case Type::kS8: return 1;
    case Type::kB16: case Type::kU16: case Type::kS16: case Type::kF16: case Type::kBF16: return 2;
    case Type::kB32: case Type::kU32: case Type::kS32: case Type::kF32: case Type::kF16x2:
    case Type::kBF16x2: return 4;
    case Type::kB64: case Type::kU64: case Type::kS64: case Type::kF64: return 8;
    case Type::kB128: return 16;
    case Type::kPred: return 1;
    case Type::kNone: return 0;
  }
  return 0;
}
constexpr bool is_signed(Type t) { return t == Type::kS8 || t == Type::kS16 || t == Type::kS32 || t == Type::kS64; }
constexpr bool is_float(Type t) {
  return t == Type::kF16 || t == Type::kF16x2 || t == Type::kBF16 || t == Type::kBF16x2 ||
         t == Type::kF32 || t == Type::kF64;
}

enum class Space : uint8_t { kGeneric, kGlobal, kShared, kLocal, kConst, kParam };

// Device-function "addresses" (mov.u64 %rd, func) live in their own window so an indirect
// call can map them back to a function index; they are never dereferenced.
constexpr uint64_t kFunctionAddressBase = 0x0004'0000'0000'0000ULL;
constexpr uint64_t kFunctionAddressStride = 16;

enum class Opcode : uint16_t {
  kInvalid,
  // integer and shared integer/float arithmetic
  kAdd, kSub, kMul, kMad, kMul24, kMad24, kSad, kDiv, kRem, kAbs, kNeg, kMin, kMax,
  kAddCarry, kSubCarry, kMadCarry,  // addc/subc/madc (read CC.CF)
  kPopc, kClz, kBfind, kBrev, kBfe, kBfi, kPrmt, kLop3, kShf, kShl, kShr, kFns,
  kAnd, kOr, kXor, kNot, kCnot, kDp4a, kDp2a,
  // floating point
  kFma, kRcp, kSqrt, kRsqrt, kSin, kCos, kLg2, kEx2, kTanh, kTestp, kCopysign,
  // compare / select / convert / move
  kSetp, kSelp, kSet, kSlct, kCvt, kCvta, kMov, kIsspacep,
  // memory
  kLd, kLdu, kSt, kAtom, kRed, kPrefetch, kMembar, kFence,
  // control
  kBra, kBrx, kCall, kRet, kExit, kTrap, kBrkpt, kNanosleep,
  // barriers and warp-level
  kBarSync, kBarArrive, kBarRed, kBarWarpSync, kShfl, kVote, kMatch, kActivemask, kRedux,
  // textures and surfaces (texture.h): Instruction::mode packs geometry and variant
  kTex, kTld4, kTxq, kSuld, kSust, kSuq,
  // bit-field masks and extensions, SIMD video (executor_integer.inc)
  kBmsk, kSzext, kVideo4,
  // asynchronous global-to-shared copies (cp.async; executor_async.inc)
  kCpAsync, kCpAsyncCommit, kCpAsyncWait,
  // warp-level matrix multiply-accumulate (wmma.*; executor_tensor.inc)
  kWmmaLoad, kWmmaStore, kWmmaMma,
  // mbarrier objects in shared memory, and cp.async.mbarrier.arrive (executor_mbarrier.inc)
  kMbarrier,
  // mma.sync with the PTX ISA's fragment layouts, ldmatrix (executor_tensor.inc)
  kMma, kLdmatrix,
  kCount
};

enum class Rounding : uint8_t { kDefault, kRn, kRz, kRm, kRp, kRna, kRni, kRzi, kRmi, kRpi };
enum class Compare : uint8_t {
  kNone, kEq, kNe, kLt, kLe, kGt, kGe, kLo, kLs, kHi, kHs,
  kEqu, kNeu, kLtu, kLeu, kGtu, kGeu, kNum, kNan
};
enum class BoolOp : uint8_t { kNone, kAnd, kOr, kXor, kPopc };
enum class MulMode : uint8_t { kNone, kLo, kHi, kWide };
enum class AtomOp : uint8_t { kNone, kAdd, kMin, kMax, kInc, kDec, kExch, kCas, kAnd, kOr, kXor };
enum class ShflMode : uint8_t { kUp, kDown, kBfly, kIdx };
enum class VoteMode : uint8_t { kAll, kAny, kUni, kBallot };
// Instruction::mode of cvt.pack.sat (saturate two or three values and pack them into 32 bits).
constexpr uint8_t kCvtPack = 1;
// Instruction::mode of cvt to .tf32 (the f32 rounded to 10 mantissa bits, kept in a .b32).
constexpr uint8_t kCvtTf32 = 3;
// Instruction::mode of cp.async with .L2::cache_hint (its last operand is a cache policy).
constexpr uint8_t kCpAsyncCacheHint = 2;
// wmma: element kinds of the fragments and the shapes (M, N, K).
enum class TensorElement : uint8_t { kF16, kBF16, kTF32, kF32, kS8, kU8, kS32 };
struct TensorShape {
  uint8_t m, n, k;
};
// The first kWmmaShapeCount are wmma's; the rest mma.sync's (m16n8k8, m16n8k16, m16n8k4, m8n8k16,
// m16n8k32).
inline constexpr TensorShape kTensorShapes[] = {{16, 16, 16}, {8, 32, 16}, {32, 8, 16}, {16, 16, 8},
                                                {16, 8, 8},   {16, 8, 16}, {16, 8, 4},  {8, 8, 16}, {16, 8, 32}};
constexpr uint8_t kWmmaShapeCount = 4;
// mbarrier: the operation (Instruction::mode of kMbarrier) and its variants (mbarrier_variant bits).
enum class MbarrierOp : uint8_t {
  kInit, kInval, kArrive, kArriveDrop, kExpectTx, kCompleteTx, kTestWait, kTryWait, kPendingCount,
  kCpAsyncArrive,  // cp.async.mbarrier.arrive
};
constexpr uint8_t kMbarrierParity = 1;      // test_wait/try_wait .parity: the operand is a phase parity
constexpr uint8_t kMbarrierExpectTx = 2;    // arrive{_drop}.expect_tx
constexpr uint8_t kMbarrierNoComplete = 4;  // arrive{_drop}.noComplete
constexpr uint8_t kMbarrierNoinc = 8;       // cp.async.mbarrier.arrive.noinc
// Whether an mbarrier instruction has a destination (state, waitComplete or count) as operand 0;
// the others start with the object's address.
constexpr bool mbarrier_has_destination(MbarrierOp op) {
  return op == MbarrierOp::kArrive || op == MbarrierOp::kArriveDrop || op == MbarrierOp::kTestWait ||
         op == MbarrierOp::kTryWait || op == MbarrierOp::kPendingCount;
}
// vop4 (mode of kVideo4).
enum class VideoOp : uint8_t { kAdd, kSub, kAbsdiff, kMin, kMax };
enum class TestpClass : uint8_t { kFinite, kInfinite, kNumber, kNotanumber, kNormal, kSubnormal };

enum class SpecialRegister : uint8_t {
  kTidX, kTidY, kTidZ, kNtidX, kNtidY, kNtidZ, kCtaidX, kCtaidY, kCtaidZ,
  kNctaidX, kNctaidY, kNctaidZ, kLaneid, kWarpid, kNwarpid, kSmid, kNsmid, kGridid,
  kClock, kClock64, kGlobaltimer, kGlobaltimerLo, kGlobaltimerHi,
  kLanemaskEq, kLanemaskLt, kLanemaskLe, kLanemaskGt, kLanemaskGe,
  kDynamicSmemSize, kTotalSmemSize, kWarpSize,
  // %envreg0..%envreg31: read-only values the driver sets per launch (kEnvreg0 + n).
  kEnvreg0, kEnvreg31 = kEnvreg0 + 31,
};

// Where a symbol's address comes from at run time.
enum class SymbolKind : uint8_t {
  kModuleVariable,  // .global/.const: LoadedModule's address table, by variable index
  kShared,          // static .shared variable (index); its offset depends on the kernel
  kDynamicShared,   // extern .shared: starts after all static shared, aligned
  kLocal,           // offset in the current call frame (per thread)
  kKernelParam,     // offset in the kernel parameter buffer
  kFrameParam,      // .param of a .func or a call site: offset in the current frame
};

enum class OperandKind : uint8_t {
  kNone,
  kRegister,   // index: function-relative register
  kPredicate,  // index: function-relative predicate; negated for !%p
  kImmediate,  // value: raw bits (floats already in their binary form)
  kSpecial,    // index: SpecialRegister
  kSymbol,     // address of a symbol (+ value as offset): symbol_kind, index
  kMemory,     // [base + value]: base is a register (index), a symbol, or nothing
  kVector,     // { ... }: index = first element in Function::vector_elements, count
  kLabel,      // index: instruction index in the function
  kFunction,   // index: function index in the program
  kSink,       // _
};

enum class MemoryBase : uint8_t { kAbsolute, kRegister, kSymbol };

struct Operand {
  OperandKind kind = OperandKind::kNone;
  bool negated = false;
  SymbolKind symbol_kind = SymbolKind::kModuleVariable;
  MemoryBase memory_base = MemoryBase::kAbsolute;
  uint8_t count = 0;   // vector element count
  uint32_t index = 0;
  int64_t value = 0;
};

struct Instruction {
  Opcode opcode = Opcode::kInvalid;
  Type type = Type::kNone;   // main type (destination type for cvt/set/slct)
  Type type2 = Type::kNone;  // second type (source type for cvt/set/slct/mul.wide dest...)
  Rounding rounding = Rounding::kDefault;
  Compare compare = Compare::kNone;
  BoolOp bool_op = BoolOp::kNone;
  MulMode mul_mode = MulMode::kNone;
  AtomOp atom_op = AtomOp::kNone;
  Space space = Space::kGeneric;
  Space space2 = Space::kGeneric;  // cvta.to.X / isspacep
  uint8_t vector_width = 1;        // ld/st .v2/.v4
  uint8_t mode = 0;                // ShflMode / VoteMode / TestpClass / prmt mode / shf dir
  bool ftz = false;
  bool saturate = false;
  bool approx = false;
  bool set_carry = false;      // .cc
  bool to_space = false;       // cvta.to
  bool uniform = false;        // .uni on bra/call
  bool clamp = false;          // shf.clamp
  bool shift_left = false;     // shf.l
  bool relu = false;           // .relu on f16 min/max/cvt
  bool l1_bypass = false;      // ld.cg / ld.cv / ld.volatile: not cached in L1 (timing only)
  bool ordered = false;        // .volatile/.relaxed/.acquire/.release/.mmio access: keeps its place
                               // among memory operations (block scheduler)
  Type type3 = Type::kNone;    // third type: vop4 .btype, cvt.pack's .cType
  // wmma: the fragment (mode: 0 a, 1 b, 2 c/d), the shape (index into kTensorShapes), the
  // memory layout of load/store, the element kinds of a, b, c and d.
  uint8_t tensor_shape = 0;
  bool tensor_column_major = false;
  TensorElement tensor_a = TensorElement::kF16, tensor_b = TensorElement::kF16;
  TensorElement tensor_c = TensorElement::kF32, tensor_d = TensorElement::kF32;
  bool accumulate = false;     // vop4 .add: sum of the lanes' results plus c
  uint8_t mbarrier_variant = 0;  // kMbarrier: kMbarrierParity | kMbarrierExpectTx | ...
  bool has_guard = false;
  bool guard_negated = false;
  uint8_t operand_count = 0;
  uint32_t guard = 0;          // predicate index
  uint32_t line = 0;           // PTX source line, for error messages
  Operand operands[7];
};

// Leading operands an instruction writes (the rest are read; a memory operand's base register is
// always read).
constexpr int destination_operand_count(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kSt: case Opcode::kRed: case Opcode::kBra: case Opcode::kBrx: case Opcode::kCall:
    case Opcode::kRet: case Opcode::kExit: case Opcode::kTrap: case Opcode::kBrkpt: case Opcode::kNanosleep:
    case Opcode::kBarSync: case Opcode::kBarArrive: case Opcode::kBarWarpSync: case Opcode::kMembar:
    case Opcode::kFence: case Opcode::kPrefetch: case Opcode::kSust: case Opcode::kCpAsync: case Opcode::kCpAsyncCommit:
    case Opcode::kCpAsyncWait: case Opcode::kWmmaStore:
      return 0;
    case Opcode::kLdmatrix:
      return 1;
    case Opcode::kSetp: case Opcode::kShfl:
      return 2;  // p|q, d|p
    case Opcode::kMbarrier:
      return mbarrier_has_destination(static_cast<MbarrierOp>(inst.mode)) ? 1 : 0;
    default:
      return 1;
  }
}

// Whether an instruction reads %clock, %clock64 or %globaltimer*.
inline bool reads_time(const Instruction& inst) {
  for (int i = 0; i < inst.operand_count; ++i) {
    const Operand& op = inst.operands[i];
    if (op.kind != OperandKind::kSpecial) continue;
    const auto reg = static_cast<SpecialRegister>(op.index);
    if (reg == SpecialRegister::kClock || reg == SpecialRegister::kClock64 || reg == SpecialRegister::kGlobaltimer ||
        reg == SpecialRegister::kGlobaltimerLo || reg == SpecialRegister::kGlobaltimerHi) {
      return true;
    }
  }
  return false;
}

struct FunctionParam {
  std::string name;
  uint32_t size = 0;
  uint32_t alignment = 1;
  uint32_t offset = 0;  // kernel: in the param buffer; .func: in the frame
};

struct Function {
  std::string name;
  bool is_kernel = false;
  bool is_defined = false;   // has a body (not just a prototype / .extern)
  // Built-in externals: printf, assert, cudaGraphSetConditional(handle, value) (stores the 32-bit
  // value at the handle: the CUDA runtime here makes a conditional handle the address of its
  // device cell), and the device runtime (device_runtime.h's DeviceCall, in the same order from
  // kMalloc on).
  enum class External : uint8_t {
    kNone, kVprintf, kAssertfail,
    kMalloc, kAlignedMalloc, kFree, kCdpGetParameterBuffer, kCdpLaunchDevice, kCdpStreamCreate, kCdpStreamDestroy,
    kCdpGetLastError, kCdpPeekAtLastError, kCdpGetDevice, kCdpMalloc, kCdpFree, kCdpMemcpyAsync, kCdpGetErrorString,
    kGraphSetConditional,
  } external = External::kNone;
  std::vector<FunctionParam> params;
  std::vector<FunctionParam> returns;  // .func return values (frame offsets)
  uint32_t register_count = 0;
  uint32_t predicate_count = 0;
  uint32_t frame_bytes = 0;            // locals + params + returns + call-site params
  uint32_t param_bytes = 0;            // kernel parameter buffer size
  uint32_t static_shared_bytes = 0;    // shared variables declared inside the function
  int max_threads_per_cta = 0;
  std::vector<Instruction> body;
  std::vector<Operand> vector_elements;
  std::vector<std::string> register_names;  // for diagnostics
  uint32_t line = 0;
};

struct SharedVariable {
  std::string name;
  uint32_t size = 0;
  uint32_t alignment = 1;
};

// An address stored in a module variable's initializer (e.g. a table of string pointers).
struct Relocation {
  uint32_t variable = 0;         // variable holding the pointer
  uint64_t offset = 0;           // byte offset of the 64-bit slot in it
  uint32_t target_variable = 0;  // variable whose address goes there
  int64_t addend = 0;
};

struct Program {
  std::string file_name;
  uint32_t version_major = 0, version_minor = 0;
  std::string target;
  std::vector<Function> functions;
  std::vector<ModuleVariable> variables;     // .global/.const, indexed by kModuleVariable
  uint32_t module_shared_bytes = 0;          // all static .shared variables together
  std::vector<SharedVariable> shared_variables;  // indexed by kShared symbols
  // Per kernel (indexed like kernels): offset of each shared variable the kernel can reach
  // (its own code and the functions it calls); only those count in its static size.
  std::vector<std::vector<uint32_t>> kernel_shared_offsets;
  uint32_t dynamic_shared_alignment = 16;    // where extern .shared starts (aligned)
  std::vector<Relocation> relocations;
  std::vector<Kernel> kernels;               // public view
  std::unordered_map<std::string, uint32_t> kernel_by_name;  // lookup only, never iterated
};

// Parses and decodes; throws ParseError.
Program parse_program(std::string_view text, std::string_view file_name);

}  // namespace gpuvp::ptx::ir
