#include "tests/support/testbench.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

namespace gpuvp::testbench {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

// ------------------------------------------------------------------ Simulation

Simulation::Simulation() {
    // SystemC keeps its kernel in one "current" context and cannot elaborate twice in it.
    // Installing a new context gives every test a clean elaboration and time zero.
    context_ = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = context_;
    sc_core::sc_default_global_context = context_;
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
}

Simulation::~Simulation() {
    if (sc_core::sc_curr_simcontext == context_) {
        delete context_;  // kills leftover processes, frees the kernel's state
        sc_core::sc_curr_simcontext = nullptr;
        sc_core::sc_default_global_context = nullptr;
    }
}

void Simulation::run(std::function<void()> body, sc_time limit) {
    struct State {
        bool done = false;
        std::exception_ptr error;
    };
    auto state = std::make_shared<State>();
    sc_core::sc_spawn(
        [state, body = std::move(body)] {
            try {
                body();
            } catch (const sc_core::sc_unwind_exception&) {
                throw;  // SystemC's own kill/reset unwinding must pass
            } catch (...) {
                state->error = std::current_exception();
            }
            state->done = true;
            sc_core::sc_pause();
        },
        sc_core::sc_gen_unique_name("testbench_run"));
    sc_core::sc_start(limit, sc_core::SC_EXIT_ON_STARVATION);
    if (state->error) std::rethrow_exception(state->error);
    if (!state->done)
        throw std::runtime_error(std::string("testbench: body did not finish: ") +
                                 (sc_core::sc_pending_activity() ? "time limit reached"
                                                                 : "simulation starved") +
                                 " at " + sc_core::sc_time_stamp().to_string());
}

// ------------------------------------------------------------------ Initiator

struct Initiator::Pending {
    bool done = false;
    sc_core::sc_event done_event;
};

Initiator::Initiator(sc_core::sc_module_name name, Protocol p, std::size_t max_data_bytes)
    : sc_module(name), socket("socket"), protocol(p), pool_(max_data_bytes),
      peq_(this, &Initiator::on_phase) {
    socket.register_nb_transport_bw(this, &Initiator::nb_transport_bw);
}

Initiator::~Initiator() = default;

Initiator::Result Initiator::transport(tlm::tlm_command cmd, std::uint64_t address,
                                       unsigned length, const std::vector<std::uint8_t>& wdata) {
    tlm::tlm_generic_payload* gp = pool_.allocate(cmd, address, length);
    if (cmd == tlm::TLM_WRITE_COMMAND) {
        if (wdata.size() != length) {
            gp->release();
            throw std::invalid_argument("testbench: write data size differs from length");
        }
        std::copy(wdata.begin(), wdata.end(), gp->get_data_ptr());
    }
    *gpu_extension(*gp) = tags;
    const sc_time start = sc_core::sc_time_stamp();
    if (protocol == Protocol::LT) run_lt(*gp); else run_at(*gp);
    Result r{gp->get_response_status(), sc_core::sc_time_stamp() - start, {}};
    if (cmd == tlm::TLM_READ_COMMAND && gp->is_response_ok())
        r.data.assign(gp->get_data_ptr(), gp->get_data_ptr() + length);
    gp->release();
    last_latency_ = r.latency;
    last_status_ = r.status;
    return r;
}

void Initiator::run_lt(tlm::tlm_generic_payload& gp) {
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(gp, delay);
    sc_core::wait(delay);  // synchronize at once: no quantum in the test bench
}

void Initiator::run_at(tlm::tlm_generic_payload& gp) {
    while (request_owner_ != nullptr) sc_core::wait(request_free_);  // request-exclusion rule
    request_owner_ = &gp;
    Pending p;
    pending_[&gp] = &p;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = SC_ZERO_TIME;
    const tlm::tlm_sync_enum s = socket->nb_transport_fw(gp, phase, delay);
    if (s == tlm::TLM_COMPLETED) {
        pending_.erase(&gp);
        sc_core::wait(delay);
        end_request();
        return;
    }
    if (s == tlm::TLM_UPDATED) {
        // Target answered on the return path; feed the phase through the PEQ so that both
        // paths are handled by the same code at the annotated time.
        peq_.notify(gp, phase, delay);
    }
    while (!p.done) sc_core::wait(p.done_event);
    pending_.erase(&gp);
}

tlm::tlm_sync_enum Initiator::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                              sc_time& delay) {
    peq_.notify(gp, phase, delay);
    return tlm::TLM_ACCEPTED;
}

