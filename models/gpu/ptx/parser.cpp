// Recursive-descent parser for PTX modules, decoding straight into the internal form.
//
// Every error is a ParseError carrying the offending token's line and column. Recursion
// depth (nested blocks, initializers) and declaration sizes are bounded, so hostile input
// can neither overflow the stack nor make the parser allocate without limit.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/gpu/ptx/ir.h"
#include "models/gpu/ptx/block_scheduler.h"
#include "models/gpu/ptx/device_calls.h"
#include "models/gpu/ptx/lexer.h"
#include "models/gpu/ptx/texture.h"

namespace gpuvp::ptx {

ParseError::ParseError(std::string file, int line, int column, const std::string& message)
    : std::runtime_error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message),
      file_(std::move(file)),
      line_(line),
      column_(column),
      message_(message) {}

namespace ir {
namespace {

using lex::Token;
using lex::TokenKind;

constexpr int kMaxNesting = 64;
constexpr uint64_t kMaxRegistersPerDeclaration = 1u << 20;
constexpr uint64_t kMaxVariableBytes = 1ull << 32;
constexpr uint64_t kMaxFrameBytes = 1u << 24;

struct Entity {
  enum class Kind { kRegister, kPredicate, kSymbol, kFunction } kind = Kind::kRegister;
  SymbolKind symbol_kind = SymbolKind::kModuleVariable;
  uint32_t index = 0;
  int64_t offset = 0;
  uint64_t size = 0;
};

std::optional<Type> type_from_name(std::string_view name) {
  static constexpr std::pair<const char*, Type> kTypes[] = {
      {"pred", Type::kPred}, {"b8", Type::kB8},     {"b16", Type::kB16},   {"b32", Type::kB32},
      {"b64", Type::kB64},   {"b128", Type::kB128}, {"u8", Type::kU8},     {"u16", Type::kU16},
      {"u32", Type::kU32},   {"u64", Type::kU64},   {"s8", Type::kS8},     {"s16", Type::kS16},
      {"s32", Type::kS32},   {"s64", Type::kS64},   {"f16", Type::kF16},   {"f16x2", Type::kF16x2},
      {"bf16", Type::kBF16}, {"bf16x2", Type::kBF16x2}, {"f32", Type::kF32}, {"f64", Type::kF64},
  };
  for (const auto& [text, type] : kTypes) {
    if (name == text) return type;
  }
  return std::nullopt;
}

std::optional<SpecialRegister> special_from_name(std::string_view name) {
  static constexpr std::pair<const char*, SpecialRegister> kSpecials[] = {
      {"%tid.x", SpecialRegister::kTidX},         {"%tid.y", SpecialRegister::kTidY},
      {"%tid.z", SpecialRegister::kTidZ},         {"%ntid.x", SpecialRegister::kNtidX},
      {"%ntid.y", SpecialRegister::kNtidY},       {"%ntid.z", SpecialRegister::kNtidZ},
      {"%ctaid.x", SpecialRegister::kCtaidX},     {"%ctaid.y", SpecialRegister::kCtaidY},
      {"%ctaid.z", SpecialRegister::kCtaidZ},     {"%nctaid.x", SpecialRegister::kNctaidX},
      {"%nctaid.y", SpecialRegister::kNctaidY},   {"%nctaid.z", SpecialRegister::kNctaidZ},
      {"%laneid", SpecialRegister::kLaneid},      {"%warpid", SpecialRegister::kWarpid},
      {"%nwarpid", SpecialRegister::kNwarpid},    {"%smid", SpecialRegister::kSmid},
      {"%nsmid", SpecialRegister::kNsmid},        {"%gridid", SpecialRegister::kGridid},
      {"%clock", SpecialRegister::kClock},        {"%clock64", SpecialRegister::kClock64},
      {"%globaltimer", SpecialRegister::kGlobaltimer},
      {"%globaltimer_lo", SpecialRegister::kGlobaltimerLo},
      {"%globaltimer_hi", SpecialRegister::kGlobaltimerHi},
      {"%lanemask_eq", SpecialRegister::kLanemaskEq}, {"%lanemask_lt", SpecialRegister::kLanemaskLt},
      {"%lanemask_le", SpecialRegister::kLanemaskLe}, {"%lanemask_gt", SpecialRegister::kLanemaskGt},
      {"%lanemask_ge", SpecialRegister::kLanemaskGe},
      {"%dynamic_smem_size", SpecialRegister::kDynamicSmemSize},
      {"%total_smem_size", SpecialRegister::kTotalSmemSize}, {"WARP_SZ", SpecialRegister::kWarpSize},
  };
  for (const auto& [text, reg] : kSpecials) {
    if (name == text) return reg;
  }
  if (name.size() > 7 && name.size() <= 9 && name.substr(0, 7) == "%envreg") {
    uint32_t n = 0;
    for (const char c : name.substr(7)) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + static_cast<uint32_t>(c - '0');
    }
    if (name.size() == 9 && name[7] == '0') return std::nullopt;  // no leading zero
    if (n <= 31) return static_cast<SpecialRegister>(static_cast<uint32_t>(SpecialRegister::kEnvreg0) + n);
  }
  return std::nullopt;
}

// Bit-field masks/extensions and the SIMD video instructions (vop4; the kind in Instruction::mode).
std::optional<Opcode> integer_extra_opcode(std::string_view name) {
  if (name == "cp") return Opcode::kCpAsync;  // cp.async*: the form is read from the modifiers
  if (name == "wmma") return Opcode::kWmmaMma;  // wmma.*: the form is read from the modifiers
  if (name == "bmsk") return Opcode::kBmsk;
  if (name == "szext") return Opcode::kSzext;
  if (name == "vadd4" || name == "vsub4" || name == "vabsdiff4" || name == "vmin4" || name == "vmax4") return Opcode::kVideo4;
  return std::nullopt;
}

VideoOp video_op_from_name(std::string_view name) {
  if (name == "vadd4") return VideoOp::kAdd;
  if (name == "vsub4") return VideoOp::kSub;
  if (name == "vabsdiff4") return VideoOp::kAbsdiff;
  if (name == "vmin4") return VideoOp::kMin;
  return VideoOp::kMax;
}

std::optional<Opcode> opcode_from_name(std::string_view name) {
  static constexpr std::pair<const char*, Opcode> kOpcodes[] = {
      {"add", Opcode::kAdd},       {"sub", Opcode::kSub},         {"mul", Opcode::kMul},
      {"mad", Opcode::kMad},       {"mul24", Opcode::kMul24},     {"mad24", Opcode::kMad24},
      {"sad", Opcode::kSad},       {"div", Opcode::kDiv},         {"rem", Opcode::kRem},
      {"abs", Opcode::kAbs},       {"neg", Opcode::kNeg},         {"min", Opcode::kMin},
      {"max", Opcode::kMax},       {"addc", Opcode::kAddCarry},   {"subc", Opcode::kSubCarry},
      {"madc", Opcode::kMadCarry}, {"popc", Opcode::kPopc},       {"clz", Opcode::kClz},
      {"bfind", Opcode::kBfind},   {"brev", Opcode::kBrev},       {"bfe", Opcode::kBfe},
      {"bfi", Opcode::kBfi},       {"prmt", Opcode::kPrmt},       {"lop3", Opcode::kLop3},
      {"shf", Opcode::kShf},       {"shl", Opcode::kShl},         {"shr", Opcode::kShr},
      {"fns", Opcode::kFns},       {"and", Opcode::kAnd},         {"or", Opcode::kOr},
      {"xor", Opcode::kXor},       {"not", Opcode::kNot},         {"cnot", Opcode::kCnot},
      {"dp4a", Opcode::kDp4a},     {"dp2a", Opcode::kDp2a},       {"fma", Opcode::kFma},
      {"rcp", Opcode::kRcp},       {"sqrt", Opcode::kSqrt},       {"rsqrt", Opcode::kRsqrt},
      {"sin", Opcode::kSin},       {"cos", Opcode::kCos},         {"lg2", Opcode::kLg2},
      {"ex2", Opcode::kEx2},       {"tanh", Opcode::kTanh},       {"testp", Opcode::kTestp},
      {"copysign", Opcode::kCopysign}, {"setp", Opcode::kSetp},   {"selp", Opcode::kSelp},
      {"set", Opcode::kSet},       {"slct", Opcode::kSlct},       {"cvt", Opcode::kCvt},
      {"cvta", Opcode::kCvta},     {"mov", Opcode::kMov},         {"isspacep", Opcode::kIsspacep},
      {"ld", Opcode::kLd},         {"ldu", Opcode::kLdu},         {"st", Opcode::kSt},
      {"atom", Opcode::kAtom},     {"red", Opcode::kRed},         {"prefetch", Opcode::kPrefetch},
      {"prefetchu", Opcode::kPrefetch}, {"membar", Opcode::kMembar}, {"fence", Opcode::kFence},
      {"bra", Opcode::kBra},       {"brx", Opcode::kBrx},         {"call", Opcode::kCall},
      {"ret", Opcode::kRet},       {"exit", Opcode::kExit},       {"trap", Opcode::kTrap},
      {"brkpt", Opcode::kBrkpt},   {"nanosleep", Opcode::kNanosleep}, {"bar", Opcode::kBarSync},
      {"barrier", Opcode::kBarSync}, {"shfl", Opcode::kShfl},     {"vote", Opcode::kVote},
      {"match", Opcode::kMatch},   {"activemask", Opcode::kActivemask}, {"redux", Opcode::kRedux},
      {"tex", Opcode::kTex},       {"tld4", Opcode::kTld4},       {"txq", Opcode::kTxq},
      {"suld", Opcode::kSuld},     {"sust", Opcode::kSust},       {"suq", Opcode::kSuq},
      {"mbarrier", Opcode::kMbarrier}, {"mma", Opcode::kMma},     {"ldmatrix", Opcode::kLdmatrix},
  };
  for (const auto& [text, op] : kOpcodes) {
    if (name == text) return op;
  }
  return integer_extra_opcode(name);
}

std::optional<Compare> compare_from_name(std::string_view name) {
  static constexpr std::pair<const char*, Compare> kCompares[] = {
      {"eq", Compare::kEq},   {"ne", Compare::kNe},   {"lt", Compare::kLt},   {"le", Compare::kLe},
      {"gt", Compare::kGt},   {"ge", Compare::kGe},   {"lo", Compare::kLo},   {"ls", Compare::kLs},
      {"hi", Compare::kHi},   {"hs", Compare::kHs},   {"equ", Compare::kEqu}, {"neu", Compare::kNeu},
      {"ltu", Compare::kLtu}, {"leu", Compare::kLeu}, {"gtu", Compare::kGtu}, {"geu", Compare::kGeu},
      {"num", Compare::kNum}, {"nan", Compare::kNan},
  };
  for (const auto& [text, cmp] : kCompares) {
    if (name == text) return cmp;
  }
  return std::nullopt;
}

std::optional<AtomOp> atom_from_name(std::string_view name) {
  static constexpr std::pair<const char*, AtomOp> kAtoms[] = {
      {"add", AtomOp::kAdd}, {"min", AtomOp::kMin},   {"max", AtomOp::kMax}, {"inc", AtomOp::kInc},
      {"dec", AtomOp::kDec}, {"exch", AtomOp::kExch}, {"cas", AtomOp::kCas}, {"and", AtomOp::kAnd},
      {"or", AtomOp::kOr},   {"xor", AtomOp::kXor},
  };
  for (const auto& [text, op] : kAtoms) {
    if (name == text) return op;
  }
  return std::nullopt;
}

std::optional<Space> space_from_name(std::string_view name) {
  if (name == "global") return Space::kGlobal;
  if (name == "shared" || name == "shared::cta") return Space::kShared;
  if (name == "local") return Space::kLocal;
  if (name == "const") return Space::kConst;
  if (name == "param" || name == "param::entry" || name == "param::func") return Space::kParam;
  return std::nullopt;
}

// Modifiers that change nothing in a functional, sequentially consistent model.
bool is_ignored_modifier(std::string_view m) {
  static constexpr const char* kIgnored[] = {
      "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "weak", "mmio", "cta", "gpu",
      "sys", "cluster", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "aligned", "sync", "uni",
      "noftz", "full", "L2", "level", "sem", "proxy", "async", "alias"};
  for (const char* text : kIgnored) {
    if (m == text) return true;
  }
  // Cache eviction and prefetch hints: L1::evict_last, L2::128B, L2::cache_hint ...
  return m.find("::") != std::string_view::npos && m.rfind("shared", 0) != 0 &&
         m.rfind("param", 0) != 0;
}

struct RawOperand {
  enum class Kind { kName, kInteger, kFloat32, kFloat64, kMemory, kVector, kList, kSink } kind = Kind::kName;
  const Token* token = nullptr;
  bool negated = false;        // !%p
  bool pipe_before = false;    // second destination in "d|p"
  std::string_view name;       // kName, or kMemory base (empty for absolute)
  int64_t offset = 0;          // name+offset, [base+offset]
  uint64_t bits = 0;           // literals
  std::vector<RawOperand> elements;
};

struct PendingCall {
  uint32_t function;
  uint32_t instruction;
  uint32_t operand;
  std::string name;
  const Token* token;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view file_name) : text_(text), file_(file_name) {
    program_.file_name = std::string(file_name);
  }

  Program run() {
    lex::LexError lex_error;
    if (!lex::tokenize(text_, tokens_, lex_error)) {
      throw ParseError(file_, lex_error.line, lex_error.column, lex_error.message);
    }
    parse_module();
    finish_module();
    return std::move(program_);
  }

 private:
  // ---- token helpers ----
  const Token& peek(size_t ahead = 0) const {
    size_t index = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[index];
  }
  const Token& next() {
    const Token& token = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
  }
  bool at_end() const { return peek().kind == TokenKind::kEnd; }
  bool is_punct(char c, size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == TokenKind::kPunct && t.punct == c;
  }
  bool is_directive(std::string_view text) const {
    return peek().kind == TokenKind::kDirective && peek().text == text;
  }
  [[noreturn]] void fail(const Token& token, const std::string& message) const {
    throw ParseError(file_, token.line, token.column, message);
  }
  static std::string describe(const Token& token) {
    switch (token.kind) {
      case TokenKind::kEnd: return "end of input";
      case TokenKind::kString: return "string \"" + std::string(token.text) + "\"";
      default: return "'" + std::string(token.text) + "'";
    }
  }
  void expect_punct(char c, const char* what) {
    if (!is_punct(c)) fail(peek(), std::string("expected '") + c + "' " + what + ", found " + describe(peek()));
    next();
  }
  const Token& expect_identifier(const char* what) {
    if (peek().kind != TokenKind::kIdentifier) fail(peek(), std::string("expected ") + what + ", found " + describe(peek()));
    return next();
  }
  uint64_t expect_integer(const char* what) {
    bool negative = false;
    if (is_punct('-')) {
      next();
      negative = true;
    }
    if (peek().kind != TokenKind::kInteger) fail(peek(), std::string("expected ") + what + ", found " + describe(peek()));
    uint64_t value = next().integer;
    return negative ? (~value + 1) : value;
  }

