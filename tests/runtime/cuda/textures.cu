// Texture objects against a CPU reference written from the CUDA programming guide's "Texture
// Fetching" appendix: every address mode with point and linear filtering, normalized and
// unnormalized coordinates, read modes, 8/16/32-bit and half channels, linear and pitch-2D
// memory, 3D (trilinear), layered, cubemap and layered cubemap textures, and gather (tld4).
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "check.cuh"

namespace {

int failures = 0;

void expect_near(const char* what, int index, float got, float want, float tolerance = 1e-4f) {
  const bool ok = (std::isnan(want) && std::isnan(got)) || std::fabs(got - want) <= tolerance * (1.0f + std::fabs(want));
  if (!ok && failures++ < 10) std::printf("FAIL %s [%d]: got %.7g, expected %.7g\n", what, index, got, want);
}
void expect_eq(const char* what, int index, long long got, long long want) {
  if (got != want && failures++ < 10) std::printf("FAIL %s [%d]: got %lld, expected %lld\n", what, index, got, want);
}

// ---- CPU reference (programming guide): the texel index of one axis under an address mode,
// or -1 for the border. Wrap and mirror take the coordinate's fraction (normalized coordinates).
int ref_wrap_index(float x, int n, cudaTextureAddressMode mode, bool normalized) {
  if (normalized && mode == cudaAddressModeWrap) {
    float f = x - std::floor(x);
    int i = static_cast<int>(std::floor(f * n));
    return i >= n ? n - 1 : i;
  }
  if (normalized && mode == cudaAddressModeMirror) {
    const float fl = std::floor(x);
    float f = x - fl;
    if (static_cast<long long>(fl) % 2 != 0) f = 1.0f - f;
    int i = static_cast<int>(std::floor(f * n));
    return i >= n ? n - 1 : i;
  }
  const float u = normalized ? x * n : x;
  const int i = static_cast<int>(std::floor(u));
  if (mode == cudaAddressModeBorder) return i < 0 || i >= n ? -1 : i;
  return i < 0 ? 0 : i >= n ? n - 1 : i;
}
// For linear filtering the address mode applies to each integer texel index.
int ref_index(int i, int n, cudaTextureAddressMode mode, bool normalized) {
  if (!normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror)) mode = cudaAddressModeClamp;
  switch (mode) {
    case cudaAddressModeWrap: return ((i % n) + n) % n;
    case cudaAddressModeMirror: {
      int m = ((i % (2 * n)) + 2 * n) % (2 * n);
      return m < n ? m : 2 * n - 1 - m;
    }
    case cudaAddressModeBorder: return i < 0 || i >= n ? -1 : i;
    default: return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
}
// Linear filtering: xB = x - 0.5, i = floor(xB), alpha = frac(xB) in 9-bit fixed point; wrap and
// mirror first take the fraction of the normalized coordinate.
void ref_linear_axis(float x, int n, bool normalized, int* i0, float* alpha,
                     cudaTextureAddressMode mode = cudaAddressModeClamp) {
  if (normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror)) {
    const float fl = std::floor(x);
    x -= fl;
    if (mode == cudaAddressModeMirror && static_cast<long long>(fl) % 2 != 0) x = 1.0f - x;
  }
  const float xb = (normalized ? x * n : x) - 0.5f;
  *i0 = static_cast<int>(std::floor(xb));
  *alpha = std::round((xb - std::floor(xb)) * 256.0f) / 256.0f;
}

template <typename F>
float ref_sample_2d(F texel, int w, int h, float x, float y, cudaTextureAddressMode mode, bool linear, bool normalized,
                    float border) {
  auto fetch = [&](int i, int j) { return i < 0 || j < 0 ? border : texel(i, j); };
  if (!linear) {
    cudaTextureAddressMode m = mode;
    if (!normalized && (m == cudaAddressModeWrap || m == cudaAddressModeMirror)) m = cudaAddressModeClamp;
    return fetch(ref_wrap_index(x, w, m, normalized), ref_wrap_index(y, h, m, normalized));
  }
  int i, j;
  float a, b;
  ref_linear_axis(x, w, normalized, &i, &a, mode);
  ref_linear_axis(y, h, normalized, &j, &b, mode);
  const int i0 = ref_index(i, w, mode, normalized), i1 = ref_index(i + 1, w, mode, normalized);
  const int j0 = ref_index(j, h, mode, normalized), j1 = ref_index(j + 1, h, mode, normalized);
  return (1 - a) * (1 - b) * fetch(i0, j0) + a * (1 - b) * fetch(i1, j0) + (1 - a) * b * fetch(i0, j1) +
         a * b * fetch(i1, j1);
}

