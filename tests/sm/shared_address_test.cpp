// 32-bit .shared addresses wrap at 2^32, on the functional model and on the SM timing model:
// optimised code keeps `&tile[tid] - 64` in a 32-bit register and accesses [r+64] / [r+68], so
// for the first 16 threads of a CTA (tile at shared offset 0) the register holds 0xffffffc0..
// and only the wrapped sum is a shared address. Results against a CPU reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "models/gpu/ptx/executor.h"
#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

// tile[tid] = in[i] (through [&tile[tid] - 64 + 64]); thread 0 also writes tile[ntid] = in[i];
// then v = tile[tid + 1] (through [&tile[tid] - 64 + 68]); then atom.add tile[tid] += v through
// the same wrapped register, whose old value (in[i]) comes back: out[i] = v + 1000 * old.
const char* kSharedWrap = R"(
.shared .align 4 .b8 tile[516];
.visible .entry shared_wrap(.param .u64 in, .param .u64 out) {
  .reg .pred %p<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r5, [%rd4];
  mov.u32 %r6, tile;
  shl.b32 %r7, %r1, 2;
  add.s32 %r8, %r6, %r7;
  add.s32 %r9, %r8, -64;
  st.shared.u32 [%r9+64], %r5;
  setp.eq.u32 %p1, %r1, 0;
  shl.b32 %r10, %r3, 2;
  add.s32 %r11, %r6, %r10;
  @%p1 st.shared.u32 [%r11], %r5;
  bar.sync 0;
  ld.shared.u32 %r12, [%r9+68];
  bar.sync 0;
  atom.shared.add.u32 %r13, [%r9+64], %r12;
  mad.lo.s32 %r14, %r13, 1000, %r12;
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r14;
  ret;
}
)";

constexpr uint32_t kBlock = 128;
constexpr uint32_t kCtas = 3;
constexpr uint32_t kThreads = kBlock * kCtas;

std::vector<uint32_t> inputs() {
  std::vector<uint32_t> in(kThreads);
  for (uint32_t i = 0; i < kThreads; ++i) in[i] = (i * 37 + 11) % 997;
  return in;
}

std::vector<uint32_t> cpu_reference(const std::vector<uint32_t>& in) {
  std::vector<uint32_t> out(kThreads);
  for (uint32_t i = 0; i < kThreads; ++i) {
    const uint32_t cta = i / kBlock, tid = i % kBlock;
    const uint32_t next = in[cta * kBlock + (tid + 1) % kBlock];
    out[i] = next + 1000 * in[i];
  }
  return out;
}

TEST(SharedAddress, ThirtyTwoBitAddressesWrapOnTheFunctionalModel) {
  ptx::DeviceMemory memory;
  ptx::LoadedModule module(ptx::Module::parse(testing::ptx_header() + kSharedWrap, "wrap.ptx"), memory);
  const std::vector<uint32_t> in = inputs();
  const uint64_t d_in = memory.allocate(kThreads * 4), d_out = memory.allocate(kThreads * 4);
  memory.copy_to_device(d_in, in.data(), kThreads * 4);
  ptx::Executor executor(memory, {});
  const ptx::Kernel& k = module.kernel("shared_wrap");
  const ptx::LaunchResult r =
      executor.launch(module, k, {ptx::Dim3{kCtas}, ptx::Dim3{kBlock}, 0}, ptx::pack_params(k, d_in, d_out));
  ASSERT_TRUE(r.ok()) << r.message;
  std::vector<uint32_t> out(kThreads);
  memory.copy_from_device(out.data(), d_out, kThreads * 4);
  EXPECT_EQ(out, cpu_reference(in));
}

TEST(SharedAddress, ThirtyTwoBitAddressesWrapOnTheTimingModel) {
  testing::SmBench bench;
  bench.load(testing::ptx_header() + kSharedWrap);
  const std::vector<uint32_t> in = inputs();
  const uint64_t d_in = bench.memory.allocate(kThreads * 4), d_out = bench.memory.allocate(kThreads * 4);
  bench.memory.copy_to_device(d_in, in.data(), kThreads * 4);
  const uint64_t cycles = bench.run("shared_wrap", {ptx::Dim3{kCtas}, ptx::Dim3{kBlock}, 0},
                                    ptx::pack_params(bench.module->kernel("shared_wrap"), d_in, d_out));
  EXPECT_GT(cycles, 0u);
  std::vector<uint32_t> out(kThreads);
  bench.memory.copy_from_device(out.data(), d_out, kThreads * 4);
  EXPECT_EQ(out, cpu_reference(in));
  // Consecutive words in consecutive banks: the wrapped addresses are the real ones.
  EXPECT_EQ(bench.counter("shared_bank_conflicts"), 0u);
}

}  // namespace
}  // namespace gpuvp::gpu