  // ---- module level ----
  void parse_module() {
    bool seen_version = false;
    while (!at_end()) {
      const Token& token = peek();
      if (token.kind != TokenKind::kDirective) {
        fail(token, "expected a directive at module scope, found " + describe(token));
      }
      std::string_view d = token.text;
      if (!seen_version && d != ".version") fail(token, "expected .version before " + std::string(d));
      if (d == ".version") {
        next();
        const Token& v = next();
        if (v.kind != TokenKind::kFloat64 && v.kind != TokenKind::kInteger) fail(v, "expected PTX version number like 9.0");
        auto dot = v.text.find('.');
        if (dot == std::string_view::npos) fail(v, "expected PTX version number like 9.0");
        program_.version_major = static_cast<uint32_t>(std::strtoul(std::string(v.text.substr(0, dot)).c_str(), nullptr, 10));
        program_.version_minor = static_cast<uint32_t>(std::strtoul(std::string(v.text.substr(dot + 1)).c_str(), nullptr, 10));
        if (program_.version_major < 6 || program_.version_major > 9) {
          fail(v, "unsupported PTX ISA version " + std::string(v.text) + " (supported: 6.0 to 9.x)");
        }
        seen_version = true;
      } else if (d == ".target") {
        next();
        const Token& t = expect_identifier("target architecture");
        program_.target = std::string(t.text);
        if (program_.target.rfind("sm_", 0) != 0 && program_.target.rfind("compute_", 0) != 0) {
          fail(t, "unknown target '" + program_.target + "'");
        }
        while (is_punct(',')) {
          next();
          expect_identifier("target option");
        }
      } else if (d == ".address_size") {
        next();
        const Token& t = peek();
        uint64_t size = expect_integer("address size");
        if (size != 64) fail(t, "only .address_size 64 is supported");
      } else if (d == ".file") {
        parse_file_directive();
      } else if (d == ".loc") {
        skip_loc();
      } else if (d == ".section") {
        skip_section();
      } else if (d == ".pragma") {
        next();
        if (peek().kind != TokenKind::kString) fail(peek(), "expected string after .pragma");
        next();
        expect_punct(';', "after .pragma");
      } else {
        if (!seen_version) fail(token, "expected .version before " + std::string(d));
        parse_module_declaration();
      }
    }
    if (!seen_version) fail(peek(), "missing .version directive");
  }

  void parse_file_directive() {
    next();
    expect_integer("file index");
    if (peek().kind != TokenKind::kString) fail(peek(), "expected file name string after .file index");
    next();
    while (is_punct(',')) {
      next();
      expect_integer("file timestamp or size");
    }
  }

  // .loc ends at the end of its line (inlined_at forms have a variable shape).
  void skip_loc() {
    const int line = next().line;
    while (!at_end() && peek().line == line) next();
  }

  void skip_section() {
    next();
    if (peek().kind != TokenKind::kDirective && peek().kind != TokenKind::kIdentifier) fail(peek(), "expected section name");
    next();
    if (!is_punct('{')) fail(peek(), "expected '{' after section name");
    const Token& open = next();
    int depth = 1;
    while (depth > 0) {
      if (at_end()) fail(open, "unterminated .section");
      const Token& t = next();
      if (t.kind == TokenKind::kPunct && t.punct == '{') ++depth;
      if (t.kind == TokenKind::kPunct && t.punct == '}') --depth;
    }
  }

  void parse_module_declaration() {
    bool is_extern = false;
    while (is_directive(".visible") || is_directive(".extern") || is_directive(".weak") || is_directive(".common")) {
      if (peek().text == ".extern") is_extern = true;
      next();
    }
    const Token& token = peek();
    if (token.kind != TokenKind::kDirective) fail(token, "expected declaration, found " + describe(token));
    if (token.text == ".entry" || token.text == ".func") {
      parse_function(token.text == ".entry", is_extern);
    } else if (token.text == ".global" || token.text == ".const" || token.text == ".shared") {
      parse_variable_declaration(/*in_function=*/false, is_extern);
    } else {
      fail(token, "unknown or unsupported directive " + std::string(token.text));
    }
  }

  // ---- variables ----
  struct DeclaredVariable {
    const Token* name_token = nullptr;
    std::string name;
    Type type = Type::kNone;
    uint32_t alignment = 0;
    uint32_t vector = 1;
    uint64_t element_count = 1;   // product of array dims
    bool unsized_array = false;   // name[]
    bool is_range = false;        // %r<N>
    uint64_t range_count = 0;
    std::vector<uint8_t> initializer;
  };

  // Parses attributes, type and one or more names. Leaves the terminating ';' consumed.
  // The callback receives each declared name.
  template <typename OnName>
  void parse_declaration_names(Space space_hint, OnName&& on_name, bool allow_initializer) {
    uint32_t alignment = 0;
    uint32_t vector = 1;
    Type type = Type::kNone;
    while (peek().kind == TokenKind::kDirective) {
      std::string_view d = peek().text;
      const Token& t = next();
      if (d == ".align") {
        uint64_t value = expect_integer("alignment");
        if (value == 0 || (value & (value - 1)) != 0 || value > 4096) fail(t, "alignment must be a power of two up to 4096");
        alignment = static_cast<uint32_t>(value);
      } else if (d == ".v2" || d == ".v4" || d == ".v8") {
        vector = static_cast<uint32_t>(d[2] - '0');
      } else if (d == ".ptr") {
        // .ptr .global .align N: pointer attributes, informational only.
      } else if (d == ".global" || d == ".shared" || d == ".const" || d == ".local") {
        // state space of a .ptr attribute
      } else if (d == ".attribute") {
        expect_punct('(', "after .attribute");
        while (!is_punct(')')) {
          if (at_end()) fail(t, "unterminated .attribute");
          next();
        }
        next();
      } else if (auto parsed = type_from_name(d.substr(1))) {
        if (type != Type::kNone) fail(t, "more than one type in declaration");
        type = *parsed;
      } else {
        fail(t, "unexpected " + std::string(d) + " in declaration");
      }
    }
    if (type == Type::kNone) fail(peek(), "expected a type in declaration, found " + describe(peek()));
    while (true) {
      DeclaredVariable var;
      var.name_token = &expect_identifier("declared name");
      var.name = std::string(var.name_token->text);
      var.type = type;
      var.alignment = alignment;
      var.vector = vector;
      if (is_punct('<')) {
        next();
        const Token& count_token = peek();
        var.range_count = expect_integer("register count");
        if (var.range_count > kMaxRegistersPerDeclaration) fail(count_token, "register range too large");
        var.is_range = true;
        expect_punct('>', "after register count");
      }
      while (is_punct('[')) {
        next();
        if (is_punct(']')) {
          var.unsized_array = true;
        } else {
          const Token& dim_token = peek();
          uint64_t dim = expect_integer("array dimension");
          if (dim == 0 || dim > kMaxVariableBytes || var.element_count * dim > kMaxVariableBytes) fail(dim_token, "array dimension out of range");
          var.element_count *= dim;
        }
        expect_punct(']', "after array dimension");
      }
      if (is_punct('=')) {
        const Token& eq = next();
        if (!allow_initializer) fail(eq, "initializer not allowed here");
        parse_initializer(var, space_hint);
      }
      on_name(var);
      if (is_punct(',')) {
        next();
        continue;
      }
      break;
    }
    expect_punct(';', "at end of declaration");
  }

  uint64_t element_bytes(const DeclaredVariable& var) const {
    return static_cast<uint64_t>(type_bytes(var.type)) * var.vector;
  }

  void parse_initializer(DeclaredVariable& var, Space space) {
    (void)space;
    const uint64_t elem_bytes = static_cast<uint64_t>(type_bytes(var.type));
    if (var.unsized_array || elem_bytes == 0) fail(peek(), "initializer needs a sized variable");
    const uint64_t total_bytes = elem_bytes * var.vector * var.element_count;
    var.initializer.assign(total_bytes, 0);
    uint64_t cursor = 0;
    parse_initializer_list(var, cursor, 0);
  }

  void parse_initializer_list(DeclaredVariable& var, uint64_t& cursor, int depth) {
    if (depth > kMaxNesting) fail(peek(), "initializer nested too deeply");
    if (is_punct('{')) {
      next();
      if (!is_punct('}')) {
        while (true) {
          parse_initializer_list(var, cursor, depth + 1);
          if (is_punct(',')) {
            next();
            continue;
          }
          break;
        }
      }
      expect_punct('}', "at end of initializer list");
      return;
    }
    const uint64_t elem_bytes = static_cast<uint64_t>(type_bytes(var.type));
    const Token& t = peek();
    uint64_t bits = 0;
    if (auto function = t.kind == TokenKind::kIdentifier ? declared_function_index(t.text) : std::nullopt) {
      // A function's address (a C++ virtual table): the same value `mov.u64 %rd, func` gives,
      // which indirect calls decode.
      next();
      if (elem_bytes != 8) fail(t, "function address initializer needs a 64-bit element");
      bits = kFunctionAddressBase + kFunctionAddressStride * *function;
    } else if (t.kind == TokenKind::kIdentifier && (t.text == "generic" || program_variable_index(t.text))) {
      bool generic = t.text == "generic";
      if (generic) {
        next();
        expect_punct('(', "after generic");
      }
      const Token& name = expect_identifier("variable name");
      auto index = program_variable_index(name.text);
      if (!index) fail(name, "unknown variable '" + std::string(name.text) + "' in initializer");
      int64_t addend = 0;
      if (is_punct('+')) {
        next();
        addend = static_cast<int64_t>(expect_integer("offset"));
      }
      if (generic) expect_punct(')', "after generic(");
      if (elem_bytes != 8) fail(name, "address initializer needs a 64-bit element");
      pending_relocations_.push_back({var.name, cursor, *index, addend});
    } else {
      bits = parse_constant_bits(var.type);
    }
    if (cursor + elem_bytes > var.initializer.size()) fail(t, "too many initializer values");
    std::memcpy(var.initializer.data() + cursor, &bits, elem_bytes);
    cursor += elem_bytes;
  }

  // A literal converted to the bit pattern of `type` (integers truncate, floats convert).
  uint64_t parse_constant_bits(Type type) {
    bool negative = false;
    if (is_punct('-')) {
      next();
      negative = true;
    }
    const Token& t = next();
    if (t.kind == TokenKind::kInteger) {
      uint64_t v = negative ? ~t.integer + 1 : t.integer;
      if (type == Type::kF32) {
        float f = negative ? -static_cast<float>(t.integer) : static_cast<float>(t.integer);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        return b;
      }
      if (type == Type::kF64) {
        double f = negative ? -static_cast<double>(t.integer) : static_cast<double>(t.integer);
        uint64_t b;
        std::memcpy(&b, &f, 8);
        return b;
      }
      return v;
    }
    if (t.kind == TokenKind::kFloat32 || t.kind == TokenKind::kFloat64) {
      double value;
      if (t.kind == TokenKind::kFloat32) {
        float f;
        uint32_t b = static_cast<uint32_t>(t.integer);
        std::memcpy(&f, &b, 4);
        value = static_cast<double>(f);
      } else {
        std::memcpy(&value, &t.integer, 8);
      }
      if (negative) value = -value;
      if (type == Type::kF32) {
        float f = static_cast<float>(value);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        return b;
      }
      if (type == Type::kF64) {
        uint64_t b;
        std::memcpy(&b, &value, 8);
        return b;
      }
      if (t.kind == TokenKind::kFloat32 || t.kind == TokenKind::kFloat64) return t.integer;  // raw bits
    }
    fail(t, "expected a constant, found " + describe(t));
  }

  std::optional<uint32_t> declared_function_index(std::string_view name) const {
    auto it = module_scope_.find(std::string(name));
    if (it == module_scope_.end() || it->second.kind != Entity::Kind::kFunction) return std::nullopt;
    return it->second.index;
  }

  std::optional<uint32_t> program_variable_index(std::string_view name) const {
    auto it = module_scope_.find(std::string(name));
    if (it == module_scope_.end() || it->second.kind != Entity::Kind::kSymbol ||
        it->second.symbol_kind != SymbolKind::kModuleVariable) {
      return std::nullopt;
    }
    return it->second.index;
  }

  static uint64_t align_up(uint64_t value, uint64_t alignment) {
    return alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment;
  }

  void parse_variable_declaration(bool in_function, bool is_extern) {
    const Token& space_token = next();
    std::string_view space = space_token.text;
    parse_declaration_names(
        space == ".shared" ? Space::kShared : Space::kGlobal,
        [&](DeclaredVariable& var) {
          if (var.is_range) fail(*var.name_token, "register range syntax on a variable");
          const uint64_t alignment = var.alignment ? var.alignment : std::max<uint64_t>(1, element_bytes(var));
          const uint64_t size = element_bytes(var) * var.element_count;
          if (size > kMaxVariableBytes) fail(*var.name_token, "variable too large");
          Entity entity;
          entity.kind = Entity::Kind::kSymbol;
          entity.size = size;
          if (space == ".shared") {
            if (is_extern || var.unsized_array) {
              entity.symbol_kind = SymbolKind::kDynamicShared;
              program_.dynamic_shared_alignment = std::max<uint32_t>(program_.dynamic_shared_alignment, static_cast<uint32_t>(alignment));
            } else {
              uint64_t offset = align_up(program_.module_shared_bytes, alignment);
              if (offset + size > (1u << 30)) fail(*var.name_token, "static shared memory too large");
              entity.symbol_kind = SymbolKind::kShared;
              entity.index = static_cast<uint32_t>(program_.shared_variables.size());
              program_.shared_variables.push_back({var.name, static_cast<uint32_t>(size), static_cast<uint32_t>(alignment)});
              program_.module_shared_bytes = static_cast<uint32_t>(offset + size);
            }
          } else {
            if (var.unsized_array && var.initializer.empty()) {
              if (!is_extern) fail(*var.name_token, "array without size needs .extern or an initializer");
            }
            ModuleVariable mv;
            mv.name = var.name;
            mv.space = space == ".const" ? ModuleVariable::Space::kConst : ModuleVariable::Space::kGlobal;
            mv.size = var.initializer.empty() ? size : var.initializer.size();
            mv.alignment = static_cast<uint32_t>(alignment);
            mv.initializer = std::move(var.initializer);
            entity.symbol_kind = SymbolKind::kModuleVariable;
            entity.index = static_cast<uint32_t>(program_.variables.size());
            program_.variables.push_back(std::move(mv));
          }
          declare(in_function, var, entity);
        },
        /*allow_initializer=*/space != ".shared");
  }

  void declare(bool in_function, const DeclaredVariable& var, const Entity& entity) {
    auto& scope = in_function ? scopes_.back() : module_scope_;
    if (!scope.emplace(var.name, entity).second) {
      // extern .shared redeclared in several kernels shares one symbol; anything else clashes.
      auto& existing = scope[var.name];
      if (!(existing.kind == Entity::Kind::kSymbol && existing.symbol_kind == SymbolKind::kDynamicShared &&
            entity.symbol_kind == SymbolKind::kDynamicShared)) {
        fail(*var.name_token, "redeclaration of '" + var.name + "'");
      }
    }
  }

