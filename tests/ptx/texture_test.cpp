// The PTX model's texture and surface instructions on headers placed in device memory as the
// runtime places them (sw/include/gpuvp/texture_header.h): sampling, integer fetches, txq,
// surface boundary modes, the lane accesses the timing model sees, faults for bad handles and
// load-time errors for forms that are not supported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "models/gpu/ptx/kernel_run.h"
#include "sw/include/gpuvp/texture_header.h"
#include "tests/ptx/harness.h"

namespace gpuvp::ptx::testing {
namespace {

using ::testing::HasSubstr;

// A header for `bytes` of texels at `base`, written to device memory; returns the handle.
uint64_t place_header(DeviceMemory& memory, device::TextureHeader h) {
  const uint64_t handle = memory.allocate(device::kTextureHeaderBytes);
  h.self = handle;
  memory.copy_to_device(handle, &h, sizeof h);
  return handle;
}

device::TextureHeader float_2d(uint64_t base, uint32_t w, uint32_t h) {
  device::TextureHeader t;
  t.magic = device::kTextureMagic;
  t.base = base;
  t.row_pitch = w * 4;
  t.slice_pitch = w * h * 4;
  t.width = w;
  t.height = h;
  t.depth = 1;
  t.dimensions = 2;
  t.channels = 1;
  t.channel_bits = 32;
  t.format = static_cast<uint8_t>(device::TextureFormat::kFloat);
  t.element_bytes = 4;
  t.address_mode[0] = t.address_mode[1] = static_cast<uint8_t>(device::TextureAddress::kClamp);
  return t;
}

TEST(PtxTexture, BilinearFilteringAveragesNeighbours) {
  Harness h("texture");
  const std::vector<float> texels = {0, 10, 20, 30, 100, 110, 120, 130};  // 4 x 2
  device::TextureHeader t = float_2d(h.upload(texels), 4, 2);
  t.linear_filter = 1;
  const uint64_t handle = place_header(h.memory(), t);
  // Texel centres read the texel; halfway between centres the mean; outside, clamped.
  const std::vector<float> coords = {0.5f, 0.5f, 1.0f, 0.5f, 1.0f, 1.0f, 3.5f, 1.5f, -5.0f, 0.5f, 1.25f, 0.5f};
  const uint64_t dc = h.upload(coords), dout = h.upload(std::vector<float>(6, -1));
  const LaunchResult r = h.launch("sample_2d", Dim3(1), Dim3(6), 0, handle, dc, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  const std::vector<float> out = h.download<float>(dout, 6);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 5.0f);
  EXPECT_EQ(out[2], 55.0f);
  EXPECT_EQ(out[3], 130.0f);
  EXPECT_EQ(out[4], 0.0f);
  EXPECT_EQ(out[5], 7.5f);  // x - 0.5 = 0.75: weight 0.75 of texel 1, exact in 9-bit fixed point
}

TEST(PtxTexture, IntegerFetchOfLinearMemoryReadsZeroOutOfRange) {
  Harness h("texture");
  device::TextureHeader t = float_2d(h.upload(std::vector<int>{7, 8, 9}), 3, 1);
  t.format = static_cast<uint8_t>(device::TextureFormat::kSigned);
  t.resource = static_cast<uint8_t>(device::TextureResource::kLinear);
  t.dimensions = 1;
  const uint64_t handle = place_header(h.memory(), t);
  const uint64_t dout = h.upload(std::vector<int>(6, -1));
  const LaunchResult r = h.launch("fetch_int", Dim3(1), Dim3(6), 0, handle, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(h.download<int>(dout, 6), (std::vector<int>{0, 0, 7, 8, 9, 0}));
}

TEST(PtxTexture, TxqReadsTheHeader) {
  Harness h("texture");
  const uint64_t handle = place_header(h.memory(), float_2d(h.upload(std::vector<float>(35)), 7, 5));
  const uint64_t dout = h.upload(std::vector<int>(2));
  const LaunchResult r = h.launch("query", Dim3(1), Dim3(1), 0, handle, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(h.download<int>(dout, 2), (std::vector<int>{7, 5}));
}

TEST(PtxTexture, SurfaceBoundaryModesZeroAndClamp) {
  Harness h("texture");
  device::TextureHeader s = float_2d(h.upload(std::vector<int>(8, 0)), 4, 2);
  s.magic = device::kSurfaceMagic;
  s.format = static_cast<uint8_t>(device::TextureFormat::kSigned);
  const uint64_t base = s.base;
  const uint64_t handle = place_header(h.memory(), s);
  const uint64_t dout = h.upload(std::vector<int>(6, -1));
  const LaunchResult r = h.launch("surface_rw", Dim3(1), Dim3(6), 0, handle, dout);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(h.download<int>(base + 16, 4), (std::vector<int>{0, 10, 20, 30}));
  EXPECT_EQ(h.download<int>(dout, 6), (std::vector<int>{0, 10, 20, 30, 30, 30}));  // clamped reads
}

TEST(PtxTexture, TheTimingModelSeesOneLoadPerLaneAtTheFirstTexel) {
  Harness h("texture");
  const uint64_t texels = h.upload(std::vector<float>(16, 1.0f));
  const uint64_t handle = place_header(h.memory(), float_2d(texels, 4, 4));
  const std::vector<float> coords = {2.5f, 3.5f};
  const uint64_t dc = h.upload(coords), dout = h.upload(std::vector<float>(1));
  const Kernel& kernel = h.loaded().kernel("sample_2d");
  KernelRun run(h.memory(), ExecutorOptions{}, h.loaded(), kernel, LaunchConfig{Dim3(1), Dim3(1), 0},
                pack_params(kernel, handle, dc, dout));
  ASSERT_TRUE(run.ok()) << run.message();
  const uint32_t slot = run.start_cta(0);
  bool seen = false;
  while (!run.cta_done(slot) && run.warp_ready(slot, 0)) {
    const InstructionInfo& info = run.next(slot, 0);
    StepResult step;
    ASSERT_TRUE(run.step(slot, 0, &step)) << run.message();
    // The texture fetch: the one load of the kernel reading the texels (the others read coords).
    if (info.access != AccessOp::kLoad || step.access_mask == 0 || step.accesses[0].address < texels ||
        step.accesses[0].address >= texels + 64) {
      continue;
    }
    seen = true;
    EXPECT_EQ(info.unit, UnitClass::kLdst);
    EXPECT_EQ(info.space, InstructionInfo::Space::kGlobal);
    EXPECT_EQ(step.access_mask, 1u);
    EXPECT_EQ(step.accesses[0].address, texels + (3 * 4 + 2) * 4);
    EXPECT_EQ(step.accesses[0].size, 4u);
  }
  EXPECT_TRUE(seen);
}

TEST(PtxTexture, BadHandlesFaultNamingTheHandle) {
  Harness h("texture");
  const uint64_t dc = h.upload(std::vector<float>(2)), dout = h.upload(std::vector<float>(1));
  LaunchResult r = h.launch("sample_2d", Dim3(1), Dim3(1), 0, uint64_t{0x123458}, dc, dout);
  EXPECT_EQ(r.status, LaunchStatus::kIllegalAddress);
  EXPECT_THAT(r.message, HasSubstr("texture handle 0x123458 names no texture object"));
  // A header that does not name its own address (a stale copy) is no object either.
  device::TextureHeader t = float_2d(h.upload(std::vector<float>(4)), 2, 2);
  const uint64_t handle = place_header(h.memory(), t);
  const uint64_t copy = h.memory().allocate(device::kTextureHeaderBytes);
  std::vector<uint8_t> bytes(device::kTextureHeaderBytes);
  h.memory().copy_from_device(bytes.data(), handle, bytes.size());
  h.memory().copy_to_device(copy, bytes.data(), bytes.size());
  r = h.launch("sample_2d", Dim3(1), Dim3(1), 0, copy, dc, dout);
  EXPECT_EQ(r.status, LaunchStatus::kIllegalAddress);
  EXPECT_THAT(r.message, HasSubstr("names no live texture object"));
  // A texture used as a surface.
  const uint64_t ints = h.upload(std::vector<int>(32));
  r = h.launch("surface_rw", Dim3(1), Dim3(1), 0, handle, ints);
  EXPECT_EQ(r.status, LaunchStatus::kIllegalAddress);
  EXPECT_THAT(r.message, HasSubstr("is a texture object"));
}

TEST(PtxTexture, UnsupportedFormsAreLoadTimeErrors) {
  const std::string head = ".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry k(.param .u64 p) {\n"
                           ".reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n.reg .f32 %f<8>;\nld.param.u64 %rd1, [p];\n";
  auto parse_error = [&](const std::string& body) {
    try {
      Module::parse(head + body + "ret;\n}\n", "t.ptx");
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  EXPECT_THAT(parse_error("sust.p.2d.v4.b32.trap [%rd1, {%r1, %r2}], {%r1, %r1, %r1, %r1};\n"), HasSubstr("sust.p"));
  EXPECT_THAT(parse_error("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5}];\n"), HasSubstr("vector of 2 coordinates"));
  EXPECT_THAT(parse_error("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [p, {%f5, %f6}];\n"), HasSubstr("must be a register"));
  EXPECT_THAT(parse_error("ld.global.f32 %f1, [%rd1, {%f5}];\n"), HasSubstr("only in texture and surface"));
  EXPECT_EQ(parse_error("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];\n"), "parsed");
}

}  // namespace
}  // namespace gpuvp::ptx::testing
