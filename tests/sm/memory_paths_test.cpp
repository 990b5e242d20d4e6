// The SM's memory paths beyond global and shared memory, through its socket: local memory in
// the device's local region (interleaved per warp, cached in L1, real requests); the constant
// cache (kernel parameters in constant bank 0, .const, one access per distinct address);
// 64- and 128-bit shared-memory accesses in half- and quarter-warp phases; the L1/shared
// carve-out per kernel (occupancy within the chosen shared capacity, the L1 taking the rest);
// the instruction cache (fetch stalls until a missing line arrives from L2).
#include <gtest/gtest.h>

#include <sstream>

#include "models/gpu/cta_scheduler/cta_scheduler.h"
#include "models/gpu/device_regions.h"
#include "models/gpu/sm/sm_cluster.h"
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
  SmBench b({"gpu.sm.const_cache.size=64 KiB"});  // the constant cache is off (perfect) by default
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
  SmBench b({"gpu.sm.const_cache.size=64 KiB"});  // the constant cache is off (perfect) by default
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
  SmBench b({"gpu.sm.icache.size=0 B"});  // latencies only: a perfect instruction cache
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

TEST(SmMemoryPaths, CarveOutChoosesASupportedSharedCapacity) {
  const SmParams p = testing::load_sm_params();  // V100: 128 KiB unified, carve-outs 0..96 KiB
  EXPECT_EQ(p.shared_capacity(-1, 0), 96u * 1024);        // no preference: the default split
  EXPECT_EQ(p.shared_capacity(0, 0), 0u);                 // prefer L1: no shared memory
  EXPECT_EQ(p.shared_capacity(0, 20 * 1024), 32u * 1024);  // ... but one CTA must fit
  EXPECT_EQ(p.shared_capacity(25, 0), 32u * 1024);        // 24 KiB rounds up to 32
  EXPECT_EQ(p.shared_capacity(50, 0), 64u * 1024);
  EXPECT_EQ(p.shared_capacity(100, 0), 96u * 1024);
  EXPECT_EQ(p.l1_capacity(0), 128u * 1024);
  EXPECT_EQ(p.l1_capacity(32 * 1024), 96u * 1024);
  EXPECT_EQ(p.l1_capacity(96 * 1024), 32u * 1024);
  const CtaFootprint cta{64, 32, 20 * 1024};
  EXPECT_EQ(occupancy(p, cta).ctas_per_sm, 4u);
  EXPECT_EQ(occupancy(p, cta, p.shared_capacity(25, cta.shared_bytes)).ctas_per_sm, 1u);
  EXPECT_EQ(occupancy(p, cta, p.shared_capacity(25, cta.shared_bytes)).limit, OccupancyLimit::kSharedMemory);
  // Separate L1 and shared memory (P100-like): no carve-out.
  const SmParams separate = testing::load_sm_params({"gpu.sm.unified_l1_shared=0 B"});
  EXPECT_EQ(separate.shared_capacity(0, 0), separate.shared_memory_bytes);
  EXPECT_EQ(separate.l1_capacity(0), separate.l1_bytes);
}

// One GpuCore SM behind a fixed-latency port: runs `kernel` with `config` and returns the
// statistics JSON and the SM's counters.
struct CoreRun {
  uint64_t cycles = 0, l1_hits = 0, reconfigurations = 0;
};
CoreRun run_on_core(const std::string& ptx, const char* kernel, const ptx::LaunchConfig& config,
                    const std::function<std::vector<uint8_t>(ptx::DeviceMemory&, const ptx::Kernel&)>& params) {
  testing::GpuCoreBench b({"gpu.sm.count=1", "gpu.sm.cluster_size=1", "gpu.sm.icache.size=0 B"}, 100);
  const ptx::Kernel& k = b.load(ptx, kernel);
  ptx::KernelRun run(b.memory, {}, *b.module, k, config, params(b.memory, k));
  b.run(run);
  CoreRun r;
  r.cycles = b.core.last_cycle();
  const auto* g = b.stats.find_group("gpu.sm[0]");
  r.l1_hits = g->find_counter("l1_sector_hits")->value();
  r.reconfigurations = g->find_counter("l1_reconfigurations")->value();
  return r;
}