  // ---- functions ----
  std::vector<FunctionParam> parse_param_list(bool is_kernel, uint32_t& cursor, const char* what) {
    std::vector<FunctionParam> params;
    expect_punct('(', what);
    if (!is_punct(')')) {
      while (true) {
        const Token& t = peek();
        if (!is_directive(".param") && !is_directive(".reg")) fail(t, "expected .param in parameter list, found " + describe(t));
        next();
        parse_declaration_names(
            Space::kParam,
            [&](DeclaredVariable& var) {
              if (var.is_range || var.unsized_array) fail(*var.name_token, "malformed parameter declaration");
              FunctionParam p;
              p.name = var.name;
              uint64_t size = element_bytes(var) * var.element_count;
              if (var.type == Type::kPred) size = 1;
              if (size > (1u << 16)) fail(*var.name_token, "parameter too large");
              p.size = static_cast<uint32_t>(size);
              p.alignment = var.alignment ? var.alignment : static_cast<uint32_t>(std::max<uint64_t>(1, element_bytes(var)));
              cursor = static_cast<uint32_t>(align_up(cursor, is_kernel ? p.alignment : std::max<uint32_t>(p.alignment, 8)));
              p.offset = cursor;
              cursor += p.size;
              params.push_back(std::move(p));
            },
            false, /*in_param_list=*/true);
        if (is_punct(',')) {
          next();
          continue;
        }
        break;
      }
    }
    expect_punct(')', "at end of parameter list");
    return params;
  }

  template <typename OnName>
  void parse_declaration_names(Space space_hint, OnName&& on_name, bool allow_initializer, bool in_param_list) {
    // Parameters are separated by commas, not terminated by ';': parse one name only.
    (void)in_param_list;
    uint32_t alignment = 0;
    uint32_t vector = 1;
    Type type = Type::kNone;
    while (peek().kind == TokenKind::kDirective) {
      std::string_view d = peek().text;
      const Token& t = next();
      if (d == ".align") {
        uint64_t value = expect_integer("alignment");
        if (value == 0 || (value & (value - 1)) != 0 || value > 4096) fail(t, "alignment must be a power of two up to 4096");
        alignment = static_cast<uint32_t>(value);
      } else if (d == ".v2" || d == ".v4" || d == ".v8") {
        vector = static_cast<uint32_t>(d[2] - '0');
      } else if (d == ".ptr" || d == ".global" || d == ".shared" || d == ".const" || d == ".local") {
      } else if (auto parsed = type_from_name(d.substr(1))) {
        if (type != Type::kNone) fail(t, "more than one type in parameter");
        type = *parsed;
      } else {
        fail(t, "unexpected " + std::string(d) + " in parameter");
      }
    }
    (void)space_hint;
    (void)allow_initializer;
    if (type == Type::kNone) fail(peek(), "expected a type in parameter, found " + describe(peek()));
    DeclaredVariable var;
    var.name_token = &expect_identifier("parameter name");
    var.name = std::string(var.name_token->text);
    var.type = type;
    var.alignment = alignment;
    var.vector = vector;
    while (is_punct('[')) {
      next();
      const Token& dim_token = peek();
      uint64_t dim = expect_integer("array dimension");
      if (dim == 0 || dim > (1u << 16)) fail(dim_token, "parameter array dimension out of range");
      var.element_count *= dim;
      expect_punct(']', "after array dimension");
    }
    on_name(var);
  }

  uint32_t find_or_add_function(const std::string& name) {
    auto it = module_scope_.find(name);
    if (it != module_scope_.end()) {
      if (it->second.kind != Entity::Kind::kFunction) return ~0u;
      return it->second.index;
    }
    Entity entity;
    entity.kind = Entity::Kind::kFunction;
    entity.index = static_cast<uint32_t>(program_.functions.size());
    module_scope_.emplace(name, entity);
    Function f;
    f.name = name;
    program_.functions.push_back(std::move(f));
    return entity.index;
  }

  void parse_function(bool is_kernel, bool is_extern) {
    const Token& keyword = next();
    uint32_t frame_cursor = 0;
    std::vector<FunctionParam> returns;
    if (!is_kernel && is_punct('(')) returns = parse_param_list(false, frame_cursor, "for return values");
    const Token& name_token = expect_identifier("function name");
    std::string name(name_token.text);
    std::vector<FunctionParam> params;
    uint32_t param_cursor = 0;
    if (is_punct('(')) {
      if (is_kernel) {
        params = parse_param_list(true, param_cursor, "for kernel parameters");
      } else {
        // .func params live in the frame, before the return values.
        uint32_t cursor = 0;
        params = parse_param_list(false, cursor, "for parameters");
        uint32_t shift = static_cast<uint32_t>(align_up(cursor, 16));
        for (auto& r : returns) r.offset += shift;
        frame_cursor += shift;
      }
    }
    int max_threads = 0;
    // Performance-tuning directives: .maxntid 256,1,1  .reqntid  .minnctapersm  .maxnreg ...
    while (peek().kind == TokenKind::kDirective && peek().text != ".entry" && peek().text != ".func") {
      const Token& d = next();
      if (d.text == ".noreturn") continue;
      if (d.text == ".pragma") {
        if (peek().kind != TokenKind::kString) fail(peek(), "expected string after .pragma");
        next();
        expect_punct(';', "after .pragma");
        continue;
      }
      static constexpr const char* kPerf[] = {".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg",
                                              ".maxclusterrank", ".reqnctapercluster", ".explicitcluster"};
      bool known = std::any_of(std::begin(kPerf), std::end(kPerf), [&](const char* k) { return d.text == k; });
      if (!known) fail(d, "unexpected " + std::string(d.text) + " in function header");
      if (d.text == ".explicitcluster") continue;
      uint64_t product = 1;
      while (true) {
        uint64_t v = expect_integer("directive value");
        product *= std::max<uint64_t>(v, 1);
        if (product > (1u << 20)) product = 1u << 20;
        if (!is_punct(',')) break;
        next();
      }
      if (d.text == ".maxntid" || d.text == ".reqntid") max_threads = static_cast<int>(product);
    }

    uint32_t index = find_or_add_function(name);
    if (index == ~0u) fail(name_token, "'" + name + "' already declared as something else");
    {
      Function& f = program_.functions[index];
      if (f.line != 0 && (f.params.size() != params.size() || f.returns.size() != returns.size() ||
                          f.is_kernel != is_kernel)) {
        fail(name_token, "declaration of '" + name + "' does not match an earlier one");
      }
      f.is_kernel = is_kernel;
      f.params = params;
      f.returns = returns;
      f.line = static_cast<uint32_t>(keyword.line);
      f.param_bytes = param_cursor;
      f.max_threads_per_cta = max_threads;
      if (name == "vprintf") f.external = Function::External::kVprintf;
      if (name == "__assertfail") f.external = Function::External::kAssertfail;
      if (const auto runtime = device_runtime_external(name)) f.external = *runtime;
      if (name == "cudaGraphSetConditional") f.external = Function::External::kGraphSetConditional;
    }
    if (is_punct(';')) {
      next();
      return;
    }
    if (is_extern) fail(peek(), ".extern function '" + name + "' cannot have a body");
    if (program_.functions[index].is_defined) fail(name_token, "redefinition of function '" + name + "'");
    if (!is_punct('{')) fail(peek(), "expected '{' or ';' after function header, found " + describe(peek()));
    parse_function_body(index, frame_cursor);
  }

  // ---- function bodies ----
  struct FunctionState {
    uint32_t index = 0;
    Function* function = nullptr;
    uint32_t frame_cursor = 0;
    std::unordered_map<std::string, uint32_t> labels;
    std::vector<std::pair<uint32_t, uint32_t>> label_uses;  // (instruction, operand)
    std::vector<std::string> label_use_names;
    std::vector<const Token*> label_use_tokens;
  };

  void parse_function_body(uint32_t index, uint32_t frame_cursor) {
    FunctionState state;
    state.index = index;
    state.frame_cursor = frame_cursor;
    current_ = &state;
    Function work;  // built here, moved in at the end (functions_ may grow while parsing calls)
    work.name = program_.functions[index].name;
    state.function = &work;
    scopes_.clear();
    scopes_.emplace_back();
    const Function& header = program_.functions[index];
    for (const auto& p : header.params) {
      Entity e;
      e.kind = Entity::Kind::kSymbol;
      e.symbol_kind = header.is_kernel ? SymbolKind::kKernelParam : SymbolKind::kFrameParam;
      e.offset = p.offset;
      e.size = p.size;
      scopes_.back().emplace(p.name, e);
    }
    for (const auto& p : header.returns) {
      Entity e;
      e.kind = Entity::Kind::kSymbol;
      e.symbol_kind = SymbolKind::kFrameParam;
      e.offset = p.offset;
      e.size = p.size;
      scopes_.back().emplace(p.name, e);
    }
    parse_block(0);
    // Resolve labels now that the whole body is known.
    for (size_t i = 0; i < state.label_uses.size(); ++i) {
      auto it = state.labels.find(state.label_use_names[i]);
      if (it == state.labels.end()) fail(*state.label_use_tokens[i], "unknown label '" + state.label_use_names[i] + "'");
      work.body[state.label_uses[i].first].operands[state.label_uses[i].second].index = it->second;
    }
    if (work.body.empty() || (work.body.back().opcode != Opcode::kRet && work.body.back().opcode != Opcode::kExit &&
                              work.body.back().opcode != Opcode::kBra && work.body.back().opcode != Opcode::kTrap)) {
      // Falling off the end of a body behaves like ret.
      Instruction ret;
      ret.opcode = Opcode::kRet;
      ret.line = work.body.empty() ? program_.functions[index].line : work.body.back().line;
      work.body.push_back(ret);
    }
    // A label may point one past the last instruction only if we appended a ret; check bounds.
    for (auto& inst : work.body) {
      for (int o = 0; o < inst.operand_count; ++o) {
        if (inst.operands[o].kind == OperandKind::kLabel && inst.operands[o].index >= work.body.size()) {
          inst.operands[o].index = static_cast<uint32_t>(work.body.size() - 1);
        }
      }
    }
    Function& f = program_.functions[index];
    f.body = std::move(work.body);
    f.vector_elements = std::move(work.vector_elements);
    f.register_names = std::move(work.register_names);
    f.register_count = work.register_count;
    f.predicate_count = work.predicate_count;
    f.frame_bytes = static_cast<uint32_t>(align_up(state.frame_cursor, 16));
    f.is_defined = true;
    scopes_.clear();
    current_ = nullptr;
  }

  void parse_block(int depth) {
    if (depth > kMaxNesting) fail(peek(), "blocks nested too deeply");
    const Token& open = peek();
    expect_punct('{', "to open a block");
    scopes_.emplace_back();
    while (!is_punct('}')) {
      if (at_end()) fail(open, "unterminated block: missing '}'");
      parse_statement(depth);
    }
    next();
    scopes_.pop_back();
  }

  void parse_statement(int depth) {
    const Token& t = peek();
    if (t.kind == TokenKind::kPunct && t.punct == '{') {
      parse_block(depth + 1);
      return;
    }
    if (t.kind == TokenKind::kDirective) {
      parse_body_directive();
      return;
    }
    if (t.kind == TokenKind::kIdentifier && is_punct(':', 1)) {
      next();
      next();
      if (is_directive(".callprototype")) {
        // Prototype for indirect calls: recorded nowhere; indirect calls are rejected.
        while (!is_punct(';')) {
          if (at_end()) fail(t, "unterminated .callprototype");
          next();
        }
        next();
        return;
      }
      if (is_directive(".branchtargets")) fail(peek(), "unsupported directive .branchtargets (brx.idx)");
      std::string label(t.text);
      if (!current_->labels.emplace(label, static_cast<uint32_t>(current_->function->body.size())).second) {
        fail(t, "duplicate label '" + label + "'");
      }
      return;
    }
    if (t.kind == TokenKind::kPunct && t.punct == '@') {
      parse_instruction();
      return;
    }
    if (t.kind == TokenKind::kIdentifier) {
      parse_instruction();
      return;
    }
    fail(t, "expected an instruction, label or declaration, found " + describe(t));
  }

  void parse_body_directive() {
    const Token& t = peek();
    std::string_view d = t.text;
    if (d == ".reg") {
      next();
      parse_declaration_names(Space::kGeneric, [&](DeclaredVariable& var) { declare_registers(var); }, false);
    } else if (d == ".local" || d == ".param") {
      next();
      const bool is_param = d == ".param";
      parse_declaration_names(
          is_param ? Space::kParam : Space::kLocal,
          [&](DeclaredVariable& var) {
            if (var.is_range || var.unsized_array) fail(*var.name_token, "malformed declaration");
            uint64_t size = element_bytes(var) * var.element_count;
            if (var.type == Type::kPred) size = 1;
            uint64_t alignment = var.alignment ? var.alignment : std::max<uint64_t>(1, element_bytes(var));
            uint64_t offset = align_up(current_->frame_cursor, std::max<uint64_t>(alignment, is_param ? 8 : 1));
            if (offset + size > kMaxFrameBytes) fail(*var.name_token, "local frame too large");
            current_->frame_cursor = static_cast<uint32_t>(offset + size);
            Entity e;
            e.kind = Entity::Kind::kSymbol;
            e.symbol_kind = is_param ? SymbolKind::kFrameParam : SymbolKind::kLocal;
            e.offset = static_cast<int64_t>(offset);
            e.size = size;
            declare(true, var, e);
          },
          false);
    } else if (d == ".shared" || d == ".global" || d == ".const") {
      parse_variable_declaration(/*in_function=*/true, false);
    } else if (d == ".pragma") {
      next();
      if (peek().kind != TokenKind::kString) fail(peek(), "expected string after .pragma");
      next();
      expect_punct(';', "after .pragma");
    } else if (d == ".loc") {
      skip_loc();
    } else if (d == ".file") {
      parse_file_directive();
    } else {
      fail(t, "unexpected directive " + std::string(d) + " in function body");
    }
  }

  void declare_registers(const DeclaredVariable& var) {
    if (var.unsized_array || var.element_count != 1) fail(*var.name_token, "register arrays are not supported");
    if (var.vector != 1) fail(*var.name_token, "vector registers are not supported");
    Function& f = *current_->function;
    const bool pred = var.type == Type::kPred;
    const uint64_t count = var.is_range ? var.range_count : 1;
    uint64_t& counter_ref = pred ? predicate_counter_ : register_counter_;
    (void)counter_ref;
    for (uint64_t i = 0; i < count; ++i) {
      std::string name = var.is_range ? var.name + std::to_string(i) : var.name;
      Entity e;
      e.kind = pred ? Entity::Kind::kPredicate : Entity::Kind::kRegister;
      uint32_t& counter = pred ? f.predicate_count : f.register_count;
      if (counter >= (1u << 22)) fail(*var.name_token, "too many registers");
      e.index = counter++;
      if (!pred) f.register_names.push_back(name);
      if (!scopes_.back().emplace(std::move(name), e).second) {
        fail(*var.name_token, "redeclaration of register '" + var.name + "'");
      }
    }
  }

