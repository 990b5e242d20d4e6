// wmma.mma on the SM timing model: a dependent chain pays the tensor latency per link
// (gpu.sm.tensor_latency), independent ones issue one per M*N*K / gpu.sm.tensor_fma_per_cycle
// cycles on their sub-core's tensor units. Measured with %clock64 around the sequence, closed
// by a wmma.store of the last accumulator (it waits for it), started once the fragments have
// loaded; the values against a CPU product.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

std::string fragment(const char* prefix, int first, int count) {
  std::string text = "{";
  for (int i = 0; i < count; ++i) text += (i ? ", %" : "%") + std::string(prefix) + std::to_string(first + i);
  return text + "}";
}

// Four m16n16k16 f16 x f16 + f32 products: into one accumulator (dependent) or four.
std::string mma_kernel(bool dependent) {
  const std::string a = fragment("r", 0, 8), b = fragment("r", 8, 8);
  std::string text = ".version 8.0\n.target sm_70\n.address_size 64\n"
                     ".visible .entry tmma(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u64 pt) {\n"
                     "  .reg .b32 %r<17>;\n  .reg .f32 %f<33>;\n  .reg .b64 %rd<16>;\n"
                     "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd2, [pb];\n  ld.param.u64 %rd3, [pc];\n"
                     "  ld.param.u64 %rd4, [pd];\n  ld.param.u64 %rd5, [pt];\n"
                     "  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 " + a + ", [%rd1], 16;\n"
                     "  wmma.load.b.sync.aligned.col.m16n16k16.global.f16 " + b + ", [%rd2], 16;\n";
  for (int i = 0; i < 4; ++i) text += "  wmma.load.c.sync.aligned.row.m16n16k16.global.f32 " + fragment("f", 8 * i, 8) + ", [%rd3], 16;\n";
  // The clock starts once the fragments have arrived (these adds wait for every load).
  text += "  add.f32 %f32, %f7, %f15;\n  add.f32 %f32, %f32, %f23;\n  add.f32 %f32, %f32, %f31;\n"
          "  add.u32 %r16, %r7, %r15;\n  mov.u64 %rd6, %clock64;\n";
  for (int i = 0; i < 4; ++i) {
    const std::string acc = fragment("f", dependent ? 0 : 8 * i, 8);
    text += "  wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 " + acc + ", " + a + ", " + b + ", " + acc + ";\n";
  }
  text += "  wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], " + fragment("f", dependent ? 0 : 24, 8) + ", 16;\n"
          "  mov.u64 %rd7, %clock64;\n  sub.s64 %rd8, %rd7, %rd6;\n  st.global.u64 [%rd5], %rd8;\n  ret;\n}\n";
  return text;
}

struct Outcome {
  uint64_t cycles = 0;
  std::vector<float> d;
};

