#include "models/gpu/ptx/texture.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "models/gpu/ptx/float_util.h"

namespace gpuvp::ptx::texture {

using device::TextureAddress;
using device::TextureFormat;
using device::TextureHeader;

namespace {

std::string hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, value);
  return buffer;
}

float as_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint32_t float_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

// A coordinate turned into a texel index without overflow (NaN reads texel 0, as clamping does).
int64_t floor_index(float x) {
  if (std::isnan(x)) return 0;
  const float limit = 1073741824.0f;  // 2^30: far outside any texture, inside int64 arithmetic
  return static_cast<int64_t>(std::floor(std::clamp(x, -limit, limit)));
}

// Applies an address mode to a texel index: the index to read, or -1 for the border colour.
int64_t address(int64_t i, int64_t n, TextureAddress mode) {
  switch (mode) {
    case TextureAddress::kWrap: {
      const int64_t m = i % n;
      return m < 0 ? m + n : m;
    }
    case TextureAddress::kMirror: {
      int64_t m = i % (2 * n);
      if (m < 0) m += 2 * n;
      return m < n ? m : 2 * n - 1 - m;
    }
    case TextureAddress::kBorder:
      return i < 0 || i >= n ? -1 : i;
    case TextureAddress::kClamp:
    default:
      return std::clamp<int64_t>(i, 0, n - 1);
  }
}

// The texels one axis contributes: i[0] alone (point), or i[0], i[1] with weight w of i[1].
struct Axis {
  int64_t i[2] = {0, 0};
  float w = 0;
};

// What the whole fetch reads: up to three axes, the slice (layer or cube face) and the mode.
struct Footprint {
  int axes = 1;
  Axis axis[3];
  uint64_t slice_base = 0;  // address of texel (0, 0) of the layer / face
  bool linear = false;
};

// The channel values of one texel: floats (float formats, normalized reads) or integers.
struct Texel {
  float f[4] = {0, 0, 0, 1};
  int64_t i[4] = {0, 0, 0, 1};
};

float srgb_to_linear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

bool float_path(const TextureHeader& h) {
  return static_cast<TextureFormat>(h.format) == TextureFormat::kFloat || h.normalized_read != 0;
}

void decode_texel(const TextureHeader& h, const uint8_t* bytes, Texel* t) {
  const auto format = static_cast<TextureFormat>(h.format);
  const uint32_t channel_bytes = h.channel_bits / 8u;
  for (uint32_t c = 0; c < h.channels; ++c) {
    const uint8_t* p = bytes + c * channel_bytes;
    uint32_t raw = 0;
    std::memcpy(&raw, p, channel_bytes);
    int64_t value = raw;
    if (format == TextureFormat::kSigned) {
      const uint32_t shift = 32 - h.channel_bits;
      value = static_cast<int32_t>(raw << shift) >> shift;
    }
    t->i[c] = value;
    if (format == TextureFormat::kFloat) {
      t->f[c] = h.channel_bits == 16 ? static_cast<float>(fp::half_to_double(raw)) : as_float(raw);
    } else if (h.normalized_read) {
      const double max = format == TextureFormat::kSigned ? std::ldexp(1.0, h.channel_bits - 1) - 1
                                                          : std::ldexp(1.0, h.channel_bits) - 1;
      t->f[c] = static_cast<float>(std::max(static_cast<double>(value) / max, -1.0));
      if (h.srgb && format == TextureFormat::kUnsigned && c < 3) t->f[c] = srgb_to_linear(t->f[c]);
    } else {
      t->f[c] = static_cast<float>(value);
    }
  }
  for (uint32_t c = h.channels; c < 4; ++c) {
    t->f[c] = c == 3 ? 1.0f : 0.0f;
    t->i[c] = c == 3 ? 1 : 0;
  }
}

// Reads texel (x, y, z) of the footprint's slice, or the border colour for an index of -1.
bool read_texel(MemoryInterface& memory, const TextureHeader& h, const Footprint& fp, int64_t x, int64_t y, int64_t z,
                Texel* t, SampleOutcome* outcome) {
  if (x < 0 || y < 0 || z < 0) {
    for (int c = 0; c < 4; ++c) {
      t->f[c] = h.border[c];
      t->i[c] = static_cast<int64_t>(h.border[c]);
    }
    return true;
  }
  const uint64_t at = fp.slice_base + static_cast<uint64_t>(z) * h.slice_pitch + static_cast<uint64_t>(y) * h.row_pitch +
                      static_cast<uint64_t>(x) * h.element_bytes;
  uint8_t bytes[16] = {};
  if (outcome->first_address == 0) outcome->first_address = at;
  if (!memory.read(at, bytes, h.element_bytes)) {
    outcome->ok = false;
    outcome->bad_address = at;
    return false;
  }
  decode_texel(h, bytes, t);
  return true;
}

