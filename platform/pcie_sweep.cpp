#include "platform/pcie_sweep.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "models/uvm/pcie/pcie_link.h"
#include "platform/stats/registry.h"

namespace gpuvp {
namespace {

// A flat memory answering b_transport: host memory on one side of the link, device memory on
// the other. Out-of-range accesses get an address error, never a write past the buffer.
class BufferMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<BufferMemory> socket;

  BufferMemory(sc_core::sc_module_name name, uint64_t bytes) : sc_module(name), socket("socket"), data_(bytes) {
    socket.register_b_transport(this, &BufferMemory::b_transport);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time&) {
    const uint64_t address = payload.get_address();
    const uint64_t length = payload.get_data_length();
    if (address > data_.size() || length > data_.size() - address || payload.get_byte_enable_ptr() != nullptr) {
      payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (payload.is_write()) {
      std::memcpy(data_.data() + address, payload.get_data_ptr(), length);
    } else if (payload.is_read()) {
      std::memcpy(payload.get_data_ptr(), data_.data() + address, length);
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  std::vector<uint8_t> data_;
};

// The GPU's copy engine, issuing back-to-back transfers of one size and measuring from the
// first issue to the last completion. Transfers are pipelined: each is issued without waiting
// for the previous one to finish (the link queues them on its lane).
class CopyEngine : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(CopyEngine);
  tlm_utils::simple_initiator_socket<CopyEngine> socket;

  CopyEngine(sc_core::sc_module_name name, std::vector<uint64_t> sizes, uint64_t bytes_per_size,
             stats::Registry& stats)
      : sc_module(name), socket("socket"), sizes_(std::move(sizes)), bytes_per_size_(bytes_per_size),
        staging_(*std::max_element(sizes_.begin(), sizes_.end())),
        copies_(&stats.group("copy_engine").counter("transfers", "transfer", "copy-engine transfers issued")),
        bytes_(&stats.group("copy_engine").counter("bytes", "B", "bytes the copy engine moved")) {
    SC_THREAD(run);
  }

  std::vector<PcieSweepRow> rows;
  bool failed = false;

 private:
  // Returns bytes/s achieved moving bytes_per_size_ in transfers of `size`.
  double sweep(uint64_t size, tlm::tlm_command command) {
    const uint32_t count = static_cast<uint32_t>(std::max<uint64_t>(1, bytes_per_size_ / size));
    const uint64_t start_ps = sc_core::sc_time_stamp().value();
    uint64_t last_done_ps = start_ps;
    tlm::tlm_generic_payload payload;
    for (uint32_t i = 0; i < count; ++i) {
      payload.set_command(command);
      payload.set_address((i * size) % bytes_per_size_);
      payload.set_data_ptr(staging_.data());
      payload.set_data_length(static_cast<unsigned>(size));
      payload.set_streaming_width(static_cast<unsigned>(size));
      payload.set_byte_enable_ptr(nullptr);
      payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(payload, delay);
      if (!payload.is_response_ok()) failed = true;
      last_done_ps = std::max<uint64_t>(last_done_ps, sc_core::sc_time_stamp().value() + delay.value());
      ++*copies_;
      *bytes_ += size;
    }
    // Let simulated time catch up with the last completion before the next sweep.
    sc_core::wait(sc_core::sc_time::from_value(last_done_ps - sc_core::sc_time_stamp().value()));
    return static_cast<double>(count * size) / (static_cast<double>(last_done_ps - start_ps) * 1e-12);
  }

  void run() {
    for (uint64_t size : sizes_) {
      PcieSweepRow row;
      row.transfer_bytes = size;
      row.transfers = static_cast<uint32_t>(std::max<uint64_t>(1, bytes_per_size_ / size));
      row.host_to_device = sweep(size, tlm::TLM_READ_COMMAND);  // the GPU reads host memory
      row.device_to_host = sweep(size, tlm::TLM_WRITE_COMMAND);
      rows.push_back(row);
    }
  }

  std::vector<uint64_t> sizes_;
  uint64_t bytes_per_size_;
  std::vector<uint8_t> staging_;
  stats::Counter* copies_;
  stats::Counter* bytes_;
};

// Issues nothing; the host side of the link exists but is idle in this job.
class IdleHost : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<IdleHost> socket;
  explicit IdleHost(sc_core::sc_module_name name) : sc_module(name), socket("socket") {}
};

}  // namespace

PcieSweepResult run_pcie_sweep(const PlatformParams& params, const std::vector<uint64_t>& transfer_sizes,
                               uint64_t bytes_per_size) {
  if (transfer_sizes.empty() || bytes_per_size == 0) throw std::invalid_argument("pcie-sweep: nothing to transfer");
  for (uint64_t size : transfer_sizes) {
    if (size == 0 || size > bytes_per_size || size > (1u << 30)) {
      throw std::invalid_argument("pcie-sweep: transfer size " + std::to_string(size) +
                                  " must be between 1 B and min(bytes per size, 1 GiB)");
    }
  }
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  stats::Registry stats;
  stats.set_time_source([] { return sc_core::sc_time_stamp().value(); });

  auto link = std::make_unique<uvm::PcieLink>("pcie", params.pcie, stats, "pcie");
  auto engine = std::make_unique<CopyEngine>("copy_engine", transfer_sizes, bytes_per_size, stats);
  auto host_memory = std::make_unique<BufferMemory>("host_memory", bytes_per_size);
  auto device_memory = std::make_unique<BufferMemory>("device_memory", 4096);
  auto host = std::make_unique<IdleHost>("host");
  engine->socket.bind(link->device_in);
  link->host_out.bind(host_memory->socket);
  host->socket.bind(link->host_in);
  link->device_out.bind(device_memory->socket);

  sc_core::sc_start();

  PcieSweepResult result;
  result.rows = engine->rows;
  for (auto& row : result.rows) row.model = params.pcie.effective_bandwidth(row.transfer_bytes);
  result.simulated_ps = sc_core::sc_time_stamp().value();
  result.stats_json = stats.json();
  result.stats_summary = stats.summary();
  if (engine->failed) throw std::runtime_error("pcie-sweep: a transfer failed");
  return result;
}

}  // namespace gpuvp