void Initiator::end_request() {
    request_owner_ = nullptr;
    request_free_.notify();
}

void Initiator::on_phase(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase) {
    auto it = pending_.find(&gp);
    if (it == pending_.end())
        SC_REPORT_ERROR("gpuvp/testbench", "phase for a transaction that is not in flight");
    if (phase == tlm::END_REQ) {
        if (request_owner_ == &gp) end_request();
    } else if (phase == tlm::BEGIN_RESP) {
        // BEGIN_RESP implies END_REQ, but only for the transaction that holds the request
        // channel: a response to an older transaction says nothing about the pending request.
        if (request_owner_ == &gp) end_request();
        tlm::tlm_phase end = tlm::END_RESP;
        sc_time delay = SC_ZERO_TIME;
        socket->nb_transport_fw(gp, end, delay);  // target returns TLM_COMPLETED
        it->second->done = true;
        it->second->done_event.notify();
    } else {
        SC_REPORT_ERROR("gpuvp/testbench", "unexpected phase on the backward path");
    }
}

void Initiator::write(std::uint64_t address, const std::vector<std::uint8_t>& bytes) {
    const Result r = transport(tlm::TLM_WRITE_COMMAND, address,
                               static_cast<unsigned>(bytes.size()), bytes);
    if (r.status != tlm::TLM_OK_RESPONSE)
        throw std::runtime_error("testbench: write failed: " + std::to_string(r.status));
}

std::vector<std::uint8_t> Initiator::read(std::uint64_t address, unsigned length) {
    Result r = transport(tlm::TLM_READ_COMMAND, address, length);
    if (r.status != tlm::TLM_OK_RESPONSE)
        throw std::runtime_error("testbench: read failed: " + std::to_string(r.status));
    return std::move(r.data);
}

namespace {
template <typename T> std::vector<std::uint8_t> to_bytes(T v) {
    std::vector<std::uint8_t> b(sizeof v);
    std::memcpy(b.data(), &v, sizeof v);  // host order: the modeled GPU is little-endian too
    return b;
}
template <typename T> T from_bytes(const std::vector<std::uint8_t>& b) {
    T v;
    std::memcpy(&v, b.data(), sizeof v);
    return v;
}
}  // namespace

void Initiator::write32(std::uint64_t a, std::uint32_t v) { write(a, to_bytes(v)); }
std::uint32_t Initiator::read32(std::uint64_t a) { return from_bytes<std::uint32_t>(read(a, 4)); }
void Initiator::write64(std::uint64_t a, std::uint64_t v) { write(a, to_bytes(v)); }
std::uint64_t Initiator::read64(std::uint64_t a) { return from_bytes<std::uint64_t>(read(a, 8)); }

// ------------------------------------------------------------------ MemoryTarget

MemoryTarget::MemoryTarget(sc_core::sc_module_name name, sc_time lat, std::uint64_t sz)
    : sc_module(name), socket("socket"), latency(lat), size(sz), peq_(this, &MemoryTarget::on_phase) {
    socket.register_b_transport(this, &MemoryTarget::b_transport);
    socket.register_nb_transport_fw(this, &MemoryTarget::nb_transport_fw);
    socket.register_transport_dbg(this, &MemoryTarget::transport_dbg);
}

MemoryTarget::~MemoryTarget() = default;

void MemoryTarget::poke(std::uint64_t address, const std::vector<std::uint8_t>& bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        auto& page = pages_[(address + i) / kPage];
        if (page.empty()) page.resize(kPage, 0);
        page[(address + i) % kPage] = bytes[i];
    }
}

std::vector<std::uint8_t> MemoryTarget::peek(std::uint64_t address, unsigned length) const {
    std::vector<std::uint8_t> out(length, 0);
    for (unsigned i = 0; i < length; ++i) {
        auto it = pages_.find((address + i) / kPage);
        if (it != pages_.end()) out[i] = it->second[(address + i) % kPage];
    }
    return out;
}

void MemoryTarget::record(const tlm::tlm_generic_payload& gp, const sc_time& delay, bool blocking) {
    Record r{gp.get_command(), gp.get_address(), gp.get_data_length(),
             sc_core::sc_time_stamp() + delay, blocking, false, GpuExtension{}, {}};
    if (const GpuExtension* e = gp.get_extension<GpuExtension>()) {
        r.has_extension = true;
        r.extension.copy_from(*e);
    }
    if (gp.is_write())
        r.data.assign(gp.get_data_ptr(), gp.get_data_ptr() + gp.get_data_length());
    log_.push_back(std::move(r));
}

