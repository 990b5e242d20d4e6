// CUDA arrays, pitched allocations, 2D/3D copies and sets, texture and surface objects.
//
// A CUDA array is device memory the runtime allocates and lays out pitch-linear: rows of
// width x element bytes without padding, then rows of the next depth slice, layer or cube face
// (the layout is opaque to programs, so a copy into a whole array is one copy). Texture and
// surface objects are 128-byte headers (sw/include/gpuvp/texture_header.h) in a table of
// device memory the runtime grows in blocks; the handle is the header's device address, so
// kernels find the object through the handle they are given. 2D and 3D copies and sets are
// issued as one copy-engine command per row unless the rows are contiguous on both sides
// (approximation: the copy engine's own 2D mode would issue them as one transfer).
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "gpuvp/texture_header.h"
#include "sw/cudart/api.h"

using gpuvp::cudart::Runtime;
using gpuvp::cudart::with_device;
using gpuvp::cudart::with_runtime;
namespace dev = gpuvp::device;

// cudaArray_t points at one of these (the CUDA headers leave the struct incomplete).
struct cudaArray {
  cudaChannelFormatDesc desc{};
  cudaExtent extent{};  // as allocated (depth 0 for 1D/2D arrays; height 0 for 1D)
  unsigned flags = 0;
  uint64_t base = 0;    // device address of the texels
  uint32_t element_bytes = 0;
  uint64_t row_pitch = 0;
  uint64_t slice_pitch = 0;
  uint64_t bytes = 0;
  uint32_t width() const { return static_cast<uint32_t>(extent.width); }
  uint32_t height() const { return static_cast<uint32_t>(extent.height == 0 ? 1 : extent.height); }
  uint32_t slices() const { return static_cast<uint32_t>(extent.depth == 0 ? 1 : extent.depth); }
  uint64_t address(size_t x_bytes, size_t y, size_t z) const { return base + z * slice_pitch + y * row_pitch + x_bytes; }
};

