// The decode-time block scheduler (models/gpu/ptx/block_scheduler.h): independent loads are
// hoisted above the uses of earlier loads, and nothing crosses what must keep its place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/gpu/ptx/ir.h"
#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

using ir::Opcode;

// The opcodes (with the state space of memory operations) of the only kernel of `body`.
std::vector<std::string> schedule(const std::string& body) {
  const std::string text = ".version 9.0\n.target sm_75\n.address_size 64\n"
                           ".visible .entry k(.param .u64 p) {\n"
                           ".reg .b32 %r<16>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n"
                           ".shared .align 4 .b8 s[256];\n" +
                           body + "}\n";
  const ir::Program program = ir::parse_program(text, "schedule.ptx");
  std::vector<std::string> order;
  for (const ir::Instruction& inst : program.functions.at(0).body) {
    std::string name;
    switch (inst.opcode) {
      case Opcode::kLd: name = "ld"; break;
      case Opcode::kSt: name = "st"; break;
      case Opcode::kAdd: name = "add"; break;
      case Opcode::kBarSync: name = "bar"; break;
      case Opcode::kRet: name = "ret"; break;
      case Opcode::kBra: name = "bra"; break;
      default: name = "other"; break;
    }
    if (inst.opcode == Opcode::kLd || inst.opcode == Opcode::kSt) {
      name += inst.space == ir::Space::kShared ? ".shared" : inst.space == ir::Space::kGlobal ? ".global" : ".other";
      if (inst.ordered) name += ".ordered";
    }
    order.push_back(name + " " + std::to_string(inst.line));
  }
  return order;
}

TEST(BlockScheduler, IndependentGlobalLoadsAreHoistedAboveTheSharedStoresOfEarlierOnes) {
  // nvcc's shape: each global load is stored to shared memory at once.
  const auto order = schedule(
      "ld.param.u64 %rd1, [p];\n"                    // line 10
      "ld.global.f32 %f1, [%rd1];\n"                 // 11
      "st.shared.f32 [s], %f1;\n"                    // 12
      "ld.global.f32 %f2, [%rd1+4];\n"               // 13
      "st.shared.f32 [s+4], %f2;\n"                  // 14
      "ld.global.f32 %f3, [%rd1+8];\n"               // 15
      "st.shared.f32 [s+8], %f3;\n"                  // 16
      "ret;\n");
  const std::vector<std::string> expected = {"ld.other 10",   "ld.global 11",  "ld.global 13",  "ld.global 15",
                                             "st.shared 12",  "st.shared 14",  "st.shared 16",  "ret 17"};
  EXPECT_EQ(order, expected);
}

TEST(BlockScheduler, StoresKeepTheirOrderWithAccessesOfTheSameSpace) {
  // A global store orders every later global access (addresses are not compared); a shared
  // access passes it.
  const auto order = schedule(
      "ld.param.u64 %rd1, [p];\n"          // 10
      "st.global.f32 [%rd1], %f9;\n"       // 11
      "ld.global.f32 %f1, [%rd1+64];\n"    // 12
      "ld.shared.f32 %f2, [s];\n"          // 13
      "add.f32 %f3, %f1, %f2;\n"           // 14
      "st.global.f32 [%rd1+4], %f3;\n"     // 15
      "ret;\n");
  const std::vector<std::string> expected = {"ld.other 10", "st.global 11", "ld.global 12", "ld.shared 13",
                                             "add 14",      "st.global 15", "ret 16"};
  EXPECT_EQ(order, expected);
}

TEST(BlockScheduler, NothingCrossesBarriersOrderedAccessesOrLabels) {
  // Each global load below would be hoisted above the shared store before it if the barrier,
  // the volatile load or the label did not stand between them.
  const auto order = schedule(
      "ld.param.u64 %rd1, [p];\n"                 // 10
      "ld.shared.f32 %f1, [s];\n"                 // 11
      "st.shared.f32 [s+4], %f1;\n"               // 12
      "bar.sync 0;\n"                             // 13
      "ld.global.f32 %f2, [%rd1];\n"              // 14
      "st.shared.f32 [s+8], %f2;\n"               // 15
      "ld.volatile.global.f32 %f3, [%rd1+4];\n"   // 16
      "ld.global.f32 %f4, [%rd1+8];\n"            // 17
      "st.shared.f32 [s+12], %f4;\n"              // 18
      "LOOP:\n"                                   // 19
      "ld.global.f32 %f5, [%rd1+12];\n"           // 20
      "@%p1 bra LOOP;\n"                          // 21
      "ret;\n");
  const std::vector<std::string> expected = {
      "ld.shared 11", "ld.other 10",  "st.shared 12", "bar 13",       "ld.global 14", "st.shared 15",
      "ld.global.ordered 16", "ld.global 17", "st.shared 18", "ld.global 20", "bra 21", "ret 22"};
  EXPECT_EQ(order, expected);
}

TEST(BlockScheduler, RegisterDependencesHoldAcrossTheReordering) {
  // %r1 is read (WAR) before it is overwritten; the overwrite's reader must see the new value.
  const auto order = schedule(
      "ld.param.u64 %rd1, [p];\n"           // 10
      "add.s32 %r2, %r1, 1;\n"              // 11 reads the old %r1
      "ld.global.u32 %r1, [%rd1];\n"        // 12 overwrites %r1: stays after 11
      "add.s32 %r3, %r1, %r2;\n"            // 13 reads the loaded %r1
      "st.global.u32 [%rd1+4], %r3;\n"      // 14
      "ret;\n");
  const std::vector<std::string> expected = {"ld.other 10", "add 11", "ld.global 12", "add 13", "st.global 14", "ret 15"};
  EXPECT_EQ(order, expected);
}

}  // namespace
}  // namespace gpuvp::ptx::testing
