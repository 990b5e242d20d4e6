// Parser tests: real nvcc modules parse; malformed and unsupported input gives
// "file:line:col: message" and never crashes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

using ::testing::HasSubstr;

TEST(PtxParser, NvccModulesParseWithKernelsParamsAndVariables) {
  Module module = Module::parse(generated_ptx("basic"), "basic.ptx");
  EXPECT_EQ(module.ptx_version_major(), 9u);
  EXPECT_EQ(module.target(), "sm_75");
  const Kernel* add = module.find_kernel("vector_add");
  ASSERT_NE(add, nullptr);
  ASSERT_EQ(add->params.size(), 4u);
  EXPECT_EQ(add->params[0].offset, 0u);
  EXPECT_EQ(add->params[2].offset, 16u);
  EXPECT_EQ(add->params[3].size, 4u);
  EXPECT_EQ(add->param_bytes, 28u);
  EXPECT_EQ(module.find_kernel("fibonacci"), nullptr);  // a .func, not a kernel
  // Static shared memory counts only the variables each kernel reaches.
  EXPECT_EQ(add->static_shared_bytes, 0u);
  EXPECT_EQ(module.find_kernel("atomics")->static_shared_bytes, 8u);
  EXPECT_EQ(module.find_kernel("generic_addressing")->static_shared_bytes, 256u);
  bool found_table = false;
  for (const auto& v : module.variables()) found_table |= v.name == "initialised_table" && v.initializer.size() == 12;
  EXPECT_TRUE(found_table);
  EXPECT_NO_THROW(Module::parse(generated_ptx("arith"), "arith.ptx"));
  EXPECT_NO_THROW(Module::parse(generated_ptx("sm80"), "sm80.ptx"));
}

TEST(PtxParser, StructParametersFollowPtxAlignment) {
  const char* text = R"(
.version 9.0
.target sm_75
.address_size 64
.visible .entry k(
	.param .u64 k_param_0,
	.param .u8 k_param_1,
	.param .align 8 .b8 k_param_2[24],
	.param .u32 k_param_3
)
{
	ret;
}
)";
  Module module = Module::parse(text, "struct.ptx");
  const Kernel* k = module.find_kernel("k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->params[1].offset, 8u);
  EXPECT_EQ(k->params[2].offset, 16u);
  EXPECT_EQ(k->params[2].alignment, 8u);
  EXPECT_EQ(k->params[3].offset, 40u);
  EXPECT_EQ(k->param_bytes, 44u);
  const uint64_t pointer = 0x1234;
  const uint8_t byte = 7;
  struct Payload {
    double d;
    char c;
    int values[3];
  } payload{1.5, 'x', {1, 2, 3}};
  const uint32_t last = 99;
  std::vector<uint8_t> params = pack_params(*k, pointer, byte, payload, last);
  ASSERT_EQ(params.size(), 44u);
  EXPECT_EQ(params[8], 7);
  EXPECT_EQ(std::memcmp(params.data() + 16, &payload, sizeof payload), 0);
  EXPECT_EQ(params[40], 99);
}

struct MalformedCase {
  const char* name;
  std::string body;  // appended after a valid header (3 lines) unless it starts with '!'
  int line;
  int column;
  const char* message;
};

std::string header() { return ".version 9.0\n.target sm_75\n.address_size 64\n"; }
std::string kernel(const std::string& body) {
  return ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\n.reg .pred %p<2>;\n" + body + "\n}\n";
}

