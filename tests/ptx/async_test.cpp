// cp.async on the functional model against CPU computations: copy sizes, zero fill (src-size,
// ignore-src), groups in a double-buffered matrix multiply; bad forms refused at load time.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

TEST(PtxAsyncCopy, SizesAndZeroFillMatchTheCpu) {
  Harness h("async");
  std::vector<uint32_t> in(512);
  for (uint32_t i = 0; i < in.size(); ++i) in[i] = 0x1000u * i + 7u;
  const uint64_t din = h.upload(in), dout = h.upload(std::vector<uint32_t>(64 * 8, 0xdeadbeefu));
  LaunchResult r = h.launch("async_forms", Dim3(1), Dim3(64), 0, din, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto out = h.download<uint32_t>(dout, 64 * 8);
  for (uint32_t t = 0; t < 64; ++t) {
    const uint32_t src_size = std::min<uint32_t>(t % 17, 16);
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t expected = 0;
      for (uint32_t byte = 0; byte < 4; ++byte) {
        if (4 * k + byte < src_size) expected |= ((in[t * 4 + k] >> (8 * byte)) & 0xff) << (8 * byte);
      }
      EXPECT_EQ(out[t * 8 + k], expected) << "16-byte copy, thread " << t << " word " << k;
    }
    EXPECT_EQ(out[t * 8 + 4], in[256 + t * 2]) << "8-byte copy, thread " << t;
    EXPECT_EQ(out[t * 8 + 5], in[256 + t * 2 + 1]) << "8-byte copy, thread " << t;
    EXPECT_EQ(out[t * 8 + 6], t % 3 == 0 ? 0u : in[384 + t]) << "4-byte copy (ignore-src), thread " << t;
  }
}

TEST(PtxAsyncCopy, DoubleBufferedMatmulMatchesTheCpu) {
  Harness h("async");
  const int n = 64;
  std::vector<float> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>((i * 7) % 13) - 6.0f;
    b[i] = static_cast<float>((i * 5) % 11) * 0.5f;
  }
  const uint64_t da = h.upload(a), db = h.upload(b), dc = h.upload(std::vector<float>(n * n));
  LaunchResult r = h.launch("matmul_async", Dim3(n / 16, n / 16), Dim3(16, 16), 0, da, db, dc, n);
  ASSERT_TRUE(r.ok()) << r.message;
  const auto c = h.download<float>(dc, n * n);
  for (int row = 0; row < n; ++row) {
    for (int col = 0; col < n; ++col) {
      float sum = 0.0f;  // small integers and halves: exact in any order
      for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
      ASSERT_EQ(c[row * n + col], sum) << row << "," << col;
    }
  }
}

TEST(PtxAsyncCopy, BadFormsAreRejectedWithAReason) {
  auto parse_error = [](const std::string& body) {
    const std::string text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() {\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n" +
                             body + "\nret;\n}\n";
    try {
      Module::parse(text, "bad.ptx");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(parse_error("cp.async.ca.shared.global [%r1], [%rd1], 8;\ncp.async.commit_group;\ncp.async.wait_group 0;"), "");
  EXPECT_NE(parse_error("cp.async.ca.shared.global [%r1], [%rd1], 12;").find("copy size must be 4, 8 or 16"), std::string::npos);
  EXPECT_NE(parse_error("cp.async.cg.shared.global [%r1], [%rd1], 8;").find("cp.async.cg copies 16 bytes"), std::string::npos);
  EXPECT_NE(parse_error("cp.async.wait_group %r1;").find("constant group count"), std::string::npos);
  EXPECT_EQ(parse_error("cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];"), "");
  EXPECT_NE(parse_error("cp.async.ca.shared.global [%r1], [%rd1], 8;\ncp.async.wait_group 0;\ncp.async.bulk.x;").find("bad.ptx:9"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuvp::ptx::testing
