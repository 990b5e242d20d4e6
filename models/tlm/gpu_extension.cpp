#include "models/tlm/gpu_extension.h"

namespace gpuvp {

const char* to_string(AccessKind k) noexcept {
    switch (k) {
        case AccessKind::Load: return "load";
        case AccessKind::Store: return "store";
        case AccessKind::Atomic: return "atomic";
        case AccessKind::Reduction: return "reduction";
        case AccessKind::InstructionFetch: return "ifetch";
        case AccessKind::ConstantLoad: return "const_load";
        case AccessKind::PageTableWalk: return "ptw";
        case AccessKind::Dma: return "dma";
        case AccessKind::Prefetch: return "prefetch";
    }
    return "?";
}

tlm::tlm_extension_base* GpuExtension::clone() const { return new GpuExtension(*this); }

void GpuExtension::copy_from(const tlm::tlm_extension_base& other) {
    // TLM calls copy_from only with an extension of the same ID (same type).
    *this = static_cast<const GpuExtension&>(other);
}

std::uint8_t GpuExtension::sector_mask_for(std::uint64_t address, unsigned length) noexcept {
    if (length == 0) return 0;
    const std::uint64_t off = address % kLineBytes;
    const std::uint64_t end = off + length > kLineBytes ? kLineBytes : off + length;
    std::uint8_t mask = 0;
    for (std::uint64_t s = off / kSectorBytes; s * kSectorBytes < end; ++s)
        mask = static_cast<std::uint8_t>(mask | (1u << s));
    return mask;
}

}  // namespace gpuvp
