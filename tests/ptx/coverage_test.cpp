// Instructions outside the usual nvcc output (intrinsics and inline PTX), each against a CPU
// computation: nanosleep, mad24/mul24.hi, ldu, fence, ld.global.nc, bar.arrive, special
// registers, setp.nan/num.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

TEST(PtxCoverage, NanosleepCompletesAndTheWarpCarriesOn) {
  Harness h("coverage");
  const uint64_t out = h.upload(std::vector<int>(64, 0));
  LaunchResult r = h.launch("sleep_then_write", Dim3(1), Dim3(64), 0, out);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto values = h.download<int>(out, 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(values[i], i + 1);
}

// mad24.lo / mul24.hi take the low 24 bits of each operand, sign-extended, and keep the low /
// high 32 bits of the 48-bit product.
int64_t product24(int32_t a, int32_t b) {
  const int64_t a24 = static_cast<int32_t>(static_cast<uint32_t>(a) << 8) >> 8;
  const int64_t b24 = static_cast<int32_t>(static_cast<uint32_t>(b) << 8) >> 8;
  return a24 * b24;
}

TEST(PtxCoverage, Mad24AndMul24HiMatchTheCpu) {
  Harness h("coverage");
  const std::vector<int> a = {3, -7, 0x7fffff, -0x800000, 0x12345678, 123456, -1, 0x00ffffff};
  const std::vector<int> b = {5, 9, 0x7fffff, 0x7fffff, 0x0fedcba9, -654321, -1, 2};
  const std::vector<int> c = {1, -2, 3, -4, 5, 6, 7, 8};
  const int n = static_cast<int>(a.size());
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(c);
  const uint64_t lo = h.upload(std::vector<int>(n)), hi = h.upload(std::vector<int>(n));
  LaunchResult r = h.launch("mad24_and_mul24", Dim3(1), Dim3(32), 0, da, db, dc, lo, hi, n);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto got_lo = h.download<int>(lo, n);
  const auto got_hi = h.download<int>(hi, n);
  for (int i = 0; i < n; ++i) {
    const int64_t p = product24(a[i], b[i]);
    EXPECT_EQ(got_lo[i], static_cast<int32_t>(static_cast<uint32_t>(p) + static_cast<uint32_t>(c[i]))) << i;
    EXPECT_EQ(got_hi[i], static_cast<int32_t>(static_cast<uint64_t>(p) >> 16)) << i;
  }
}

TEST(PtxCoverage, LduFenceAndNonCoherentLoadsReadMemory) {
  Harness h("coverage");
  const std::vector<unsigned> table = {10, 20, 30, 40, 50, 60, 70, 80};
  const uint64_t dtable = h.upload(table);
  const uint64_t out = h.upload(std::vector<unsigned>(32));
  LaunchResult r = h.launch("uniform_and_noncoherent_loads", Dim3(1), Dim3(32), 0, dtable, out);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto got = h.download<unsigned>(out, 32);
  for (unsigned i = 0; i < 32; ++i) EXPECT_EQ(got[i], table[3] + table[i & 7]) << i;
}

TEST(PtxCoverage, BarArriveLetsAProducerWarpRunAheadOfItsConsumer) {
  Harness h("coverage");
  const uint64_t out = h.upload(std::vector<int>(32, -1));
  LaunchResult r = h.launch("producer_consumer", Dim3(1), Dim3(64), 0, out);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto got = h.download<int>(out, 32);
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(got[lane], (31 - lane) * (31 - lane) + 1) << lane;
}

TEST(PtxCoverage, SpecialRegistersReportLaunchGeometryAndMonotonicTime) {
  Harness h("coverage");
  const uint64_t out = h.upload(std::vector<unsigned long long>(4, 99));
  LaunchResult r = h.launch("special_registers", Dim3(1), Dim3(96), 96, out);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto got = h.download<unsigned long long>(out, 4);
  EXPECT_EQ(got[0], 96u);  // %dynamic_smem_size is the launch's dynamic shared bytes
  EXPECT_EQ(got[1], 1u);   // %nwarpid > %warpid
  EXPECT_EQ(got[2], 1u);   // %globaltimer does not run backwards
  EXPECT_EQ(got[3], 1u);   // %clock64 advances across instructions
}

TEST(PtxCoverage, SetpNanAndNumClassifyLikeTheCpu) {
  Harness h("coverage");
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  const double dnan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<float> x = {0.0f, -1.5f, qnan, std::numeric_limits<float>::infinity(), -qnan};
  const std::vector<double> y = {dnan, 2.0, -0.0, -std::numeric_limits<double>::infinity(), dnan};
  const int n = static_cast<int>(x.size());
  const uint64_t dx = h.upload(x), dy = h.upload(y), out = h.upload(std::vector<int>(2 * n, -1));
  LaunchResult r = h.launch("nan_tests", Dim3(1), Dim3(32), 0, dx, dy, out, n);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto got = h.download<int>(out, 2 * n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(got[2 * i], std::isnan(x[i]) ? 1 : 0) << i;
    EXPECT_EQ(got[2 * i + 1], std::isnan(y[i]) ? 1 : 0) << i;
  }
}

}  // namespace
}  // namespace gpuvp::ptx::testing
