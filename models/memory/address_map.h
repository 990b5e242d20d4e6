// Physical address -> L2 slice, and -> HBM pseudo-channel, bank group, bank, row, column.
//
// Pure arithmetic (no SystemC), built once from the parameters; every function is a handful of
// integer divisions, called once per request.
//
// L2 SLICE. Let line = address / line_size and S = slice count, q = line / S, r = line % S.
//   modulo:    slice = r
//   xor_fold:  slice = (r + fold(q)) % S, where fold(q) XORs q's w-bit chunks together
//              (w = ceil(log2 S), at least 1): q's low chunk, then bits [w, 2w), ... up to bit 63.
// In both, for a fixed q the S lines q*S .. q*S+S-1 land on S distinct slices (r -> r + c mod S
// is a permutation), so (slice, q) identifies a line and every slice sees q as its local line
// index: the slice derives its set from q (slice_line). With xor_fold, a stride of S lines
// (same r, q increasing) changes fold(q) and so the slice; modulo sends it to one slice.
//
// HBM. Let u = address / burst_bytes (a burst: pseudo-channel width / 8 x burst length,
// 32 B on HBM2 pseudo-channels = one L2 sector), C = pseudo-channels in all stacks, G = bank
// groups, B = banks per group, K = bursts per row, L = bursts per 128 B line. Fields are taken
// from u least significant first (mixed radix, so the mapping is a bijection between
// [0, capacity) and the coordinate space; addresses at or above the capacity wrap on the row):
//   line_interleaved: column_low (L) | channel (C) | bank group (G) | column_high (K/L) | bank (B) | row
//       consecutive lines go to consecutive pseudo-channels, then bank groups (so back-to-back
//       column commands of a stream alternate bank groups at tCCD_S), then stay in the open row.
//   row_interleaved:  column (K) | channel (C) | bank group (G) | bank (B) | row
//       a row's K consecutive bursts stay in one bank (classic page interleaving).
// Bank hash 'xor_fold': with n = G x B and b = bank x G + bank group (the mapping's fields), the
// bank used is (b + fold(row)) mod n, where fold XORs the row's w-bit chunks (w = ceil(log2 n)).
// For a fixed row this is a permutation of the banks (so decode stays a bijection); buffers whose
// addresses differ only in row bits (power-of-two distances) land in different banks.
// The pseudo-channel index c splits as stack = c / (channels_per_stack * P),
// channel = (c / P) % channels_per_stack, pseudo_channel = c % P.
#pragma once

#include <cstdint>

#include "models/memory/hbm/hbm_params.h"
#include "models/memory/l2/l2_params.h"

namespace gpuvp::memory {

struct DramCoord {
  uint32_t channel = 0;  // global pseudo-channel index, 0 .. total_channels()-1
  uint32_t stack = 0, stack_channel = 0, pseudo_channel = 0;
  uint32_t bank_group = 0, bank = 0;  // bank within its group
  uint32_t row = 0;
  uint32_t column = 0;  // burst index within the row
  bool operator==(const DramCoord& o) const {
    return channel == o.channel && bank_group == o.bank_group && bank == o.bank && row == o.row &&
           column == o.column;
  }
};

class AddressMap {
 public:
  // Throws std::invalid_argument when the geometry does not tile (row not a whole number of
  // lines, capacity not a whole number of rows per bank, line not a whole number of bursts).
  AddressMap(const L2Params& l2, const HbmParams& hbm);

  uint32_t slices() const { return slices_; }
  uint32_t slice(uint64_t address) const;
  // The line's index within its slice (q above): the slice's set and tag come from it.
  uint64_t slice_line(uint64_t address) const { return address / line_bytes_ / slices_; }
  // Inverse: the byte address of the line with local index `q` in `slice`.
  uint64_t line_address(uint32_t slice, uint64_t q) const;
  uint64_t line_bytes() const { return line_bytes_; }

  uint32_t channels() const { return channels_; }
  uint32_t channel(uint64_t address) const { return decode(address).channel; }
  DramCoord decode(uint64_t address) const;
  // Inverse of decode for addresses below the capacity: the burst-aligned address.
  uint64_t encode(const DramCoord& c) const;
  uint64_t rows() const { return rows_; }
  uint32_t bursts_per_row() const { return bursts_per_row_; }

 private:
  uint64_t fold(uint64_t q) const;
  uint32_t bank_rotation(uint32_t row) const;
  SliceHash hash_;
  HbmMapping mapping_;
  HbmBankHash bank_hash_;
  uint32_t slices_, fold_bits_, bank_fold_bits_;
  uint64_t line_bytes_;
  uint32_t burst_bytes_, bursts_per_line_, bursts_per_row_;
  uint32_t channels_, channels_per_stack_, pseudo_channels_, bank_groups_, banks_per_group_;
  uint64_t rows_;
};

}  // namespace gpuvp::memory
