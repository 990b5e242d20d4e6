// Kernel resources from a cubin: the SASS ELF image that ptxas writes and nvcc embeds in a fatbin
// (sw/cudart/fatbin.h yields it as a FatbinKind::Elf entry) or writes with `nvcc -cubin`. What a
// driver reads to fill a launch descriptor: registers per thread, static shared memory, local
// memory per thread, thread limits. Plain bytes in, no dependencies, every offset and size
// checked against the image: a malformed or truncated image is an error message, never a crash.
//
// FORMAT FACTS (checked on cubins of nvcc/ptxas 13.0 for sm_75..sm_90 with readelf, against
// `ptxas -v`; the attribute numbering is the one public cubin tools and disassembler listings
// use for the EIATTR_* names):
//   ELF header    ELF64, little endian, e_machine 190 (EM_CUDA). e_flags holds the SASS
//                 architecture: bits 8..15 for ELF ABI version >= 8 (e_ident[8]; nvcc 12/13:
//                 0x6004b04 = sm_75), bits 0..7 before.
//   sections      `.text.<kernel>`: the code of one function; its symbol (sh_info bits 0..23)
//                 is an entry point (a kernel, not a device function) when the symbol's st_other
//                 has bit 0x10 (STO_CUDA_ENTRY). sh_info bits 24..31 repeat the register count.
//                 `.nv.shared.<kernel>` (NOBITS): its size is the kernel's static shared memory.
//                 `.nv.constant0.<kernel>`: constant bank 0 (launch constants + parameters).
//   attributes    `.nv.info` (global, attributes keyed by a function's symbol index) and
//                 `.nv.info.<function>`: a sequence of records, each
//                   u8 format, u8 attribute, u16 value-or-size, then for format 4 (EIFMT_SVAL)
//                   that many bytes of payload; formats 1 (NVAL), 2 (BVAL), 3 (HVAL) carry
//                   their value in the u16 and nothing more.
//                 Used here:
//                   0x2f EIATTR_REGCOUNT        SVAL {u32 symbol, u32 registers}    global
//                   0x11 EIATTR_FRAME_SIZE      SVAL {u32 symbol, u32 bytes}        global
//                   0x12 EIATTR_MIN_STACK_SIZE  SVAL {u32 symbol, u32 bytes}        global
//                   0x23 EIATTR_MAX_STACK_SIZE  SVAL {u32 symbol, u32 bytes}        global (-rdc)
//                   0x05 EIATTR_MAX_THREADS     SVAL {u32 x, y, z} (.maxntid, __launch_bounds__)
//                   0x10 EIATTR_REQNTID         SVAL {u32 x, y, z} (.reqntid)
//                   0x1b EIATTR_MAXREG_COUNT    HVAL register limit ptxas honoured
//                   0x19 EIATTR_CBANK_PARAM_SIZE HVAL parameter bytes
//                 Anything else is skipped by its length.
// LOCAL MEMORY per thread is the largest of the kernel's frame and its stack sizes: ptxas -v's
// "N bytes stack frame" (FRAME_SIZE) and "N bytes cumulative stack size" (MIN_STACK_SIZE, the
// kernel's frame plus its callees'); EIATTR_MAX_STACK_SIZE where nvlink wrote it (-rdc). A
// recursive call tree has no static bound (the driver reserves cudaLimitStackSize for it); such a
// kernel reports its static sizes only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvp::cubin {

inline constexpr uint16_t kElfMachineCuda = 190;
// A stack size nvlink writes for a kernel whose call tree recurses: no static bound.
inline constexpr uint32_t kUnboundedStack = 0xffffffffu;

struct KernelResources {
  std::string name;                  // the symbol (mangled, as in the PTX .entry)
  uint32_t registers = 0;            // per thread: EIATTR_REGCOUNT, else .text sh_info bits 24..31
  uint32_t static_shared_bytes = 0;  // size of .nv.shared.<name> (0 when absent)
  uint32_t frame_bytes = 0;          // EIATTR_FRAME_SIZE
  uint32_t min_stack_bytes = 0;      // EIATTR_MIN_STACK_SIZE
  uint32_t max_stack_bytes = 0;      // EIATTR_MAX_STACK_SIZE (any of the three: kUnboundedStack)
  uint32_t local_bytes = 0;          // per thread: the largest of the three above (a bounded max)
  uint32_t max_threads = 0;          // product of EIATTR_MAX_THREADS (0: not given)
  uint32_t required_threads = 0;     // product of EIATTR_REQNTID (0: not given)
  uint32_t max_registers = 0;        // EIATTR_MAXREG_COUNT (0: not given)
  uint32_t param_bytes = 0;          // EIATTR_CBANK_PARAM_SIZE
  uint32_t constant0_bytes = 0;      // size of .nv.constant0.<name>
};

struct Cubin {
  uint32_t arch = 0;                     // SASS architecture, major*10+minor (75 = sm_75)
  std::vector<KernelResources> kernels;  // entry points, in section order
  const KernelResources* find(std::string_view name) const;
};

// Parses the `size` bytes at `data`. nullopt and `error` ("cubin: ...", naming what is wrong and
// where) on anything malformed.
std::optional<Cubin> parse_cubin(const void* data, std::size_t size, std::string* error);

// How resources compiled for `cubin_arch` serve a device of compute capability `device_cc`
// (both major*10+minor):
//   kExact      the same architecture.
//   kSameMajor  another minor version of the same major: one register file design (Volta and
//               Turing, 7.x: 64 K 32-bit registers per SM, at most 255 per thread, allocated
//               per warp in units of 256), and ptxas emits near-identical code within a major.
//               nvcc 13 builds nothing below sm_75, so a 7.0 device (V100) is served this way.
//   kNone       another major: a different ISA, register counts are not transferable.
enum class ArchMatch : uint8_t { kNone, kExact, kSameMajor };
ArchMatch arch_match(uint32_t cubin_arch, uint32_t device_cc);
const char* to_string(ArchMatch match) noexcept;

// Index in `archs` of the cubin to take for `device_cc`: the exact one, else the same-major one
// nearest to it (the lower on a tie); -1 when none matches.
int best_cubin(const std::vector<uint32_t>& archs, uint32_t device_cc);

}  // namespace gpuvp::cubin
