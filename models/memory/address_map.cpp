#include "models/memory/address_map.h"

#include <stdexcept>
#include <string>

namespace gpuvp::memory {

AddressMap::AddressMap(const L2Params& l2, const HbmParams& hbm)
    : hash_(l2.slice_hash),
      mapping_(hbm.mapping),
      bank_hash_(hbm.bank_hash),
      slices_(l2.slices),
      fold_bits_(1),
      bank_fold_bits_(1),
      line_bytes_(l2.line_bytes),
      burst_bytes_(hbm.burst_bytes()),
      channels_(hbm.total_channels()),
      channels_per_stack_(hbm.channels_per_stack),
      pseudo_channels_(hbm.pseudo_channels),
      bank_groups_(hbm.bank_groups),
      banks_per_group_(hbm.banks_per_group) {
  while ((uint64_t{1} << fold_bits_) < slices_) ++fold_bits_;
  while ((uint64_t{1} << bank_fold_bits_) < hbm.banks()) ++bank_fold_bits_;
  if (burst_bytes_ == 0 || line_bytes_ % burst_bytes_ != 0 || hbm.row_bytes % line_bytes_ != 0)
    throw std::invalid_argument("AddressMap: the L2 line must be a whole number of HBM bursts and the HBM row a "
                                "whole number of lines");
  bursts_per_line_ = static_cast<uint32_t>(line_bytes_ / burst_bytes_);
  bursts_per_row_ = static_cast<uint32_t>(hbm.row_bytes / burst_bytes_);
  const uint64_t bank_bytes = hbm.capacity_bytes / (uint64_t{channels_} * hbm.banks());
  if (bank_bytes == 0 || bank_bytes % hbm.row_bytes != 0 ||
      hbm.capacity_bytes != bank_bytes * channels_ * hbm.banks())
    throw std::invalid_argument("AddressMap: HBM capacity is not a whole number of rows in every bank");
  rows_ = bank_bytes / hbm.row_bytes;
}

uint32_t AddressMap::slice(uint64_t address) const {
  const uint64_t line = address / line_bytes_;
  const uint64_t q = line / slices_, r = line % slices_;
  if (hash_ == SliceHash::Modulo) return static_cast<uint32_t>(r);
  return static_cast<uint32_t>((r + fold(q)) % slices_);
}

uint64_t AddressMap::fold(uint64_t q) const {
  uint64_t f = 0;
  const uint64_t mask = (uint64_t{1} << fold_bits_) - 1;
  for (uint64_t x = q; x != 0; x >>= fold_bits_) f ^= x & mask;
  return f;
}

uint32_t AddressMap::bank_rotation(uint32_t row) const {
  if (bank_hash_ == HbmBankHash::None) return 0;
  const uint32_t banks = bank_groups_ * banks_per_group_;
  uint32_t f = 0;
  const uint32_t mask = (1u << bank_fold_bits_) - 1;
  for (uint32_t x = row; x != 0; x >>= bank_fold_bits_) f ^= x & mask;
  return f % banks;
}

uint64_t AddressMap::line_address(uint32_t slice, uint64_t q) const {
  uint64_t r = slice;
  if (hash_ == SliceHash::XorFold) r = (slice + slices_ - fold(q) % slices_) % slices_;
  return (q * slices_ + r) * line_bytes_;
}

DramCoord AddressMap::decode(uint64_t address) const {
  uint64_t u = address / burst_bytes_;
  DramCoord c;
  auto take = [&u](uint64_t radix) {
    const uint64_t v = u % radix;
    u /= radix;
    return static_cast<uint32_t>(v);
  };
  if (mapping_ == HbmMapping::LineInterleaved) {
    const uint32_t col_lo = take(bursts_per_line_);
    c.channel = take(channels_);
    c.bank_group = take(bank_groups_);
    const uint32_t col_hi = take(bursts_per_row_ / bursts_per_line_);
    c.bank = take(banks_per_group_);
    c.column = col_hi * bursts_per_line_ + col_lo;
  } else {
    c.column = take(bursts_per_row_);
    c.channel = take(channels_);
    c.bank_group = take(bank_groups_);
    c.bank = take(banks_per_group_);
  }
  c.row = static_cast<uint32_t>(u % rows_);
  if (const uint32_t rotation = bank_rotation(c.row); rotation != 0) {
    const uint32_t banks = bank_groups_ * banks_per_group_;
    const uint32_t b = (c.bank * bank_groups_ + c.bank_group + rotation) % banks;
    c.bank = b / bank_groups_;
    c.bank_group = b % bank_groups_;
  }
  c.pseudo_channel = c.channel % pseudo_channels_;
  c.stack_channel = (c.channel / pseudo_channels_) % channels_per_stack_;
  c.stack = c.channel / (pseudo_channels_ * channels_per_stack_);
  return c;
}

uint64_t AddressMap::encode(const DramCoord& c) const {
  // Undo the bank hash, then Horner's scheme over the same fields, most significant first.
  const uint32_t banks = bank_groups_ * banks_per_group_;
  const uint32_t b = (c.bank * bank_groups_ + c.bank_group + banks - bank_rotation(c.row)) % banks;
  const uint32_t bank = b / bank_groups_, bank_group = b % bank_groups_;
  uint64_t u = c.row;
  auto put = [&u](uint64_t radix, uint64_t v) { u = u * radix + v; };
  if (mapping_ == HbmMapping::LineInterleaved) {
    put(banks_per_group_, bank);
    put(bursts_per_row_ / bursts_per_line_, c.column / bursts_per_line_);
    put(bank_groups_, bank_group);
    put(channels_, c.channel);
    put(bursts_per_line_, c.column % bursts_per_line_);
  } else {
    put(banks_per_group_, bank);
    put(bank_groups_, bank_group);
    put(channels_, c.channel);
    put(bursts_per_row_, c.column);
  }
  return u * burst_bytes_;
}

}  // namespace gpuvp::memory
