// Texture and surface descriptors as they live in device memory: the contract between the
// runtime (sw/cudart/api_texture.cpp writes them) and the PTX model (models/gpu/ptx/texture.*
// reads them when a kernel executes tex, tld4, txq, suld, sust or suq).
//
// Real GPUs keep texture headers and samplers in tables in device memory that the driver fills
// and the texture unit reads through its own cache; a texture object handle indexes them. gpuvp
// keeps one table of these 128-byte headers (texture state and sampler state together) in device
// memory, grown in blocks; a cudaTextureObject_t / cudaSurfaceObject_t is the device address of
// its header. A kernel reads the header at the handle's address, so a handle reaches the device
// by value like any kernel argument, and nothing outside device memory has to be consulted. A
// header is valid when its magic matches and `self` equals its own address: a destroyed object's
// header is zeroed, so a stale or wild handle is told apart from a live one and faults clearly.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuvp::device {

constexpr uint32_t kTextureMagic = 0x58455447;  // "GTEX"
constexpr uint32_t kSurfaceMagic = 0x46525347;  // "GSRF"
constexpr uint32_t kTextureHeaderBytes = 128;

// Where the texels live. Arrays are stored pitch-linear (rows of width * element bytes, no
// padding; slices/layers/cube faces one after another): their layout is opaque to programs.
enum class TextureResource : uint8_t { kArray = 0, kLinear = 1, kPitch2D = 2 };
// Channel data kinds (cudaChannelFormatKind's three basic kinds; 16-bit float is kFloat with 16 bits).
enum class TextureFormat : uint8_t { kSigned = 0, kUnsigned = 1, kFloat = 2 };
// cudaTextureAddressMode values.
enum class TextureAddress : uint8_t { kWrap = 0, kClamp = 1, kMirror = 2, kBorder = 3 };

struct TextureHeader {
  uint32_t magic = 0;      // kTextureMagic, kSurfaceMagic; 0: no object
  uint32_t reserved0 = 0;
  uint64_t self = 0;       // the header's own device address (the handle)
  uint64_t base = 0;       // device address of texel (0, 0, 0) of layer 0
  uint64_t row_pitch = 0;  // bytes between rows
  uint64_t slice_pitch = 0;  // bytes between depth slices, layers and cube faces
  uint32_t width = 0;      // in elements
  uint32_t height = 0;     // 1 for 1D
  uint32_t depth = 0;      // 1 for 1D/2D
  uint32_t layers = 0;     // 0: not layered; cubemaps: faces x layers (6 for a plain cubemap)
  uint8_t resource = 0;    // TextureResource
  uint8_t dimensions = 0;  // 1, 2 or 3
  uint8_t layered = 0;
  uint8_t cubemap = 0;
  uint8_t channels = 0;        // 1..4
  uint8_t channel_bits = 0;    // bits per channel: 8, 16 or 32 (all channels alike)
  uint8_t format = 0;          // TextureFormat
  uint8_t element_bytes = 0;   // channels * channel_bits / 8
  uint8_t address_mode[3] = {0, 0, 0};  // TextureAddress per dimension
  uint8_t linear_filter = 0;      // cudaFilterModeLinear
  uint8_t normalized_read = 0;    // cudaReadModeNormalizedFloat (8/16-bit integer formats)
  uint8_t normalized_coords = 0;
  uint8_t srgb = 0;
  uint8_t reserved1 = 0;
  float border[4] = {0, 0, 0, 0};
  uint8_t reserved2[128 - 88] = {};
};
static_assert(sizeof(TextureHeader) == kTextureHeaderBytes, "TextureHeader layout is part of the device interface");
static_assert(offsetof(TextureHeader, width) == 40 && offsetof(TextureHeader, resource) == 56 &&
                  offsetof(TextureHeader, border) == 72,
              "TextureHeader layout is part of the device interface");

}  // namespace gpuvp::device
