// A pooled memory manager for tlm_generic_payload (TLM-2.0 tlm_mm_interface).
//
// After warm-up no request allocates: payloads come from a free list, each with an inline
// data buffer and byte-enable buffer of max_data_bytes (default 128 B = one line), and a
// pre-attached GpuExtension. Reference counting follows TLM-2.0: allocate() hands out a
// payload holding ONE reference owned by the caller; every component that keeps the
// payload past the call that delivered it calls acquire() and later release(); the last
// release() returns it here, where it is reset (command IGNORE, address 0, data pointer back
// to its inline buffer, lengths 0, no byte enables, INCOMPLETE response, DMI hint off,
// GpuExtension reset, auto-extensions freed).
//
// Not thread-safe: used from SystemC processes only (the parallel SM phase buffers its
// requests and issues TLM calls afterwards). The pool must outlive its payloads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <tlm>

#include "models/tlm/gpu_extension.h"

namespace gpuvp {

class PayloadPool final : public tlm::tlm_mm_interface {
public:
    explicit PayloadPool(std::size_t max_data_bytes = kLineBytes);
    ~PayloadPool() override;
    PayloadPool(const PayloadPool&) = delete;
    PayloadPool& operator=(const PayloadPool&) = delete;

    // A reset payload with one reference held by the caller; data pointer = inline buffer.
    tlm::tlm_generic_payload* allocate();
    // Same, set up for a request: command, address, data length = streaming width = length
    // (throws std::length_error if length > max_data_bytes()).
    tlm::tlm_generic_payload* allocate(tlm::tlm_command cmd, std::uint64_t address,
                                       unsigned length);

    // Called by tlm_generic_payload::release() when the reference count drops to zero.
    void free(tlm::tlm_generic_payload* gp) override;

    std::size_t max_data_bytes() const noexcept { return max_data_bytes_; }
    std::size_t created() const noexcept { return entries_.size(); }  // payloads ever made
    std::size_t in_use() const noexcept { return entries_.size() - free_.size(); }
    std::size_t peak_in_use() const noexcept { return peak_in_use_; }
    std::uint64_t allocations() const noexcept { return allocations_; }  // allocate() calls

private:
    struct Entry;
    void reset(Entry& e);

    std::size_t max_data_bytes_;
    std::vector<std::unique_ptr<Entry>> entries_;  // owns every payload
    std::vector<Entry*> free_;                     // LIFO: warm payloads come back first
    std::size_t peak_in_use_ = 0;
    std::uint64_t allocations_ = 0;
};

}  // namespace gpuvp
