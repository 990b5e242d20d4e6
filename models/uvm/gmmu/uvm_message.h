// The extension carried by the translation traffic between the L1 TLBs and the GMMU.
//
//   L1 TLB --Translate(page)--> GMMU          (BEGIN_REQ on the GMMU's `translate` socket)
//   GMMU --Translated | NackReplayable--> L1  (BEGIN_RESP of that transaction)
//   GMMU --Replay(page)--> L1                 (b_transport on the L1's `notify` socket, seed 003
//                                              §B.2 step 6: the fault was serviced, re-translate)
//   GMMU --Invalidate(range) | FlushAll--> L1 (b_transport on `notify`: TLB shootdown)
#pragma once

#include <cstdint>

#include <tlm>

namespace gpuvp::uvm {

enum class UvmMessageKind : uint8_t { Translate, Translated, NackReplayable, Replay, Invalidate, FlushAll };

class UvmMessage : public tlm::tlm_extension<UvmMessage> {
 public:
  UvmMessageKind kind = UvmMessageKind::Translate;
  uint64_t page = 0;   // first page (virtual address / 4 KB)
  uint64_t count = 1;  // pages (Invalidate)
  bool write = false;  // the access that needs the translation writes

  tlm::tlm_extension_base* clone() const override { return new UvmMessage(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const UvmMessage&>(other);
  }
};

}  // namespace gpuvp::uvm
