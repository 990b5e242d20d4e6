#include "models/gpu/copy_engine/copy_engine.h"


#include "models/tlm/gpu_extension.h"

namespace gpuvp::gpu {

CopyEngine::CopyEngine(sc_core::sc_module_name name, stats::Registry& stats, const std::string& stats_path)
    : sc_module(name),
      out("out"),
      writes_(stats.group(stats_path).counter("writes", "request", "line writes (launch constants, kernel code)")),
      bytes_(stats.group(stats_path).counter("bytes", "B", "bytes written")),
      delayed_("delayed_responses", this, &CopyEngine::nb_transport_bw) {
  out.register_nb_transport_bw(this, &CopyEngine::nb_transport_bw);
  SC_HAS_PROCESS(CopyEngine);
  SC_METHOD(send);
  sensitive << wake_;
  dont_initialize();
}

void CopyEngine::write(uint64_t address, uint64_t bytes, uint64_t kernel_id) {
  if (bytes == 0) return;
  const uint64_t end = address + bytes;
  for (uint64_t line = address & ~uint64_t{kLineBytes - 1}; line < end; line += kLineBytes) {
    const uint64_t from = line < address ? address : line;
    const uint64_t to = end < line + kLineBytes ? end : line + kLineBytes;
    pending_.push_back({line, GpuExtension::sector_mask_for(from, static_cast<unsigned>(to - from)), kernel_id});
  }
  if (requesting_ == nullptr) wake_.notify(sc_core::SC_ZERO_TIME);
}

void CopyEngine::send() {
  while (requesting_ == nullptr && !pending_.empty()) {
    const Piece piece = pending_.front();
    pending_.pop_front();
    const unsigned sectors = static_cast<unsigned>(__builtin_popcount(piece.sector_mask));
    tlm::tlm_generic_payload* gp = pool_.allocate(tlm::TLM_WRITE_COMMAND, piece.line, kLineBytes);
    GpuExtension* ext = gpu_extension(*gp);
    ext->kind = AccessKind::Dma;
    ext->sector_mask = piece.sector_mask;
    ext->kernel_id = piece.kernel_id;
    ++writes_;
    bytes_ += uint64_t{sectors} * kSectorBytes;
    ++unanswered_;
    requesting_ = gp;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum status = out->nb_transport_fw(*gp, phase, delay);
    if (status == tlm::TLM_COMPLETED) {
      requesting_ = nullptr;
      gp->release();
      answered();
    } else if (status == tlm::TLM_UPDATED && (phase == tlm::END_REQ || phase == tlm::BEGIN_RESP)) {
      requesting_ = nullptr;
      if (phase == tlm::BEGIN_RESP) {
        gp->release();
        answered();
      }
    }
  }
}

tlm::tlm_sync_enum CopyEngine::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_RESP && delayed_.defer(gp, delay)) return tlm::TLM_COMPLETED;
  if (phase == tlm::END_REQ || phase == tlm::BEGIN_RESP) {
    if (&gp == requesting_) {
      requesting_ = nullptr;
      if (!pending_.empty()) wake_.notify(sc_core::SC_ZERO_TIME);
    }
  }
  if (phase == tlm::BEGIN_RESP) {
    gp.release();
    answered();
    return tlm::TLM_COMPLETED;
  }
  return tlm::TLM_ACCEPTED;
}

void CopyEngine::answered() {
  --unanswered_;
  if (idle()) drained_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace gpuvp::gpu