namespace {

constexpr uint64_t kPitchAlignment = 512;  // what cudaMallocPitch rounds pitches to (the texture alignment)
constexpr uint32_t kHeadersPerBlock = 512;

struct TextureObject {
  bool surface = false;
  cudaResourceDesc resource{};
  cudaTextureDesc texture{};
  cudaResourceViewDesc view{};
  bool has_view = false;
};

// The runtime's texture state: arrays, the header table and the live objects. Guarded by the
// runtime's mutex (every entry point runs inside with_device/with_runtime).
struct TextureState {
  uint64_t reset_count = 0;  // Runtime::reset_count() when this state was made
  std::map<const cudaArray*, std::unique_ptr<cudaArray>> arrays;
  std::vector<uint64_t> free_headers;  // header addresses, reused last-freed first
  std::map<uint64_t, TextureObject> objects;  // handle -> object
};

TextureState& state() {
  static TextureState* s = new TextureState;  // lives to exit: objects may be destroyed from atexit handlers
  // cudaDeviceReset freed the device memory of every array and header: forget them.
  if (const uint64_t resets = Runtime::instance().reset_count(); resets != s->reset_count) {
    *s = TextureState{};
    s->reset_count = resets;
  }
  return *s;
}

uint64_t to_address(const void* p) { return reinterpret_cast<uint64_t>(p); }
void* to_pointer(uint64_t a) { return reinterpret_cast<void*>(a); }

// Bits per channel and channel count of a format descriptor, or cudaErrorInvalidChannelDescriptor.
// Real CUDA allows 1, 2 or 4 channels of equal width: 8, 16 or 32 bits (16 or 32 for float).
struct ChannelFormat {
  uint32_t channels = 0;
  uint32_t bits = 0;
  dev::TextureFormat format = dev::TextureFormat::kUnsigned;
  bool always_normalized = false;  // the *Normalized8/16 kinds: reads return floats
  uint32_t element_bytes() const { return channels * bits / 8; }
};

cudaError_t channel_format(const cudaChannelFormatDesc& d, ChannelFormat* out) {
  ChannelFormat f;
  switch (d.f) {
    case cudaChannelFormatKindSigned: f.format = dev::TextureFormat::kSigned; break;
    case cudaChannelFormatKindUnsigned: f.format = dev::TextureFormat::kUnsigned; break;
    case cudaChannelFormatKindFloat: f.format = dev::TextureFormat::kFloat; break;
    case cudaChannelFormatKindUnsignedNormalized8X1: case cudaChannelFormatKindUnsignedNormalized8X2:
    case cudaChannelFormatKindUnsignedNormalized8X4: case cudaChannelFormatKindUnsignedNormalized16X1:
    case cudaChannelFormatKindUnsignedNormalized16X2: case cudaChannelFormatKindUnsignedNormalized16X4:
      f.format = dev::TextureFormat::kUnsigned;
      f.always_normalized = true;
      break;
    case cudaChannelFormatKindSignedNormalized8X1: case cudaChannelFormatKindSignedNormalized8X2:
    case cudaChannelFormatKindSignedNormalized8X4: case cudaChannelFormatKindSignedNormalized16X1:
    case cudaChannelFormatKindSignedNormalized16X2: case cudaChannelFormatKindSignedNormalized16X4:
      f.format = dev::TextureFormat::kSigned;
      f.always_normalized = true;
      break;
    default:
      return cudaErrorInvalidChannelDescriptor;  // none, NV12, block-compressed, 10-10-10-2
  }
  const int widths[4] = {d.x, d.y, d.z, d.w};
  for (int i = 0; i < 4; ++i) {
    if (widths[i] == 0) break;
    if (widths[i] != widths[0]) return cudaErrorInvalidChannelDescriptor;
    f.channels = static_cast<uint32_t>(i + 1);
  }
  for (uint32_t i = f.channels; i < 4; ++i) {
    if (widths[i] != 0) return cudaErrorInvalidChannelDescriptor;  // a gap between channels
  }
  if (f.channels == 0 || f.channels == 3) return cudaErrorInvalidChannelDescriptor;
  f.bits = static_cast<uint32_t>(d.x);
  if (f.bits != 8 && f.bits != 16 && f.bits != 32) return cudaErrorInvalidChannelDescriptor;
  if (f.format == dev::TextureFormat::kFloat && f.bits == 8) return cudaErrorInvalidChannelDescriptor;
  if (f.always_normalized && f.bits == 32) return cudaErrorInvalidChannelDescriptor;
  *out = f;
  return cudaSuccess;
}

cudaArray* array_of(cudaArray_const_t array) {
  auto& arrays = state().arrays;
  const auto it = arrays.find(array);
  return it == arrays.end() ? nullptr : it->second.get();
}

cudaError_t allocate_array(Runtime& runtime, cudaArray_t* out, const cudaChannelFormatDesc* desc, cudaExtent extent,
                           unsigned flags) {
  if (out == nullptr || desc == nullptr) return cudaErrorInvalidValue;
  ChannelFormat format;
  if (const cudaError_t e = channel_format(*desc, &format); e != cudaSuccess) return e;
  constexpr unsigned kKnown = cudaArrayLayered | cudaArraySurfaceLoadStore | cudaArrayCubemap | cudaArrayTextureGather;
  if ((flags & ~kKnown) != 0) return cudaErrorInvalidValue;
  if (extent.width == 0) return cudaErrorInvalidValue;
  if (extent.height == 0 && extent.depth != 0 && (flags & cudaArrayLayered) == 0) return cudaErrorInvalidValue;
  if ((flags & cudaArrayCubemap) != 0) {
    // Cube faces are square; the depth counts faces (6, or 6 per layer when layered).
    if (extent.width != extent.height || extent.depth == 0 || extent.depth % 6 != 0) return cudaErrorInvalidValue;
    if ((flags & cudaArrayLayered) == 0 && extent.depth != 6) return cudaErrorInvalidValue;
  }
  if ((flags & cudaArrayLayered) != 0 && extent.depth == 0) return cudaErrorInvalidValue;
  constexpr size_t kMaxDimension = 1u << 17;  // cudaDevAttrMaxTexture1DWidth and friends are smaller; this guards overflow
  if (extent.width > kMaxDimension || extent.height > kMaxDimension || extent.depth > kMaxDimension) {
    return cudaErrorInvalidValue;
  }
  auto array = std::make_unique<cudaArray>();
  array->desc = *desc;
  array->extent = extent;
  array->flags = flags;
  array->element_bytes = format.element_bytes();
  array->row_pitch = extent.width * array->element_bytes;
  array->slice_pitch = array->row_pitch * array->height();
  array->bytes = array->slice_pitch * array->slices();
  void* base = nullptr;
  if (const cudaError_t e = runtime.malloc_device(&base, array->bytes); e != cudaSuccess) return e;
  array->base = to_address(base);
  if (const cudaError_t e = runtime.memset(base, 0, array->bytes, nullptr, false); e != cudaSuccess) return e;
  *out = array.get();
  state().arrays.emplace(array.get(), std::move(array));
  return cudaSuccess;
}

// Copies `height` rows of `width` bytes between pitched ranges (either side host or device).
cudaError_t copy_rows(Runtime& runtime, uint64_t dst, size_t dpitch, uint64_t src, size_t spitch, size_t width,
                      size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  if (width == 0 || height == 0) return cudaSuccess;
  if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
  if (dst == 0 || src == 0) return cudaErrorInvalidValue;
  if (dpitch == width && spitch == width) {
    return runtime.memcpy(to_pointer(dst), to_pointer(src), width * height, kind, stream, async);
  }
  for (size_t row = 0; row < height; ++row) {
    const bool last = row + 1 == height;
    const cudaError_t e = runtime.memcpy(to_pointer(dst + row * dpitch), to_pointer(src + row * spitch), width, kind,
                                         stream, last ? async : true);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// An array's rows as a pitched range: bounds-checked region of `width_bytes` x `height` at
// (x_bytes, y) of slice z.
cudaError_t array_region(const cudaArray* array, size_t x_bytes, size_t y, size_t z, size_t width_bytes, size_t height,
                         size_t slices, uint64_t* address) {
  if (array == nullptr) return cudaErrorInvalidResourceHandle;
  if (x_bytes + width_bytes > array->row_pitch || y + height > array->height() || z + slices > array->slices()) {
    return cudaErrorInvalidValue;
  }
  *address = array->address(x_bytes, y, z);
  return cudaSuccess;
}

cudaError_t copy_2d(Runtime& runtime, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                    size_t height, cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  return copy_rows(runtime, to_address(dst), dpitch, to_address(src), spitch, width, height, kind, stream, async);
}

cudaError_t copy_2d_to_array(Runtime& runtime, cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                             size_t spitch, size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t stream,
                             bool async) {
  uint64_t address = 0;
  if (const cudaError_t e = array_region(array_of(dst), w_offset, h_offset, 0, width, height, 1, &address); e != cudaSuccess) {
    return e;
  }
  if (kind == cudaMemcpyDeviceToHost) return cudaErrorInvalidMemcpyDirection;
  return copy_rows(runtime, address, array_of(dst)->row_pitch, to_address(src), spitch, width, height, kind, stream, async);
}

cudaError_t copy_2d_from_array(Runtime& runtime, void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                               size_t h_offset, size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t stream,
                               bool async) {
  uint64_t address = 0;
  if (const cudaError_t e = array_region(array_of(src), w_offset, h_offset, 0, width, height, 1, &address); e != cudaSuccess) {
    return e;
  }
  if (kind == cudaMemcpyHostToDevice) return cudaErrorInvalidMemcpyDirection;
  return copy_rows(runtime, to_address(dst), dpitch, address, array_of(src)->row_pitch, width, height, kind, stream, async);
}

// The 1D forms (cudaMemcpyToArray...): `count` bytes starting at (w_offset, h_offset), filling
// rows to their end and continuing on the next rows, as the deprecated API defines.
cudaError_t copy_linear_array(Runtime& runtime, cudaArray* array, size_t w_offset, size_t h_offset, uint64_t other,
                              size_t count, bool to_array, cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  if (array == nullptr) return cudaErrorInvalidResourceHandle;
  const uint64_t start = h_offset * array->row_pitch + w_offset;
  if (w_offset > array->row_pitch || start + count > array->bytes) return cudaErrorInvalidValue;
  const uint64_t address = array->base + start;
  return to_array ? runtime.memcpy(to_pointer(address), to_pointer(other), count, kind, stream, async)
                  : runtime.memcpy(to_pointer(other), to_pointer(address), count, kind, stream, async);
}

cudaError_t copy_3d(Runtime& runtime, const cudaMemcpy3DParms* p, cudaStream_t stream, bool async) {
  if (p == nullptr) return cudaErrorInvalidValue;
  if ((p->srcArray != nullptr) == (p->srcPtr.ptr != nullptr)) return cudaErrorInvalidValue;
  if ((p->dstArray != nullptr) == (p->dstPtr.ptr != nullptr)) return cudaErrorInvalidValue;
  const cudaArray* src_array = p->srcArray != nullptr ? array_of(p->srcArray) : nullptr;
  const cudaArray* dst_array = p->dstArray != nullptr ? array_of(p->dstArray) : nullptr;
  if ((p->srcArray != nullptr && src_array == nullptr) || (p->dstArray != nullptr && dst_array == nullptr)) {
    return cudaErrorInvalidResourceHandle;
  }
  // With an array on either side, widths and x positions count elements of that array.
  const uint32_t element = src_array != nullptr ? src_array->element_bytes
                           : dst_array != nullptr ? dst_array->element_bytes : 1;
  if (src_array != nullptr && dst_array != nullptr && src_array->element_bytes != dst_array->element_bytes) {
    return cudaErrorInvalidValue;
  }
  const size_t width = p->extent.width * element;
  const size_t height = p->extent.height, depth = p->extent.depth;
  if (width == 0 || height == 0 || depth == 0) return cudaSuccess;
  struct Side {
    uint64_t base;
    size_t pitch, slice;
  };
  auto side = [&](const cudaArray* array, const cudaPitchedPtr& ptr, const cudaPos& pos, Side* out) -> cudaError_t {
    if (array != nullptr) {
      uint64_t address = 0;
      if (const cudaError_t e = array_region(array, pos.x * element, pos.y, pos.z, width, height, depth, &address);
          e != cudaSuccess) {
        return e;
      }
      *out = Side{address, array->row_pitch, array->slice_pitch};
      return cudaSuccess;
    }
    if (ptr.pitch < width) return cudaErrorInvalidPitchValue;
    const size_t slice = ptr.pitch * (ptr.ysize == 0 ? height : ptr.ysize);
    *out = Side{to_address(ptr.ptr) + pos.z * slice + pos.y * ptr.pitch + pos.x, ptr.pitch,
                slice};
    return cudaSuccess;
  };
  Side s{}, d{};
  if (const cudaError_t e = side(src_array, p->srcPtr, p->srcPos, &s); e != cudaSuccess) return e;
  if (const cudaError_t e = side(dst_array, p->dstPtr, p->dstPos, &d); e != cudaSuccess) return e;
  cudaMemcpyKind kind = p->kind;
  if (src_array != nullptr && dst_array != nullptr) kind = cudaMemcpyDeviceToDevice;
  // Whole slices that are contiguous on both sides are one copy.
  if (d.pitch == width && s.pitch == width && d.slice == width * height && s.slice == width * height) {
    return runtime.memcpy(to_pointer(d.base), to_pointer(s.base), width * height * depth, kind, stream, async);
  }
  for (size_t z = 0; z < depth; ++z) {
    const bool last = z + 1 == depth;
    const cudaError_t e = copy_rows(runtime, d.base + z * d.slice, d.pitch, s.base + z * s.slice, s.pitch, width, height,
                                    kind, stream, last ? async : true);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t set_2d(Runtime& runtime, void* dst, size_t pitch, int value, size_t width, size_t height,
                   cudaStream_t stream, bool async) {
  if (width == 0 || height == 0) return cudaSuccess;
  if (width > pitch) return cudaErrorInvalidValue;
  if (pitch == width) return runtime.memset(dst, value, width * height, stream, async);
  for (size_t row = 0; row < height; ++row) {
    const bool last = row + 1 == height;
    const cudaError_t e =
        runtime.memset(static_cast<uint8_t*>(dst) + row * pitch, value, width, stream, last ? async : true);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t set_3d(Runtime& runtime, cudaPitchedPtr ptr, int value, cudaExtent extent, cudaStream_t stream, bool async) {
  if (extent.width == 0 || extent.height == 0 || extent.depth == 0) return cudaSuccess;
  if (ptr.ptr == nullptr || extent.width > ptr.pitch) return cudaErrorInvalidValue;
  const size_t slice = ptr.pitch * (ptr.ysize == 0 ? extent.height : ptr.ysize);
  if (ptr.ysize != 0 && extent.height > ptr.ysize) return cudaErrorInvalidValue;
  for (size_t z = 0; z < extent.depth; ++z) {
    const bool last = z + 1 == extent.depth;
    const cudaError_t e = set_2d(runtime, static_cast<uint8_t*>(ptr.ptr) + z * slice, ptr.pitch, value, extent.width,
                                 extent.height, stream, last ? async : true);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// ---- texture and surface objects

cudaError_t header_slot(Runtime& runtime, uint64_t* address) {
  auto& free = state().free_headers;
  if (free.empty()) {
    void* block = nullptr;
    if (const cudaError_t e = runtime.malloc_device(&block, uint64_t{kHeadersPerBlock} * dev::kTextureHeaderBytes);
        e != cudaSuccess) {
      return e;
    }
    for (uint32_t i = kHeadersPerBlock; i-- > 0;) free.push_back(to_address(block) + uint64_t{i} * dev::kTextureHeaderBytes);
  }
  *address = free.back();
  free.pop_back();
  return cudaSuccess;
}

// Fills the resource part of a header from a resource descriptor.
cudaError_t describe_resource(const cudaResourceDesc& r, bool surface, dev::TextureHeader* h, ChannelFormat* format) {
  if (r.flags != 0) return cudaErrorInvalidValue;
  switch (r.resType) {
    case cudaResourceTypeArray: {
      const cudaArray* array = array_of(r.res.array.array);
      if (array == nullptr) return cudaErrorInvalidResourceHandle;
      if (surface && (array->flags & cudaArraySurfaceLoadStore) == 0) return cudaErrorInvalidValue;
      if (const cudaError_t e = channel_format(array->desc, format); e != cudaSuccess) return e;
      h->resource = static_cast<uint8_t>(dev::TextureResource::kArray);
      h->base = array->base;
      h->row_pitch = array->row_pitch;
      h->slice_pitch = array->slice_pitch;
      h->width = array->width();
      h->height = array->height();
      h->layered = (array->flags & cudaArrayLayered) != 0;
      h->cubemap = (array->flags & cudaArrayCubemap) != 0;
      h->dimensions = array->extent.height == 0 ? 1 : (array->extent.depth == 0 || h->layered || h->cubemap) ? 2 : 3;
      h->depth = h->dimensions == 3 ? array->slices() : 1;
      h->layers = (h->layered || h->cubemap) ? array->slices() : 0;
      return cudaSuccess;
    }
    case cudaResourceTypeLinear: {
      if (surface) return cudaErrorInvalidValue;
      if (r.res.linear.devPtr == nullptr) return cudaErrorInvalidValue;
      if (const cudaError_t e = channel_format(r.res.linear.desc, format); e != cudaSuccess) return e;
      if (to_address(r.res.linear.devPtr) % format->element_bytes() != 0) return cudaErrorInvalidValue;
      const uint64_t elements = r.res.linear.sizeInBytes / format->element_bytes();
      if (elements == 0 || elements > (1u << 27)) return cudaErrorInvalidValue;  // cudaDevAttrMaxTexture1DLinearWidth
      h->resource = static_cast<uint8_t>(dev::TextureResource::kLinear);
      h->base = to_address(r.res.linear.devPtr);
      h->row_pitch = r.res.linear.sizeInBytes;
      h->slice_pitch = r.res.linear.sizeInBytes;
      h->width = static_cast<uint32_t>(elements);
      h->height = 1;
      h->depth = 1;
      h->dimensions = 1;
      return cudaSuccess;
    }
    case cudaResourceTypePitch2D: {
      if (surface) return cudaErrorInvalidValue;
      const auto& p = r.res.pitch2D;
      if (p.devPtr == nullptr || p.width == 0 || p.height == 0) return cudaErrorInvalidValue;
      if (const cudaError_t e = channel_format(p.desc, format); e != cudaSuccess) return e;
      if (p.pitchInBytes < p.width * format->element_bytes() || p.pitchInBytes % 32 != 0) return cudaErrorInvalidValue;
      h->resource = static_cast<uint8_t>(dev::TextureResource::kPitch2D);
      h->base = to_address(p.devPtr);
      h->row_pitch = p.pitchInBytes;
      h->slice_pitch = p.pitchInBytes * p.height;
      h->width = static_cast<uint32_t>(p.width);
      h->height = static_cast<uint32_t>(p.height);
      h->depth = 1;
      h->dimensions = 2;
      return cudaSuccess;
    }
    default:
      return cudaErrorInvalidValue;  // mipmapped arrays are not implemented
  }
}

cudaError_t create_object(Runtime& runtime, unsigned long long* handle, const cudaResourceDesc* resource,
                          const cudaTextureDesc* texture, const cudaResourceViewDesc* view, bool surface) {
  if (handle == nullptr || resource == nullptr || (!surface && texture == nullptr)) return cudaErrorInvalidValue;
  dev::TextureHeader h;
  ChannelFormat format;
  if (const cudaError_t e = describe_resource(*resource, surface, &h, &format); e != cudaSuccess) return e;
  h.magic = surface ? dev::kSurfaceMagic : dev::kTextureMagic;
  h.channels = static_cast<uint8_t>(format.channels);
  h.channel_bits = static_cast<uint8_t>(format.bits);
  h.format = static_cast<uint8_t>(format.format);
  h.element_bytes = static_cast<uint8_t>(format.element_bytes());
  if (!surface) {
    const cudaTextureDesc& t = *texture;
    for (int i = 0; i < 3; ++i) {
      if (t.addressMode[i] < cudaAddressModeWrap || t.addressMode[i] > cudaAddressModeBorder) return cudaErrorInvalidValue;
      h.address_mode[i] = static_cast<uint8_t>(t.addressMode[i]);
    }
    if (t.filterMode != cudaFilterModePoint && t.filterMode != cudaFilterModeLinear) return cudaErrorInvalidValue;
    if (t.readMode != cudaReadModeElementType && t.readMode != cudaReadModeNormalizedFloat) return cudaErrorInvalidValue;
    const bool normalized_read =
        format.always_normalized || (t.readMode == cudaReadModeNormalizedFloat && format.format != dev::TextureFormat::kFloat);
    // Linear filtering interpolates floats: integer texels must be read as normalized floats.
    if (t.filterMode == cudaFilterModeLinear && format.format != dev::TextureFormat::kFloat && !normalized_read) {
      return cudaErrorInvalidFilterSetting;
    }
    if (t.readMode == cudaReadModeNormalizedFloat && format.format != dev::TextureFormat::kFloat && format.bits == 32) {
      return cudaErrorInvalidNormSetting;
    }
    h.linear_filter = t.filterMode == cudaFilterModeLinear;
    h.normalized_read = normalized_read;
    h.normalized_coords = t.normalizedCoords != 0;
    h.srgb = t.sRGB != 0;
    for (int i = 0; i < 4; ++i) h.border[i] = t.borderColor[i];
  }
  uint64_t address = 0;
  if (const cudaError_t e = header_slot(runtime, &address); e != cudaSuccess) return e;
  h.self = address;
  if (const cudaError_t e = runtime.memcpy(to_pointer(address), &h, sizeof h, cudaMemcpyHostToDevice, nullptr, false);
      e != cudaSuccess) {
    state().free_headers.push_back(address);
    return e;
  }
  TextureObject object;
  object.surface = surface;
  object.resource = *resource;
  if (texture != nullptr) object.texture = *texture;
  if (view != nullptr) {
    object.view = *view;
    object.has_view = true;
  }
  state().objects[address] = object;
  *handle = address;
  return cudaSuccess;
}

cudaError_t destroy_object(Runtime& runtime, unsigned long long handle, bool surface) {
  if (handle == 0) return cudaSuccess;  // CUDA: destroying the null object is a no-op
  auto& objects = state().objects;
  const auto it = objects.find(handle);
  if (it == objects.end() || it->second.surface != surface) return cudaErrorInvalidValue;
  // Zero the header: a kernel launched later with this handle faults naming it.
  if (const cudaError_t e = runtime.memset(to_pointer(handle), 0, dev::kTextureHeaderBytes, nullptr, false); e != cudaSuccess) {
    return e;
  }
  objects.erase(it);
  state().free_headers.push_back(handle);
  return cudaSuccess;
}

const TextureObject* object_of(unsigned long long handle, bool surface) {
  const auto& objects = state().objects;
  const auto it = objects.find(handle);
  return it == objects.end() || it->second.surface != surface ? nullptr : &it->second;
}

}  // namespace

// ---- arrays

GPUVP_EXPORT cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width,
                                         size_t height, unsigned int flags) {
  return with_device([&](Runtime& runtime) {
    if ((flags & (cudaArrayLayered | cudaArrayCubemap)) != 0) return cudaErrorInvalidValue;
    return allocate_array(runtime, array, desc, cudaExtent{width, height, 0}, flags);
  });
}

GPUVP_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                                           unsigned int flags) {
  return with_device([&](Runtime& runtime) { return allocate_array(runtime, array, desc, extent, flags); });
}

GPUVP_EXPORT cudaError_t cudaFreeArray(cudaArray_t array) {
  return with_device([&](Runtime& runtime) {
    if (array == nullptr) return cudaSuccess;
    auto& arrays = state().arrays;
    const auto it = arrays.find(array);
    if (it == arrays.end()) return cudaErrorInvalidValue;
    const cudaError_t e = runtime.free_device(to_pointer(it->second->base));
    arrays.erase(it);
    return e;
  });
}

GPUVP_EXPORT cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags,
                                          cudaArray_t array) {
  return with_runtime([&](Runtime&) {
    const cudaArray* a = array_of(array);
    if (a == nullptr) return cudaErrorInvalidResourceHandle;
    if (desc != nullptr) *desc = a->desc;
    if (extent != nullptr) *extent = a->extent;
    if (flags != nullptr) *flags = a->flags;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
  return with_runtime([&](Runtime&) {
    const cudaArray* a = array_of(array);
    if (a == nullptr) return cudaErrorInvalidResourceHandle;
    if (desc == nullptr) return cudaErrorInvalidValue;
    *desc = a->desc;
    return cudaSuccess;
  });
}

// ---- pitched allocations

GPUVP_EXPORT cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  return with_device([&](Runtime& runtime) {
    if (ptr == nullptr || pitch == nullptr) return cudaErrorInvalidValue;
    const size_t rounded = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
    if (const cudaError_t e = runtime.malloc_device(ptr, rounded * height); e != cudaSuccess) return e;
    *pitch = rounded;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent) {
  return with_device([&](Runtime& runtime) {
    if (pitched == nullptr) return cudaErrorInvalidValue;
    const size_t rounded = (extent.width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
    void* ptr = nullptr;
    if (const cudaError_t e = runtime.malloc_device(&ptr, rounded * extent.height * extent.depth); e != cudaSuccess) return e;
    *pitched = cudaPitchedPtr{ptr, rounded, extent.width, extent.height};
    return cudaSuccess;
  });
}

// ---- 2D copies

GPUVP_EXPORT cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                      size_t height, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) { return copy_2d(r, dst, dpitch, src, spitch, width, height, kind, nullptr, false); });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                           size_t height, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_2d(r, dst, dpitch, src, spitch, width, height, kind, cudaStreamPerThread, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                           size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  return with_device([&](Runtime& r) { return copy_2d(r, dst, dpitch, src, spitch, width, height, kind, stream, true); });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                                size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                             size_t spitch, size_t width, size_t height, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_2d_to_array(r, dst, w_offset, h_offset, src, spitch, width, height, kind, nullptr, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                                  size_t spitch, size_t width, size_t height, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_2d_to_array(r, dst, w_offset, h_offset, src, spitch, width, height, kind, cudaStreamPerThread, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                                  size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,
                                                  cudaStream_t stream) {
  return with_device([&](Runtime& r) {
    return copy_2d_to_array(r, dst, w_offset, h_offset, src, spitch, width, height, kind, stream, true);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t w_offset, size_t h_offset,
                                                       const void* src, size_t spitch, size_t width, size_t height,
                                                       cudaMemcpyKind kind, cudaStream_t stream) {
  return cudaMemcpy2DToArrayAsync(dst, w_offset, h_offset, src, spitch, width, height, kind, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                                               size_t h_offset, size_t width, size_t height, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_2d_from_array(r, dst, dpitch, src, w_offset, h_offset, width, height, kind, nullptr, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DFromArray_ptds(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                                                    size_t h_offset, size_t width, size_t height, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_2d_from_array(r, dst, dpitch, src, w_offset, h_offset, width, height, kind, cudaStreamPerThread, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                                                    size_t h_offset, size_t width, size_t height, cudaMemcpyKind kind,
                                                    cudaStream_t stream) {
  return with_device([&](Runtime& r) {
    return copy_2d_from_array(r, dst, dpitch, src, w_offset, h_offset, width, height, kind, stream, true);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(void* dst, size_t dpitch, cudaArray_const_t src,
                                                         size_t w_offset, size_t h_offset, size_t width, size_t height,
                                                         cudaMemcpyKind kind, cudaStream_t stream) {
  return cudaMemcpy2DFromArrayAsync(dst, dpitch, src, w_offset, h_offset, width, height, kind, Runtime::per_thread(stream));
}

GPUVP_EXPORT cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t w_offset_dst, size_t h_offset_dst,
                                                  cudaArray_const_t src, size_t w_offset_src, size_t h_offset_src,
                                                  size_t width, size_t height, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
    uint64_t d = 0, s = 0;
    if (const cudaError_t e = array_region(array_of(dst), w_offset_dst, h_offset_dst, 0, width, height, 1, &d); e != cudaSuccess) return e;
    if (const cudaError_t e = array_region(array_of(src), w_offset_src, h_offset_src, 0, width, height, 1, &s); e != cudaSuccess) return e;
    return copy_rows(r, d, array_of(dst)->row_pitch, s, array_of(src)->row_pitch, width, height, cudaMemcpyDeviceToDevice,
                     nullptr, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpy2DArrayToArray_ptds(cudaArray_t dst, size_t w_offset_dst, size_t h_offset_dst,
                                                       cudaArray_const_t src, size_t w_offset_src, size_t h_offset_src,
                                                       size_t width, size_t height, cudaMemcpyKind kind) {
  return cudaMemcpy2DArrayToArray(dst, w_offset_dst, h_offset_dst, src, w_offset_src, h_offset_src, width, height, kind);
}

// ---- 1D array copies (deprecated in CUDA, still exported)

GPUVP_EXPORT cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                           size_t count, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_linear_array(r, array_of(dst), w_offset, h_offset, to_address(src), count, true, kind, nullptr, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpyToArray_ptds(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                                size_t count, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_linear_array(r, array_of(dst), w_offset, h_offset, to_address(src), count, true, kind,
                             cudaStreamPerThread, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                                size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return with_device([&](Runtime& r) {
    return copy_linear_array(r, array_of(dst), w_offset, h_offset, to_address(src), count, true, kind, stream, true);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpyToArrayAsync_ptsz(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                                     size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return with_device([&](Runtime& r) {
    return copy_linear_array(r, array_of(dst), w_offset, h_offset, to_address(src), count, true, kind,
                             Runtime::per_thread(stream), true);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                             size_t count, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_linear_array(r, array_of(src), w_offset, h_offset, to_address(dst), count, false, kind, nullptr, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpyFromArray_ptds(void* dst, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                                  size_t count, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    return copy_linear_array(r, array_of(src), w_offset, h_offset, to_address(dst), count, false, kind,
                             cudaStreamPerThread, false);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                                  size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return with_device([&](Runtime& r) {
    return copy_linear_array(r, array_of(src), w_offset, h_offset, to_address(dst), count, false, kind, stream, true);
  });
}
GPUVP_EXPORT cudaError_t cudaMemcpyFromArrayAsync_ptsz(void* dst, cudaArray_const_t src, size_t w_offset,
                                                       size_t h_offset, size_t count, cudaMemcpyKind kind,
                                                       cudaStream_t stream) {
  return with_device([&](Runtime& r) {
    return copy_linear_array(r, array_of(src), w_offset, h_offset, to_address(dst), count, false, kind,
                             Runtime::per_thread(stream), true);
  });
}
namespace {
cudaError_t array_to_array(cudaArray_t dst, size_t w_offset_dst, size_t h_offset_dst, cudaArray_const_t src,
                           size_t w_offset_src, size_t h_offset_src, size_t count, cudaMemcpyKind kind) {
  return with_device([&](Runtime& r) {
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
    const cudaArray* s = array_of(src);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    const uint64_t start = h_offset_src * s->row_pitch + w_offset_src;
    if (start + count > s->bytes) return cudaErrorInvalidValue;
    return copy_linear_array(r, array_of(dst), w_offset_dst, h_offset_dst, s->base + start, count, true,
                             cudaMemcpyDeviceToDevice, nullptr, false);
  });
}
}  // namespace

GPUVP_EXPORT cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t w_offset_dst, size_t h_offset_dst,
                                                cudaArray_const_t src, size_t w_offset_src, size_t h_offset_src,
                                                size_t count, cudaMemcpyKind kind) {
  return array_to_array(dst, w_offset_dst, h_offset_dst, src, w_offset_src, h_offset_src, count, kind);
}
GPUVP_EXPORT cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t w_offset_dst, size_t h_offset_dst,
                                                     cudaArray_const_t src, size_t w_offset_src, size_t h_offset_src,
                                                     size_t count, cudaMemcpyKind kind) {
  return array_to_array(dst, w_offset_dst, h_offset_dst, src, w_offset_src, h_offset_src, count, kind);
}

// ---- 3D copies

GPUVP_EXPORT cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  return with_device([&](Runtime& r) { return copy_3d(r, p, nullptr, false); });
}
GPUVP_EXPORT cudaError_t cudaMemcpy3D_ptds(const cudaMemcpy3DParms* p) {
  return with_device([&](Runtime& r) { return copy_3d(r, p, cudaStreamPerThread, false); });
}
GPUVP_EXPORT cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream) {
  return with_device([&](Runtime& r) { return copy_3d(r, p, stream, true); });
}
GPUVP_EXPORT cudaError_t cudaMemcpy3DAsync_ptsz(const cudaMemcpy3DParms* p, cudaStream_t stream) {
  return cudaMemcpy3DAsync(p, Runtime::per_thread(stream));
}

// ---- 2D/3D sets

GPUVP_EXPORT cudaError_t cudaMemset2D(void* dst, size_t pitch, int value, size_t width, size_t height) {
  return with_device([&](Runtime& r) { return set_2d(r, dst, pitch, value, width, height, nullptr, false); });
}
GPUVP_EXPORT cudaError_t cudaMemset2D_ptds(void* dst, size_t pitch, int value, size_t width, size_t height) {
  return with_device([&](Runtime& r) { return set_2d(r, dst, pitch, value, width, height, cudaStreamPerThread, false); });
}
GPUVP_EXPORT cudaError_t cudaMemset2DAsync(void* dst, size_t pitch, int value, size_t width, size_t height,
                                           cudaStream_t stream) {
  return with_device([&](Runtime& r) { return set_2d(r, dst, pitch, value, width, height, stream, true); });
}
GPUVP_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void* dst, size_t pitch, int value, size_t width, size_t height,
                                                cudaStream_t stream) {
  return cudaMemset2DAsync(dst, pitch, value, width, height, Runtime::per_thread(stream));
}
GPUVP_EXPORT cudaError_t cudaMemset3D(cudaPitchedPtr ptr, int value, cudaExtent extent) {
  return with_device([&](Runtime& r) { return set_3d(r, ptr, value, extent, nullptr, false); });
}
GPUVP_EXPORT cudaError_t cudaMemset3D_ptds(cudaPitchedPtr ptr, int value, cudaExtent extent) {
  return with_device([&](Runtime& r) { return set_3d(r, ptr, value, extent, cudaStreamPerThread, false); });
}
GPUVP_EXPORT cudaError_t cudaMemset3DAsync(cudaPitchedPtr ptr, int value, cudaExtent extent, cudaStream_t stream) {
  return with_device([&](Runtime& r) { return set_3d(r, ptr, value, extent, stream, true); });
}
GPUVP_EXPORT cudaError_t cudaMemset3DAsync_ptsz(cudaPitchedPtr ptr, int value, cudaExtent extent, cudaStream_t stream) {
  return cudaMemset3DAsync(ptr, value, extent, Runtime::per_thread(stream));
}

// ---- texture and surface objects

GPUVP_EXPORT cudaError_t cudaCreateTextureObject(cudaTextureObject_t* texture, const cudaResourceDesc* resource,
                                                 const cudaTextureDesc* desc, const cudaResourceViewDesc* view) {
  return with_device([&](Runtime& r) {
    if (view != nullptr) return cudaErrorNotSupported;  // resource views are not implemented
    return create_object(r, texture, resource, desc, view, false);
  });
}

GPUVP_EXPORT cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture) {
  return with_device([&](Runtime& r) { return destroy_object(r, texture, false); });
}

GPUVP_EXPORT cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resource, cudaTextureObject_t texture) {
  return with_runtime([&](Runtime&) {
    const TextureObject* object = object_of(texture, false);
    if (object == nullptr) return cudaErrorInvalidValue;
    if (resource == nullptr) return cudaErrorInvalidValue;
    *resource = object->resource;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* desc, cudaTextureObject_t texture) {
  return with_runtime([&](Runtime&) {
    const TextureObject* object = object_of(texture, false);
    if (object == nullptr || desc == nullptr) return cudaErrorInvalidValue;
    *desc = object->texture;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaGetTextureObjectResourceViewDesc(cudaResourceViewDesc* view, cudaTextureObject_t texture) {
  return with_runtime([&](Runtime&) {
    const TextureObject* object = object_of(texture, false);
    if (object == nullptr || view == nullptr || !object->has_view) return cudaErrorInvalidValue;
    *view = object->view;
    return cudaSuccess;
  });
}

GPUVP_EXPORT cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surface, const cudaResourceDesc* resource) {
  return with_device([&](Runtime& r) { return create_object(r, surface, resource, nullptr, nullptr, true); });
}

GPUVP_EXPORT cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surface) {
  return with_device([&](Runtime& r) { return destroy_object(r, surface, true); });
}

GPUVP_EXPORT cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* resource, cudaSurfaceObject_t surface) {
  return with_runtime([&](Runtime&) {
    const TextureObject* object = object_of(surface, true);
    if (object == nullptr || resource == nullptr) return cudaErrorInvalidValue;
    *resource = object->resource;
    return cudaSuccess;
  });
}
