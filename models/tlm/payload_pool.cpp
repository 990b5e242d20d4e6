#include "models/tlm/payload_pool.h"

#include <stdexcept>
#include <string>

namespace gpuvp {

// The payload is the first base so a tlm_generic_payload* handed back to free() converts
// to its Entry with a static_cast.
struct PayloadPool::Entry : tlm::tlm_generic_payload {
    Entry(tlm::tlm_mm_interface* mm, std::size_t bytes)
        : tlm::tlm_generic_payload(mm), data(new unsigned char[bytes]()),
          byte_enable(new unsigned char[bytes]()) {}
    ~Entry() override {
        // The extension belongs to the pool; detach it before the payload frees the rest.
        clear_extension(ext.get());
    }
    std::unique_ptr<unsigned char[]> data;
    std::unique_ptr<unsigned char[]> byte_enable;  // for callers that need masks
    std::unique_ptr<GpuExtension> ext = std::make_unique<GpuExtension>();
};

PayloadPool::PayloadPool(std::size_t max_data_bytes) : max_data_bytes_(max_data_bytes) {
    if (max_data_bytes_ == 0) throw std::invalid_argument("PayloadPool: max_data_bytes must be > 0");
}

PayloadPool::~PayloadPool() = default;

void PayloadPool::reset(Entry& e) {
    e.reset();  // frees auto-extensions (set_auto_extension) per TLM-2.0
    e.set_command(tlm::TLM_IGNORE_COMMAND);
    e.set_address(0);
    e.set_data_ptr(e.data.get());
    e.set_data_length(0);
    e.set_streaming_width(0);
    e.set_byte_enable_ptr(nullptr);
    e.set_byte_enable_length(0);
    e.set_dmi_allowed(false);
    e.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    e.set_gp_option(tlm::TLM_MIN_PAYLOAD);
    e.ext->reset();
    e.set_extension(e.ext.get());
}

tlm::tlm_generic_payload* PayloadPool::allocate() {
    Entry* e;
    if (free_.empty()) {
        entries_.push_back(std::make_unique<Entry>(this, max_data_bytes_));
        e = entries_.back().get();
        reset(*e);
    } else {
        e = free_.back();
        free_.pop_back();
    }
    ++allocations_;
    if (in_use() > peak_in_use_) peak_in_use_ = in_use();
    e->acquire();
    return e;
}

tlm::tlm_generic_payload* PayloadPool::allocate(tlm::tlm_command cmd, std::uint64_t address,
                                                unsigned length) {
    if (length > max_data_bytes_)
        throw std::length_error("PayloadPool: request of " + std::to_string(length) +
                                " B exceeds the inline buffer of " +
                                std::to_string(max_data_bytes_) + " B");
    tlm::tlm_generic_payload* gp = allocate();
    gp->set_command(cmd);
    gp->set_address(address);
    gp->set_data_length(length);
    gp->set_streaming_width(length);
    return gp;
}

void PayloadPool::free(tlm::tlm_generic_payload* gp) {
    if (gp == nullptr || gp->get_ref_count() != 0)
        throw std::logic_error("PayloadPool::free: payload still referenced");
    auto* e = static_cast<Entry*>(gp);
    reset(*e);
    free_.push_back(e);
}

}  // namespace gpuvp
