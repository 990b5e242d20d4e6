// Surface objects: writes and reads of 1D, 2D, 3D and layered surfaces (byte x coordinates),
// the clamp and zero boundary modes, and a texture reading what a surface wrote; checked
// against values computed on the host.
#include <cstring>
#include <vector>

#include "check.cuh"

namespace {

int failures = 0;
void expect_eq(const char* what, int index, long long got, long long want) {
  if (got != want && failures++ < 10) std::printf("FAIL %s [%d]: got %lld, expected %lld\n", what, index, got, want);
}

__global__ void write_2d(cudaSurfaceObject_t s, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) surf2Dwrite(make_uchar4(x, y, x ^ y, 255 - x), s, x * 4, y);
}
// Reads each texel, writes the row-reversed copy to `out` and doubles the float surface in place.
__global__ void read_2d(cudaSurfaceObject_t s, cudaSurfaceObject_t f, uchar4* out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) {
    uchar4 v;
    surf2Dread(&v, s, x * 4, y);
    out[y * w + (w - 1 - x)] = v;
    float value;
    surf2Dread(&value, f, x * 4, y);
    surf2Dwrite(value * 2.0f, f, x * 4, y);
  }
}
__global__ void surfaces_1d_3d_layered(cudaSurfaceObject_t s1, cudaSurfaceObject_t s3, cudaSurfaceObject_t sl, int w) {
  const int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  if (x >= w) return;
  if (y == 0 && z == 0) surf1Dwrite(static_cast<short>(x * 3 - 7), s1, x * 2);
  surf3Dwrite(x + 100 * y + 10000 * z, s3, x * 4, y, z);
  surf2DLayeredwrite(static_cast<float>(x - y) * (z + 1), sl, x * 4, y, z);
}
// Boundary modes: a clamped write at x = -4 bytes lands on column 0 of row 1; a zero-mode read
// outside returns 0 and a zero-mode write outside is dropped.
__global__ void boundaries(cudaSurfaceObject_t s, int w, int* out) {
  surf2Dwrite(77, s, -4, 1, cudaBoundaryModeClamp);
  surf2Dwrite(88, s, w * 4 + 40, 2, cudaBoundaryModeClamp);  // lands on the last column of row 2
  surf2Dwrite(99, s, w * 4, 0, cudaBoundaryModeZero);         // dropped
  int v = -1;
  surf2Dread(&v, s, 0, 50, cudaBoundaryModeZero);
  out[0] = v;
  surf2Dread(&v, s, -400, 1, cudaBoundaryModeClamp);
  out[1] = v;
}
__global__ void texture_after_surface(cudaTextureObject_t t, int* out, int w, int h) {
  const int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2D<int>(t, x + 0.5f, y + 0.5f);
}

cudaResourceDesc array_resource(cudaArray_t array) {
  cudaResourceDesc r;
  std::memset(&r, 0, sizeof r);
  r.resType = cudaResourceTypeArray;
  r.res.array.array = array;
  return r;
}

}  // namespace

