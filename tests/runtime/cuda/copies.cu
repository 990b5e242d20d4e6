// Pitched allocations, 2D and 3D copies and sets with odd pitches and offsets, CUDA arrays
// (1D/2D/3D, layered, cubemap) and their info, checked byte for byte against host copies; the
// bytes between rows that a copy must not touch are checked too.
#include <cstring>
#include <vector>

#include "check.cuh"

namespace {

int failures = 0;
void expect_eq(const char* what, long long index, long long got, long long want) {
  if (got != want && failures++ < 10) std::printf("FAIL %s [%lld]: got %lld, expected %lld\n", what, index, got, want);
}

__global__ void touch(unsigned char* p, size_t pitch, int width, int height) {
  const int x = threadIdx.x + blockIdx.x * blockDim.x, y = blockIdx.y;
  if (x < width && y < height) p[y * pitch + x] ^= 0x5a;
}

}  // namespace

int main() {
  // ---- 2D: host (odd pitch 41) -> pitched device -> pitched device -> host (odd pitch 43)
  const size_t width = 37, height = 13, spitch = 41, hpitch = 43;
  std::vector<unsigned char> src(spitch * height);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  unsigned char *d1 = nullptr, *d2 = nullptr;
  size_t pitch1 = 0, pitch2 = 0;
  EXPECT_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&d1), &pitch1, width, height), cudaSuccess);
  EXPECT_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&d2), &pitch2, width + 600, height), cudaSuccess);
  expect_eq("pitch >= width", 0, pitch1 >= width, 1);
  expect_eq("pitch aligned", 0, pitch1 % 32, 0);
  EXPECT_CUDA(cudaMemset(d2, 0xee, pitch2 * height), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy2D(d1, pitch1, src.data(), spitch, width, height, cudaMemcpyHostToDevice), cudaSuccess);
  touch<<<dim3(1, height), 64>>>(d1, pitch1, width, height);
  cudaStream_t stream;
  EXPECT_CUDA(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy2DAsync(d2 + 3, pitch2, d1, pitch1, width, height, cudaMemcpyDeviceToDevice, stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<unsigned char> back(hpitch * height, 0xab);
  EXPECT_CUDA(cudaMemcpy2D(back.data(), hpitch, d2 + 3, pitch2, width, height, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t y = 0; y < height; ++y) {
    for (size_t x = 0; x < hpitch; ++x) {
      const int want = x < width ? (src[y * spitch + x] ^ 0x5a) : 0xab;  // the gap between rows untouched
      expect_eq("memcpy2D round trip", static_cast<long long>(y * hpitch + x), back[y * hpitch + x], want);
    }
  }
  // The bytes before the copied rectangle of d2 keep their value.
  std::vector<unsigned char> row(pitch2);
  EXPECT_CUDA(cudaMemcpy(row.data(), d2, pitch2, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int x = 0; x < 3; ++x) expect_eq("memcpy2D leaves the rest", x, row[x], 0xee);
  expect_eq("memcpy2D leaves the rest", 3 + width, row[3 + width], 0xee);
  // ---- Memset2D of a sub-rectangle
  EXPECT_CUDA(cudaMemset2D(d1 + pitch1 * 2 + 5, pitch1, 0x11, 9, 4), cudaSuccess);
  std::vector<unsigned char> all(pitch1 * height);
  EXPECT_CUDA(cudaMemcpy(all.data(), d1, all.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < width; ++x) {
      const bool in = y >= 2 && y < 6 && x >= 5 && x < 14;
      expect_eq("memset2D", static_cast<long long>(y * pitch1 + x), all[y * pitch1 + x],
                in ? 0x11 : (src[y * spitch + x] ^ 0x5a));
    }
  // ---- Bad pitches
  EXPECT_CUDA(cudaMemcpy2D(d1, pitch1, src.data(), 10, 11, 2, cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);

  // ---- 2D arrays: a sub-rectangle in at an offset, the whole array out, array to array, 1D forms
  const int aw = 19, ah = 7;
  cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
  cudaArray_t a, b;
  EXPECT_CUDA(cudaMallocArray(&a, &fdesc, aw, ah), cudaSuccess);
  EXPECT_CUDA(cudaMallocArray(&b, &fdesc, aw, ah), cudaSuccess);
  std::vector<float> host(aw * ah, -1.0f), sub(11 * 4);
  for (size_t i = 0; i < sub.size(); ++i) sub[i] = 0.5f * i + 1;
  EXPECT_CUDA(cudaMemcpy2DToArray(a, 0, 0, host.data(), aw * 4, aw * 4, ah, cudaMemcpyHostToDevice), cudaSuccess);
  // 5 x 3 floats from a host source of pitch 11 floats, to column 3, row 2
  EXPECT_CUDA(cudaMemcpy2DToArray(a, 3 * 4, 2, sub.data(), 11 * 4, 5 * 4, 3, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, aw * 4, ah, cudaMemcpyDeviceToDevice), cudaSuccess);
  std::vector<float> out(aw * ah);
  EXPECT_CUDA(cudaMemcpy2DFromArray(out.data(), aw * 4, b, 0, 0, aw * 4, ah, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int y = 0; y < ah; ++y)
    for (int x = 0; x < aw; ++x) {
      const bool in = y >= 2 && y < 5 && x >= 3 && x < 8;
      const float want = in ? sub[(y - 2) * 11 + (x - 3)] : -1.0f;
      expect_eq("2D array copies", y * aw + x, static_cast<long long>(out[y * aw + x] * 2), static_cast<long long>(want * 2));
    }
  float two[2];
  EXPECT_CUDA(cudaMemcpyFromArray(two, a, 4 * 4, 3, sizeof two, cudaMemcpyDeviceToHost), cudaSuccess);
  expect_eq("memcpyFromArray", 0, static_cast<long long>(two[0] * 2), static_cast<long long>(sub[11 + 1] * 2));
  EXPECT_CUDA(cudaMemcpy2DToArray(a, 16 * 4, 0, sub.data(), 11 * 4, 5 * 4, 1, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  cudaChannelFormatDesc got_desc;
  cudaExtent got_extent;
  unsigned got_flags = 99;
  EXPECT_CUDA(cudaArrayGetInfo(&got_desc, &got_extent, &got_flags, a), cudaSuccess);
  expect_eq("array info width", 0, got_extent.width, aw);
  expect_eq("array info height", 0, got_extent.height, ah);
  expect_eq("array info depth", 0, got_extent.depth, 0);
  expect_eq("array info flags", 0, got_flags, 0);
  expect_eq("array info desc", 0, got_desc.x == 32 && got_desc.f == cudaChannelFormatKindFloat, 1);
  EXPECT_CUDA(cudaFreeArray(a), cudaSuccess);
  EXPECT_CUDA(cudaFreeArray(b), cudaSuccess);

  // ---- 3D: pitched device memory and a 3D array, with positions, and Memset3D
  const size_t w3 = 23, h3 = 5, d3 = 3, host_pitch = 29;
  std::vector<unsigned char> volume(host_pitch * h3 * d3);
  for (size_t i = 0; i < volume.size(); ++i) volume[i] = static_cast<unsigned char>(i * 13 + 1);
  cudaPitchedPtr pitched;
  EXPECT_CUDA(cudaMalloc3D(&pitched, make_cudaExtent(w3, h3, d3)), cudaSuccess);
  expect_eq("malloc3D pitch", 0, pitched.pitch >= w3 && pitched.xsize == w3 && pitched.ysize == h3, 1);
  EXPECT_CUDA(cudaMemset3D(pitched, 0x33, make_cudaExtent(w3, h3, d3)), cudaSuccess);
  cudaMemcpy3DParms p;
  std::memset(&p, 0, sizeof p);
  p.srcPtr = make_cudaPitchedPtr(volume.data(), host_pitch, w3, h3);
  p.srcPos = make_cudaPos(2, 1, 0);  // bytes, rows, slices of the source
  p.dstPtr = pitched;
  p.dstPos = make_cudaPos(1, 0, 1);
  p.extent = make_cudaExtent(w3 - 2, h3 - 1, d3 - 1);
  p.kind = cudaMemcpyHostToDevice;
  EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
  std::vector<unsigned char> vback(w3 * h3 * d3);
  std::memset(&p, 0, sizeof p);
  p.srcPtr = pitched;
  p.dstPtr = make_cudaPitchedPtr(vback.data(), w3, w3, h3);
  p.extent = make_cudaExtent(w3, h3, d3);
  p.kind = cudaMemcpyDeviceToHost;
  EXPECT_CUDA(cudaMemcpy3DAsync(&p, stream), cudaSuccess);
  EXPECT_CUDA(cudaStreamSynchronize(stream), cudaSuccess);
  for (size_t z = 0; z < d3; ++z)
    for (size_t y = 0; y < h3; ++y)
      for (size_t x = 0; x < w3; ++x) {
        const bool in = z >= 1 && x >= 1 && x < 1 + w3 - 2 && y < h3 - 1;
        const int want = in ? volume[(z - 1) * host_pitch * h3 + (y + 1) * host_pitch + (x - 1 + 2)] : 0x33;
        expect_eq("3D pitched copy", static_cast<long long>((z * h3 + y) * w3 + x), vback[(z * h3 + y) * w3 + x], want);
      }
  // A 3D array of ints: in from the pitched device memory, out to the host.
  cudaChannelFormatDesc idesc = cudaCreateChannelDesc<int>();
  cudaArray_t a3;
  const size_t aw3 = 6, ah3 = 5, ad3 = 4;
  EXPECT_CUDA(cudaMalloc3DArray(&a3, &idesc, make_cudaExtent(aw3, ah3, ad3), 0), cudaSuccess);
  std::vector<int> ints(aw3 * ah3 * ad3);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int>(i * 1001);
  std::memset(&p, 0, sizeof p);
  p.srcPtr = make_cudaPitchedPtr(ints.data(), aw3 * 4, aw3, ah3);
  p.dstArray = a3;
  p.extent = make_cudaExtent(aw3, ah3, ad3);
  p.kind = cudaMemcpyHostToDevice;
  EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
  std::vector<int> iback(2 * 3 * 2, -5);
  std::memset(&p, 0, sizeof p);
  p.srcArray = a3;
  p.srcPos = make_cudaPos(3, 1, 2);  // elements of the array
  p.dstPtr = make_cudaPitchedPtr(iback.data(), 2 * 4, 2, 3);
  p.extent = make_cudaExtent(2, 3, 2);
  p.kind = cudaMemcpyDeviceToHost;
  EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 2; ++x)
        expect_eq("3D array sub-box", (z * 3 + y) * 2 + x, iback[(z * 3 + y) * 2 + x],
                  ints[((z + 2) * ah3 + (y + 1)) * aw3 + (x + 3)]);
  p.srcPos = make_cudaPos(5, 1, 2);  // runs past the array's width
  EXPECT_CUDA(cudaMemcpy3D(&p), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaFreeArray(a3), cudaSuccess);
  // Cubemap arrays must be square with 6 faces (per layer).
  cudaArray_t bad;
  EXPECT_CUDA(cudaMalloc3DArray(&bad, &fdesc, make_cudaExtent(4, 5, 6), cudaArrayCubemap), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaMalloc3DArray(&bad, &fdesc, make_cudaExtent(4, 4, 7), cudaArrayCubemap), cudaErrorInvalidValue);
  EXPECT_CUDA(cudaFree(pitched.ptr), cudaSuccess);
  EXPECT_CUDA(cudaFree(d1), cudaSuccess);
  EXPECT_CUDA(cudaFree(d2), cudaSuccess);
  EXPECT_CUDA(cudaStreamDestroy(stream), cudaSuccess);
  if (failures != 0) {
    std::printf("FAIL copies: %d mismatches\n", failures);
    return 1;
  }
  std::printf("PASS copies\n");
  return 0;
}
