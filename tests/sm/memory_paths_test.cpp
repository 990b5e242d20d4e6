// The SM's memory paths beyond global and shared memory, through its socket: local memory in
// the device's local region (interleaved per warp, cached in L1, real requests); the constant
// cache (kernel parameters in constant bank 0, .const, one access per distinct address);
// 64- and 128-bit shared-memory accesses in half- and quarter-warp phases.
#include <gtest/gtest.h>

#include <sstream>

#include "models/gpu/device_regions.h"
#include "tests/sm/bench.h"

namespace gpuvp::gpu {
namespace {

using testing::ptx_header;
using testing::SmBench;

// Each thread stores its tid to words 0 and 1 of a local array, loads word 2 (never written:
// a miss) and word 0 (written: an L1 hit), and stores word0 + word2 + 1 to out[tid].
std::string local_kernel() {
  std::ostringstream s;
  s << ptx_header() << ".visible .entry loc(.param .u64 out) {\n"
    << "  .local .align 4 .b8 buf[16];\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<5>;\n"
    << "  mov.u32 %r1, %tid.x;\n  st.local.u32 [buf], %r1;\n  st.local.u32 [buf+4], %r1;\n"
    << "  ld.local.u32 %r2, [buf+8];\n  ld.local.u32 %r3, [buf];\n  add.u32 %r4, %r2, %r3;\n  add.u32 %r4, %r4, 1;\n"
    << "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %r1, 4;\n  add.u64 %rd3, %rd1, %rd2;\n"
    << "  st.global.u32 [%rd3], %r4;\n  ret;\n}\n";
  return s.str();
}

TEST(SmMemoryPaths, LocalMemoryIsInterleavedPerWarpAndCachedInL1) {
  SmBench b;
  b.load(local_kernel());
  const uint64_t out = b.memory.allocate(4 * 64);
  b.run("loc", {ptx::Dim3{1}, ptx::Dim3{64}, 0}, ptx::pack_params(b.module->kernel("loc"), out));
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(b.memory.load<uint32_t>(out + 4 * t), t + 1) << t;

  // Warp slot w's window: 32 threads x the per-thread bytes of the V100 region layout.
  const uint64_t thread_bytes = regions::local_bytes_per_thread(uint64_t{b.params.count} * b.params.max_threads);
  const uint64_t warp_bytes = 32 * thread_bytes;
  uint32_t local_writes = 0, local_reads = 0;
  for (const auto& t : b.target->transactions()) {
    if (t.address < regions::kLocalBase || t.address >= regions::kLocalEnd) continue;
    ASSERT_TRUE(t.has_extension);
    EXPECT_EQ(t.extension.sector_mask, 0xf);  // 32 lanes x 4 bytes: the whole line
    const uint64_t offset = t.address - regions::kLocalBase;  // SM 0
    const uint64_t warp = offset / warp_bytes, word = offset % warp_bytes / 128;
    EXPECT_LT(warp, 2u);
    if (t.command == tlm::TLM_WRITE_COMMAND) {
      ++local_writes;
      EXPECT_LT(word, 2u);  // words 0 and 1 stored
    } else {
      ++local_reads;
      EXPECT_EQ(word, 2u);  // only the never-written word misses
    }
  }
  EXPECT_EQ(local_writes, 4u);  // 2 warps x 2 words, written through
  EXPECT_EQ(local_reads, 2u);   // 2 warps x word 2
  EXPECT_EQ(b.counter("local_accesses"), 8u);
  EXPECT_EQ(b.counter("local_store_sectors"), 16u);
  EXPECT_EQ(b.counter("local_load_sectors"), 16u);
  EXPECT_EQ(b.counter("l1_sector_hits"), 8u);    // word 0, both warps
  EXPECT_EQ(b.counter("l1_sector_misses"), 8u);  // word 2
}

// One local load of a word the thread wrote before (`written`) or never wrote, then a store of
// the value: a miss waits for the memory behind the SM, a hit for the L1 hit latency. The
// local address depends on the kernel parameter, so the parameter's fill comes first.
std::string local_load_kernel(bool written) {
  std::ostringstream s;
  s << ptx_header() << ".visible .entry ll(.param .u64 out) {\n"
    << "  .local .align 4 .b8 buf[8];\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<6>;\n  ld.param.u64 %rd1, [out];\n"
    << "  and.b64 %rd2, %rd1, 0;\n  mov.u64 %rd3, buf;\n  add.u64 %rd4, %rd3, %rd2;\n"
    << "  mov.u32 %r1, 7;\n  st.local.u32 [%rd4" << (written ? "" : "+4") << "], %r1;\n"
    << "  ld.local.u32 %r2, [%rd4];\n  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";
  return s.str();
}

TEST(SmMemoryPaths, LocalLoadMissCostsTheMemoryRoundTrip) {
  auto run = [](bool written) {
    SmBench b({}, 200);
    b.load(local_load_kernel(written));
    const uint64_t out = b.memory.allocate(64);
    const uint64_t cycles = b.run("ll", {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(b.module->kernel("ll"), out));
    EXPECT_EQ(b.memory.load<uint32_t>(out), written ? 7u : 0u);
    return cycles;
  };
  const uint64_t hit = run(true), miss = run(false);
  // 200 ns at the V100 core clock (1312 MHz) is 262 cycles; the hit costs the L1 hit latency.
  EXPECT_GE(miss - hit, 262u - testing::load_sm_params().l1_hit_latency);
  EXPECT_LE(miss - hit, 262u + 8);
}

// Every lane loads table[lane] (warming both 64-byte constant lines of the 128-byte table),
// then, dependent on it, table[tid & (k - 1)]: k distinct addresses, all hits. The table's
// address is a parameter, so both parameter loads come first.
std::string const_kernel(uint32_t k) {
  std::ostringstream s;
  s << ptx_header() << ".const .align 4 .u32 table[32];\n"
    << ".visible .entry cst(.param .u64 out, .param .u64 tab) {\n  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n"
    << "  ld.param.u64 %rd6, [out];\n  ld.param.u64 %rd1, [tab];\n"
    << "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd2, %r1, 4;\n  add.u64 %rd3, %rd1, %rd2;\n"
    << "  ld.const.u32 %r2, [%rd3];\n  and.b32 %r3, %r2, 0;\n  and.b32 %r4, %r1, " << (k - 1) << ";\n"
    << "  add.u32 %r4, %r4, %r3;\n  mul.wide.u32 %rd4, %r4, 4;\n  add.u64 %rd5, %rd1, %rd4;\n"
    << "  ld.const.u32 %r5, [%rd5];\n  add.u64 %rd7, %rd6, %rd2;\n"
    << "  st.global.u32 [%rd7], %r5;\n  ret;\n}\n";
  return s.str();
}

struct ConstRun {
  uint64_t cycles = 0, accesses = 0, hits = 0, misses = 0, requests = 0;
};

ConstRun run_const(uint32_t k) {
  SmBench b;
  b.load(const_kernel(k));
  std::vector<uint32_t> table(32);
  for (uint32_t i = 0; i < 32; ++i) table[i] = 100 + i;
  const auto symbol = b.module->symbol("table");
  EXPECT_TRUE(symbol.has_value());
  if (!symbol) return {};
  b.memory.copy_to_device(symbol->address, table.data(), 4 * 32);
  const uint64_t out = b.memory.allocate(4 * 32);
  ConstRun r;
  r.cycles = b.run("cst", {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(b.module->kernel("cst"), out, symbol->address));
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(b.memory.load<uint32_t>(out + 4 * t), 100 + (t & (k - 1)));
  r.accesses = b.counter("const_accesses");
  r.hits = b.counter("const_hits");
  r.misses = b.counter("const_misses");
  r.requests = b.counter("const_requests");
  return r;
}

TEST(SmMemoryPaths, DivergentConstantAddressesSerialize) {
  const ConstRun one = run_const(1), two = run_const(2), eight = run_const(8), all = run_const(32);
  // 32 warm-up addresses, k timed ones, two kernel parameters.
  EXPECT_EQ(one.accesses, 32u + 1 + 2);
  EXPECT_EQ(eight.accesses, 32u + 8 + 2);
  EXPECT_EQ(all.accesses, 32u + 32 + 2);
  EXPECT_EQ(all.hits - one.hits, 31u);  // the timed load: every address hits
  EXPECT_EQ(all.misses, one.misses);
  EXPECT_GE(all.misses, 32u + 1);         // the warm-up and the first parameter
  EXPECT_EQ(all.hits + all.misses, all.accesses);
  // Fills: the table's two constant lines and constant bank 0's first line (both parameters).
  EXPECT_EQ(all.requests, 3u);
  // One more cycle per extra distinct address.
  EXPECT_EQ(two.cycles - one.cycles, 1u);
  EXPECT_EQ(eight.cycles - one.cycles, 7u);
  EXPECT_EQ(all.cycles - one.cycles, 31u);
}

// Kernel parameters are read from constant bank 0 of the launch (a device address in the
// reserved region): the first warp misses, later warps hit.
TEST(SmMemoryPaths, KernelParametersComeFromConstantBankZero) {
  SmBench b;
  b.load(local_kernel());
  const uint64_t out = b.memory.allocate(4 * 128);
  b.run("loc", {ptx::Dim3{1}, ptx::Dim3{128}, 0}, ptx::pack_params(b.module->kernel("loc"), out));
  uint32_t fills = 0;
  for (const auto& t : b.target->transactions()) {
    if (!t.has_extension || t.extension.kind != AccessKind::ConstantLoad) continue;
    ++fills;
    // Kernel id 1 (SmBench): the bank's second slot; the parameter at offset 0.
    EXPECT_EQ(t.address, regions::kConstBank0Base + regions::kConstBank0SlotBytes);
    EXPECT_EQ(t.command, tlm::TLM_READ_COMMAND);
    EXPECT_EQ(t.extension.sector_mask, 0x3);  // a 64-byte constant line: two sectors
  }
  EXPECT_EQ(fills, 1u);
  EXPECT_EQ(b.counter("const_accesses"), 4u);  // one per warp (all lanes read the same address)
  EXPECT_EQ(b.counter("const_misses") + b.counter("const_hits"), 4u);
  EXPECT_EQ(b.counter("const_requests"), 1u);
}

// Each thread loads `bytes` (4, 8 = v2.u32, 16 = v4.u32) from shared[(tid % modulo) * stride]
// k times (write-after-write on the destination serialises them).
std::string shared_width_kernel(uint32_t bytes, uint32_t stride, uint32_t modulo, int k) {
  std::ostringstream s;
  const char* dst = bytes == 4 ? "%r2" : bytes == 8 ? "{%r2, %r5}" : "{%r2, %r5, %r6, %r7}";
  const char* type = bytes == 4 ? "u32" : bytes == 8 ? "v2.u32" : "v4.u32";
  s << ptx_header() << ".shared .align 16 .b8 smem[8192];\n"
    << ".visible .entry shw(.param .u64 out) {\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<2>;\n"
    << "  ld.param.u64 %rd1, [out];\n  mov.u32 %r1, %tid.x;\n  rem.u32 %r1, %r1, " << modulo << ";\n"
    << "  mul.lo.u32 %r1, %r1, " << stride << ";\n  mov.u32 %r3, smem;\n  add.u32 %r4, %r3, %r1;\n";
  for (int i = 0; i < k; ++i) s << "  ld.shared." << type << " " << dst << ", [%r4];\n";
  s << "  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";
  return s.str();
}

struct WidthRun {
  uint64_t cycles = 0, conflicts = 0, phases = 0;
};
WidthRun run_width(uint32_t bytes, uint32_t stride, uint32_t modulo, int k) {
  SmBench b;
  b.load(shared_width_kernel(bytes, stride, modulo, k));
  const uint64_t out = b.memory.allocate(64);
  WidthRun r;
  r.cycles = b.run("shw", {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(b.module->kernel("shw"), out));
  r.conflicts = b.counter("shared_bank_conflicts");
  r.phases = b.counter("shared_phases");
  return r;
}

// Cycles of one access: the latency difference of 15 and 5 chained accesses, over 10.
uint64_t access_cycles(uint32_t bytes, uint32_t stride, uint32_t modulo, WidthRun* longer = nullptr) {
  const WidthRun a = run_width(bytes, stride, modulo, 5), b = run_width(bytes, stride, modulo, 15);
  if (longer) *longer = b;
  return (b.cycles - a.cycles) / 10 - testing::load_sm_params().shared_latency + 1;
}

TEST(SmMemoryPaths, WideSharedAccessesTakeOnePhasePerHalfOrQuarterWarp) {
  WidthRun r;
  EXPECT_EQ(access_cycles(4, 4, 32, &r), 1u);  // 32 lanes x 4 bytes: one phase
  EXPECT_EQ(r.phases, 15u);
  EXPECT_EQ(r.conflicts, 0u);
  EXPECT_EQ(access_cycles(8, 8, 32, &r), 2u);  // 64-bit, contiguous: two conflict-free half-warp phases
  EXPECT_EQ(r.phases, 30u);
  EXPECT_EQ(r.conflicts, 0u);
  EXPECT_EQ(access_cycles(16, 16, 32, &r), 4u);  // 128-bit, contiguous: four quarter-warp phases
  EXPECT_EQ(r.phases, 60u);
  EXPECT_EQ(r.conflicts, 0u);
  // The upper half-warp repeats the lower one's addresses: 32 distinct words, but still two phases.
  EXPECT_EQ(access_cycles(8, 8, 16, &r), 2u);
  EXPECT_EQ(r.conflicts, 0u);
  // 64-bit at a 16-byte stride: in each half-warp, lanes l and l + 8 share banks (2-way).
  EXPECT_EQ(access_cycles(8, 16, 32, &r), 4u);
  EXPECT_EQ(r.conflicts, 15u * 2);
}

}  // namespace
}  // namespace gpuvp::gpu