// Every thread reads 64 KiB (512 lines) twice, one line per load: the second pass hits only in
// an L1 of more than 64 KiB.
const char* kTwice = R"(
.visible .entry twice(.param .u64 x, .param .u64 out) {
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd7, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  mov.f32 %f1, 0f00000000;
  mov.u32 %r2, 0;
LOOP:
  and.b32 %r3, %r2, 511;
  mul.wide.u32 %rd4, %r3, 128;
  add.u64 %rd5, %rd3, %rd4;
  ld.global.f32 %f2, [%rd5];
  add.f32 %f1, %f1, %f2;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, 1024;
  @%p1 bra LOOP;
  add.u64 %rd6, %rd7, %rd2;
  st.global.f32 [%rd6], %f1;
  ret;
}
)";

TEST(SmMemoryPaths, CarveOutSizesTheL1) {
  auto run = [](int32_t carveout) {
    ptx::LaunchConfig config{ptx::Dim3{1}, ptx::Dim3{32}, 0};
    config.shared_carveout_percent = carveout;
    return run_on_core(testing::ptx_header() + kTwice, "twice", config, [](ptx::DeviceMemory& m, const ptx::Kernel& k) {
      const uint64_t x = m.allocate(64 * 1024), out = m.allocate(128);
      return ptx::pack_params(k, x, out);
    });
  };
  const CoreRun by_default = run(-1), max_l1 = run(0), max_shared = run(100);
  EXPECT_EQ(by_default.l1_hits, 0u);           // 32 KiB of L1: the stream evicts itself
  EXPECT_EQ(by_default.reconfigurations, 0u);
  EXPECT_EQ(max_shared.l1_hits, 0u);           // 96 KiB shared: the same split as the default
  EXPECT_EQ(max_shared.reconfigurations, 0u);
  EXPECT_EQ(max_l1.l1_hits, 512u * 4);         // 128 KiB of L1: the second pass hits every sector
  EXPECT_EQ(max_l1.reconfigurations, 1u);
  EXPECT_LT(max_l1.cycles, by_default.cycles);
}

// 20 KiB of dynamic shared memory per CTA, a few hundred cycles of work each.
const char* kShared20 = R"(
.extern .shared .align 4 .b8 dyn[];
.visible .entry sh20(.param .u64 out) {
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, dyn;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  ld.shared.u32 %r5, [%r4];
  ld.shared.u32 %r5, [%r4];
  ld.shared.u32 %r5, [%r4];
  ld.shared.u32 %r5, [%r4];
  ld.shared.u32 %r5, [%r4];
  ld.shared.u32 %r5, [%r4];
  ld.shared.u32 %r5, [%r4];
  ld.shared.u32 %r5, [%r4];
  st.global.u32 [%rd1], %r5;
  ret;
}
)";

TEST(SmMemoryPaths, CarveOutLimitsResidentCtas) {
  auto run = [](int32_t carveout) {
    ptx::LaunchConfig config{ptx::Dim3{8}, ptx::Dim3{32}, 20 * 1024};
    config.shared_carveout_percent = carveout;
    return run_on_core(testing::ptx_header() + kShared20, "sh20", config,
                       [](ptx::DeviceMemory& m, const ptx::Kernel& k) { return ptx::pack_params(k, m.allocate(128)); });
  };
  const CoreRun four = run(-1), one = run(25);  // 96 KiB: 4 CTAs at a time; 32 KiB: 1
  EXPECT_EQ(one.reconfigurations, 1u);
  // 8 CTAs in 2 waves against 8 waves of about the same length each.
  EXPECT_GT(one.cycles, 3 * four.cycles);
}

