// Test-bench helper: drive any module through its TLM sockets from GoogleTest.
//
//   TEST(Memory, ReadAfterWrite) {
//       gpuvp::testbench::Simulation sim;                  // fresh context, 1 ps; first!
//       gpuvp::testbench::Initiator cpu("cpu", Protocol::AT);
//       gpuvp::testbench::MemoryTarget mem("mem", sc_time(20, SC_NS));
//       cpu.socket.bind(mem.socket);
//       sim.run([&] {
//           cpu.write32(0x100, 0xcafe);
//           EXPECT_EQ(cpu.read32(0x100), 0xcafeu);
//           EXPECT_EQ(cpu.last_latency(), sc_time(20, SC_NS));
//       });
//   }
//
// Declare the Simulation before the modules so that it is destroyed after them.
// ctest runs each discovered test in its own process; Simulation also installs a fresh
// sc_simcontext so that running the whole test binary in one process works too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/tlm/gpu_extension.h"
#include "models/tlm/payload_pool.h"

namespace gpuvp::testbench {

// A fresh SystemC simulation context with 1 ps resolution for one test.
class Simulation {
public:
    Simulation();
    ~Simulation();
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    // Runs `body` in a new SC_THREAD and simulates until it returns (the simulation is then
    // paused, so run() may be called again). An exception thrown by body is rethrown here;
    // std::runtime_error if the simulation starves (body waits for something that never
    // happens) or `limit` of simulated time passes first.
    void run(std::function<void()> body,
             sc_core::sc_time limit = sc_core::sc_time(1, sc_core::SC_SEC));

private:
    sc_core::sc_simcontext* context_;
};

enum class Protocol { LT, AT };  // LT: b_transport; AT: nb_transport, 4 phases

// Test initiator. Helpers block the calling SC_THREAD (call them inside Simulation::run);
// several threads may use one initiator at once in AT mode (requests are serialized per
// the TLM request-exclusion rule, responses may come back in any order).
class Initiator : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<Initiator> socket;
    Protocol protocol;
    GpuExtension tags;  // copied into the GpuExtension of every request

    explicit Initiator(sc_core::sc_module_name name, Protocol protocol = Protocol::LT,
                       std::size_t max_data_bytes = kLineBytes);
    ~Initiator() override;

    struct Result {
        tlm::tlm_response_status status;
        sc_core::sc_time latency;     // from issue to response complete
        std::vector<std::uint8_t> data;  // read data
    };
    // One transaction; never throws on a TLM error status (inspect Result::status).
    Result transport(tlm::tlm_command cmd, std::uint64_t address, unsigned length,
                     const std::vector<std::uint8_t>& write_data = {});

    // Throw std::runtime_error unless the response is TLM_OK_RESPONSE.
    void write(std::uint64_t address, const std::vector<std::uint8_t>& bytes);
    std::vector<std::uint8_t> read(std::uint64_t address, unsigned length);
    void write32(std::uint64_t address, std::uint32_t value);
    std::uint32_t read32(std::uint64_t address);
    void write64(std::uint64_t address, std::uint64_t value);
    std::uint64_t read64(std::uint64_t address);

    sc_core::sc_time last_latency() const { return last_latency_; }
    tlm::tlm_response_status last_status() const { return last_status_; }
    const PayloadPool& pool() const { return pool_; }

private:
    struct Pending;
    void run_lt(tlm::tlm_generic_payload& gp);
    void run_at(tlm::tlm_generic_payload& gp);
    tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay);
    void on_phase(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase);
    void end_request();

    PayloadPool pool_;
    tlm_utils::peq_with_cb_and_phase<Initiator> peq_;
    std::map<tlm::tlm_generic_payload*, Pending*> pending_;  // AT transactions in flight
    tlm::tlm_generic_payload* request_owner_ = nullptr;  // holds the request channel (BEGIN_REQ sent, END_REQ not seen)
    sc_core::sc_event request_free_;
    sc_core::sc_time last_latency_;
    tlm::tlm_response_status last_status_ = tlm::TLM_INCOMPLETE_RESPONSE;
};

// A sparse memory target (unwritten bytes read as 0) with a fixed latency, answering both
// b_transport (delay += latency) and nb_transport_fw. AT style FourPhase: END_REQ at the
// request time, BEGIN_RESP `latency` later, waits for END_RESP (one response at a time,
// others queue). AT style Immediate: returns TLM_COMPLETED with delay += latency.
// Addresses at or above `size` get TLM_ADDRESS_ERROR_RESPONSE. Honors byte enables.
class MemoryTarget : public sc_core::sc_module {
public:
    enum class AtStyle { FourPhase, Immediate };

    tlm_utils::simple_target_socket<MemoryTarget> socket;
    sc_core::sc_time latency;
    AtStyle at_style = AtStyle::FourPhase;
    std::uint64_t size;

    struct Record {
        tlm::tlm_command command;
        std::uint64_t address;
        unsigned length;
        sc_core::sc_time time;  // when the request arrived (sim time + annotated delay)
        bool blocking;          // came through b_transport
        bool has_extension;
        GpuExtension extension;           // copy, valid when has_extension
        std::vector<std::uint8_t> data;   // write data
    };

    MemoryTarget(sc_core::sc_module_name name, sc_core::sc_time latency = sc_core::SC_ZERO_TIME,
                 std::uint64_t size = std::uint64_t{1} << 48);
    ~MemoryTarget() override;

    const std::vector<Record>& transactions() const { return log_; }
    void poke(std::uint64_t address, const std::vector<std::uint8_t>& bytes);
    std::vector<std::uint8_t> peek(std::uint64_t address, unsigned length) const;

private:
    void record(const tlm::tlm_generic_payload& gp, const sc_core::sc_time& delay, bool blocking);
    void execute(tlm::tlm_generic_payload& gp);
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int transport_dbg(tlm::tlm_generic_payload& gp);  // untimed, unrecorded
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay);
    void on_phase(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase);
    void send_response(tlm::tlm_generic_payload& gp);
    void finish_response();

    static constexpr std::uint64_t kPage = 4096;
    std::map<std::uint64_t, std::vector<std::uint8_t>> pages_;  // ordered: deterministic
    std::vector<Record> log_;
    tlm_utils::peq_with_cb_and_phase<MemoryTarget> peq_;
    std::vector<tlm::tlm_generic_payload*> response_queue_;  // ready, waiting for the channel
    tlm::tlm_generic_payload* responding_ = nullptr;  // BEGIN_RESP sent, END_RESP awaited
};

}  // namespace gpuvp::testbench