// ---- kernels

__global__ void sample_2d(cudaTextureObject_t t, const float2* c, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, c[i].x, c[i].y);
}
__global__ void sample_2d_float4(cudaTextureObject_t t, const float2* c, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, c[i].x, c[i].y);
}
__global__ void sample_2d_short2(cudaTextureObject_t t, const float2* c, int2* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const short2 v = tex2D<short2>(t, c[i].x, c[i].y);
    out[i] = make_int2(v.x, v.y);
  }
}
__global__ void fetch_1d(cudaTextureObject_t tf, cudaTextureObject_t ti, const int* idx, float4* out_f, int* out_i, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out_f[i] = tex1Dfetch<float4>(tf, idx[i]);
    out_i[i] = tex1Dfetch<int>(ti, idx[i]);
  }
}
__global__ void sample_3d(cudaTextureObject_t t, const float4* c, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, c[i].x, c[i].y, c[i].z);
}
__global__ void sample_layered(cudaTextureObject_t t2, cudaTextureObject_t t1, const float4* c, float* out2,
                               float* out1, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out2[i] = tex2DLayered<float>(t2, c[i].x, c[i].y, static_cast<int>(c[i].w));
    out1[i] = tex1DLayered<float>(t1, c[i].x, static_cast<int>(c[i].w));
  }
}
__global__ void sample_cube(cudaTextureObject_t t, cudaTextureObject_t tl, const float4* c, float* out, float* out_l,
                            int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = texCubemap<float>(t, c[i].x, c[i].y, c[i].z);
    out_l[i] = texCubemapLayered<float>(tl, c[i].x, c[i].y, c[i].z, static_cast<int>(c[i].w));
  }
}
__global__ void gather(cudaTextureObject_t t, const float2* c, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2Dgather<float4>(t, c[i].x, c[i].y, 0);
}