// Chooses the cube face of direction (x, y, z) and the face coordinates in [0, 1] (CUDA
// programming guide, cubemap fetch table).
void cube_face(float x, float y, float z, int* face, float* u, float* v) {
  const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  float s, t, m;
  if (ax >= ay && ax >= az) {
    m = ax;
    *face = x >= 0 ? 0 : 1;
    s = x >= 0 ? -z : z;
    t = -y;
  } else if (ay >= az) {
    m = ay;
    *face = y >= 0 ? 2 : 3;
    s = x;
    t = y >= 0 ? z : -z;
  } else {
    m = az;
    *face = z >= 0 ? 4 : 5;
    s = z >= 0 ? x : -x;
    t = -y;
  }
  if (m == 0) m = 1;
  *u = (s / m + 1.0f) * 0.5f;
  *v = (t / m + 1.0f) * 0.5f;
}

// Builds the footprint of a fetch. `linear` forces the bilinear footprint (tld4).
Footprint footprint(const TextureHeader& h, Geometry g, const Coordinates& c, bool linear) {
  Footprint fp;
  float x[3] = {0, 0, 0};
  int64_t layer = 0;
  bool cube = false;
  switch (g) {
    case Geometry::k1d: fp.axes = 1; x[0] = as_float(c.raw[0]); break;
    case Geometry::k2d: fp.axes = 2; x[0] = as_float(c.raw[0]); x[1] = as_float(c.raw[1]); break;
    case Geometry::k3d:
      fp.axes = 3;
      for (int i = 0; i < 3; ++i) x[i] = as_float(c.raw[i]);
      break;
    case Geometry::kA1d: fp.axes = 1; layer = static_cast<int32_t>(c.raw[0]); x[0] = as_float(c.raw[1]); break;
    case Geometry::kA2d:
      fp.axes = 2;
      layer = static_cast<int32_t>(c.raw[0]);
      x[0] = as_float(c.raw[1]);
      x[1] = as_float(c.raw[2]);
      break;
    case Geometry::kCube: case Geometry::kACube: {
      const int first = g == Geometry::kACube ? 1 : 0;
      if (g == Geometry::kACube) layer = static_cast<int32_t>(c.raw[0]);
      int face = 0;
      cube_face(as_float(c.raw[first]), as_float(c.raw[first + 1]), as_float(c.raw[first + 2]), &face, &x[0], &x[1]);
      layer = layer * 6 + face;
      fp.axes = 2;
      cube = true;
      break;
    }
    default: break;
  }
  if (c.integer) {  // texel indices (tex1Dfetch and friends): no filtering, nothing normalized
    for (int i = 0; i < 3; ++i) x[i] = 0;
  }
  const int64_t sizes[3] = {h.width, h.height, h.depth};
  const bool layered = h.layers != 0;
  if (layered) layer = std::clamp<int64_t>(layer, 0, static_cast<int64_t>(h.layers) - 1);
  else layer = 0;
  fp.slice_base = h.base + static_cast<uint64_t>(layer) * h.slice_pitch;
  // Filtering interpolates floats; a gather (tld4) always takes the 2x2 footprint.
  fp.linear = !c.integer && (linear || (h.linear_filter && float_path(h)));
  const bool normalized = cube || h.normalized_coords;
  for (int a = 0; a < fp.axes; ++a) {
    const int64_t n = std::max<int64_t>(sizes[a], 1);
    auto mode = static_cast<TextureAddress>(h.address_mode[a]);
    if (cube) mode = TextureAddress::kClamp;
    if (!normalized && (mode == TextureAddress::kWrap || mode == TextureAddress::kMirror)) mode = TextureAddress::kClamp;
    Axis& axis = fp.axis[a];
    if (c.integer) {
      // Linear memory fetched out of range reads zeros; arrays apply their address mode.
      const int64_t i = static_cast<int32_t>(c.raw[a]);
      if (static_cast<device::TextureResource>(h.resource) == device::TextureResource::kLinear) {
        axis.i[0] = i < 0 || i >= n ? -1 : i;
      } else {
        axis.i[0] = address(i, n, mode);
      }
      continue;
    }
    // Wrap and mirror act on the normalized coordinate, as the guide writes them: frac(x), and
    // 1 - frac(x) where floor(x) is odd; the texel indices are then wrapped/mirrored again.
    float coordinate = x[a];
    if (normalized && (mode == TextureAddress::kWrap || mode == TextureAddress::kMirror) && std::isfinite(coordinate)) {
      const float whole = std::floor(coordinate);
      coordinate -= whole;
      if (mode == TextureAddress::kMirror && std::fmod(whole, 2.0f) != 0) coordinate = 1.0f - coordinate;
    }
    const float u = normalized ? coordinate * static_cast<float>(n) : coordinate;
    if (!fp.linear) {
      axis.i[0] = address(floor_index(u), n, mode);
      continue;
    }
    const float xb = u - 0.5f;
    const int64_t i0 = floor_index(xb);
    const float frac = std::isnan(xb) ? 0.0f : xb - std::floor(xb);
    axis.w = std::round(frac * 256.0f) / 256.0f;  // 9-bit fixed point, 8 fractional bits
    axis.i[0] = address(i0, n, mode);
    axis.i[1] = address(i0 + 1, n, mode);
  }
  return fp;
}

