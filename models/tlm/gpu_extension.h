// The TLM payload extension every GPU request carries: who asked (SM, warp, CTA, kernel),
// which 32 B sectors of the 128 B line it touches, and what kind of access it is.
// Pooled payloads (payload_pool.h) carry one pre-attached; get it with gpu_extension(gp).
#pragma once

#include <cstdint>

#include <tlm>

namespace gpuvp {

enum class AccessKind : std::uint8_t {
    Load,
    Store,
    Atomic,
    Reduction,
    InstructionFetch,
    ConstantLoad,
    PageTableWalk,
    Dma,
    Prefetch,
};
const char* to_string(AccessKind k) noexcept;

inline constexpr unsigned kLineBytes = 128;
inline constexpr unsigned kSectorBytes = 32;
inline constexpr unsigned kSectorsPerLine = kLineBytes / kSectorBytes;

class GpuExtension : public tlm::tlm_extension<GpuExtension> {
public:
    static constexpr std::uint32_t kNone = 0xffffffffu;  // not from an SM/warp/CTA (e.g. DMA)

    std::uint32_t sm_id = kNone;
    std::uint32_t warp_id = kNone;  // warp slot within the SM
    std::uint32_t cta_id = kNone;   // linear CTA index within the grid
    std::uint64_t kernel_id = 0;    // as given to stats::Registry::begin_kernel; 0 = none
    std::uint8_t sector_mask = 0;   // bit i: sector i (bytes [32i, 32i+32)) of the line
    AccessKind kind = AccessKind::Load;
    // Core cycle at which the request joined its SM's outgoing queue (ready to leave, before
    // waiting for the port); elastic trace capture times requests from it. 0 when not from an SM.
    std::uint64_t queued_cycle = 0;
    // Also for capture: the SM's number for this request (1, 2, ... per SM; 0 when not from an
    // SM); the core cycles it was held back because the L1 had no free MSHR (the LSU's head was
    // blocked while this request's instruction waited to enter the LSU queue or sat in it); and
    // the request_seq of the request whose response freed the MSHR that ended the last of those
    // waits (0 when it waited for none).
    std::uint64_t request_seq = 0;
    std::uint32_t mshr_wait = 0;
    std::uint64_t mshr_unblocked_by = 0;
    // Also for capture, barriers its warp passed since its previous global/local access
    // instruction: the core cycles it waited at them (barrier_wait), and the last one: the cycle
    // it arrived, the cycle it was released, and the SM's number for that release
    // (barrier_seq, TraceObserver::barrier_release; 0: none passed).
    std::uint32_t barrier_wait = 0;
    std::uint64_t barrier_arrived = 0;
    std::uint64_t barrier_release = 0;
    std::uint64_t barrier_seq = 0;
    // Also for capture: a load that looked up the L1 and missed: the sectors its warp wanted
    // (sector_mask holds those it requests; the others hit). 0 for every other request, and for
    // loads that bypass the L1 (ld.cg, volatile).
    std::uint8_t l1_access = 0;

    tlm::tlm_extension_base* clone() const override;
    void copy_from(const tlm::tlm_extension_base& other) override;
    void reset() noexcept { *this = GpuExtension{}; }

    // Sectors of the 128 B line containing `address` touched by [address, address+length),
    // clipped to that line. length 0 gives 0.
    static std::uint8_t sector_mask_for(std::uint64_t address, unsigned length) noexcept;
};

// The GpuExtension of a payload, or nullptr.
inline GpuExtension* gpu_extension(tlm::tlm_generic_payload& gp) {
    return gp.get_extension<GpuExtension>();
}

}  // namespace gpuvp