template <typename T>
T* to_device(const std::vector<T>& host) {
  T* device = nullptr;
  EXPECT_CUDA(cudaMalloc(&device, host.size() * sizeof(T)), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return device;
}
template <typename T>
std::vector<T> to_host(const T* device, size_t n) {
  std::vector<T> host(n);
  EXPECT_CUDA(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

cudaTextureDesc texture_desc(cudaTextureAddressMode mode, cudaTextureFilterMode filter, bool normalized,
                             cudaTextureReadMode read = cudaReadModeElementType) {
  cudaTextureDesc d;
  std::memset(&d, 0, sizeof d);
  d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = mode;
  d.filterMode = filter;
  d.readMode = read;
  d.normalizedCoords = normalized;
  d.borderColor[0] = 0.5f;
  d.borderColor[1] = 0.25f;
  d.borderColor[2] = 0.125f;
  d.borderColor[3] = 2.0f;
  return d;
}

cudaResourceDesc array_resource(cudaArray_t array) {
  cudaResourceDesc r;
  std::memset(&r, 0, sizeof r);
  r.resType = cudaResourceTypeArray;
  r.res.array.array = array;
  return r;
}

// ---- 2D float: every address mode x filter x coordinate normalization.
void test_address_modes() {
  const int w = 5, h = 4;
  std::vector<float> texels(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) texels[y * w + x] = x + 10.0f * y + 0.25f * (x * y % 3);
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array;
  EXPECT_CUDA(cudaMallocArray(&array, &desc, w, h), cudaSuccess);
  EXPECT_CUDA(cudaMemcpy2DToArray(array, 0, 0, texels.data(), w * sizeof(float), w * sizeof(float), h,
                                  cudaMemcpyHostToDevice), cudaSuccess);
  for (int normalized = 0; normalized < 2; ++normalized) {
    std::vector<float2> coords;
    for (float y = -1.6f; y < 2.7f; y += 0.29f)
      for (float x = -1.3f; x < 2.9f; x += 0.23f) {
        coords.push_back(normalized ? make_float2(x, y) : make_float2(x * w, y * h));
      }
    const int n = static_cast<int>(coords.size());
    float2* dc = to_device(coords);
    float* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, n * sizeof(float)), cudaSuccess);
    const cudaTextureAddressMode modes[] = {cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror,
                                            cudaAddressModeBorder};
    for (cudaTextureAddressMode mode : modes) {
      if (!normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror)) continue;  // normalized only
      for (int linear = 0; linear < 2; ++linear) {
        const cudaResourceDesc r = array_resource(array);
        const cudaTextureDesc t = texture_desc(mode, linear ? cudaFilterModeLinear : cudaFilterModePoint, normalized);
        cudaTextureObject_t tex = 0;
        EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
        sample_2d<<<(n + 127) / 128, 128>>>(tex, dc, dout, n);
        EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
        EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<float> got = to_host(dout, n);
        char what[96];
        std::snprintf(what, sizeof what, "2D mode %d %s %s", static_cast<int>(mode), linear ? "linear" : "point",
                      normalized ? "normalized" : "unnormalized");
        for (int i = 0; i < n; ++i) {
          const float want = ref_sample_2d([&](int x, int y) { return texels[y * w + x]; }, w, h, coords[i].x,
                                           coords[i].y, mode, linear, normalized, 0.5f);
          expect_near(what, i, got[i], want);
        }
        // The descriptors come back as given.
        cudaResourceDesc r2;
        cudaTextureDesc t2;
        EXPECT_CUDA(cudaGetTextureObjectResourceDesc(&r2, tex), cudaSuccess);
        EXPECT_CUDA(cudaGetTextureObjectTextureDesc(&t2, tex), cudaSuccess);
        expect_eq("resource desc round trip", 0, r2.res.array.array == array, 1);
        expect_eq("texture desc round trip", 0, std::memcmp(&t, &t2, sizeof t) == 0, 1);
        EXPECT_CUDA(cudaDestroyTextureObject(tex), cudaSuccess);
      }
    }
    cudaFree(dc);
    cudaFree(dout);
  }
  // Gather: component x of the 2x2 footprint, in the order (i0,j1) (i1,j1) (i1,j0) (i0,j0).
  {
    const cudaResourceDesc r = array_resource(array);
    const cudaTextureDesc t = texture_desc(cudaAddressModeClamp, cudaFilterModePoint, false);
    cudaTextureObject_t tex = 0;
    EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
    std::vector<float2> coords;
    for (float y = -0.7f; y < 5.0f; y += 0.61f)
      for (float x = -0.9f; x < 6.0f; x += 0.53f) coords.push_back(make_float2(x, y));
    const int n = static_cast<int>(coords.size());
    float2* dc = to_device(coords);
    float4* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, n * sizeof(float4)), cudaSuccess);
    gather<<<(n + 63) / 64, 64>>>(tex, dc, dout, n);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float4> got = to_host(dout, n);
    for (int k = 0; k < n; ++k) {
      const int i = static_cast<int>(std::floor(coords[k].x - 0.5f)), j = static_cast<int>(std::floor(coords[k].y - 0.5f));
      auto T = [&](int x, int y) {
        x = x < 0 ? 0 : x >= w ? w - 1 : x;
        y = y < 0 ? 0 : y >= h ? h - 1 : y;
        return texels[y * w + x];
      };
      expect_near("gather.x", k, got[k].x, T(i, j + 1));
      expect_near("gather.y", k, got[k].y, T(i + 1, j + 1));
      expect_near("gather.z", k, got[k].z, T(i + 1, j));
      expect_near("gather.w", k, got[k].w, T(i, j));
    }
    EXPECT_CUDA(cudaDestroyTextureObject(tex), cudaSuccess);
    cudaFree(dc);
    cudaFree(dout);
  }
  EXPECT_CUDA(cudaFreeArray(array), cudaSuccess);
}