void write_result(const TextureHeader& h, const Texel& t, ResultKind kind, uint32_t out[4]) {
  const bool floats = float_path(h);
  for (int c = 0; c < 4; ++c) {
    if (kind == ResultKind::kF32) out[c] = float_bits(floats ? t.f[c] : static_cast<float>(t.i[c]));
    else out[c] = floats ? float_bits(t.f[c]) : static_cast<uint32_t>(t.i[c]);
  }
}

int64_t pick(const Axis& axis, int k) { return axis.i[k]; }

}  // namespace

std::string load_header(MemoryInterface& memory, uint64_t handle, bool surface, TextureHeader* header) {
  const char* kind = surface ? "surface" : "texture";
  if (handle == 0) return std::string(kind) + " handle 0 names no " + kind + " object";
  if (!memory.read(handle, header, sizeof *header)) {
    return std::string(kind) + " handle " + hex(handle) + " names no " + kind + " object (not a device address)";
  }
  const uint32_t want = surface ? device::kSurfaceMagic : device::kTextureMagic;
  const uint32_t other = surface ? device::kTextureMagic : device::kSurfaceMagic;
  if (header->magic == other && header->self == handle) {
    return std::string(kind) + " handle " + hex(handle) + " is a " + (surface ? "texture" : "surface") + " object";
  }
  if (header->magic != want || header->self != handle) {
    return std::string(kind) + " handle " + hex(handle) + " names no live " + kind + " object (destroyed, or never created)";
  }
  const bool sane = header->channels >= 1 && header->channels <= 4 &&
                    (header->channel_bits == 8 || header->channel_bits == 16 || header->channel_bits == 32) &&
                    header->element_bytes == header->channels * header->channel_bits / 8 && header->width != 0 &&
                    header->height != 0 && header->depth != 0 && header->dimensions >= 1 && header->dimensions <= 3;
  if (!sane) return std::string(kind) + " handle " + hex(handle) + ": malformed " + kind + " header";
  return {};
}

SampleOutcome sample(MemoryInterface& memory, const TextureHeader& h, Geometry g, const Coordinates& coords,
                     ResultKind kind, uint32_t out[4]) {
  SampleOutcome outcome;
  const Footprint fp = footprint(h, g, coords, false);
  Texel result;
  if (!fp.linear) {
    const int64_t y = fp.axes > 1 ? pick(fp.axis[1], 0) : 0;
    const int64_t z = fp.axes > 2 ? pick(fp.axis[2], 0) : 0;
    if (!read_texel(memory, h, fp, pick(fp.axis[0], 0), y, z, &result, &outcome)) return outcome;
    write_result(h, result, kind, out);
    return outcome;
  }
  // Linear: a weighted sum over the 2, 4 or 8 texels of the footprint, in a fixed order.
  float sum[4] = {0, 0, 0, 0};
  const int corners = 1 << fp.axes;
  for (int corner = 0; corner < corners; ++corner) {
    float weight = 1.0f;
    int64_t index[3] = {0, 0, 0};
    for (int a = 0; a < fp.axes; ++a) {
      const int k = (corner >> a) & 1;
      index[a] = fp.axis[a].i[k];
      weight *= k ? fp.axis[a].w : 1.0f - fp.axis[a].w;
    }
    Texel t;
    if (!read_texel(memory, h, fp, index[0], index[1], index[2], &t, &outcome)) return outcome;
    for (int c = 0; c < 4; ++c) sum[c] += weight * t.f[c];
  }
  for (int c = 0; c < 4; ++c) result.f[c] = sum[c];
  write_result(h, result, kind, out);
  return outcome;
}