Outcome run_mma(bool dependent, const std::vector<std::string>& overrides = {}) {
  testing::SmBench bench(overrides);
  bench.load(mma_kernel(dependent));
  // A: all ones (f16 0x3c00), B: all twos (0x4000), C: row index.
  const std::vector<uint16_t> a(256, 0x3c00), b(256, 0x4000);
  std::vector<float> c(256);
  for (int i = 0; i < 256; ++i) c[i] = static_cast<float>(i / 16);
  const uint64_t da = bench.memory.allocate(512), db = bench.memory.allocate(512), dc = bench.memory.allocate(1024);
  const uint64_t dd = bench.memory.allocate(1024), dt = bench.memory.allocate(8);
  bench.memory.copy_to_device(da, a.data(), 512);
  bench.memory.copy_to_device(db, b.data(), 512);
  bench.memory.copy_to_device(dc, c.data(), 1024);
  bench.run("tmma", {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(bench.module->kernel("tmma"), da, db, dc, dd, dt));
  Outcome o;
  bench.memory.copy_from_device(&o.cycles, dt, 8);
  o.d.resize(256);
  bench.memory.copy_from_device(o.d.data(), dd, 1024);
  // Each product adds 16 * 1 * 2 = 32 to every element: four in a chain, one per accumulator.
  for (int i = 0; i < 256; ++i) EXPECT_EQ(o.d[i], c[i] + (dependent ? 128.0f : 32.0f)) << i;
  return o;
}

TEST(TensorTiming, DependentProductsPayTheLatencyEach) {
  const Outcome chain = run_mma(true);
  EXPECT_GE(chain.cycles, 4u * 64u);       // gpu.sm.tensor_latency 64 per link
  EXPECT_LT(chain.cycles, 4u * 64u + 40u);  // plus the store's issue and the clock read
  const Outcome faster = run_mma(true, {"gpu.sm.tensor_latency=16"});
  EXPECT_GE(faster.cycles, 4u * 16u);
  EXPECT_LT(faster.cycles, chain.cycles - 3u * 40u);
}

TEST(TensorTiming, IndependentProductsAreLimitedByTheTensorRate) {
  // 4096 multiply-adds at 128 per cycle: one product per 32 cycles; the last one's result 64
  // cycles after it issues.
  const Outcome independent = run_mma(false);
  EXPECT_GE(independent.cycles, 3u * 32u + 64u);
  EXPECT_LT(independent.cycles, 3u * 32u + 64u + 40u);
  const Outcome wide = run_mma(false, {"gpu.sm.tensor_fma_per_cycle=4096"});
  EXPECT_GE(wide.cycles, 64u);
  EXPECT_LT(wide.cycles, 64u + 40u);
}

// mma.sync goes the same way: four m16n8k16 f16 x f16 + f32 products (2048 multiply-adds: 16
// cycles each at the default rate), into one accumulator or four, closed by an add that waits
// for the last results.
std::string mma_sync_kernel(bool dependent) {
  std::string text = ".version 8.0\n.target sm_80\n.address_size 64\n"
                     ".visible .entry tmma_sync(.param .u64 pa, .param .u64 pd, .param .u64 pt) {\n"
                     "  .reg .b32 %r<8>;\n  .reg .f32 %f<20>;\n  .reg .b64 %rd<10>;\n"
                     "  ld.param.u64 %rd1, [pa];\n  ld.param.u64 %rd4, [pd];\n  ld.param.u64 %rd5, [pt];\n"
                     "  ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%rd1];\n  ld.global.v2.u32 {%r4, %r5}, [%rd1+16];\n";
  for (int i = 0; i < 16; ++i) text += "  mov.f32 %f" + std::to_string(i) + ", 0f00000000;\n";
  text += "  add.u32 %r6, %r3, %r5;\n  mov.u64 %rd6, %clock64;\n";
  for (int i = 0; i < 4; ++i) {
    const std::string acc = fragment("f", dependent ? 0 : 4 * i, 4);
    text += "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 " + acc + ", {%r0, %r1, %r2, %r3}, {%r4, %r5}, " + acc + ";\n";
  }
  text += dependent ? "  add.f32 %f16, %f0, 0f00000000;\n"
                    : "  add.f32 %f17, %f0, %f4;\n  add.f32 %f18, %f8, %f12;\n  add.f32 %f16, %f17, %f18;\n";
  text += "  mov.u64 %rd7, %clock64;\n  sub.s64 %rd8, %rd7, %rd6;\n  st.global.u64 [%rd5], %rd8;\n"
          "  mov.u32 %r7, %laneid;\n  mul.wide.u32 %rd9, %r7, 4;\n  add.s64 %rd9, %rd4, %rd9;\n"
          "  st.global.f32 [%rd9], %f16;\n  ret;\n}\n";
  return text;
}

uint64_t run_mma_sync(bool dependent) {
  testing::SmBench bench;
  bench.load(mma_sync_kernel(dependent));
  // A: all ones (f16 pairs 0x3c00), B: all twos (0x4000).
  const std::vector<uint32_t> fragments = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x40004000u, 0x40004000u};
  const uint64_t da = bench.memory.allocate(32), dd = bench.memory.allocate(128), dt = bench.memory.allocate(8);
  bench.memory.copy_to_device(da, fragments.data(), 24);
  bench.run("tmma_sync", {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(bench.module->kernel("tmma_sync"), da, dd, dt));
  uint64_t cycles = 0;
  bench.memory.copy_from_device(&cycles, dt, 8);
  std::vector<float> d(32);
  bench.memory.copy_from_device(d.data(), dd, 128);
  // Each product adds 16 * 1 * 2 = 32: four in a chain, or four accumulators summed.
  for (int i = 0; i < 32; ++i) EXPECT_EQ(d[i], 128.0f) << i;
  return cycles;
}

TEST(TensorTiming, MmaSyncUsesTheTensorUnits) {
  const uint64_t chain = run_mma_sync(true);
  EXPECT_GE(chain, 4u * 64u);
  EXPECT_LT(chain, 4u * 64u + 40u);
  const uint64_t independent = run_mma_sync(false);
  EXPECT_GE(independent, 3u * 16u + 64u);
  EXPECT_LT(independent, 3u * 16u + 64u + 40u);
}

}  // namespace
}  // namespace gpuvp::gpu