  const Entity* lookup(std::string_view name) const {
    std::string key(name);
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(key);
      if (found != it->end()) return &found->second;
    }
    auto found = module_scope_.find(key);
    if (found != module_scope_.end()) return &found->second;
    return nullptr;
  }

  // ---- instructions ----
  RawOperand parse_raw_operand(int depth) {
    if (depth > 4) fail(peek(), "operand nested too deeply");
    RawOperand op;
    op.token = &peek();
    if (is_punct('{') || is_punct('(')) {
      const char close = is_punct('{') ? '}' : ')';
      op.kind = close == '}' ? RawOperand::Kind::kVector : RawOperand::Kind::kList;
      next();
      if (!is_punct(close)) {
        while (true) {
          op.elements.push_back(parse_raw_operand(depth + 1));
          if (op.elements.size() > 64) fail(*op.token, "too many elements in operand list");
          if (is_punct(',')) {
            next();
            continue;
          }
          break;
        }
      }
      expect_punct(close, "to close operand list");
      return op;
    }
    if (is_punct('[')) {
      next();
      op.kind = RawOperand::Kind::kMemory;
      if (peek().kind == TokenKind::kIdentifier) {
        op.name = next().text;
        if (is_punct('+')) {
          next();
          op.offset = static_cast<int64_t>(expect_integer("address offset"));
        } else if (is_punct('-')) {
          op.offset = static_cast<int64_t>(expect_integer("address offset"));
        }
      } else {
        op.offset = static_cast<int64_t>(expect_integer("address"));
      }
      if (is_punct(',')) {  // [handle, {coordinates}] of texture and surface instructions
        next();
        op.elements.push_back(parse_raw_operand(depth + 1));
      }
      expect_punct(']', "to close address");
      return op;
    }
    if (is_punct('!')) {
      next();
      op = parse_raw_operand(depth + 1);
      if (op.kind != RawOperand::Kind::kName) fail(*op.token, "'!' applies to predicates only");
      op.negated = true;
      return op;
    }
    bool negative = false;
    if (is_punct('-')) {
      next();
      negative = true;
    }
    const Token& t = next();
    switch (t.kind) {
      case TokenKind::kInteger:
        op.kind = RawOperand::Kind::kInteger;
        op.bits = negative ? ~t.integer + 1 : t.integer;
        return op;
      case TokenKind::kFloat32: {
        op.kind = RawOperand::Kind::kFloat32;
        op.bits = t.integer ^ (negative ? 0x80000000ull : 0);
        return op;
      }
      case TokenKind::kFloat64:
        op.kind = RawOperand::Kind::kFloat64;
        op.bits = t.integer ^ (negative ? 0x8000000000000000ull : 0);
        return op;
      case TokenKind::kIdentifier:
        if (negative) fail(t, "'-' applies to numbers only");
        if (t.text == "_") {
          op.kind = RawOperand::Kind::kSink;
          return op;
        }
        op.kind = RawOperand::Kind::kName;
        op.name = t.text;
        if (is_punct('+') && peek(1).kind == TokenKind::kInteger) {
          next();
          op.offset = static_cast<int64_t>(next().integer);
        }
        return op;
      default:
        fail(t, "expected an operand, found " + describe(t));
    }
  }

  void parse_instruction() {
    Instruction inst;
    const Token* guard_token = nullptr;
    if (is_punct('@')) {
      next();
      if (is_punct('!')) {
        next();
        inst.guard_negated = true;
      }
      guard_token = &expect_identifier("guard predicate");
      const Entity* e = lookup(guard_token->text);
      if (e == nullptr || e->kind != Entity::Kind::kPredicate) fail(*guard_token, "guard '" + std::string(guard_token->text) + "' is not a predicate register");
      inst.has_guard = true;
      inst.guard = e->index;
    }
    const Token& opcode_token = expect_identifier("instruction");
    inst.line = static_cast<uint32_t>(opcode_token.line);
    // Reject unknown opcodes before their operands, whose syntax we may not know (tex, suld).
    const std::string_view base_name = opcode_token.text.substr(0, opcode_token.text.find('.'));
    if (!opcode_from_name(base_name)) fail(opcode_token, "unsupported instruction '" + std::string(opcode_token.text) + "'");
    std::vector<RawOperand> raw;
    if (!is_punct(';')) {
      while (true) {
        bool pipe = false;
        RawOperand op = parse_raw_operand(0);
        if (is_punct('|')) {
          next();
          raw.push_back(std::move(op));
          RawOperand second = parse_raw_operand(0);
          second.pipe_before = true;
          raw.push_back(std::move(second));
          pipe = true;
        }
        if (!pipe) raw.push_back(std::move(op));
        if (raw.size() > 8) fail(opcode_token, "too many operands");
        if (is_punct(',')) {
          next();
          continue;
        }
        break;
      }
    }
    if (!is_punct(';')) fail(peek(), "expected ';' after instruction, found " + describe(peek()));
    next();
    decode(inst, opcode_token, raw);
    current_->function->body.push_back(inst);
  }

  // ---- decoding: opcode modifiers ----
  void decode(Instruction& inst, const Token& opcode_token, std::vector<RawOperand>& raw) {
    std::string_view text = opcode_token.text;
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
      size_t dot = text.find('.', start);
      parts.push_back(text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    std::string_view base = parts[0];
    auto opcode = opcode_from_name(base);
    if (!opcode) fail(opcode_token, "unsupported instruction '" + std::string(text) + "'");
    inst.opcode = *opcode;
    if (inst.opcode == Opcode::kVideo4) inst.mode = static_cast<uint8_t>(video_op_from_name(base));
    size_t first_modifier = 1;
    if (inst.opcode == Opcode::kMbarrier || (inst.opcode == Opcode::kCpAsync && parts.size() > 2 && parts[2] == "mbarrier")) {
      decode_mbarrier(inst, opcode_token, parts, raw);
      return;
    }
    if (inst.opcode == Opcode::kMma || inst.opcode == Opcode::kLdmatrix) {
      decode_mma(inst, opcode_token, parts, raw);
      return;
    }
    if (inst.opcode == Opcode::kCpAsync) first_modifier = decode_cp_async_form(inst, opcode_token, parts);
    if (inst.opcode == Opcode::kWmmaMma) {
      decode_wmma(inst, opcode_token, parts, raw);
      return;
    }
    if (inst.opcode == Opcode::kBarSync) {
      std::string_view kind = parts.size() > 1 ? parts[1] : "";
      if (kind == "sync" || (base == "bar" && kind.empty())) inst.opcode = Opcode::kBarSync;
      else if (kind == "arrive") inst.opcode = Opcode::kBarArrive;
      else if (kind == "red") inst.opcode = Opcode::kBarRed;
      else if (kind == "warp" && parts.size() > 2 && parts[2] == "sync") {
        inst.opcode = Opcode::kBarWarpSync;
        first_modifier = 3;
      } else if (kind.empty()) inst.opcode = Opcode::kBarSync;
      else fail(opcode_token, "unsupported instruction '" + std::string(text) + "'");
      if (first_modifier == 1 && !kind.empty()) first_modifier = 2;
    }
    if (inst.opcode == Opcode::kBrx) fail(opcode_token, "unsupported instruction '" + std::string(text) + "' (indirect branch)");
    if ((inst.opcode == Opcode::kAdd || inst.opcode == Opcode::kSub) && false) {}
    std::vector<Type> types;
    for (size_t i = first_modifier; i < parts.size(); ++i) {
      std::string_view m = parts[i];
      if (!apply_modifier(inst, m, types)) {
        fail(opcode_token, "unsupported modifier ." + std::string(m) + " in '" + std::string(text) + "'");
      }
    }
    if (!types.empty()) inst.type = types[0];
    if (types.size() > 1) inst.type2 = types[1];
    if (types.size() > 2) {
      // vop4.dtype.atype.btype and cvt.pack.sat.convertType.s32.b32 name three types.
      const bool three = inst.opcode == Opcode::kVideo4 || (inst.opcode == Opcode::kCvt && inst.mode == kCvtPack);
      if (!three || types.size() > 3) fail(opcode_token, "too many types in '" + std::string(text) + "'");
      inst.type3 = types[2];
    }
    if (inst.space == Space::kParam && inst.opcode == Opcode::kCvta) {
      fail(opcode_token, "unsupported instruction '" + std::string(text) + "' (cvta.param)");
    }
    decode_operands(inst, opcode_token, raw);
  }

  bool apply_modifier(Instruction& inst, std::string_view m, std::vector<Type>& types) {
    const Opcode op = inst.opcode;
    // Cache operators change no value; the timing model needs to know which loads skip L1.
    if (op == Opcode::kLd && (m == "cg" || m == "cv" || m == "volatile")) inst.l1_bypass = true;
    if ((op == Opcode::kLd || op == Opcode::kSt) &&
        (m == "volatile" || m == "relaxed" || m == "acquire" || m == "release" || m == "mmio")) {
      inst.ordered = true;
    }
    if (auto type = type_from_name(m)) {
      types.push_back(*type);
      return true;
    }
    if (is_texture_opcode(op)) return apply_texture_modifier(inst, m);
    if (op == Opcode::kSetp || op == Opcode::kSet) {
      if (auto cmp = compare_from_name(m)) {
        if (inst.compare == Compare::kNone) {
          inst.compare = *cmp;
          return true;
        }
      }
      if (m == "and") { inst.bool_op = BoolOp::kAnd; return true; }
      if (m == "or") { inst.bool_op = BoolOp::kOr; return true; }
      if (m == "xor") { inst.bool_op = BoolOp::kXor; return true; }
    }
    if (op == Opcode::kMul || op == Opcode::kMad || op == Opcode::kMul24 || op == Opcode::kMad24 || op == Opcode::kMadCarry) {
      if (m == "lo") { inst.mul_mode = MulMode::kLo; return true; }
      if (m == "hi") { inst.mul_mode = MulMode::kHi; return true; }
      if (m == "wide") { inst.mul_mode = MulMode::kWide; return true; }
    }
    if (op == Opcode::kAtom || op == Opcode::kRed || op == Opcode::kRedux || op == Opcode::kBarRed) {
      if (auto a = atom_from_name(m)) {
        if (op == Opcode::kBarRed) {
          if (*a == AtomOp::kAnd) inst.bool_op = BoolOp::kAnd;
          else if (*a == AtomOp::kOr) inst.bool_op = BoolOp::kOr;
          else return false;
          return true;
        }
        inst.atom_op = *a;
        return true;
      }
      if (op == Opcode::kBarRed && m == "popc") { inst.bool_op = BoolOp::kPopc; return true; }
    }
    if (op == Opcode::kShfl) {
      if (m == "up") { inst.mode = static_cast<uint8_t>(ShflMode::kUp); return true; }
      if (m == "down") { inst.mode = static_cast<uint8_t>(ShflMode::kDown); return true; }
      if (m == "bfly") { inst.mode = static_cast<uint8_t>(ShflMode::kBfly); return true; }
      if (m == "idx") { inst.mode = static_cast<uint8_t>(ShflMode::kIdx); return true; }
    }
    if (op == Opcode::kVote) {
      if (m == "all") { inst.mode = static_cast<uint8_t>(VoteMode::kAll); return true; }
      if (m == "any") { inst.mode = static_cast<uint8_t>(VoteMode::kAny); return true; }
      if (m == "uni") { inst.mode = static_cast<uint8_t>(VoteMode::kUni); return true; }
      if (m == "ballot") { inst.mode = static_cast<uint8_t>(VoteMode::kBallot); return true; }
    }
    if (op == Opcode::kMatch) {
      if (m == "any") { inst.mode = 0; return true; }
      if (m == "all") { inst.mode = 1; return true; }
    }
    if (op == Opcode::kTestp) {
      static constexpr std::pair<const char*, TestpClass> kClasses[] = {
          {"finite", TestpClass::kFinite}, {"infinite", TestpClass::kInfinite}, {"number", TestpClass::kNumber},
          {"notanumber", TestpClass::kNotanumber}, {"normal", TestpClass::kNormal}, {"subnormal", TestpClass::kSubnormal}};
      for (const auto& [text, cls] : kClasses) {
        if (m == text) { inst.mode = static_cast<uint8_t>(cls); return true; }
      }
    }
    if (op == Opcode::kPrmt) {
      static constexpr const char* kModes[] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
      for (uint8_t i = 0; i < 6; ++i) {
        if (m == kModes[i]) { inst.mode = static_cast<uint8_t>(i + 1); return true; }
      }
    }
    if (op == Opcode::kShf) {
      if (m == "l") { inst.shift_left = true; return true; }
      if (m == "r") { inst.shift_left = false; return true; }
      if (m == "clamp") { inst.clamp = true; return true; }
      if (m == "wrap") { inst.clamp = false; return true; }
    }
    if (op == Opcode::kBfind && m == "shiftamt") { inst.clamp = true; return true; }
    if (op == Opcode::kBmsk || op == Opcode::kSzext) {
      if (m == "clamp") { inst.clamp = true; return true; }
      if (m == "wrap") { inst.clamp = false; return true; }
    }
    if (op == Opcode::kDp2a) {
      if (m == "lo") { inst.mul_mode = MulMode::kLo; return true; }
      if (m == "hi") { inst.mul_mode = MulMode::kHi; return true; }
    }
    if (op == Opcode::kVideo4 && m == "add") { inst.accumulate = true; return true; }
    if (op == Opcode::kCvt && m == "pack") { inst.mode = kCvtPack; return true; }
    if (op == Opcode::kCvt && m == "tf32" && types.empty()) {  // the destination: a .b32 holding a tf32
      inst.mode = kCvtTf32;
      types.push_back(Type::kB32);
      return true;
    }
    if (op == Opcode::kCpAsync) {
      if (m == "ca") { inst.l1_bypass = false; return true; }
      if (m == "cg") { inst.l1_bypass = true; return true; }
      if (m == "shared" || m == "shared::cta") { inst.space = Space::kShared; return true; }
      if (m == "global") { inst.space2 = Space::kGlobal; return true; }
      if (m == "L2::cache_hint") { inst.mode = kCpAsyncCacheHint; return true; }
      return m.find("::") != std::string_view::npos;  // L2::128B, L2::cache_hint ...: hints
    }
    if (op == Opcode::kCvta || op == Opcode::kIsspacep) {
      if (m == "to") { inst.to_space = true; return true; }
    }
    static constexpr std::pair<const char*, Rounding> kRoundings[] = {
        {"rn", Rounding::kRn},   {"rz", Rounding::kRz},   {"rm", Rounding::kRm},   {"rp", Rounding::kRp},
        {"rna", Rounding::kRna}, {"rni", Rounding::kRni}, {"rzi", Rounding::kRzi}, {"rmi", Rounding::kRmi},
        {"rpi", Rounding::kRpi}};
    for (const auto& [text, rounding] : kRoundings) {
      if (m == text) { inst.rounding = rounding; return true; }
    }
    if (m == "ftz") { inst.ftz = true; return true; }
    if (m == "sat" || m == "satfinite") { inst.saturate = true; return true; }
    if (m == "approx") { inst.approx = true; return true; }
    if (m == "relu") { inst.relu = true; return true; }
    if (m == "cc") { inst.set_carry = true; return true; }
    if (m == "uni") { inst.uniform = true; return true; }
    if (m == "v2" || m == "v4" || m == "v8") { inst.vector_width = static_cast<uint8_t>(m[1] - '0'); return true; }
    if (m == "NaN" || m == "xorsign" || m == "abs") {
      return false;  // not modelled: reject instead of computing something else
    }
    if (auto space = space_from_name(m)) {
      if (inst.opcode == Opcode::kCvta || inst.opcode == Opcode::kIsspacep || inst.space == Space::kGeneric) {
        inst.space = *space;
        return true;
      }
      return false;
    }
    if (inst.opcode == Opcode::kMembar || inst.opcode == Opcode::kFence) return true;  // scopes/semantics
    if (inst.opcode == Opcode::kPrefetch) return true;                                   // L1/L2 levels
    if (m == "wide" && (op == Opcode::kMul || op == Opcode::kMad)) return true;
    if (m == "shiftamt") return false;
    return is_ignored_modifier(m);
  }

#include "models/gpu/ptx/parser_texture.inc"

  // ---- decoding: operands ----
  Operand value_operand(const RawOperand& raw, Type type) {
    Operand op;
    switch (raw.kind) {
      case RawOperand::Kind::kInteger:
        op.kind = OperandKind::kImmediate;
        op.value = static_cast<int64_t>(raw.bits);
        if (type == Type::kF32) {
          float f = static_cast<float>(static_cast<int64_t>(raw.bits));
          uint32_t b;
          std::memcpy(&b, &f, 4);
          op.value = b;
        } else if (type == Type::kF64) {
          double f = static_cast<double>(static_cast<int64_t>(raw.bits));
          std::memcpy(&op.value, &f, 8);
        }
        return op;
      case RawOperand::Kind::kFloat32:
      case RawOperand::Kind::kFloat64: {
        op.kind = OperandKind::kImmediate;
        double value;
        if (raw.kind == RawOperand::Kind::kFloat32) {
          float f;
          uint32_t b = static_cast<uint32_t>(raw.bits);
          std::memcpy(&f, &b, 4);
          value = static_cast<double>(f);
        } else {
          std::memcpy(&value, &raw.bits, 8);
        }
        if (type == Type::kF64) {
          std::memcpy(&op.value, &value, 8);
        } else if (type == Type::kF32 || raw.kind == RawOperand::Kind::kFloat64) {
          if (raw.kind == RawOperand::Kind::kFloat32) {
            op.value = static_cast<int64_t>(raw.bits & 0xffffffffu);
          } else {
            float f = static_cast<float>(value);
            uint32_t b;
            std::memcpy(&b, &f, 4);
            op.value = b;
          }
        } else {
          op.value = static_cast<int64_t>(raw.bits);
        }
        return op;
      }
      case RawOperand::Kind::kName: {
        const Entity* e = lookup(raw.name);
        if (e == nullptr) {
          if (auto special = special_from_name(raw.name)) {
            op.kind = OperandKind::kSpecial;
            op.index = static_cast<uint32_t>(*special);
            return op;
          }
          fail(*raw.token, "unknown identifier '" + std::string(raw.name) + "'");
        }
        if (raw.negated && e->kind != Entity::Kind::kPredicate) fail(*raw.token, "'!' applies to predicates only");
        switch (e->kind) {
          case Entity::Kind::kRegister:
            if (raw.offset != 0) fail(*raw.token, "register plus offset is not an operand");
            op.kind = OperandKind::kRegister;
            op.index = e->index;
            return op;
          case Entity::Kind::kPredicate:
            op.kind = OperandKind::kPredicate;
            op.index = e->index;
            op.negated = raw.negated;
            return op;
          case Entity::Kind::kSymbol:
            op.kind = OperandKind::kSymbol;
            op.symbol_kind = e->symbol_kind;
            op.index = e->index;
            op.value = e->offset + raw.offset;
            return op;
          case Entity::Kind::kFunction:
            op.kind = OperandKind::kImmediate;
            op.value = static_cast<int64_t>(kFunctionAddressBase + kFunctionAddressStride * e->index + static_cast<uint64_t>(raw.offset));
            return op;
        }
        break;
      }
      case RawOperand::Kind::kSink:
        op.kind = OperandKind::kSink;
        return op;
      case RawOperand::Kind::kVector: {
        op.kind = OperandKind::kVector;
        if (raw.elements.empty() || raw.elements.size() > 8) fail(*raw.token, "vector operand needs 1 to 8 elements");
        op.index = static_cast<uint32_t>(current_->function->vector_elements.size());
        op.count = static_cast<uint8_t>(raw.elements.size());
        std::vector<Operand> elements;
        for (const auto& element : raw.elements) {
          if (element.kind == RawOperand::Kind::kVector || element.kind == RawOperand::Kind::kList ||
              element.kind == RawOperand::Kind::kMemory) {
            fail(*element.token, "malformed vector element");
          }
          Operand decoded = value_operand(element, type);
          if (decoded.kind == OperandKind::kPredicate) fail(*element.token, "predicate in a vector operand");
          elements.push_back(decoded);
        }
        auto& pool = current_->function->vector_elements;
        pool.insert(pool.end(), elements.begin(), elements.end());
        return op;
      }
      case RawOperand::Kind::kMemory: {
        if (!raw.elements.empty()) fail(*raw.token, "coordinates in an address are valid only in texture and surface instructions");
        op.kind = OperandKind::kMemory;
        op.value = raw.offset;
        if (raw.name.empty()) {
          op.memory_base = MemoryBase::kAbsolute;
          return op;
        }
        const Entity* e = lookup(raw.name);
        if (e == nullptr) fail(*raw.token, "unknown identifier '" + std::string(raw.name) + "' in address");
        if (e->kind == Entity::Kind::kRegister) {
          op.memory_base = MemoryBase::kRegister;
          op.index = e->index;
        } else if (e->kind == Entity::Kind::kSymbol) {
          op.memory_base = MemoryBase::kSymbol;
          op.symbol_kind = e->symbol_kind;
          op.index = e->index;
          op.value = e->offset + raw.offset;
        } else {
          fail(*raw.token, "'" + std::string(raw.name) + "' cannot be used as an address");
        }
        return op;
      }
      case RawOperand::Kind::kList:
        fail(*raw.token, "unexpected parenthesised list");
    }
    fail(*raw.token, "malformed operand");
  }

  [[noreturn]] void operand_error(const Instruction& inst, const Token& token, const std::string& what) {
    (void)inst;
    fail(token, what);
  }

  void expect_count(const Token& token, const std::vector<RawOperand>& raw, size_t min, size_t max) {
    if (raw.size() < min || raw.size() > max) {
      std::string expected = min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
      fail(token, "'" + std::string(token.text) + "' expects " + expected + " operands, got " + std::to_string(raw.size()));
    }
  }

  // Destination: a register (or '_'), or a predicate when `pred` is set.
  Operand dest(const RawOperand& raw, bool pred, const Token& token) {
    if (raw.kind == RawOperand::Kind::kSink) {
      Operand op;
      op.kind = OperandKind::kSink;
      return op;
    }
    if (raw.kind != RawOperand::Kind::kName || raw.negated) fail(*raw.token, "destination must be a register");
    Operand op = value_operand(raw, Type::kNone);
    if (pred && op.kind != OperandKind::kPredicate) fail(*raw.token, "destination of '" + std::string(token.text) + "' must be a predicate");
    if (!pred && op.kind != OperandKind::kRegister) fail(*raw.token, "destination of '" + std::string(token.text) + "' must be a register");
    return op;
  }

  Operand source(const RawOperand& raw, Type type, bool pred) {
    Operand op = value_operand(raw, type);
    if (pred) {
      if (op.kind == OperandKind::kImmediate) {
        op.value = op.value != 0;
        return op;
      }
      if (op.kind != OperandKind::kPredicate) fail(*raw.token, "expected a predicate operand");
      return op;
    }
    if (op.kind == OperandKind::kPredicate) fail(*raw.token, "predicate used where a value is expected");
    if (op.kind == OperandKind::kVector || op.kind == OperandKind::kMemory || op.kind == OperandKind::kSink) {
      fail(*raw.token, "expected a register or constant operand");
    }
    return op;
  }

  Operand memory(const RawOperand& raw) {
    if (raw.kind != RawOperand::Kind::kMemory) fail(*raw.token, "expected an address in [ ]");
    return value_operand(raw, Type::kNone);
  }

  // Vector of registers (for ld/st .v2/.v4) or a single register/value.
  Operand data(const RawOperand& raw, Type type, uint8_t width, bool is_dest) {
    if (width > 1) {
      if (raw.kind != RawOperand::Kind::kVector || raw.elements.size() != width) {
        fail(*raw.token, "expected a vector of " + std::to_string(width) + " elements");
      }
      Operand op = value_operand(raw, type);
      for (uint8_t i = 0; i < op.count; ++i) {
        const Operand& e = current_->function->vector_elements[op.index + i];
        if (is_dest && e.kind != OperandKind::kRegister && e.kind != OperandKind::kSink) fail(*raw.token, "vector destination elements must be registers");
        if (!is_dest && e.kind == OperandKind::kSink) fail(*raw.token, "'_' in a source vector");
      }
      return op;
    }
    if (raw.kind == RawOperand::Kind::kVector) fail(*raw.token, "vector operand needs a .v2/.v4 instruction");
    if (is_dest) return dest(raw, type == Type::kPred, *raw.token);
    return source(raw, type, type == Type::kPred);
  }

  void decode_operands(Instruction& inst, const Token& token, std::vector<RawOperand>& raw) {
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i].pipe_before && !(inst.opcode == Opcode::kShfl || inst.opcode == Opcode::kSetp || inst.opcode == Opcode::kMatch)) {
        fail(*raw[i].token, "'|' is only valid in setp, shfl and match destinations");
      }
    }
    auto set = [&](int index, const Operand& op) {
      inst.operands[index] = op;
      inst.operand_count = static_cast<uint8_t>(std::max<int>(inst.operand_count, index + 1));
    };
    auto need_type = [&](std::initializer_list<Type> allowed) {
      if (inst.type == Type::kNone) fail(token, "'" + std::string(token.text) + "' needs a type");
      if (allowed.size() != 0 && std::find(allowed.begin(), allowed.end(), inst.type) == allowed.end()) {
        fail(token, "unsupported type in '" + std::string(token.text) + "'");
      }
    };
    const Type t = inst.type;
    const bool pred = t == Type::kPred;
    if (is_texture_opcode(inst.opcode)) {
      decode_texture_operands(inst, token, raw);
      return;
    }
    switch (inst.opcode) {
      case Opcode::kAdd: case Opcode::kSub: case Opcode::kMin: case Opcode::kMax: case Opcode::kDiv:
      case Opcode::kRem: case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor: case Opcode::kShl:
      case Opcode::kShr: case Opcode::kCopysign: case Opcode::kAddCarry: case Opcode::kSubCarry:
      case Opcode::kMul24: case Opcode::kMul: {
        need_type({});
        expect_count(token, raw, 3, 3);
        if (inst.opcode == Opcode::kMul && !is_float(t) && inst.mul_mode == MulMode::kNone) fail(token, "integer mul needs .lo, .hi or .wide");
        if (pred && !(inst.opcode == Opcode::kAnd || inst.opcode == Opcode::kOr || inst.opcode == Opcode::kXor)) fail(token, "predicate type not allowed here");
        const Type shift_type = (inst.opcode == Opcode::kShl || inst.opcode == Opcode::kShr) ? Type::kU32 : t;
        set(0, dest(raw[0], pred, token));
        set(1, source(raw[1], t, pred));
        set(2, source(raw[2], shift_type, pred));
        break;
      }
      case Opcode::kMad: case Opcode::kMad24: case Opcode::kFma: case Opcode::kMadCarry: case Opcode::kSad:
      case Opcode::kDp4a: case Opcode::kDp2a: {
        need_type({});
        expect_count(token, raw, 4, 4);
        if (inst.opcode == Opcode::kMad && !is_float(t) && inst.mul_mode == MulMode::kNone) fail(token, "integer mad needs .lo, .hi or .wide");
        if (inst.opcode == Opcode::kDp2a && inst.mul_mode == MulMode::kNone) fail(token, "dp2a needs .lo or .hi");
        set(0, dest(raw[0], false, token));
        const Type c_type = (inst.mul_mode == MulMode::kWide) ? Type::kB64 : t;
        set(1, source(raw[1], t, false));
        set(2, source(raw[2], (inst.opcode == Opcode::kDp4a || inst.opcode == Opcode::kDp2a) ? inst.type2 : t, false));
        set(3, source(raw[3], c_type, false));
        break;
      }
      case Opcode::kAbs: case Opcode::kNeg: case Opcode::kNot: case Opcode::kCnot: case Opcode::kPopc:
      case Opcode::kClz: case Opcode::kBfind: case Opcode::kBrev: case Opcode::kRcp: case Opcode::kSqrt:
      case Opcode::kRsqrt: case Opcode::kSin: case Opcode::kCos: case Opcode::kLg2: case Opcode::kEx2:
      case Opcode::kTanh: {
        need_type({});
        expect_count(token, raw, 2, 2);
        if (pred && inst.opcode != Opcode::kNot) fail(token, "predicate type not allowed here");
        set(0, dest(raw[0], pred, token));
        set(1, source(raw[1], t, pred));
        break;
      }
      case Opcode::kTestp: {
        need_type({Type::kF32, Type::kF64});
        expect_count(token, raw, 2, 2);
        set(0, dest(raw[0], true, token));
        set(1, source(raw[1], t, false));
        break;
      }
      case Opcode::kBfe: case Opcode::kBfi: case Opcode::kPrmt: case Opcode::kLop3: case Opcode::kShf:
      case Opcode::kSelp: case Opcode::kSlct: case Opcode::kFns: {
        need_type({});
        size_t count = inst.opcode == Opcode::kBfi ? 5 : inst.opcode == Opcode::kLop3 ? 5 : 4;
        expect_count(token, raw, count, count);
        if (inst.opcode == Opcode::kFns && t != Type::kB32) fail(token, "fns is .b32 only");
        set(0, dest(raw[0], false, token));
        for (size_t i = 1; i < count; ++i) {
          Type st = t;
          if (inst.opcode == Opcode::kBfe && i >= 2) st = Type::kU32;
          if (inst.opcode == Opcode::kBfi && i >= 3) st = Type::kU32;
          if ((inst.opcode == Opcode::kPrmt || inst.opcode == Opcode::kShf) && i == 3) st = Type::kU32;
          if (inst.opcode == Opcode::kLop3 && i == 4) st = Type::kU32;
          if (inst.opcode == Opcode::kFns && i == 3) st = Type::kS32;
          if (inst.opcode == Opcode::kSlct && i == 3) st = inst.type2;
          bool p = inst.opcode == Opcode::kSelp && i == 3;
          set(static_cast<int>(i), source(raw[i], st, p));
        }
        if (inst.opcode == Opcode::kLop3 && inst.operands[4].kind != OperandKind::kImmediate) fail(*raw[4].token, "lop3 lookup table must be a constant");
        if (inst.opcode == Opcode::kSlct && inst.type2 == Type::kNone) fail(token, "slct needs a second type");
        break;
      }
      case Opcode::kSetp: {
        need_type({});
        if (inst.compare == Compare::kNone) fail(token, "setp needs a comparison");
        // setp.cmp p[|q], a, b[, {!}c]
        expect_count(token, raw, 3, 5);
        size_t i = 0;
        set(0, dest(raw[i++], true, token));
        Operand second;
        second.kind = OperandKind::kSink;
        if (i < raw.size() && raw[i].pipe_before) second = dest(raw[i++], true, token);
        set(1, second);
        const size_t rest = raw.size() - i;
        if (rest != 2 && rest != 3) fail(token, "setp expects p[|q], a, b[, c]");
        if ((rest == 3) != (inst.bool_op != BoolOp::kNone)) fail(token, "setp with a third source needs .and, .or or .xor");
        set(2, source(raw[i], t, false));
        set(3, source(raw[i + 1], t, false));
        if (rest == 3) set(4, source(raw[i + 2], Type::kPred, true));
        break;
      }
      case Opcode::kSet: {
        need_type({});
        if (inst.compare == Compare::kNone) fail(token, "set needs a comparison");
        if (inst.type2 == Type::kNone) fail(token, "set needs destination and source types");
        expect_count(token, raw, 3, 4);
        if ((raw.size() == 4) != (inst.bool_op != BoolOp::kNone)) fail(token, "set with a third source needs .and, .or or .xor");
        set(0, dest(raw[0], false, token));
        set(1, source(raw[1], inst.type2, false));
        set(2, source(raw[2], inst.type2, false));
        if (raw.size() == 4) set(3, source(raw[3], Type::kPred, true));
        break;
      }
      case Opcode::kCvt: {
        need_type({});
        if (inst.type2 == Type::kNone) fail(token, "cvt needs destination and source types");
        if (inst.type == Type::kPred || inst.type2 == Type::kPred) fail(token, "cvt does not convert predicates");
        if (inst.mode == kCvtPack) {
          decode_cvt_pack(inst, token, raw);
          break;
        }
        if (inst.mode == kCvtTf32) {
          const Rounding r = inst.rounding;
          if (inst.type2 != Type::kF32 || (r != Rounding::kRna && r != Rounding::kRn && r != Rounding::kRz) || inst.relu) {
            fail(token, "unsupported cvt to .tf32 (supported: .rna/.rn/.rz{.satfinite}.tf32.f32)");
          }
        }
        if (inst.type == Type::kF16x2 || inst.type == Type::kBF16x2) {
          // cvt.rn.f16x2.f32 d, a, b: d.hi = a, d.lo = b
          if (inst.type2 != Type::kF32) fail(token, "packed cvt converts from .f32 only");
          expect_count(token, raw, 3, 3);
          set(0, dest(raw[0], false, token));
          set(1, source(raw[1], Type::kF32, false));
          set(2, source(raw[2], Type::kF32, false));
          break;
        }
        expect_count(token, raw, 2, 2);
        set(0, dest(raw[0], false, token));
        set(1, source(raw[1], inst.type2, false));
        break;
      }
      case Opcode::kCvta: {
        need_type({Type::kU32, Type::kU64});
        if (inst.space == Space::kGeneric) fail(token, "cvta needs a state space");
        expect_count(token, raw, 2, 2);
        set(0, dest(raw[0], false, token));
        set(1, source(raw[1], t, false));
        break;
      }
      case Opcode::kIsspacep: {
        if (inst.space == Space::kGeneric) fail(token, "isspacep needs a state space");
        expect_count(token, raw, 2, 2);
        set(0, dest(raw[0], true, token));
        set(1, source(raw[1], Type::kU64, false));
        break;
      }
      case Opcode::kMov: {
        need_type({});
        expect_count(token, raw, 2, 2);
        // mov.b64 %rd, {%r1, %r2} packs; mov.b32 {%h1, %h2}, %r unpacks.
        if (raw[0].kind == RawOperand::Kind::kVector) {
          Operand op = value_operand(raw[0], Type::kNone);
          for (uint8_t k = 0; k < op.count; ++k) {
            auto kind = current_->function->vector_elements[op.index + k].kind;
            if (kind != OperandKind::kRegister && kind != OperandKind::kSink) fail(*raw[0].token, "unpack destination elements must be registers");
          }
          if (type_bytes(t) % op.count != 0) fail(*raw[0].token, "vector does not divide the type");
          set(0, op);
          set(1, source(raw[1], t, false));
          break;
        }
        set(0, dest(raw[0], pred, token));
        if (raw[1].kind == RawOperand::Kind::kVector) {
          Operand op = value_operand(raw[1], Type::kNone);
          for (uint8_t k = 0; k < op.count; ++k) {
            if (current_->function->vector_elements[op.index + k].kind == OperandKind::kSink) fail(*raw[1].token, "'_' in a source vector");
          }
          if (type_bytes(t) % op.count != 0) fail(*raw[1].token, "vector does not divide the type");
          set(1, op);
        } else {
          set(1, source(raw[1], t, pred));
        }
        break;
      }
      case Opcode::kLd: case Opcode::kLdu: {
        need_type({});
        if (pred) fail(token, "ld of a predicate");
        if (ir::type_bytes(t) > 8) fail(token, "unsupported 128-bit access in '" + std::string(token.text) + "'");
        expect_count(token, raw, 2, 3);
        set(0, data(raw[0], t, inst.vector_width, true));
        set(1, memory(raw[1]));
        break;
      }
      case Opcode::kSt: {
        need_type({});
        if (pred) fail(token, "st of a predicate");
        if (ir::type_bytes(t) > 8) fail(token, "unsupported 128-bit access in '" + std::string(token.text) + "'");
        expect_count(token, raw, 2, 3);
        set(0, memory(raw[0]));
        set(1, data(raw[1], t, inst.vector_width, false));
        break;
      }
      case Opcode::kAtom: case Opcode::kRed: {
        need_type({});
        if (inst.atom_op == AtomOp::kNone) fail(token, "atomic needs an operation (.add, .cas, ...)");
        const size_t base = inst.opcode == Opcode::kAtom ? 1 : 0;
        const size_t count = base + 2 + (inst.atom_op == AtomOp::kCas ? 1 : 0);
        expect_count(token, raw, count, count + 1);
        if (inst.space != Space::kGeneric && inst.space != Space::kGlobal && inst.space != Space::kShared) fail(token, "atomics need .global, .shared or generic addresses");
        if (inst.vector_width != 1) fail(token, "vector atomics are not supported");
        if (base) set(0, dest(raw[0], false, token)); else { Operand sink; sink.kind = OperandKind::kSink; set(0, sink); }
        set(1, memory(raw[base]));
        set(2, source(raw[base + 1], t, false));
        if (inst.atom_op == AtomOp::kCas) set(3, source(raw[base + 2], t, false));
        break;
      }
      case Opcode::kPrefetch:
        expect_count(token, raw, 1, 1);
        set(0, memory(raw[0]));
        break;
      case Opcode::kMembar: case Opcode::kFence: case Opcode::kExit: case Opcode::kTrap: case Opcode::kBrkpt:
        expect_count(token, raw, 0, 0);
        break;
      case Opcode::kRet:
        expect_count(token, raw, 0, 0);
        break;
      case Opcode::kNanosleep:
        expect_count(token, raw, 1, 1);
        set(0, source(raw[0], Type::kU32, false));
        break;
      case Opcode::kBra: {
        expect_count(token, raw, 1, 1);
        if (raw[0].kind != RawOperand::Kind::kName) fail(*raw[0].token, "bra needs a label");
        Operand op;
        op.kind = OperandKind::kLabel;
        set(0, op);
        current_->label_uses.emplace_back(static_cast<uint32_t>(current_->function->body.size()), 0);
        current_->label_use_names.emplace_back(raw[0].name);
        current_->label_use_tokens.push_back(raw[0].token);
        break;
      }
      case Opcode::kCall:
        decode_call(inst, token, raw);
        break;
      case Opcode::kBarSync: case Opcode::kBarArrive: {
        expect_count(token, raw, inst.opcode == Opcode::kBarArrive ? 2 : 1, 2);
        set(0, source(raw[0], Type::kU32, false));
        if (raw.size() > 1) set(1, source(raw[1], Type::kU32, false));
        break;
      }
      case Opcode::kBarRed: {
        // bar.red.popc.u32 d, a{, b}, {!}c   bar.red.and.pred p, a{, b}, {!}c
        if (inst.bool_op == BoolOp::kNone) fail(token, "bar.red needs .popc, .and or .or");
        expect_count(token, raw, 3, 4);
        set(0, dest(raw[0], inst.bool_op != BoolOp::kPopc, token));
        set(1, source(raw[1], Type::kU32, false));
        if (raw.size() == 4) set(2, source(raw[2], Type::kU32, false));
        else { Operand none; none.kind = OperandKind::kNone; set(2, none); }
        set(3, source(raw.back(), Type::kPred, true));
        break;
      }
      case Opcode::kBarWarpSync:
        expect_count(token, raw, 1, 1);
        set(0, source(raw[0], Type::kU32, false));
        break;
      case Opcode::kShfl: {
        // shfl.sync.mode.b32 d[|p], a, b, c, membermask
        need_type({Type::kB32});
        expect_count(token, raw, 5, 6);
        size_t i = 0;
        set(0, dest(raw[i++], false, token));
        Operand second;
        second.kind = OperandKind::kSink;
        if (i < raw.size() && raw[i].pipe_before) second = dest(raw[i++], true, token);
        set(1, second);
        if (raw.size() - i != 4) fail(token, "shfl.sync expects d[|p], a, b, c, membermask");
        for (int k = 0; k < 4; ++k) set(2 + k, source(raw[i + static_cast<size_t>(k)], Type::kB32, false));
        break;
      }
      case Opcode::kVote: {
        expect_count(token, raw, 3, 3);
        const bool ballot = inst.mode == static_cast<uint8_t>(VoteMode::kBallot);
        set(0, dest(raw[0], !ballot, token));
        set(1, source(raw[1], Type::kPred, true));
        set(2, source(raw[2], Type::kB32, false));
        break;
      }
      case Opcode::kMatch: {
        need_type({Type::kB32, Type::kB64});
        // match.any d, a, mask   match.all d[|p], a, mask
        expect_count(token, raw, 3, 4);
        size_t i = 0;
        set(0, dest(raw[i++], false, token));
        Operand second;
        second.kind = OperandKind::kSink;
        if (i < raw.size() && raw[i].pipe_before) second = dest(raw[i++], true, token);
        set(1, second);
        if (raw.size() - i != 2) fail(token, "match.sync expects d[|p], a, membermask");
        set(2, source(raw[i], t, false));
        set(3, source(raw[i + 1], Type::kB32, false));
        break;
      }
      case Opcode::kActivemask:
        expect_count(token, raw, 1, 1);
        set(0, dest(raw[0], false, token));
        break;
      case Opcode::kRedux: {
        need_type({Type::kB32, Type::kU32, Type::kS32});
        if (inst.atom_op == AtomOp::kNone) fail(token, "redux.sync needs an operation");
        expect_count(token, raw, 3, 3);
        set(0, dest(raw[0], false, token));
        set(1, source(raw[1], t, false));
        set(2, source(raw[2], Type::kB32, false));
        break;
      }
      case Opcode::kBmsk: case Opcode::kSzext: case Opcode::kVideo4:
        decode_integer_extra(inst, token, raw);
        break;
      case Opcode::kCpAsync: case Opcode::kCpAsyncCommit: case Opcode::kCpAsyncWait:
        decode_cp_async(inst, token, raw);
        break;
      default:
        fail(token, "unsupported instruction '" + std::string(token.text) + "'");
    }
    // Vectors were only allowed where decoded above; registers must exist (indices valid).
  }

  // bmsk.mode.b32 d, a, b   szext.mode.{u32,s32} d, a, b   vop4.dtype.atype.btype{.sat|.add} d, a, b, c
  void decode_integer_extra(Instruction& inst, const Token& token, std::vector<RawOperand>& raw) {
    const Type t = inst.type;
    const bool word = t == Type::kB32 || t == Type::kU32 || t == Type::kS32;
    if (!word) fail(token, "'" + std::string(token.text) + "' needs a 32-bit type");
    if (inst.opcode == Opcode::kBmsk && t != Type::kB32) fail(token, "bmsk is .b32 only");
    if (inst.opcode == Opcode::kSzext && t == Type::kB32) fail(token, "szext needs .u32 or .s32");
    if (inst.opcode == Opcode::kVideo4) {
      auto integer = [](Type x) { return x == Type::kU32 || x == Type::kS32; };
      if (!integer(t) || !integer(inst.type2) || !integer(inst.type3)) fail(token, "'" + std::string(token.text) + "' needs .dtype.atype.btype, each .u32 or .s32");
      if (inst.accumulate && inst.saturate) fail(token, "vop4 cannot saturate with .add");
      expect_count(token, raw, 4, 4);
    } else {
      expect_count(token, raw, 3, 3);
    }
    set_operand(inst, 0, dest(raw[0], false, token));
    set_operand(inst, 1, source(raw[1], inst.opcode == Opcode::kVideo4 ? inst.type2 : t, false));
    set_operand(inst, 2, source(raw[2], inst.opcode == Opcode::kVideo4 ? inst.type3 : Type::kU32, false));
    if (inst.opcode == Opcode::kVideo4) set_operand(inst, 3, source(raw[3], t, false));
  }

  // cvt.pack.sat.{u16,s16}.s32 d, a, b   cvt.pack.sat.{u8,s8}.s32.b32 d, a, b, c
  void decode_cvt_pack(Instruction& inst, const Token& token, std::vector<RawOperand>& raw) {
    const Type t = inst.type;
    const bool half = t == Type::kU16 || t == Type::kS16;
    const bool byte = t == Type::kU8 || t == Type::kS8;
    if (!inst.saturate) fail(token, "cvt.pack needs .sat");
    if (inst.type2 != Type::kS32 || (!half && !byte)) fail(token, "unsupported cvt.pack types (supported: .u16/.s16.s32, .u8/.s8.s32.b32)");
    if (byte != (inst.type3 == Type::kB32)) fail(token, "cvt.pack to 8 bits needs .s32.b32, to 16 bits .s32");
    expect_count(token, raw, byte ? 4 : 3, byte ? 4 : 3);
    set_operand(inst, 0, dest(raw[0], false, token));
    set_operand(inst, 1, source(raw[1], Type::kS32, false));
    set_operand(inst, 2, source(raw[2], Type::kS32, false));
    if (byte) set_operand(inst, 3, source(raw[3], Type::kB32, false));
  }

  // cp.async.{ca,cg}.shared.global, cp.async.commit_group, cp.async.wait_group, cp.async.wait_all:
  // the opcode, and where the modifiers start.
  size_t decode_cp_async_form(Instruction& inst, const Token& token, const std::vector<std::string_view>& parts) {
    const std::string_view kind = parts.size() > 2 && parts[1] == "async" ? parts[2] : "";
    if (kind == "commit_group") inst.opcode = Opcode::kCpAsyncCommit;
    else if (kind == "wait_group") inst.opcode = Opcode::kCpAsyncWait;
    else if (kind == "wait_all") inst.opcode = Opcode::kCpAsyncWait, inst.mode = 1;
    else if (kind == "ca" || kind == "cg") return 2;
    else fail(token, "unsupported instruction '" + std::string(token.text) + "'");
    if (parts.size() > 3) fail(token, "unexpected modifier in '" + std::string(token.text) + "'");
    return 3;
  }

  // mbarrier.init{.shared{::cta}}.b64 [a], count        mbarrier.inval{.shared{::cta}}.b64 [a]
  // mbarrier.arrive{.expect_tx|.noComplete}{.sem}{.scope}{.space}.b64 state, [a]{, count|txCount}
  // mbarrier.arrive_drop{...} likewise     mbarrier.{expect_tx,complete_tx}{...}.b64 [a], txCount
  // mbarrier.{test_wait,try_wait}{.parity}{...}.b64 waitComplete, [a], state|phaseParity{, suspendTimeHint}
  // mbarrier.pending_count.b64 count, state     cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [a]
  // Memory-order (.release, .acquire, .relaxed) and scope (.cta, .cluster: a CTA is its own
  // cluster here) qualifiers change nothing in a sequential model.
  void decode_mbarrier(Instruction& inst, const Token& token, const std::vector<std::string_view>& parts,
                       std::vector<RawOperand>& raw) {
    using ir::MbarrierOp;
    const std::string text(token.text);
    auto bad = [&](const std::string& why) { fail(token, "unsupported instruction '" + text + "' (" + why + ")"); };
    const bool cp_async = parts[0] == "cp";
    const size_t op_index = cp_async ? 3 : 1;
    const std::string_view name = parts.size() > op_index ? parts[op_index] : "";
    MbarrierOp op = MbarrierOp::kInit;
    if (cp_async) {
      if (name != "arrive") bad("expected cp.async.mbarrier.arrive");
      op = MbarrierOp::kCpAsyncArrive;
    } else if (name == "init") op = MbarrierOp::kInit;
    else if (name == "inval") op = MbarrierOp::kInval;
    else if (name == "arrive") op = MbarrierOp::kArrive;
    else if (name == "arrive_drop") op = MbarrierOp::kArriveDrop;
    else if (name == "expect_tx") op = MbarrierOp::kExpectTx;
    else if (name == "complete_tx") op = MbarrierOp::kCompleteTx;
    else if (name == "test_wait") op = MbarrierOp::kTestWait;
    else if (name == "try_wait") op = MbarrierOp::kTryWait;
    else if (name == "pending_count") op = MbarrierOp::kPendingCount;
    else bad("unknown mbarrier operation");
    inst.opcode = Opcode::kMbarrier;
    inst.mode = static_cast<uint8_t>(op);
    inst.space = Space::kGeneric;
    bool typed = false;
    const bool arrive = op == MbarrierOp::kArrive || op == MbarrierOp::kArriveDrop;
    const bool wait = op == MbarrierOp::kTestWait || op == MbarrierOp::kTryWait;
    for (size_t i = op_index + 1; i < parts.size(); ++i) {
      const std::string_view m = parts[i];
      if (m == "b64") typed = true;
      else if (m == "shared" || m == "shared::cta") inst.space = Space::kShared;
      else if (m == "release" || m == "acquire" || m == "relaxed" || m == "cta" || m == "cluster") continue;
      else if (m == "parity" && wait) inst.mbarrier_variant |= ir::kMbarrierParity;
      else if (m == "expect_tx" && arrive) inst.mbarrier_variant |= ir::kMbarrierExpectTx;
      else if (m == "noComplete" && arrive) inst.mbarrier_variant |= ir::kMbarrierNoComplete;
      else if (m == "noinc" && cp_async) inst.mbarrier_variant |= ir::kMbarrierNoinc;
      else if (m == "shared::cluster") bad("an mbarrier of another CTA of the cluster");
      else bad("modifier ." + std::string(m));
    }
    if (!typed) fail(token, "'" + text + "' needs .b64");
    if (op == MbarrierOp::kPendingCount) {
      expect_count(token, raw, 2, 2);
      set_operand(inst, 0, dest(raw[0], false, token));
      set_operand(inst, 1, source(raw[1], Type::kB64, false));
      return;
    }
    if (ir::mbarrier_has_destination(op)) {
      // state (arrive: a register or '_'), waitComplete (a predicate), then [a] and the rest.
      const bool needs_third = wait || (inst.mbarrier_variant & (ir::kMbarrierExpectTx | ir::kMbarrierNoComplete)) != 0;
      expect_count(token, raw, needs_third ? 3 : 2, wait ? 4 : 3);
      set_operand(inst, 0, dest(raw[0], wait, token));
      set_operand(inst, 1, memory(raw[1]));
      if (raw.size() > 2) {
        const bool parity = (inst.mbarrier_variant & ir::kMbarrierParity) != 0;
        set_operand(inst, 2, source(raw[2], wait && !parity ? Type::kB64 : Type::kU32, false));
      }
      if (raw.size() > 3) set_operand(inst, 3, source(raw[3], Type::kU32, false));  // suspend-time hint: no effect
      return;
    }
    const bool counted = op == MbarrierOp::kInit || op == MbarrierOp::kExpectTx || op == MbarrierOp::kCompleteTx;
    expect_count(token, raw, counted ? 2 : 1, counted ? 2 : 1);
    set_operand(inst, 0, memory(raw[0]));
    if (counted) set_operand(inst, 1, source(raw[1], Type::kU32, false));
  }

  // cp.async.ca.shared.global [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy};
  // wait_group N (wait_all: N = 0).
  void decode_cp_async(Instruction& inst, const Token& token, std::vector<RawOperand>& raw) {
    if (inst.opcode == Opcode::kCpAsyncCommit || (inst.opcode == Opcode::kCpAsyncWait && inst.mode == 1)) {
      expect_count(token, raw, 0, 0);
      return;
    }
    if (inst.opcode == Opcode::kCpAsyncWait) {
      expect_count(token, raw, 1, 1);
      const Operand n = source(raw[0], Type::kU32, false);
      if (n.kind != OperandKind::kImmediate || n.value < 0) fail(*raw[0].token, "cp.async.wait_group needs a constant group count");
      set_operand(inst, 0, n);
      return;
    }
    if (inst.space != Space::kShared || inst.space2 != Space::kGlobal) fail(token, "cp.async copies .shared.global only");
    const size_t policy = inst.mode == kCpAsyncCacheHint ? 1 : 0;  // a trailing cache-policy operand
    expect_count(token, raw, 3 + policy, 4 + policy);
    set_operand(inst, 0, memory(raw[0]));
    set_operand(inst, 1, memory(raw[1]));
    const Operand size = source(raw[2], Type::kU32, false);
    if (size.kind != OperandKind::kImmediate || (size.value != 4 && size.value != 8 && size.value != 16)) {
      fail(*raw[2].token, "cp.async copy size must be 4, 8 or 16");
    }
    if (inst.l1_bypass && size.value != 16) fail(*raw[2].token, "cp.async.cg copies 16 bytes");
    set_operand(inst, 2, size);
    if (raw.size() - policy > 3) {
      // src-size (bytes read; the rest is zero-filled) or the ignore-src predicate; the cache
      // policy operand changes no value.
      const Operand fourth = value_operand(raw[3], Type::kU32);
      if (fourth.kind != OperandKind::kPredicate && fourth.kind != OperandKind::kRegister && fourth.kind != OperandKind::kImmediate) {
        fail(*raw[3].token, "cp.async src-size must be a register or constant, ignore-src a predicate");
      }
      set_operand(inst, 3, fourth);
    }
  }

  // wmma.load.{a,b,c}.sync.aligned.{row,col}.shape{.ss}.type  d, [p]{, stride}
  // wmma.store.d.sync.aligned.{row,col}.shape{.ss}.type        [p], r{, stride}
  // wmma.mma.sync.aligned.{row,col}.{row,col}.shape.dtype.ctype  (f16/f32)
  // wmma.mma.sync.aligned.{row,col}.{row,col}.shape.dtype.atype.btype.ctype{.satfinite}
  void decode_wmma(Instruction& inst, const Token& token, const std::vector<std::string_view>& parts,
                   std::vector<RawOperand>& raw) {
    const std::string text(token.text);
    auto bad = [&](const std::string& why) { fail(token, "unsupported instruction '" + text + "' (" + why + ")"); };
    auto element = [&](std::string_view name) {
      if (name == "f16") return TensorElement::kF16;
      if (name == "bf16") return TensorElement::kBF16;
      if (name == "tf32") return TensorElement::kTF32;
      if (name == "f32") return TensorElement::kF32;
      if (name == "s8") return TensorElement::kS8;
      if (name == "u8") return TensorElement::kU8;
      if (name == "s32") return TensorElement::kS32;
      bad("element type ." + std::string(name) + " is not modelled");
      return TensorElement::kF32;
    };
    auto shape = [&](std::string_view name) {
      for (uint8_t i = 0; i < ir::kWmmaShapeCount; ++i) {
        const TensorShape& s = kTensorShapes[i];
        if (name == "m" + std::to_string(s.m) + "n" + std::to_string(s.n) + "k" + std::to_string(s.k)) return i;
      }
      bad("shape ." + std::string(name) + " is not modelled");
      return uint8_t{0};
    };
    const std::string_view form = parts.size() > 1 ? parts[1] : "";
    size_t i = 2;
    if (form == "load" || form == "store") {
      inst.opcode = form == "load" ? Opcode::kWmmaLoad : Opcode::kWmmaStore;
      const std::string_view matrix = parts.size() > 2 ? parts[2] : "";
      if (form == "load" && matrix != "a" && matrix != "b" && matrix != "c") bad("expected .a, .b or .c");
      if (form == "store" && matrix != "d") bad("expected .d");
      inst.mode = matrix == "a" ? 0 : matrix == "b" ? 1 : 2;
      i = 3;
    } else if (form == "mma") {
      inst.opcode = Opcode::kWmmaMma;
    } else {
      bad("unknown form");
    }
    auto expect = [&](std::string_view what) {
      if (i >= parts.size() || parts[i] != what) bad("expected ." + std::string(what));
      ++i;
    };
    expect("sync");
    expect("aligned");
    auto layout = [&]() {
      if (i < parts.size() && (parts[i] == "row" || parts[i] == "col")) return parts[i++] == "col";
      bad("expected .row or .col");
      return false;
    };
    inst.tensor_column_major = layout();
    if (inst.opcode == Opcode::kWmmaMma) layout();  // b's layout: fragments are logical, see executor_tensor.inc
    if (i >= parts.size()) bad("missing shape");
    inst.tensor_shape = shape(parts[i++]);
    std::vector<TensorElement> types;
    for (; i < parts.size(); ++i) {
      const std::string_view m = parts[i];
      if (auto space = space_from_name(m)) {
        if (inst.opcode == Opcode::kWmmaMma || inst.space != Space::kGeneric) bad("unexpected ." + std::string(m));
        if (*space != Space::kGlobal && *space != Space::kShared) bad("fragments load from .global, .shared or generic addresses");
        inst.space = *space;
      } else if (m == "satfinite" && inst.opcode == Opcode::kWmmaMma) {
        inst.saturate = true;
      } else {
        types.push_back(element(m));
      }
    }
    const bool tf32_shape = kTensorShapes[inst.tensor_shape].k == 8;
    if (inst.opcode == Opcode::kWmmaMma) {
      if (types.size() == 2) {  // .dtype.ctype: f16 inputs
        inst.tensor_d = types[0], inst.tensor_c = types[1];
        inst.tensor_a = inst.tensor_b = TensorElement::kF16;
        auto half_or_single = [](TensorElement e) { return e == TensorElement::kF16 || e == TensorElement::kF32; };
        if (!half_or_single(inst.tensor_d) || !half_or_single(inst.tensor_c)) bad("f16 inputs accumulate in .f16 or .f32");
      } else if (types.size() == 4) {
        inst.tensor_d = types[0], inst.tensor_a = types[1], inst.tensor_b = types[2], inst.tensor_c = types[3];
        const bool integer = inst.tensor_a == TensorElement::kS8 || inst.tensor_a == TensorElement::kU8;
        if (integer) {
          if ((inst.tensor_b != TensorElement::kS8 && inst.tensor_b != TensorElement::kU8) || inst.tensor_c != TensorElement::kS32 ||
              inst.tensor_d != TensorElement::kS32) bad("8-bit inputs accumulate in .s32");
        } else if (inst.tensor_a != inst.tensor_b || (inst.tensor_a != TensorElement::kBF16 && inst.tensor_a != TensorElement::kTF32) ||
                   inst.tensor_c != TensorElement::kF32 || inst.tensor_d != TensorElement::kF32) {
          bad("unsupported type combination");
        }
      } else {
        bad("expected .dtype.ctype or .dtype.atype.btype.ctype");
      }
      if (inst.saturate && inst.tensor_d != TensorElement::kS32) bad(".satfinite applies to integer accumulation");
      if (tf32_shape != (inst.tensor_a == TensorElement::kTF32)) bad("m16n16k8 is the .tf32 shape");
      expect_count(token, raw, 4, 4);
      for (int k = 0; k < 4; ++k) set_operand(inst, k, fragment(inst, raw[static_cast<size_t>(k)], k == 0 ? 3 : k - 1, k == 0));
      return;
    }
    if (types.size() != 1) bad("expected one element type");
    const TensorElement e = types[0];
    if (inst.mode == 0) inst.tensor_a = e;
    else if (inst.mode == 1) inst.tensor_b = e;
    else inst.tensor_c = inst.tensor_d = e;
    const bool input = inst.mode != 2;
    const bool accumulator = e == TensorElement::kF16 || e == TensorElement::kF32 || e == TensorElement::kS32;
    if (input ? e == TensorElement::kF32 || e == TensorElement::kS32 : !accumulator) bad("element type does not fit this fragment");
    if (input && tf32_shape != (e == TensorElement::kTF32)) bad("m16n16k8 is the .tf32 shape");
    expect_count(token, raw, 2, 3);
    if (inst.opcode == Opcode::kWmmaLoad) {
      set_operand(inst, 0, fragment(inst, raw[0], inst.mode, true));
      set_operand(inst, 1, memory(raw[1]));
    } else {
      set_operand(inst, 0, memory(raw[0]));
      set_operand(inst, 1, fragment(inst, raw[1], 3, false));
    }
    if (raw.size() == 3) set_operand(inst, 2, source(raw[2], Type::kU32, false));
  }

  // mma.sync.aligned.{m16n8k8,m16n8k16}.row.col.{f16,f32}.f16.f16.{f16,f32}   (and .f32.bf16.bf16.f32)
  // mma.sync.aligned.{m16n8k4,m16n8k8}.row.col.f32.tf32.tf32.f32
  // mma.sync.aligned.{m8n8k16,m16n8k32}.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32     d, a, b, c
  // ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared{::cta}}.b16                  d, [p]
  void decode_mma(Instruction& inst, const Token& token, const std::vector<std::string_view>& parts,
                  std::vector<RawOperand>& raw) {
    const std::string text(token.text);
    auto bad = [&](const std::string& why) { fail(token, "unsupported instruction '" + text + "' (" + why + ")"); };
    size_t i = 1;
    auto expect = [&](std::string_view what) {
      if (i >= parts.size() || parts[i] != what) bad("expected ." + std::string(what));
      ++i;
    };
    expect("sync");
    expect("aligned");
    if (inst.opcode == Opcode::kLdmatrix) {
      expect("m8n8");
      const std::string_view count = i < parts.size() ? parts[i++] : "";
      if (count == "x1") inst.mode = 1;
      else if (count == "x2") inst.mode = 2;
      else if (count == "x4") inst.mode = 4;
      else bad("expected .x1, .x2 or .x4");
      bool typed = false;
      for (; i < parts.size(); ++i) {
        if (parts[i] == "trans") inst.tensor_column_major = true;
        else if (parts[i] == "shared" || parts[i] == "shared::cta") inst.space = Space::kShared;
        else if (parts[i] == "b16") typed = true;
        else bad("modifier ." + std::string(parts[i]));
      }
      if (!typed) bad("expected .b16");
      expect_count(token, raw, 2, 2);
      if (raw[0].kind != RawOperand::Kind::kVector || raw[0].elements.size() != inst.mode) {
        fail(*raw[0].token, "ldmatrix .x" + std::to_string(inst.mode) + " writes a vector of " + std::to_string(inst.mode) + " registers");
      }
      const Operand d = value_operand(raw[0], Type::kB32);
      for (uint8_t k = 0; k < d.count; ++k) {
        if (current_->function->vector_elements[d.index + k].kind != OperandKind::kRegister) fail(*raw[0].token, "ldmatrix writes registers");
      }
      set_operand(inst, 0, d);
      set_operand(inst, 1, memory(raw[1]));
      return;
    }
    const std::string_view shape_name = i < parts.size() ? parts[i++] : "";
    inst.tensor_shape = ir::kWmmaShapeCount;
    while (inst.tensor_shape < std::size(kTensorShapes)) {
      const TensorShape& s = kTensorShapes[inst.tensor_shape];
      if (shape_name == "m" + std::to_string(s.m) + "n" + std::to_string(s.n) + "k" + std::to_string(s.k)) break;
      ++inst.tensor_shape;
    }
    if (inst.tensor_shape == std::size(kTensorShapes)) bad("shape ." + std::string(shape_name) + " is not modelled");
    expect("row");
    expect("col");
    if (i < parts.size() && parts[i] == "satfinite") {
      inst.saturate = true;
      ++i;
    }
    auto element = [&](std::string_view name) {
      if (name == "f16") return TensorElement::kF16;
      if (name == "bf16") return TensorElement::kBF16;
      if (name == "tf32") return TensorElement::kTF32;
      if (name == "f32") return TensorElement::kF32;
      if (name == "s8") return TensorElement::kS8;
      if (name == "u8") return TensorElement::kU8;
      if (name == "s32") return TensorElement::kS32;
      bad("element type ." + std::string(name) + " is not modelled");
      return TensorElement::kF32;
    };
    if (parts.size() - i != 4) bad("expected .dtype.atype.btype.ctype");
    inst.tensor_d = element(parts[i]), inst.tensor_a = element(parts[i + 1]);
    inst.tensor_b = element(parts[i + 2]), inst.tensor_c = element(parts[i + 3]);
    const TensorShape& s = kTensorShapes[inst.tensor_shape];
    const TensorElement a = inst.tensor_a, b = inst.tensor_b, c = inst.tensor_c, d = inst.tensor_d;
    const bool half_shape = s.m == 16 && s.n == 8 && (s.k == 8 || s.k == 16);
    const bool tf32_shape = s.m == 16 && s.n == 8 && (s.k == 4 || s.k == 8);
    const bool int_shape = (s.m == 8 && s.k == 16) || s.k == 32;
    const bool integer = (a == TensorElement::kS8 || a == TensorElement::kU8) && (b == TensorElement::kS8 || b == TensorElement::kU8);
    bool ok = false;
    if (a == TensorElement::kF16 && b == a) {
      ok = half_shape && (c == TensorElement::kF16 || c == TensorElement::kF32) && (d == TensorElement::kF16 || d == TensorElement::kF32);
    } else if (a == TensorElement::kBF16 && b == a) {
      ok = half_shape && c == TensorElement::kF32 && d == TensorElement::kF32;
    } else if (a == TensorElement::kTF32 && b == a) {
      ok = tf32_shape && c == TensorElement::kF32 && d == TensorElement::kF32;
    } else if (integer) {
      ok = int_shape && c == TensorElement::kS32 && d == TensorElement::kS32;
    }
    if (!ok) bad("type combination not modelled for this shape");
    if (inst.saturate && !integer) bad(".satfinite applies to integer accumulation");
    expect_count(token, raw, 4, 4);
    const int matrices[4] = {2, 0, 1, 2};  // d, a, b, c
    const TensorElement kinds[4] = {d, a, b, c};
    for (int k = 0; k < 4; ++k) {
      const RawOperand& r = raw[static_cast<size_t>(k)];
      if (r.kind != RawOperand::Kind::kVector) fail(*r.token, "an mma fragment is a vector of registers");
      const Operand op = value_operand(r, Type::kNone);
      const uint32_t rows = matrices[k] == 1 ? s.k : s.m, cols = matrices[k] == 0 ? s.k : s.n;
      const uint32_t per_register = kinds[k] == TensorElement::kF16 || kinds[k] == TensorElement::kBF16 ? 2
                                    : kinds[k] == TensorElement::kS8 || kinds[k] == TensorElement::kU8 ? 4 : 1;
      const uint32_t registers = rows * cols / 32 / per_register;
      if (op.count != registers) {
        fail(*r.token, "this mma fragment is a vector of " + std::to_string(registers) + " registers, not " + std::to_string(op.count));
      }
      for (uint8_t e = 0; e < op.count; ++e) {
        if (current_->function->vector_elements[op.index + e].kind != OperandKind::kRegister) fail(*r.token, "mma fragment elements must be registers");
      }
      set_operand(inst, k, op);
    }
  }

  // A fragment operand: a vector of 32-bit registers (f16/bf16 pairs, four 8-bit values, one
  // f32/s32/tf32) whose slots over the warp cover the matrix a whole number of times.
  Operand fragment(const Instruction& inst, const RawOperand& raw, int matrix, bool is_dest) {
    if (raw.kind != RawOperand::Kind::kVector) fail(*raw.token, "a wmma fragment is a vector of registers");
    Operand op = value_operand(raw, Type::kNone);
    for (uint8_t k = 0; k < op.count; ++k) {
      const Operand& e = current_->function->vector_elements[op.index + k];
      if (e.kind != OperandKind::kRegister && !(is_dest && e.kind == OperandKind::kSink)) fail(*raw.token, "fragment elements must be registers");
    }
    const TensorShape& s = kTensorShapes[inst.tensor_shape];
    const TensorElement kind = matrix == 0 ? inst.tensor_a : matrix == 1 ? inst.tensor_b : matrix == 2 ? inst.tensor_c : inst.tensor_d;
    const uint32_t rows = matrix == 1 ? s.k : s.m, cols = matrix == 0 ? s.k : s.n;
    const uint32_t per_register = kind == TensorElement::kF16 || kind == TensorElement::kBF16 ? 2
                                  : kind == TensorElement::kS8 || kind == TensorElement::kU8 ? 4 : 1;
    const uint32_t slots = 32u * op.count * per_register;
    if (slots < rows * cols || slots % (rows * cols) != 0) {
      fail(*raw.token, "a fragment of " + std::to_string(op.count) + " registers does not hold a " + std::to_string(rows) + "x" +
                           std::to_string(cols) + " matrix");
    }
    return op;
  }

  static void set_operand(Instruction& inst, int index, const Operand& op) {
    inst.operands[index] = op;
    inst.operand_count = static_cast<uint8_t>(std::max<int>(inst.operand_count, index + 1));
  }

  void decode_call(Instruction& inst, const Token& token, std::vector<RawOperand>& raw) {
    // call{.uni} (ret), func, (args)   |   call func, (args)   |   call func
    size_t i = 0;
    Operand returns;
    returns.kind = OperandKind::kNone;
    if (i < raw.size() && raw[i].kind == RawOperand::Kind::kList) {
      returns = call_list(raw[i++]);
    }
    if (i >= raw.size() || raw[i].kind != RawOperand::Kind::kName) fail(token, "call needs a function name");
    const RawOperand& callee = raw[i++];
    const Entity* e = lookup(callee.name);
    if (e == nullptr) fail(*callee.token, "call to undeclared function '" + std::string(callee.name) + "'");
    Operand args;
    args.kind = OperandKind::kNone;
    if (i < raw.size() && raw[i].kind == RawOperand::Kind::kList) args = call_list(raw[i++]);
    if (e->kind == Entity::Kind::kRegister) {
      // Indirect call through a function address: call (r), %rd, (args), prototype;
      // the target is checked against the argument counts when the call executes.
      if (i < raw.size() && raw[i].kind == RawOperand::Kind::kName) ++i;  // the .callprototype label
      if (i != raw.size()) fail(*raw[i].token, "unexpected operand in call");
      Operand target;
      target.kind = OperandKind::kRegister;
      target.index = e->index;
      inst.operands[0] = target;
      inst.operands[1] = returns;
      inst.operands[2] = args;
      inst.operand_count = 3;
      return;
    }
    if (e->kind != Entity::Kind::kFunction) fail(*callee.token, "'" + std::string(callee.name) + "' is not a function");
    if (i != raw.size()) fail(*raw[i].token, "unexpected operand in call");
    const Function& f = program_.functions[e->index];
    if (returns.count != f.returns.size()) fail(*callee.token, "call to '" + f.name + "' passes " + std::to_string(returns.count) + " return values, expected " + std::to_string(f.returns.size()));
    if (args.count != f.params.size()) fail(*callee.token, "call to '" + f.name + "' passes " + std::to_string(args.count) + " arguments, expected " + std::to_string(f.params.size()));
    if (f.is_kernel) fail(*callee.token, "cannot call kernel '" + f.name + "'");
    Operand function;
    function.kind = OperandKind::kFunction;
    function.index = e->index;
    inst.operands[0] = function;
    inst.operands[1] = returns;
    inst.operands[2] = args;
    inst.operand_count = 3;
    pending_calls_.push_back({current_->index, static_cast<uint32_t>(current_->function->body.size()), 0,
                              f.name, callee.token});
  }

  // A call's parenthesised list: each element is a .param symbol in the caller's frame.
  Operand call_list(const RawOperand& raw) {
    Operand op;
    op.kind = OperandKind::kVector;
    op.index = static_cast<uint32_t>(current_->function->vector_elements.size());
    op.count = static_cast<uint8_t>(raw.elements.size());
    std::vector<Operand> elements;
    for (const auto& element : raw.elements) {
      if (element.kind != RawOperand::Kind::kName) fail(*element.token, "call arguments must be .param names");
      Operand decoded = value_operand(element, Type::kNone);
      if (decoded.kind != OperandKind::kSymbol || decoded.symbol_kind != SymbolKind::kFrameParam) {
        fail(*element.token, "call argument '" + std::string(element.name) + "' must be a .param declared in the caller (register arguments are not supported)");
      }
      elements.push_back(decoded);
    }
    auto& pool = current_->function->vector_elements;
    pool.insert(pool.end(), elements.begin(), elements.end());
    return op;
  }

  void finish_module() {
    for (const auto& call : pending_calls_) {
      const Function& callee = program_.functions[program_.functions[call.function].body[call.instruction].operands[0].index];
      if (!callee.is_defined && callee.external == Function::External::kNone) {
        fail(*call.token, "call to external function '" + call.name + "' which is not supported (built in: vprintf, __assertfail, malloc, free, __nv_aligned_device_malloc, cudaGraphSetConditional and the CUDA 12 device runtime's launch calls)");
      }
    }
    for (const auto& reloc : pending_relocations_) {
      (void)reloc;
    }
    // Decode once, scheduled as ptxas would (see block_scheduler.h).
    for (Function& f : program_.functions) {
      if (f.is_defined) schedule_basic_blocks(f);
    }
    for (uint32_t i = 0; i < program_.functions.size(); ++i) {
      const Function& f = program_.functions[i];
      if (!f.is_kernel || !f.is_defined) continue;
      Kernel k;
      k.name = f.name;
      k.function_index = i;
      k.param_bytes = f.param_bytes;
      auto offsets = layout_kernel_shared(i, k.static_shared_bytes);
      program_.kernel_shared_offsets.push_back(std::move(offsets));
      k.max_threads_per_cta = f.max_threads_per_cta;
      k.uses_textures = reaches_texture_instruction(i);
      for (const auto& p : f.params) k.params.push_back({p.name, p.offset, p.size, p.alignment});
      program_.kernel_by_name.emplace(k.name, static_cast<uint32_t>(program_.kernels.size()));
      program_.kernels.push_back(std::move(k));
    }
    program_.relocations.clear();
    for (const auto& reloc : pending_relocations_) {
      auto target = program_variable_index(reloc.variable_name);
      if (!target) continue;
      program_.relocations.push_back({*target, reloc.offset, reloc.target_variable, reloc.addend});
    }
  }

  // Static shared layout of one kernel: the variables its code (and callees) reference, in
  // declaration order, aligned; unreferenced variables take no space.
  std::vector<uint32_t> layout_kernel_shared(uint32_t kernel, uint32_t& total_bytes) const {
    std::vector<bool> reachable(program_.functions.size(), false);
    std::vector<uint32_t> pending{kernel};
    reachable[kernel] = true;
    std::vector<bool> used(program_.shared_variables.size(), false);
    auto note = [&](const Operand& op) {
      const bool symbol = op.kind == OperandKind::kSymbol || (op.kind == OperandKind::kMemory && op.memory_base == MemoryBase::kSymbol);
      if (symbol && op.symbol_kind == SymbolKind::kShared && op.index < used.size()) used[op.index] = true;
    };
    while (!pending.empty()) {
      const uint32_t f = pending.back();
      pending.pop_back();
      const Function& function = program_.functions[f];
      for (const auto& e : function.vector_elements) note(e);
      for (const auto& inst : function.body) {
        for (int o = 0; o < inst.operand_count; ++o) note(inst.operands[o]);
        if (inst.opcode != Opcode::kCall) continue;
        if (inst.operands[0].kind == OperandKind::kRegister) {  // indirect: any function
          for (size_t g = 0; g < reachable.size(); ++g) {
            if (!reachable[g]) {
              reachable[g] = true;
              pending.push_back(static_cast<uint32_t>(g));
            }
          }
        } else if (!reachable[inst.operands[0].index]) {
          reachable[inst.operands[0].index] = true;
          pending.push_back(inst.operands[0].index);
        }
      }
    }
    std::vector<uint32_t> offsets(program_.shared_variables.size(), 0);
    uint64_t cursor = 0;
    for (size_t v = 0; v < used.size(); ++v) {
      if (!used[v]) continue;
      cursor = align_up(cursor, program_.shared_variables[v].alignment);
      offsets[v] = static_cast<uint32_t>(cursor);
      cursor += program_.shared_variables[v].size;
    }
    total_bytes = static_cast<uint32_t>(cursor);
    return offsets;
  }

  struct PendingRelocation {
    std::string variable_name;
    uint64_t offset;
    uint32_t target_variable;
    int64_t addend;
  };

  std::string_view text_;
  std::string file_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  Program program_;
  std::unordered_map<std::string, Entity> module_scope_;
  std::vector<std::unordered_map<std::string, Entity>> scopes_;
  FunctionState* current_ = nullptr;
  std::vector<PendingCall> pending_calls_;
  std::vector<PendingRelocation> pending_relocations_;
  uint64_t register_counter_ = 0;
  uint64_t predicate_counter_ = 0;
};

}  // namespace

Program parse_program(std::string_view text, std::string_view file_name) {
  Parser parser(text, file_name);
  return parser.run();
}

}  // namespace ir
}  // namespace gpuvp::ptx