class PtxParserErrors : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(PtxParserErrors, ReportFileLineColumnAndMessage) {
  const MalformedCase& c = GetParam();
  const std::string text = c.body.rfind("!", 0) == 0 ? c.body.substr(1) : header() + c.body;
  try {
    Module::parse(text, "bad.ptx");
    FAIL() << "parsed without error: " << c.name;
  } catch (const ParseError& error) {
    EXPECT_EQ(error.file(), "bad.ptx");
    EXPECT_EQ(error.line(), c.line) << error.what();
    EXPECT_EQ(error.column(), c.column) << error.what();
    EXPECT_THAT(error.message(), HasSubstr(c.message)) << error.what();
    EXPECT_EQ(std::string(error.what()), "bad.ptx:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": " + error.message());
  }
}

// Kernel bodies start on line 8 (3 header lines, .entry, '{', .reg, .reg).
INSTANTIATE_TEST_SUITE_P(
    Malformed, PtxParserErrors,
    ::testing::Values(
        MalformedCase{"missing_version", "!.target sm_75\n", 1, 1, "expected .version before .target"},
        MalformedCase{"bad_version", "!.version 11.0\n", 1, 10, "unsupported PTX ISA version"},
        MalformedCase{"address_size_32", "!.version 9.0\n.target sm_75\n.address_size 32\n", 3, 15, "only .address_size 64"},
        MalformedCase{"unknown_module_directive", ".frobnicate 3;\n", 4, 1, "unknown or unsupported directive .frobnicate"},
        MalformedCase{"unterminated_block", ".visible .entry k()\n{\n  ret;\n", 5, 1, "unterminated block"},
        MalformedCase{"unknown_instruction", kernel("  frobnicate.u32 %r1, %r2;"), 8, 3, "unsupported instruction 'frobnicate.u32'"},
        MalformedCase{"unknown_modifier", kernel("  add.bogus.s32 %r1, %r2, %r3;"), 8, 3, "unsupported modifier .bogus"},
        MalformedCase{"undeclared_register", kernel("  add.s32 %r1, %r9, 1;"), 8, 16, "unknown identifier '%r9'"},
        MalformedCase{"operand_count", kernel("  add.s32 %r1, %r2;"), 8, 3, "expects 3 operands, got 2"},
        MalformedCase{"unknown_label", kernel("  bra $L_nowhere;"), 8, 7, "unknown label '$L_nowhere'"},
        MalformedCase{"duplicate_label", kernel("$L1:\n  ret;\n$L1:\n  ret;"), 10, 1, "duplicate label '$L1'"},
        MalformedCase{"unterminated_string", ".file 1 \"foo.cu\n", 4, 9, "unterminated string"},
        MalformedCase{"short_float_literal", kernel("  mov.b32 %r1, 0f3F80;"), 8, 16, "expected 8 hex digits"},
        MalformedCase{"integer_out_of_range", kernel("  mov.u32 %r1, 99999999999999999999999;"), 8, 16, "out of range"},
        MalformedCase{"stray_character", kernel("  mov.u32 %r1, #5;"), 8, 16, "unexpected character '#'"},
        MalformedCase{"guard_not_predicate", kernel("  @%r1 ret;"), 8, 4, "is not a predicate register"},
        MalformedCase{"immediate_destination", kernel("  mov.u32 5, %r1;"), 8, 11, "destination must be a register"},
        MalformedCase{"missing_semicolon", kernel("  mov.u32 %r1, %r2\n  ret;"), 9, 3, "expected ';'"},
        MalformedCase{"register_range_too_large", ".visible .entry k()\n{\n.reg .b32 %r<99999999>;\n}\n", 6, 14, "register range too large"},
        MalformedCase{"unterminated_comment", "/* never closed\n", 4, 1, "unterminated /* comment"},
        MalformedCase{"unsupported_extern_call",
                      ".extern .func (.param .b64 r) calloc (.param .b64 s);\n" + kernel("{ .param .b64 a; .param .b64 r;\n  call.uni (r), calloc, (a);\n}"), 10, 17,
                      "external function 'calloc'"},
        MalformedCase{"nesting_too_deep", ".visible .entry k()\n" + std::string(100, '{') + std::string(100, '}'), 5, 66, "nested too deeply"},
        MalformedCase{"register_redeclared", ".visible .entry k()\n{\n.reg .b32 %r1;\n.reg .b32 %r1;\n}\n", 7, 11, "redeclaration of register '%r1'"},
        MalformedCase{"predicate_as_value", kernel("  add.s32 %r1, %p1, 1;"), 8, 16, "predicate used where a value is expected"},
        // Found by the fuzzer: these decoders indexed operands before counting them.
        MalformedCase{"setp_without_operands", kernel("  setp.eq.s32;"), 8, 3, "expects 3 to 5 operands, got 0"},
        MalformedCase{"shfl_without_operands", kernel("  shfl.sync.idx.b32;"), 8, 3, "expects 5 to 6 operands, got 0"},
        MalformedCase{"match_without_operands", kernel("  match.any.sync.b32;"), 8, 3, "expects 3 to 4 operands, got 0"},
        MalformedCase{"setp_without_compare", kernel("  setp.s32 %p1, %r1, %r2;"), 8, 3, "setp needs a comparison"},
        MalformedCase{"vector_width_mismatch", kernel("  ld.global.v4.u32 {%r1, %r2}, [p];"), 8, 20, "expected a vector of 4 elements"},
        MalformedCase{"unknown_target", "!.version 9.0\n.target pdp11\n", 2, 9, "unknown target"},
        // A vtable slot holds a 64-bit function address; a narrower slot cannot.
        MalformedCase{"function_address_in_32_bit_slot", ".func f()\n{\n  ret;\n}\n.global .u32 table[1] = {f};\n", 8, 26,
                      "function address initializer needs a 64-bit element"}),
    [](const ::testing::TestParamInfo<MalformedCase>& param_info) { return std::string(param_info.param.name); });

TEST(PtxParser, UnsupportedInstructionsAreLoadTimeErrorsNamingThem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%r0}, {%r1}, {%r2}, {%r3};", "mma.sync"},
      {"  cp.async.bulk.shared::cluster.global [%r0], [p], 16, [%r1];", "cp.async.bulk"},
      {"  wmma.load.a.sync.aligned.row.m8n8k32.s4 {%r0}, [p];", "wmma.load"},
      {"  brx.idx %r0, $T;", "brx.idx"},
      {"  min.NaN.f32 %r0, %r1, %r2;", ".NaN"},
      {"  ld.global.v4.b128 {%r0, %r1, %r2, %r3}, [p];", "128-bit access"},
      {"  alloca.u64 %r0, 16;", "alloca.u64"},
  };
  for (const auto& [body, name] : cases) {
    try {
      Module module = Module::parse(header() + kernel(body), "unsupported.ptx");
      ADD_FAILURE() << "accepted: " << body;
    } catch (const ParseError& error) {
      EXPECT_EQ(error.line(), 8) << error.what();
      EXPECT_THAT(error.message(), HasSubstr(name)) << error.what();
      EXPECT_THAT(error.message(), ::testing::AnyOf(HasSubstr("unsupported"), HasSubstr("unknown")));
    }
  }
}