// ---- read modes and channel formats: uchar4 as normalized float (linear), short2 as integers,
// half floats; linear memory (tex1Dfetch, out of range reads zero) and pitch-2D memory.
void test_formats() {
  const int w = 7, h = 3;
  std::vector<float2> coords;
  for (float y = -0.4f; y < 3.8f; y += 0.37f)
    for (float x = -0.6f; x < 7.9f; x += 0.41f) coords.push_back(make_float2(x, y));
  const int n = static_cast<int>(coords.size());
  float2* dc = to_device(coords);
  auto clampi = [](int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; };
  {  // uchar4, normalized float, bilinear
    std::vector<uchar4> texels(w * h);
    for (int i = 0; i < w * h; ++i) texels[i] = make_uchar4(i * 11 % 256, 255 - i * 7, i * 3, 200);
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<uchar4>();
    cudaArray_t array;
    EXPECT_CUDA(cudaMallocArray(&array, &desc, w, h), cudaSuccess);
    EXPECT_CUDA(cudaMemcpyToArray(array, 0, 0, texels.data(), texels.size() * sizeof(uchar4), cudaMemcpyHostToDevice),
                cudaSuccess);
    const cudaResourceDesc r = array_resource(array);
    const cudaTextureDesc t = texture_desc(cudaAddressModeClamp, cudaFilterModeLinear, false, cudaReadModeNormalizedFloat);
    cudaTextureObject_t tex = 0;
    EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
    float4* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, n * sizeof(float4)), cudaSuccess);
    sample_2d_float4<<<(n + 127) / 128, 128>>>(tex, dc, dout, n);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float4> got = to_host(dout, n);
    for (int k = 0; k < n; ++k) {
      for (int c = 0; c < 4; ++c) {
        auto texel = [&](int x, int y) {
          const uchar4 v = texels[y * w + x];
          const unsigned char b = c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
          return b / 255.0f;
        };
        const float want = ref_sample_2d(texel, w, h, coords[k].x, coords[k].y, cudaAddressModeClamp, true, false, 0);
        const float g = c == 0 ? got[k].x : c == 1 ? got[k].y : c == 2 ? got[k].z : got[k].w;
        expect_near("uchar4 normalized linear", k * 4 + c, g, want);
      }
    }
    cudaDestroyTextureObject(tex);
    cudaFreeArray(array);
    cudaFree(dout);
  }
  {  // short2, element type, point
    std::vector<short2> texels(w * h);
    for (int i = 0; i < w * h; ++i) texels[i] = make_short2(static_cast<short>(-1000 * i + 7), static_cast<short>(i * 333));
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<short2>();
    cudaArray_t array;
    EXPECT_CUDA(cudaMallocArray(&array, &desc, w, h), cudaSuccess);
    EXPECT_CUDA(cudaMemcpy2DToArray(array, 0, 0, texels.data(), w * sizeof(short2), w * sizeof(short2), h,
                                    cudaMemcpyHostToDevice), cudaSuccess);
    const cudaResourceDesc r = array_resource(array);
    const cudaTextureDesc t = texture_desc(cudaAddressModeClamp, cudaFilterModePoint, false);
    cudaTextureObject_t tex = 0;
    EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
    int2* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, n * sizeof(int2)), cudaSuccess);
    sample_2d_short2<<<(n + 127) / 128, 128>>>(tex, dc, dout, n);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<int2> got = to_host(dout, n);
    for (int k = 0; k < n; ++k) {
      const short2 v = texels[clampi(static_cast<int>(std::floor(coords[k].y)), h) * w +
                              clampi(static_cast<int>(std::floor(coords[k].x)), w)];
      expect_eq("short2 element x", k, got[k].x, v.x);
      expect_eq("short2 element y", k, got[k].y, v.y);
    }
    cudaDestroyTextureObject(tex);
    cudaFreeArray(array);
    cudaFree(dout);
  }
  {  // half, point, normalized coordinates with wrap
    std::vector<__half> texels(w * h);
    for (int i = 0; i < w * h; ++i) texels[i] = __float2half(0.5f * i - 3.25f);
    cudaChannelFormatDesc desc = cudaCreateChannelDescHalf();
    cudaArray_t array;
    EXPECT_CUDA(cudaMallocArray(&array, &desc, w, h), cudaSuccess);
    EXPECT_CUDA(cudaMemcpy2DToArray(array, 0, 0, texels.data(), w * 2, w * 2, h, cudaMemcpyHostToDevice), cudaSuccess);
    const cudaResourceDesc r = array_resource(array);
    const cudaTextureDesc t = texture_desc(cudaAddressModeWrap, cudaFilterModePoint, true);
    cudaTextureObject_t tex = 0;
    EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
    float* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, n * sizeof(float)), cudaSuccess);
    std::vector<float2> ncoords(coords);
    for (auto& c : ncoords) c = make_float2(c.x / 3.0f - 0.7f, c.y / 2.0f - 0.9f);
    float2* dn = to_device(ncoords);
    sample_2d<<<(n + 127) / 128, 128>>>(tex, dn, dout, n);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> got = to_host(dout, n);
    for (int k = 0; k < n; ++k) {
      const float want = texels[ref_wrap_index(ncoords[k].y, h, cudaAddressModeWrap, true) * w +
                                ref_wrap_index(ncoords[k].x, w, cudaAddressModeWrap, true)];
      expect_near("half wrap", k, got[k], __half2float(__float2half(want)));
    }
    cudaDestroyTextureObject(tex);
    cudaFreeArray(array);
    cudaFree(dout);
    cudaFree(dn);
  }
  {  // linear memory: float4 and int, indices in and out of range
    const int count = 29;
    std::vector<float4> f(count);
    std::vector<int> ints(count);
    for (int i = 0; i < count; ++i) {
      f[i] = make_float4(i, -i, i * 0.5f, 1.0f / (i + 1));
      ints[i] = i * i - 50;
    }
    float4* df = to_device(f);
    int* di = to_device(ints);
    cudaResourceDesc rf;
    std::memset(&rf, 0, sizeof rf);
    rf.resType = cudaResourceTypeLinear;
    rf.res.linear.devPtr = df;
    rf.res.linear.desc = cudaCreateChannelDesc<float4>();
    rf.res.linear.sizeInBytes = count * sizeof(float4);
    cudaResourceDesc ri = rf;
    ri.res.linear.devPtr = di;
    ri.res.linear.desc = cudaCreateChannelDesc<int>();
    ri.res.linear.sizeInBytes = count * sizeof(int);
    const cudaTextureDesc t = texture_desc(cudaAddressModeClamp, cudaFilterModePoint, false);
    cudaTextureDesc tz = t;
    std::memset(tz.borderColor, 0, sizeof tz.borderColor);
    cudaTextureObject_t tf = 0, ti = 0;
    EXPECT_CUDA(cudaCreateTextureObject(&tf, &rf, &tz, nullptr), cudaSuccess);
    EXPECT_CUDA(cudaCreateTextureObject(&ti, &ri, &tz, nullptr), cudaSuccess);
    std::vector<int> idx;
    for (int i = -3; i < count + 4; ++i) idx.push_back(i);
    const int m = static_cast<int>(idx.size());
    int* didx = to_device(idx);
    float4* of = nullptr;
    int* oi = nullptr;
    EXPECT_CUDA(cudaMalloc(&of, m * sizeof(float4)), cudaSuccess);
    EXPECT_CUDA(cudaMalloc(&oi, m * sizeof(int)), cudaSuccess);
    fetch_1d<<<1, 64>>>(tf, ti, didx, of, oi, m);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float4> gf = to_host(of, m);
    const std::vector<int> gi = to_host(oi, m);
    for (int k = 0; k < m; ++k) {
      const bool in = idx[k] >= 0 && idx[k] < count;
      expect_near("tex1Dfetch float4.x", k, gf[k].x, in ? f[idx[k]].x : 0.0f);
      expect_near("tex1Dfetch float4.w", k, gf[k].w, in ? f[idx[k]].w : 0.0f);
      expect_eq("tex1Dfetch int", k, gi[k], in ? ints[idx[k]] : 0);
    }
    cudaDestroyTextureObject(tf);
    cudaDestroyTextureObject(ti);
    cudaFree(df);
    cudaFree(di);
    cudaFree(didx);
    cudaFree(of);
    cudaFree(oi);
  }
  {  // pitch-2D memory from cudaMallocPitch, bilinear, border
    float* dp = nullptr;
    size_t pitch = 0;
    EXPECT_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&dp), &pitch, w * sizeof(float), h), cudaSuccess);
    std::vector<float> texels(w * h);
    for (int i = 0; i < w * h; ++i) texels[i] = std::sin(0.7f * i) * 10;
    EXPECT_CUDA(cudaMemcpy2D(dp, pitch, texels.data(), w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice),
                cudaSuccess);
    cudaResourceDesc r;
    std::memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypePitch2D;
    r.res.pitch2D.devPtr = dp;
    r.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    r.res.pitch2D.width = w;
    r.res.pitch2D.height = h;
    r.res.pitch2D.pitchInBytes = pitch;
    const cudaTextureDesc t = texture_desc(cudaAddressModeBorder, cudaFilterModeLinear, false);
    cudaTextureObject_t tex = 0;
    EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
    float* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, n * sizeof(float)), cudaSuccess);
    sample_2d<<<(n + 127) / 128, 128>>>(tex, dc, dout, n);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> got = to_host(dout, n);
    for (int k = 0; k < n; ++k) {
      const float want = ref_sample_2d([&](int x, int y) { return texels[y * w + x]; }, w, h, coords[k].x, coords[k].y,
                                       cudaAddressModeBorder, true, false, 0.5f);
      expect_near("pitch2D linear border", k, got[k], want);
    }
    cudaDestroyTextureObject(tex);
    cudaFree(dp);
    cudaFree(dout);
  }
  cudaFree(dc);
}