SampleOutcome gather(MemoryInterface& memory, const TextureHeader& h, Geometry g, const Coordinates& coords,
                     int component, ResultKind kind, uint32_t out[4]) {
  SampleOutcome outcome;
  const Footprint fp = footprint(h, g, coords, true);
  // Gather order: (i0, j1), (i1, j1), (i1, j0), (i0, j0).
  static constexpr int kCorners[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
  const bool floats = float_path(h);
  for (int k = 0; k < 4; ++k) {
    Texel t;
    const int64_t x = fp.axis[0].i[kCorners[k][0]];
    const int64_t y = fp.axes > 1 ? fp.axis[1].i[kCorners[k][1]] : 0;
    if (!read_texel(memory, h, fp, x, y, 0, &t, &outcome)) return outcome;
    if (kind == ResultKind::kF32) out[k] = float_bits(floats ? t.f[component] : static_cast<float>(t.i[component]));
    else out[k] = floats ? float_bits(t.f[component]) : static_cast<uint32_t>(t.i[component]);
  }
  return outcome;
}

uint32_t query(const TextureHeader& h, Query q) {
  switch (q) {
    case Query::kWidth: return h.width;
    case Query::kHeight: return h.height;
    case Query::kDepth: return h.depth;
    case Query::kArraySize: return h.cubemap ? h.layers / 6 : h.layers;
    case Query::kNumMipmapLevels: return 1;
    case Query::kNumSamples: return 0;
    case Query::kNormalizedCoords: return h.normalized_coords;
    case Query::kFilterMode: return h.linear_filter;
    case Query::kAddrMode0: return h.address_mode[0];
    case Query::kAddrMode1: return h.address_mode[1];
    case Query::kAddrMode2: return h.address_mode[2];
  }
  return 0;
}

SurfacePlace surface_address(const TextureHeader& h, Geometry g, const int32_t coords[4], uint32_t bytes,
                             Boundary boundary, uint64_t* address_out, std::string* why) {
  int64_t x = 0, y = 0, z = 0, layer = 0;
  switch (g) {
    case Geometry::k1d: x = coords[0]; break;
    case Geometry::k2d: x = coords[0]; y = coords[1]; break;
    case Geometry::k3d: x = coords[0]; y = coords[1]; z = coords[2]; break;
    case Geometry::kA1d: layer = coords[0]; x = coords[1]; break;
    case Geometry::kA2d: layer = coords[0]; x = coords[1]; y = coords[2]; break;
    default: break;
  }
  const int64_t row_bytes = static_cast<int64_t>(h.width) * h.element_bytes;
  const int64_t height = h.height, depth = h.depth, layers = std::max<int64_t>(h.layers, 1);
  const bool inside = x >= 0 && x + bytes <= row_bytes && x % bytes == 0 && y >= 0 && y < height && z >= 0 &&
                      z < depth && layer >= 0 && layer < layers;
  if (!inside) {
    if (boundary == Boundary::kClamp) {
      x = std::clamp<int64_t>(x, 0, std::max<int64_t>(row_bytes - bytes, 0)) / bytes * bytes;
      y = std::clamp<int64_t>(y, 0, height - 1);
      z = std::clamp<int64_t>(z, 0, depth - 1);
      layer = std::clamp<int64_t>(layer, 0, layers - 1);
    } else {
      if (why != nullptr) {
        *why = "surface access of " + std::to_string(bytes) + " bytes at byte column " + std::to_string(x) + ", row " +
               std::to_string(y) + (depth > 1 ? ", slice " + std::to_string(z) : std::string()) +
               (h.layers != 0 ? ", layer " + std::to_string(layer) : std::string()) + " is outside the " +
               std::to_string(row_bytes) + "-byte x " + std::to_string(height) + " surface" +
               (x % bytes != 0 ? " (misaligned column)" : "");
      }
      return SurfacePlace::kOutside;
    }
  }
  *address_out = h.base + static_cast<uint64_t>(layer + z) * h.slice_pitch + static_cast<uint64_t>(y) * h.row_pitch +
                 static_cast<uint64_t>(x);
  return SurfacePlace::kInside;
}

}  // namespace gpuvp::ptx::texture