int main() {
  const int w = 37, h = 9;  // odd sizes
  {
    cudaChannelFormatDesc d4 = cudaCreateChannelDesc<uchar4>(), df = cudaCreateChannelDesc<float>();
    cudaArray_t a4, af;
    EXPECT_CUDA(cudaMallocArray(&a4, &d4, w, h, cudaArraySurfaceLoadStore), cudaSuccess);
    EXPECT_CUDA(cudaMallocArray(&af, &df, w, h, cudaArraySurfaceLoadStore), cudaSuccess);
    std::vector<float> floats(w * h);
    for (int i = 0; i < w * h; ++i) floats[i] = 0.25f * i - 3.0f;
    EXPECT_CUDA(cudaMemcpy2DToArray(af, 0, 0, floats.data(), w * 4, w * 4, h, cudaMemcpyHostToDevice), cudaSuccess);
    cudaSurfaceObject_t s4 = 0, sf = 0;
    cudaResourceDesc r = array_resource(a4);
    EXPECT_CUDA(cudaCreateSurfaceObject(&s4, &r), cudaSuccess);
    r = array_resource(af);
    EXPECT_CUDA(cudaCreateSurfaceObject(&sf, &r), cudaSuccess);
    cudaResourceDesc back;
    EXPECT_CUDA(cudaGetSurfaceObjectResourceDesc(&back, s4), cudaSuccess);
    expect_eq("surface resource round trip", 0, back.res.array.array == a4, 1);
    write_2d<<<dim3(2, h), 32>>>(s4, w, h);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    uchar4* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, w * h * sizeof(uchar4)), cudaSuccess);
    read_2d<<<dim3(2, h), 32>>>(s4, sf, dout, w, h);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uchar4> written(w * h), reversed(w * h);
    EXPECT_CUDA(cudaMemcpy2DFromArray(written.data(), w * 4, a4, 0, 0, w * 4, h, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_CUDA(cudaMemcpy(reversed.data(), dout, w * h * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<float> doubled(w * h);
    EXPECT_CUDA(cudaMemcpy2DFromArray(doubled.data(), w * 4, af, 0, 0, w * 4, h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const uchar4 want = make_uchar4(x, y, x ^ y, 255 - x);
        const uchar4 g = written[y * w + x], gr = reversed[y * w + (w - 1 - x)];
        const int i = y * w + x;
        expect_eq("surf2Dwrite uchar4", i, g.x | g.y << 8 | g.z << 16 | g.w << 24,
                  want.x | want.y << 8 | want.z << 16 | want.w << 24);
        expect_eq("surf2Dread uchar4", i, gr.x | gr.y << 8 | gr.z << 16 | gr.w << 24,
                  want.x | want.y << 8 | want.z << 16 | want.w << 24);
        expect_eq("float surface doubled in place (x4)", i, static_cast<long long>(doubled[i] * 4),
                  static_cast<long long>(floats[i] * 8));
      }
    }
    EXPECT_CUDA(cudaDestroySurfaceObject(s4), cudaSuccess);
    EXPECT_CUDA(cudaDestroySurfaceObject(sf), cudaSuccess);
    cudaFreeArray(a4);
    cudaFreeArray(af);
    cudaFree(dout);
  }
  {
    const int w1 = 29, h3 = 5, d3 = 3;
    cudaChannelFormatDesc ds = cudaCreateChannelDesc<short>(), di = cudaCreateChannelDesc<int>(),
                          df = cudaCreateChannelDesc<float>();
    cudaArray_t a1, a3, al;
    EXPECT_CUDA(cudaMallocArray(&a1, &ds, w1, 0, cudaArraySurfaceLoadStore), cudaSuccess);
    EXPECT_CUDA(cudaMalloc3DArray(&a3, &di, make_cudaExtent(w1, h3, d3), cudaArraySurfaceLoadStore), cudaSuccess);
    EXPECT_CUDA(cudaMalloc3DArray(&al, &df, make_cudaExtent(w1, h3, d3), cudaArraySurfaceLoadStore | cudaArrayLayered),
                cudaSuccess);
    cudaSurfaceObject_t s1 = 0, s3 = 0, sl = 0;
    cudaResourceDesc r = array_resource(a1);
    EXPECT_CUDA(cudaCreateSurfaceObject(&s1, &r), cudaSuccess);
    r = array_resource(a3);
    EXPECT_CUDA(cudaCreateSurfaceObject(&s3, &r), cudaSuccess);
    r = array_resource(al);
    EXPECT_CUDA(cudaCreateSurfaceObject(&sl, &r), cudaSuccess);
    surfaces_1d_3d_layered<<<dim3(h3, d3), 32>>>(s1, s3, sl, w1);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<short> g1(w1);
    EXPECT_CUDA(cudaMemcpyFromArray(g1.data(), a1, 0, 0, w1 * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int x = 0; x < w1; ++x) expect_eq("surf1Dwrite short", x, g1[x], x * 3 - 7);
    std::vector<int> g3(w1 * h3 * d3);
    std::vector<float> gl(w1 * h3 * d3);
    cudaMemcpy3DParms p;
    std::memset(&p, 0, sizeof p);
    p.srcArray = a3;
    p.dstPtr = make_cudaPitchedPtr(g3.data(), w1 * 4, w1, h3);
    p.extent = make_cudaExtent(w1, h3, d3);
    p.kind = cudaMemcpyDeviceToHost;
    EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
    p.srcArray = al;
    p.dstPtr = make_cudaPitchedPtr(gl.data(), w1 * 4, w1, h3);
    EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
    for (int z = 0; z < d3; ++z)
      for (int y = 0; y < h3; ++y)
        for (int x = 0; x < w1; ++x) {
          const int i = (z * h3 + y) * w1 + x;
          expect_eq("surf3Dwrite", i, g3[i], x + 100 * y + 10000 * z);
          expect_eq("surf2DLayeredwrite", i, static_cast<long long>(gl[i]), (x - y) * (z + 1));
        }
    cudaDestroySurfaceObject(s1);
    cudaDestroySurfaceObject(s3);
    cudaDestroySurfaceObject(sl);
    cudaFreeArray(a1);
    cudaFreeArray(a3);
    cudaFreeArray(al);
  }
  {  // boundary modes, then a texture over the same array sees the surface's writes
    const int bw = 5, bh = 3;
    cudaChannelFormatDesc di = cudaCreateChannelDesc<int>();
    cudaArray_t a;
    EXPECT_CUDA(cudaMallocArray(&a, &di, bw, bh, cudaArraySurfaceLoadStore), cudaSuccess);
    std::vector<int> init(bw * bh);
    for (int i = 0; i < bw * bh; ++i) init[i] = i;
    EXPECT_CUDA(cudaMemcpyToArray(a, 0, 0, init.data(), init.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    cudaSurfaceObject_t s = 0;
    cudaResourceDesc r = array_resource(a);
    EXPECT_CUDA(cudaCreateSurfaceObject(&s, &r), cudaSuccess);
    int* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, 2 * sizeof(int)), cudaSuccess);
    boundaries<<<1, 1>>>(s, bw, dout);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    int got[2];
    EXPECT_CUDA(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
    expect_eq("zero-mode read outside", 0, got[0], 0);
    expect_eq("clamp-mode read outside", 1, got[1], 77);
    std::vector<int> want(init);
    want[1 * bw + 0] = 77;
    want[2 * bw + bw - 1] = 88;
    cudaTextureDesc t;
    std::memset(&t, 0, sizeof t);
    t.addressMode[0] = t.addressMode[1] = cudaAddressModeClamp;
    t.filterMode = cudaFilterModePoint;
    t.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
    int* dtex = nullptr;
    EXPECT_CUDA(cudaMalloc(&dtex, bw * bh * sizeof(int)), cudaSuccess);
    texture_after_surface<<<bh, 32>>>(tex, dtex, bw, bh);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<int> seen(bw * bh);
    EXPECT_CUDA(cudaMemcpy(seen.data(), dtex, seen.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < bw * bh; ++i) expect_eq("texture sees surface writes", i, seen[i], want[i]);
    cudaDestroyTextureObject(tex);
    cudaDestroySurfaceObject(s);
    cudaFreeArray(a);
    cudaFree(dout);
    cudaFree(dtex);
  }
  if (failures != 0) {
    std::printf("FAIL surfaces: %d mismatches\n", failures);
    return 1;
  }
  std::printf("PASS surfaces\n");
  return 0;
}