// Truncations and byte mutations of a real module: the parser must either accept or throw
// ParseError, never crash, hang or throw anything else (the libFuzzer target goes further).
TEST(PtxParser, MutatedModulesNeverCrash) {
  const std::string original = generated_ptx("basic");
  std::mt19937 rng(1234);
  int errors = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::string text = original;
    if (iteration % 4 == 0) {
      text.resize(rng() % text.size());
    } else {
      const int mutations = 1 + static_cast<int>(rng() % 8);
      for (int m = 0; m < mutations; ++m) {
        const size_t at = rng() % text.size();
        static constexpr char kAlphabet[] = "{}[]();,.%$@!|<>+-0123456789abcxyz_ \n\"/*";
        switch (rng() % 3) {
          case 0: text[at] = kAlphabet[rng() % (sizeof kAlphabet - 1)]; break;
          case 1: text.erase(at, 1 + rng() % 16); break;
          default: text.insert(at, 1, kAlphabet[rng() % (sizeof kAlphabet - 1)]); break;
        }
      }
    }
    try {
      Module::parse(text, "mutated.ptx");
    } catch (const ParseError& error) {
      ++errors;
      EXPECT_GE(error.line(), 1);
      EXPECT_GE(error.column(), 1);
    }
  }
  EXPECT_GT(errors, 300);  // nearly every mutation breaks something
}

}  // namespace
}  // namespace gpuvp::ptx::testing
