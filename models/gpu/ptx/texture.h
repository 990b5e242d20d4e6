// Texture and surface semantics of the PTX model: tex, tld4, txq, suld.b, sust.b, suq on the
// descriptors of sw/include/gpuvp/texture_header.h (a handle is the device address of its
// header). Private to models/gpu/ptx; the executor calls these per lane.
//
// Sampling follows the CUDA programming guide's "Texture Fetching" appendix: nearest-point
// sampling takes texel floor(x); linear filtering interpolates the texels around x - 0.5 with
// weights held in 9-bit fixed point (8 fractional bits); wrap and mirror addressing need
// normalized coordinates (otherwise they clamp); border gives the border colour; cubemap faces
// are chosen by the major axis of the direction, as the guide's cubemap table gives them.
// Mipmaps are not modelled: tex.level and tex.grad sample level 0, which is every texture's
// only level here.
#pragma once

#include <cstdint>
#include <string>

#include "models/gpu/ptx/memory.h"
#include "sw/include/gpuvp/texture_header.h"

namespace gpuvp::ptx::texture {

enum class Geometry : uint8_t { kNone, k1d, k2d, k3d, kA1d, kA2d, kCube, kACube };
enum class Variant : uint8_t { kPlain, kLevel, kGrad };  // tex
enum class Boundary : uint8_t { kTrap, kClamp, kZero };  // suld / sust
enum class Query : uint8_t {
  kWidth, kHeight, kDepth, kArraySize, kNumMipmapLevels, kNumSamples, kNormalizedCoords, kFilterMode,
  kAddrMode0, kAddrMode1, kAddrMode2,
};
enum class ResultKind : uint8_t { kF32, kS32, kU32 };

// Where Instruction::mode keeps the geometry (low 4 bits) and the variant, tld4 component,
// surface boundary or query (high 4 bits).
inline uint8_t pack_mode(Geometry g, uint8_t extra) { return static_cast<uint8_t>(static_cast<uint8_t>(g) | (extra << 4)); }
inline Geometry geometry_of(uint8_t mode) { return static_cast<Geometry>(mode & 0xf); }
inline uint8_t extra_of(uint8_t mode) { return static_cast<uint8_t>(mode >> 4); }
// Coordinates the geometry takes from its coordinate vector (the layer index counts), and how
// many elements that vector has in PTX (padded to 4 beyond 2).
// (Inline: the parser uses them, and is built alone for fuzzing.)
inline int coordinate_count(Geometry g) {
  switch (g) {
    case Geometry::k1d: return 1;
    case Geometry::k2d: case Geometry::kA1d: return 2;
    case Geometry::k3d: case Geometry::kA2d: case Geometry::kCube: return 3;
    case Geometry::kACube: return 4;
    default: return 0;
  }
}
inline int vector_elements(Geometry g) {
  switch (g) {
    case Geometry::k1d: return 1;
    case Geometry::k2d: case Geometry::kA1d: return 2;
    case Geometry::k3d: case Geometry::kA2d: case Geometry::kCube: case Geometry::kACube: return 4;
    default: return 0;
  }
}

// Reads the header at `handle`; an empty string when it is a live object of the kind asked
// for, else why not (for the fault message).
std::string load_header(MemoryInterface& memory, uint64_t handle, bool surface, device::TextureHeader* header);

// One lane's coordinates, in vector order as the geometry names them (the layer index first
// for a1d/a2d/acube), as raw 32-bit register values.
struct Coordinates {
  uint32_t raw[4] = {0, 0, 0, 0};
  bool integer = false;  // .s32 coordinates (tex1Dfetch): texel indices
};

struct SampleOutcome {
  uint64_t first_address = 0;  // the footprint's first texel, for the timing model
  uint64_t bad_address = 0;    // a texel address that is not mapped (the sample failed)
  bool ok = true;
};

// tex: four 32-bit results (float bits for kF32).
SampleOutcome sample(MemoryInterface& memory, const device::TextureHeader& h, Geometry g, const Coordinates& coords,
                     ResultKind kind, uint32_t out[4]);
// tld4: component `component` (0..3: r, g, b, a) of the four texels of the bilinear footprint.
SampleOutcome gather(MemoryInterface& memory, const device::TextureHeader& h, Geometry g, const Coordinates& coords,
                     int component, ResultKind kind, uint32_t out[4]);
uint32_t query(const device::TextureHeader& h, Query q);

// suld.b / sust.b: the address of an access of `bytes` at byte column x_bytes, row y, slice z
// of layer `layer`. kInside: `address` is set; kOutside with kTrap: the caller faults (`why`);
// kOutside with kZero: loads read zeros, stores are dropped; kClamp never leaves the surface.
enum class SurfacePlace : uint8_t { kInside, kOutside };
SurfacePlace surface_address(const device::TextureHeader& h, Geometry g, const int32_t coords[4], uint32_t bytes,
                             Boundary boundary, uint64_t* address, std::string* why);

}  // namespace gpuvp::ptx::texture