// ---- 3D trilinear, layered 1D/2D, cubemap and layered cubemap.
void test_3d_layered_cube() {
  {
    const int w = 4, h = 3, d = 5;
    std::vector<float> texels(w * h * d);
    for (int i = 0; i < w * h * d; ++i) texels[i] = 0.1f * i * i - 2.0f * i;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    EXPECT_CUDA(cudaMalloc3DArray(&array, &desc, make_cudaExtent(w, h, d), 0), cudaSuccess);
    cudaMemcpy3DParms p;
    std::memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(texels.data(), w * sizeof(float), w, h);
    p.dstArray = array;
    p.extent = make_cudaExtent(w, h, d);
    p.kind = cudaMemcpyHostToDevice;
    EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
    const cudaResourceDesc r = array_resource(array);
    const cudaTextureDesc t = texture_desc(cudaAddressModeClamp, cudaFilterModeLinear, true);
    cudaTextureObject_t tex = 0;
    EXPECT_CUDA(cudaCreateTextureObject(&tex, &r, &t, nullptr), cudaSuccess);
    std::vector<float4> coords;
    for (float z = -0.2f; z < 1.2f; z += 0.17f)
      for (float y = -0.1f; y < 1.1f; y += 0.19f)
        for (float x = -0.15f; x < 1.15f; x += 0.13f) coords.push_back(make_float4(x, y, z, 0));
    const int n = static_cast<int>(coords.size());
    float4* dc = to_device(coords);
    float* dout = nullptr;
    EXPECT_CUDA(cudaMalloc(&dout, n * sizeof(float)), cudaSuccess);
    sample_3d<<<(n + 127) / 128, 128>>>(tex, dc, dout, n);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> got = to_host(dout, n);
    for (int k = 0; k < n; ++k) {
      int i, j, l;
      float a, b, c;
      ref_linear_axis(coords[k].x, w, true, &i, &a);
      ref_linear_axis(coords[k].y, h, true, &j, &b);
      ref_linear_axis(coords[k].z, d, true, &l, &c);
      auto T = [&](int x, int y, int z) {
        x = ref_index(x, w, cudaAddressModeClamp, true);
        y = ref_index(y, h, cudaAddressModeClamp, true);
        z = ref_index(z, d, cudaAddressModeClamp, true);
        return texels[(z * h + y) * w + x];
      };
      float want = 0;
      for (int corner = 0; corner < 8; ++corner) {
        const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
        want += (dx ? a : 1 - a) * (dy ? b : 1 - b) * (dz ? c : 1 - c) * T(i + dx, j + dy, l + dz);
      }
      expect_near("3D trilinear", k, got[k], want, 1e-3f);
    }
    cudaDestroyTextureObject(tex);
    cudaFreeArray(array);
    cudaFree(dc);
    cudaFree(dout);
  }
  {  // layered: a 2D layered and a 1D layered array of 3 layers
    const int w = 6, h = 4, layers = 3;
    std::vector<float> t2(w * h * layers), t1(w * layers);
    for (int i = 0; i < w * h * layers; ++i) t2[i] = 1000.0f * (i / (w * h)) + (i % (w * h));
    for (int i = 0; i < w * layers; ++i) t1[i] = -100.0f * (i / w) - (i % w);
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t a2, a1;
    EXPECT_CUDA(cudaMalloc3DArray(&a2, &desc, make_cudaExtent(w, h, layers), cudaArrayLayered), cudaSuccess);
    EXPECT_CUDA(cudaMalloc3DArray(&a1, &desc, make_cudaExtent(w, 0, layers), cudaArrayLayered), cudaSuccess);
    cudaChannelFormatDesc got_desc;
    cudaExtent got_extent;
    unsigned got_flags = 0;
    EXPECT_CUDA(cudaArrayGetInfo(&got_desc, &got_extent, &got_flags, a2), cudaSuccess);
    expect_eq("layered flags", 0, got_flags, cudaArrayLayered);
    expect_eq("layered depth", 0, got_extent.depth, layers);
    cudaMemcpy3DParms p;
    std::memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(t2.data(), w * sizeof(float), w, h);
    p.dstArray = a2;
    p.extent = make_cudaExtent(w, h, layers);
    p.kind = cudaMemcpyHostToDevice;
    EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
    p.srcPtr = make_cudaPitchedPtr(t1.data(), w * sizeof(float), w, 1);
    p.dstArray = a1;
    p.extent = make_cudaExtent(w, 1, layers);
    EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
    const cudaTextureDesc t = texture_desc(cudaAddressModeClamp, cudaFilterModeLinear, false);
    cudaTextureObject_t x2 = 0, x1 = 0;
    cudaResourceDesc r = array_resource(a2);
    EXPECT_CUDA(cudaCreateTextureObject(&x2, &r, &t, nullptr), cudaSuccess);
    r = array_resource(a1);
    EXPECT_CUDA(cudaCreateTextureObject(&x1, &r, &t, nullptr), cudaSuccess);
    std::vector<float4> coords;
    for (int layer = 0; layer < layers; ++layer)
      for (float y = -0.5f; y < 5.0f; y += 0.7f)
        for (float x = -0.5f; x < 7.0f; x += 0.45f) coords.push_back(make_float4(x, y, 0, layer));
    const int n = static_cast<int>(coords.size());
    float4* dc = to_device(coords);
    float *o2 = nullptr, *o1 = nullptr;
    EXPECT_CUDA(cudaMalloc(&o2, n * sizeof(float)), cudaSuccess);
    EXPECT_CUDA(cudaMalloc(&o1, n * sizeof(float)), cudaSuccess);
    sample_layered<<<(n + 127) / 128, 128>>>(x2, x1, dc, o2, o1, n);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> g2 = to_host(o2, n), g1 = to_host(o1, n);
    for (int k = 0; k < n; ++k) {
      const int layer = static_cast<int>(coords[k].w);
      const float w2 = ref_sample_2d([&](int x, int y) { return t2[(layer * h + y) * w + x]; }, w, h, coords[k].x,
                                     coords[k].y, cudaAddressModeClamp, true, false, 0);
      const float w1 = ref_sample_2d([&](int x, int) { return t1[layer * w + x]; }, w, 1, coords[k].x, 0.5f,
                                     cudaAddressModeClamp, true, false, 0);
      expect_near("2D layered", k, g2[k], w2);
      expect_near("1D layered", k, g1[k], w1);
    }
    cudaDestroyTextureObject(x2);
    cudaDestroyTextureObject(x1);
    cudaFreeArray(a2);
    cudaFreeArray(a1);
    cudaFree(dc);
    cudaFree(o2);
    cudaFree(o1);
  }
  {  // cubemap (6 faces) and layered cubemap (2 x 6 faces): face * 100 + y * 10 + x (+ 1000 per layer)
    const int w = 4;
    std::vector<float> faces(w * w * 12);
    for (int i = 0; i < w * w * 12; ++i) {
      const int layer = i / (w * w * 6), face = (i / (w * w)) % 6, y = (i / w) % w, x = i % w;
      faces[i] = 1000.0f * layer + 100.0f * face + 10.0f * y + x;
    }
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t cube, cube_layered;
    EXPECT_CUDA(cudaMalloc3DArray(&cube, &desc, make_cudaExtent(w, w, 6), cudaArrayCubemap), cudaSuccess);
    EXPECT_CUDA(cudaMalloc3DArray(&cube_layered, &desc, make_cudaExtent(w, w, 12), cudaArrayCubemap | cudaArrayLayered),
                cudaSuccess);
    unsigned flags = 0;
    EXPECT_CUDA(cudaArrayGetInfo(nullptr, nullptr, &flags, cube_layered), cudaSuccess);
    expect_eq("cubemap layered flags", 0, flags, cudaArrayCubemap | cudaArrayLayered);
    cudaMemcpy3DParms p;
    std::memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(faces.data(), w * sizeof(float), w, w);
    p.dstArray = cube;
    p.extent = make_cudaExtent(w, w, 6);
    p.kind = cudaMemcpyHostToDevice;
    EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
    p.dstArray = cube_layered;
    p.extent = make_cudaExtent(w, w, 12);
    EXPECT_CUDA(cudaMemcpy3D(&p), cudaSuccess);
    const cudaTextureDesc t = texture_desc(cudaAddressModeClamp, cudaFilterModePoint, true);
    cudaTextureObject_t tc = 0, tl = 0;
    cudaResourceDesc r = array_resource(cube);
    EXPECT_CUDA(cudaCreateTextureObject(&tc, &r, &t, nullptr), cudaSuccess);
    r = array_resource(cube_layered);
    EXPECT_CUDA(cudaCreateTextureObject(&tl, &r, &t, nullptr), cudaSuccess);
    std::vector<float4> dirs;
    const float offsets[] = {-0.8f, -0.3f, 0.1f, 0.6f};
    for (int axis = 0; axis < 3; ++axis)
      for (float sign : {1.0f, -1.0f})
        for (float a : offsets)
          for (float b : offsets) {
            float v[3];
            v[axis] = sign * 1.5f;
            v[(axis + 1) % 3] = a * 1.5f;
            v[(axis + 2) % 3] = b * 1.5f;
            dirs.push_back(make_float4(v[0], v[1], v[2], (axis + (sign < 0)) % 2));
          }
    const int n = static_cast<int>(dirs.size());
    float4* dd = to_device(dirs);
    float *oc = nullptr, *ol = nullptr;
    EXPECT_CUDA(cudaMalloc(&oc, n * sizeof(float)), cudaSuccess);
    EXPECT_CUDA(cudaMalloc(&ol, n * sizeof(float)), cudaSuccess);
    sample_cube<<<(n + 63) / 64, 64>>>(tc, tl, dd, oc, ol, n);
    EXPECT_CUDA(cudaGetLastError(), cudaSuccess);
    EXPECT_CUDA(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> gc = to_host(oc, n), gl = to_host(ol, n);
    for (int k = 0; k < n; ++k) {
      // Programming guide, cubemap fetch: the major axis picks the face and (s, t).
      const float x = dirs[k].x, y = dirs[k].y, z = dirs[k].z;
      int face;
      float s, t_, m;
      if (std::fabs(x) >= std::fabs(y) && std::fabs(x) >= std::fabs(z)) {
        face = x > 0 ? 0 : 1; m = std::fabs(x); s = x > 0 ? -z : z; t_ = -y;
      } else if (std::fabs(y) >= std::fabs(z)) {
        face = y > 0 ? 2 : 3; m = std::fabs(y); s = x; t_ = y > 0 ? z : -z;
      } else {
        face = z > 0 ? 4 : 5; m = std::fabs(z); s = z > 0 ? x : -x; t_ = -y;
      }
      const float u = (s / m + 1) / 2, v = (t_ / m + 1) / 2;
      const int i = ref_wrap_index(u, w, cudaAddressModeClamp, true), j = ref_wrap_index(v, w, cudaAddressModeClamp, true);
      const int layer = static_cast<int>(dirs[k].w);
      expect_near("cubemap", k, gc[k], 100.0f * face + 10.0f * j + i);
      expect_near("cubemap layered", k, gl[k], 1000.0f * layer + 100.0f * face + 10.0f * j + i);
    }
    cudaDestroyTextureObject(tc);
    cudaDestroyTextureObject(tl);
    cudaFreeArray(cube);
    cudaFreeArray(cube_layered);
    cudaFree(dd);
    cudaFree(oc);
    cudaFree(ol);
  }
}

}  // namespace

int main() {
  test_address_modes();
  test_formats();
  test_3d_layered_cube();
  if (failures != 0) {
    std::printf("FAIL textures: %d mismatches\n", failures);
    return 1;
  }
  std::printf("PASS textures\n");
  return 0;
}