// `n` independent moves (no memory access besides the parameter and the final store).
std::string straight_kernel(int n) {
  std::ostringstream s;
  s << ptx_header() << ".visible .entry straight(.param .u64 out) {\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<2>;\n";
  for (int i = 0; i < n; ++i) s << "  mov.u32 %r1, " << i << ";\n";
  s << "  ld.param.u64 %rd1, [out];\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
  return s.str();
}

struct FetchRun {
  uint64_t cycles = 0, misses = 0, requests = 0, stall = 0;
  std::vector<uint64_t> fetched;  // line addresses, in request order
};
FetchRun run_fetch(int n, const std::vector<std::string>& overrides) {
  SmBench b(overrides, 100);
  b.load(straight_kernel(n));
  const uint64_t out = b.memory.allocate(64);
  FetchRun r;
  r.cycles = b.run("straight", {ptx::Dim3{1}, ptx::Dim3{32}, 0}, ptx::pack_params(b.module->kernel("straight"), out));
  EXPECT_EQ(b.memory.load<uint32_t>(out), static_cast<uint32_t>(n - 1));
  r.misses = b.counter("icache_misses");
  r.requests = b.counter("icache_requests");
  r.stall = b.counter("stall_fetch");
  for (const auto& t : b.target->transactions()) {
    if (t.has_extension && t.extension.kind == AccessKind::InstructionFetch) r.fetched.push_back(t.address);
  }
  return r;
}

TEST(SmMemoryPaths, InstructionCacheMissStallsIssueUntilTheFill) {
  // 4 instructions (moves, parameter, store, ret) in one 128-byte line: one miss.
  const FetchRun perfect = run_fetch(2, {"gpu.sm.icache.size=0 B"});
  const FetchRun cold = run_fetch(2, {"gpu.sm.icache.size=128 KiB", "gpu.sm.icache.prefetch=0"});
  EXPECT_EQ(perfect.requests, 0u);
  EXPECT_EQ(perfect.stall, 0u);
  ASSERT_EQ(cold.fetched.size(), 1u);
  EXPECT_EQ(cold.misses, 1u);
  EXPECT_GE(cold.fetched[0], regions::kCodeBase);
  EXPECT_LT(cold.fetched[0], regions::kCodeBase + regions::kCodeBytes);
  EXPECT_EQ(cold.fetched[0] % regions::kKernelCodeBytes, 0u);  // the kernel's first line
  EXPECT_GT(cold.stall, 0u);
  // The first issue waits for the fill: 100 ns at 1312 MHz is 131.2 cycles.
  EXPECT_GE(cold.cycles - perfect.cycles, 131u);
  EXPECT_LE(cold.cycles - perfect.cycles, 134u);
}

TEST(SmMemoryPaths, InstructionFetchWalksTheKernelsLinesAndPrefetchesTheNext) {
  // 37 instructions: 5 lines of 8 (16-byte instructions, 128-byte lines).
  const FetchRun demand = run_fetch(34, {"gpu.sm.icache.size=128 KiB", "gpu.sm.icache.prefetch=0"});
  ASSERT_EQ(demand.fetched.size(), 5u);
  for (size_t i = 1; i < demand.fetched.size(); ++i) EXPECT_EQ(demand.fetched[i], demand.fetched[0] + 128 * i);
  EXPECT_EQ(demand.misses, 5u);
  const FetchRun ahead = run_fetch(34, {"gpu.sm.icache.size=128 KiB", "gpu.sm.icache.prefetch=1"});
  EXPECT_EQ(ahead.fetched.size(), 6u);  // the 5 lines and one past the end
  EXPECT_LT(ahead.misses, demand.misses);
  EXPECT_LT(ahead.cycles, demand.cycles);
  const FetchRun perfect = run_fetch(34, {"gpu.sm.icache.size=0 B"});
  // Demand fetching: every line costs a fill of about 131 cycles; the kernel parameter's
  // constant miss (131 cycles in both runs) overlaps one of them.
  EXPECT_GE(demand.cycles - perfect.cycles, 4u * 131);
  EXPECT_LE(demand.cycles - perfect.cycles, 5u * 134);
}

}  // namespace
}  // namespace gpuvp::gpu