void MemoryTarget::execute(tlm::tlm_generic_payload& gp) {
    const std::uint64_t a = gp.get_address();
    const unsigned n = gp.get_data_length();
    if (a >= size || n > size - a) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.get_streaming_width() != 0 && gp.get_streaming_width() < n) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);  // no streaming support
        return;
    }
    const unsigned char* be = gp.get_byte_enable_ptr();
    const unsigned be_len = gp.get_byte_enable_length();
    auto enabled = [&](unsigned i) { return be == nullptr || be[i % be_len] == TLM_BYTE_ENABLED; };
    unsigned char* d = gp.get_data_ptr();
    if (gp.is_write()) {
        for (unsigned i = 0; i < n; ++i)
            if (enabled(i)) poke(a + i, {d[i]});
    } else if (gp.is_read()) {
        const std::vector<std::uint8_t> v = peek(a, n);
        for (unsigned i = 0; i < n; ++i)
            if (enabled(i)) d[i] = v[i];
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int MemoryTarget::transport_dbg(tlm::tlm_generic_payload& gp) {
    execute(gp);
    return gp.is_response_ok() ? gp.get_data_length() : 0;
}

void MemoryTarget::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    record(gp, delay, true);
    execute(gp);
    delay += latency;
}

tlm::tlm_sync_enum MemoryTarget::nb_transport_fw(tlm::tlm_generic_payload& gp,
                                                 tlm::tlm_phase& phase, sc_time& delay) {
    if (phase == tlm::BEGIN_REQ) {
        record(gp, delay, false);
        if (at_style == AtStyle::Immediate) {
            execute(gp);
            delay += latency;
            return tlm::TLM_COMPLETED;
        }
        gp.acquire();  // kept past this call
        peq_.notify(gp, phase, delay);
        return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::END_RESP) {
        if (delay != SC_ZERO_TIME) {
            peq_.notify(gp, phase, delay);
            return tlm::TLM_COMPLETED;
        }
        // Release at once so the payload is back in the initiator's pool when its thread
        // resumes; the next queued response goes out from the PEQ, not from inside this call.
        responding_ = nullptr;
        gp.release();
        if (!response_queue_.empty()) {
            tlm::tlm_generic_payload* next = response_queue_.front();
            response_queue_.erase(response_queue_.begin());
            peq_.notify(*next, tlm::BEGIN_RESP, SC_ZERO_TIME);
        }
        return tlm::TLM_COMPLETED;
    }
    SC_REPORT_ERROR("gpuvp/testbench", "MemoryTarget: unexpected phase on the forward path");
    return tlm::TLM_COMPLETED;
}

// BEGIN_REQ: request accepted now, response ready after `latency`. BEGIN_RESP is used
// inside this PEQ to mean "response ready" (the initiator never sends that phase forward).
void MemoryTarget::on_phase(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase) {
    if (phase == tlm::BEGIN_REQ) {
        execute(gp);
        tlm::tlm_phase end = tlm::END_REQ;
        sc_time delay = SC_ZERO_TIME;
        socket->nb_transport_bw(gp, end, delay);
        peq_.notify(gp, tlm::BEGIN_RESP, latency);
    } else if (phase == tlm::BEGIN_RESP) {
        if (responding_ != nullptr) response_queue_.push_back(&gp);  // response exclusion
        else send_response(gp);
    } else if (phase == tlm::END_RESP) {
        finish_response();
    }
}

void MemoryTarget::send_response(tlm::tlm_generic_payload& gp) {
    responding_ = &gp;
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_time delay = SC_ZERO_TIME;
    const tlm::tlm_sync_enum s = socket->nb_transport_bw(gp, phase, delay);
    if (s == tlm::TLM_COMPLETED || (s == tlm::TLM_UPDATED && phase == tlm::END_RESP))
        finish_response();
}

void MemoryTarget::finish_response() {
    tlm::tlm_generic_payload* done = responding_;
    responding_ = nullptr;
    if (done != nullptr) done->release();
    if (!response_queue_.empty()) {
        tlm::tlm_generic_payload* next = response_queue_.front();
        response_queue_.erase(response_queue_.begin());
        send_response(*next);
    }
}

}  // namespace gpuvp::testbench
