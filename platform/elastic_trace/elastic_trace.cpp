#include "platform/elastic_trace/elastic_trace.h"

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace gpuvp::elastic {
namespace {

constexpr char kMagic[8] = {'G', 'V', 'E', 'T', 'R', 'A', 'C', 'E'};
constexpr size_t kFileHeaderBytes = 24;  // magic, u32 version, u32 flags, u64 body bytes
constexpr uint8_t kTagHeader = 'H', kTagKernel = 'K', kTagEnd = 'E';
constexpr uint64_t kMaxBody = uint64_t{64} << 30;  // refuse to inflate more than this

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_var(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_str(std::string& out, const std::string& s) {
  put_var(out, s.size());
  out += s;
}
uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// Flags byte of a request: kind (4 bits), write, holds_cta_end, after_cta_end, MSHR dependency.
constexpr uint8_t kFlagMshr = 0x80;
uint8_t request_flags(const Request& r) {
  return static_cast<uint8_t>(static_cast<uint8_t>(r.kind) | (r.write ? 0x10 : 0) | (r.holds_cta_end ? 0x20 : 0) |
                              (r.after_cta_end ? 0x40 : 0) | (r.mshr_after != 0 ? kFlagMshr : 0));
}

// L1 hit byte: the sector mask (4 bits), merged.
constexpr uint8_t kHitMerged = 0x10;

void encode_kernel(std::string& out, const KernelTrace& k) {
  out.push_back(static_cast<char>(kTagKernel));
  put_var(out, k.id);
  put_str(out, k.name);
  put_var(out, k.begin_ps);
  put_var(out, k.end_ps - k.begin_ps);
  put_var(out, k.cycles);
  put_var(out, k.end_gap);
  put_var(out, k.shared_capacity);
  put_var(out, k.copies.size());
  for (const CopyWrite& c : k.copies) {
    put_var(out, c.address);
    put_var(out, c.length);
    out.push_back(static_cast<char>(c.sector_mask));
  }
  put_var(out, k.uvm.size());
  for (const UvmRecord& u : k.uvm) {
    out.push_back(static_cast<char>(u.operation.kind));
    put_var(out, u.operation.base);
    put_var(out, u.operation.bytes);
    put_var(out, u.before_ps);
    if (u.operation.kind == UvmOperation::Kind::kAdvise) {
      put_var(out, u.operation.advice);
      put_var(out, u.operation.location);
    }
  }
  put_var(out, k.ctas.size());
  for (const CtaTrace& cta : k.ctas) {
    put_var(out, cta.cta);
    put_var(out, cta.sm);
    put_var(out, cta.begin_after == kNone ? 0 : uint64_t{cta.begin_after} + 1);
    put_var(out, cta.begin_gap);
    put_var(out, cta.end_gap);
    put_var(out, cta.begin_cycle);
    put_var(out, cta.end_cycle - cta.begin_cycle);
    put_var(out, cta.warps.size());
    for (const WarpTrace& w : cta.warps) {
      put_var(out, w.slot);
      put_var(out, w.requests.size());
      uint64_t address = 0, issue = cta.begin_cycle, order = 0;
      for (size_t i = 0; i < w.requests.size(); ++i) {
        const Request& r = w.requests[i];
        out.push_back(static_cast<char>(request_flags(r)));
        put_var(out, zigzag(static_cast<int64_t>(r.address - address)));
        address = r.address;
        put_var(out, r.length);
        out.push_back(static_cast<char>(r.sector_mask));
        if (r.kind == AccessKind::Load) out.push_back(static_cast<char>(r.l1_access));
        put_var(out, r.gap);
        put_var(out, zigzag(static_cast<int64_t>(r.issue_cycle - issue)));
        issue = r.issue_cycle;
        put_var(out, zigzag(static_cast<int64_t>(r.order - order)));
        order = r.order;
        put_var(out, uint64_t{r.dep_count} << 1 | (r.barrier ? 1 : 0));  // low bit: a barrier dependency
        for (uint32_t d = 0; d < r.dep_count; ++d) put_var(out, i - w.deps[r.dep_first + d]);  // distance back
        if (r.mshr_after != 0) {
          put_var(out, r.mshr_wait);
          put_var(out, r.mshr_after);
          put_var(out, r.mshr_gap);
        }
        if (r.barrier) {
          put_var(out, r.barrier_index);
          put_var(out, r.barrier_gap);
        }
      }
      put_var(out, w.l1_hits.size());
      uint32_t after = 0;
      address = 0;
      for (const L1Hit& h : w.l1_hits) {
        put_var(out, h.after - after);
        after = h.after;
        put_var(out, h.offset);
        put_var(out, zigzag(static_cast<int64_t>(h.address - address)));
        address = h.address;
        out.push_back(static_cast<char>(h.mask | (h.merged ? kHitMerged : 0)));
      }
    }
    put_var(out, cta.barriers.size());
    for (const BarrierTrace& b : cta.barriers) {
      put_var(out, b.arrivals.size());
      for (const BarrierArrival& a : b.arrivals) {
        // Anchor: 0 the CTA's start; else (barrier + 1) * 4 + 2, or (warp + 1) * 4 + 1 for a
        // response or + 0 for a request, followed by the request.
        put_var(out, a.barrier != kNone ? (uint64_t{a.barrier} + 1) << 2 | 2
                     : a.warp != kNone  ? (uint64_t{a.warp} + 1) << 2 | (a.on_response ? 1 : 0)
                                        : 0);
        if (a.barrier == kNone && a.warp != kNone) put_var(out, a.request);
        put_var(out, a.gap);
      }
    }
  }
}

// Bounds-checked reader of the inflated body; every failure names what it was reading.
class Reader {
 public:
  Reader(const std::string& data, const std::string& file) : data_(data), file_(file) {}
  bool done() const { return pos_ >= data_.size(); }
  uint8_t byte(const char* what) {
    if (pos_ >= data_.size()) fail(std::string("ends inside ") + what);
    return static_cast<uint8_t>(data_[pos_++]);
  }
  uint64_t var(const char* what) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = byte(what);
      v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail(std::string("malformed number in ") + what);
  }
  uint32_t var32(const char* what) {
    const uint64_t v = var(what);
    if (v > 0xffffffffu) fail(std::string("value out of range in ") + what);
    return static_cast<uint32_t>(v);
  }
  // A count of items each at least `min_bytes` long: larger than what is left is corruption.
  size_t count(const char* what, size_t min_bytes) {
    const uint64_t n = var(what);
    if (n > (data_.size() - pos_) / min_bytes) fail(std::string("count out of range in ") + what);
    return static_cast<size_t>(n);
  }
  std::string str(const char* what) {
    const size_t n = count(what, 1);
    std::string s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw TraceFormatError(file_ + ": corrupt trace at body byte " + std::to_string(pos_) + ": " + message);
  }

 private:
  const std::string& data_;
  const std::string& file_;
  size_t pos_ = 0;
};

KernelTrace decode_kernel(Reader& in) {
  KernelTrace k;
  k.id = in.var("kernel id");
  k.name = in.str("kernel name");
  k.begin_ps = in.var("kernel begin");
  k.end_ps = k.begin_ps + in.var("kernel duration");
  k.cycles = in.var("kernel cycles");
  k.end_gap = in.var32("kernel end gap");
  k.shared_capacity = in.var("kernel shared capacity");
  k.copies.resize(in.count("copy writes", 3));
  for (CopyWrite& c : k.copies) {
    c.address = in.var("copy address");
    c.length = in.var32("copy length");
    c.sector_mask = in.byte("copy sector mask");
  }
  k.uvm.resize(in.count("unified-memory operations", 4));
  for (UvmRecord& u : k.uvm) {
    const uint8_t kind = in.byte("unified-memory operation");
    if (kind >= UvmOperation::kKinds) in.fail("unknown unified-memory operation " + std::to_string(kind));
    u.operation.kind = static_cast<UvmOperation::Kind>(kind);
    u.operation.base = in.var("unified-memory base");
    u.operation.bytes = in.var("unified-memory bytes");
    u.before_ps = in.var("unified-memory time");
    if (u.operation.kind == UvmOperation::Kind::kAdvise) {
      u.operation.advice = in.var32("unified-memory advice");
      u.operation.location = in.var32("unified-memory advice location");
    }
  }
  k.ctas.resize(in.count("CTAs", 8));
  for (size_t ci = 0; ci < k.ctas.size(); ++ci) {
    CtaTrace& cta = k.ctas[ci];
    cta.cta = in.var("CTA id");
    cta.sm = in.var32("CTA SM");
    const uint64_t after = in.var("CTA begin dependency");
    if (after > ci) in.fail("CTA " + std::to_string(cta.cta) + " begins after a CTA that is not earlier");
    cta.begin_after = after == 0 ? kNone : static_cast<uint32_t>(after - 1);
    cta.begin_gap = in.var32("CTA begin gap");
    cta.end_gap = in.var32("CTA end gap");
    cta.begin_cycle = in.var("CTA begin cycle");
    cta.end_cycle = cta.begin_cycle + in.var("CTA duration");
    cta.warps.resize(in.count("warps", 2));
    for (WarpTrace& w : cta.warps) {
      w.slot = in.var32("warp slot");
      w.requests.resize(in.count("requests", 8));
      uint64_t address = 0, issue = cta.begin_cycle, order = 0;
      for (size_t i = 0; i < w.requests.size(); ++i) {
        Request& r = w.requests[i];
        const uint8_t flags = in.byte("request flags");
        if ((flags & 0x0f) > static_cast<uint8_t>(AccessKind::Prefetch)) {
          in.fail("unknown request kind or flags " + std::to_string(flags));
        }
        r.kind = static_cast<AccessKind>(flags & 0x0f);
        r.write = (flags & 0x10) != 0;
        r.holds_cta_end = (flags & 0x20) != 0;
        r.after_cta_end = (flags & 0x40) != 0;
        address += static_cast<uint64_t>(unzigzag(in.var("request address")));
        r.address = address;
        r.length = in.var32("request length");
        r.sector_mask = in.byte("request sector mask");
        if (r.kind == AccessKind::Load) {
          r.l1_access = in.byte("request L1 access mask");
          if (r.l1_access > 0x0f || (r.l1_access != 0 && (r.sector_mask & ~r.l1_access) != 0)) {
            in.fail("an L1 access mask that does not hold the requested sectors");
          }
        }
        r.gap = in.var32("request gap");
        issue += static_cast<uint64_t>(unzigzag(in.var("request issue cycle")));
        r.issue_cycle = issue;
        order += static_cast<uint64_t>(unzigzag(in.var("request order")));
        r.order = order;
        const uint64_t deps = in.var("dependency count");
        r.barrier = (deps & 1) != 0;
        if ((deps >> 1) > i) in.fail("a request depends on more requests than precede it");
        r.dep_count = static_cast<uint32_t>(deps >> 1);
        r.dep_first = static_cast<uint32_t>(w.deps.size());
        for (uint32_t d = 0; d < r.dep_count; ++d) {
          const uint64_t back = in.var("dependency");
          if (back == 0 || back > i) in.fail("a dependency on a request that is not earlier in its warp");
          w.deps.push_back(static_cast<uint32_t>(i - back));
        }
        if ((flags & kFlagMshr) != 0) {
          r.mshr_wait = in.var32("MSHR wait");
          r.mshr_after = in.var32("MSHR response count");
          if (r.mshr_after == 0) in.fail("an MSHR dependency on no response");
          r.mshr_gap = in.var32("MSHR gap");
        }
        if (r.barrier) {
          r.barrier_index = in.var32("barrier dependency");
          r.barrier_gap = in.var32("barrier gap");
        }
      }
      w.l1_hits.resize(in.count("L1 hits", 4));
      uint32_t placed = 0;
      address = 0;
      for (L1Hit& h : w.l1_hits) {
        const uint64_t step = in.var("L1 hit position");
        if (step > w.requests.size() - placed) in.fail("an L1 hit after more requests than its warp has");
        placed += static_cast<uint32_t>(step);
        h.after = placed;
        h.offset = in.var32("L1 hit offset");
        address += static_cast<uint64_t>(unzigzag(in.var("L1 hit address")));
        h.address = address;
        const uint8_t bits = in.byte("L1 hit sectors");
        if ((bits & ~(0x0f | kHitMerged)) != 0 || (bits & 0x0f) == 0) in.fail("malformed L1 hit sectors " + std::to_string(bits));
        h.mask = bits & 0x0f;
        h.merged = (bits & kHitMerged) != 0;
      }
    }
    cta.barriers.resize(in.count("barriers", 1));
    for (size_t bi = 0; bi < cta.barriers.size(); ++bi) {
      BarrierTrace& b = cta.barriers[bi];
      b.arrivals.resize(in.count("barrier arrivals", 2));
      for (BarrierArrival& a : b.arrivals) {
        const uint64_t anchor = in.var("barrier arrival");
        if ((anchor & 3) == 2) {
          if ((anchor >> 2) > bi) in.fail("a barrier arrival after a barrier that is not earlier");
          a.barrier = static_cast<uint32_t>((anchor >> 2) - 1);
        } else if ((anchor & 3) == 3 || (anchor != 0 && (anchor >> 2) == 0)) {
          in.fail("malformed barrier arrival " + std::to_string(anchor));
        } else if (anchor != 0) {
          if ((anchor >> 2) > cta.warps.size()) in.fail("a barrier arrival of a warp out of range");
          a.warp = static_cast<uint32_t>((anchor >> 2) - 1);
          a.on_response = (anchor & 1) != 0;
          a.request = in.var32("barrier arrival request");
          if (a.request >= cta.warps[a.warp].requests.size()) in.fail("a barrier arrival after a request its warp lacks");
        }
        a.gap = in.var32("barrier arrival gap");
      }
    }
    // A barrier dependency names a barrier of the CTA whose arrivals (and those of the earlier
    // barriers they count from) come after requests issued earlier than the request that waits,
    // so a replay cannot wait for something that waits for it. latest[b]: 1 + the latest capture
    // order barrier b's release depends on (0: none).
    std::vector<uint64_t> latest(cta.barriers.size(), 0);
    for (size_t b = 0; b < cta.barriers.size(); ++b) {
      for (const BarrierArrival& a : cta.barriers[b].arrivals) {
        if (a.barrier != kNone) latest[b] = std::max(latest[b], latest[a.barrier]);
        if (a.barrier == kNone && a.warp != kNone) latest[b] = std::max(latest[b], std::min(cta.warps[a.warp].requests[a.request].order, ~uint64_t{0} - 1) + 1);
      }
    }
    for (const WarpTrace& w : cta.warps) {
      for (const Request& r : w.requests) {
        if (!r.barrier) continue;
        if (r.barrier_index >= cta.barriers.size() || latest[r.barrier_index] > r.order) {
          in.fail("a barrier dependency on a request that is not an earlier one of its CTA (kernel " +
                  std::to_string(k.id) + ", CTA " + std::to_string(cta.cta) + ")");
        }
      }
    }
  }
  // An MSHR dependency counts responses the capture saw before the request: its SM had at least
  // that many earlier requests holding an MSHR, so a replay cannot wait forever.
  std::vector<std::pair<uint32_t, uint64_t>> holders;  // (SM, order) of the requests holding an MSHR
  for (const CtaTrace& cta : k.ctas) {
    for (const WarpTrace& w : cta.warps) {
      for (const Request& r : w.requests) {
        if (holds_mshr(r.kind)) holders.emplace_back(cta.sm, r.order);
      }
    }
  }
  std::sort(holders.begin(), holders.end());
  for (const CtaTrace& cta : k.ctas) {
    for (const WarpTrace& w : cta.warps) {
      for (const Request& r : w.requests) {
        if (r.mshr_after == 0) continue;
        const auto first = std::lower_bound(holders.begin(), holders.end(), std::make_pair(cta.sm, uint64_t{0}));
        // The n-th of its SM's holders, checked by index before it is looked at.
        const size_t nth = static_cast<size_t>(first - holders.begin()) + (r.mshr_after - 1);
        if (nth >= holders.size() || holders[nth].first != cta.sm || holders[nth].second >= r.order) {
          in.fail("an MSHR dependency on more responses than its SM had requests before it (kernel " +
                  std::to_string(k.id) + ")");
        }
      }
    }
  }
  return k;
}

}  // namespace

struct TraceWriter::Impl {
  std::ofstream out;
  ZSTD_CStream* stream = nullptr;
  std::string compressed;
};

TraceWriter::TraceWriter(const std::string& dir, const CaptureHeader& header) : impl_(new Impl) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw TraceFormatError("cannot create trace directory " + dir + ": " + error.message());
  path_ = (std::filesystem::path(dir) / kTraceFileName).string();
  impl_->out.open(path_, std::ios::binary | std::ios::trunc);
  if (!impl_->out) throw TraceFormatError("cannot write " + path_ + ": " + std::strerror(errno));
  std::string head(kMagic, sizeof kMagic);
  put_u32(head, kFormatVersion);
  put_u32(head, 0);
  put_u64(head, 0);  // body bytes, patched by close()
  impl_->out.write(head.data(), static_cast<std::streamsize>(head.size()));
  impl_->stream = ZSTD_createCStream();
  ZSTD_CCtx_setParameter(impl_->stream, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(impl_->stream, ZSTD_c_checksumFlag, 1);
  std::string raw;
  raw.push_back(static_cast<char>(kTagHeader));
  put_str(raw, header.gpuvp_version);
  put_var(raw, header.program.size());
  for (const std::string& a : header.program) put_str(raw, a);
  put_str(raw, header.config_source);
  put_str(raw, header.config_yaml);
  put_var(raw, header.sm_count);
  put_var(raw, header.core_clock_hz);
  put(raw);
}

TraceWriter::~TraceWriter() {
  if (impl_->stream != nullptr) ZSTD_freeCStream(impl_->stream);
  delete impl_;
}

void TraceWriter::put(const std::string& raw) {
  body_bytes_ += raw.size();
  ZSTD_inBuffer in{raw.data(), raw.size(), 0};
  std::string& buffer = impl_->compressed;
  buffer.resize(ZSTD_CStreamOutSize());
  while (in.pos < in.size) {
    ZSTD_outBuffer out{buffer.data(), buffer.size(), 0};
    const size_t r = ZSTD_compressStream2(impl_->stream, &out, &in, ZSTD_e_continue);
    if (ZSTD_isError(r)) throw TraceFormatError(path_ + ": compression failed: " + ZSTD_getErrorName(r));
    impl_->out.write(buffer.data(), static_cast<std::streamsize>(out.pos));
  }
}

void TraceWriter::add_kernel(const KernelTrace& kernel) {
  if (impl_->stream == nullptr) return;
  std::string raw;
  encode_kernel(raw, kernel);
  put(raw);
  ++kernels_;
}

void TraceWriter::close(uint64_t far_faults) {
  if (impl_->stream == nullptr) return;
  std::string raw;
  raw.push_back(static_cast<char>(kTagEnd));
  put_var(raw, kernels_);
  put_var(raw, far_faults);
  put(raw);
  std::string& buffer = impl_->compressed;
  for (;;) {
    ZSTD_inBuffer in{nullptr, 0, 0};
    ZSTD_outBuffer out{buffer.data(), buffer.size(), 0};
    const size_t left = ZSTD_compressStream2(impl_->stream, &out, &in, ZSTD_e_end);
    if (ZSTD_isError(left)) throw TraceFormatError(path_ + ": compression failed: " + ZSTD_getErrorName(left));
    impl_->out.write(buffer.data(), static_cast<std::streamsize>(out.pos));
    if (left == 0) break;
  }
  ZSTD_freeCStream(impl_->stream);
  impl_->stream = nullptr;
  std::string size;
  put_u64(size, body_bytes_);
  impl_->out.seekp(16);
  impl_->out.write(size.data(), 8);
  impl_->out.seekp(0, std::ios::end);
  file_bytes_ = static_cast<uint64_t>(impl_->out.tellp());
  impl_->out.close();
  if (!impl_->out) throw TraceFormatError("cannot write " + path_ + ": " + std::strerror(errno));
}

Trace read_trace(const std::string& dir_or_file) {
  namespace fs = std::filesystem;
  std::error_code error;
  const std::string file =
      fs::is_directory(dir_or_file, error) ? (fs::path(dir_or_file) / kTraceFileName).string() : dir_or_file;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw TraceFormatError(file + ": cannot open: " + std::strerror(errno) + " (not a capture directory?)");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < kFileHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw TraceFormatError(file + ": not a gpuvp elastic trace (no GVETRACE header)");
  }
  auto u32_at = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
    return v;
  };
  uint64_t body_bytes = 0;
  for (int i = 0; i < 8; ++i) body_bytes |= uint64_t{static_cast<uint8_t>(bytes[16 + i])} << (8 * i);
  const uint32_t version = u32_at(8);
  if (version != kFormatVersion) {
    throw TraceFormatError(file + ": trace format version " + std::to_string(version) + ", this gpuvp reads version " +
                           std::to_string(kFormatVersion) + ": capture it again with this gpuvp");
  }
  if (body_bytes == 0) throw TraceFormatError(file + ": unfinished trace (the capture did not end; body size 0)");
  if (body_bytes > kMaxBody) throw TraceFormatError(file + ": corrupt header: body size " + std::to_string(body_bytes));
  // The body grows with what the frame really holds (never trusting the declared size for the
  // allocation: a few bytes of header must not make the reader zero gigabytes), and must come out
  // exactly as large as the header says.
  std::string body;
  ZSTD_DStream* stream = ZSTD_createDStream();
  ZSTD_inBuffer zin{bytes.data() + kFileHeaderBytes, bytes.size() - kFileHeaderBytes, 0};
  size_t produced = 0;
  size_t r = 1;
  while (zin.pos < zin.size) {
    if (produced == body.size() && body.size() < body_bytes) {
      body.resize(std::min<uint64_t>(body_bytes, std::max<uint64_t>(2 * produced, ZSTD_DStreamOutSize())));
    }
    const size_t consumed = zin.pos;
    ZSTD_outBuffer zout{body.data(), body.size(), produced};
    r = ZSTD_decompressStream(stream, &zout, &zin);
    if (ZSTD_isError(r)) {
      ZSTD_freeDStream(stream);
      throw TraceFormatError(file + ": corrupt trace: " + ZSTD_getErrorName(r));
    }
    const bool progress = zin.pos != consumed || zout.pos != produced;
    produced = zout.pos;
    if (r == 0) break;
    if (!progress) {  // the body is full and the frame has more content
      ZSTD_freeDStream(stream);
      throw TraceFormatError(file + ": corrupt trace: more data than the header's body size");
    }
  }
  ZSTD_freeDStream(stream);
  if (r != 0 || produced != body_bytes) {
    throw TraceFormatError(file + ": truncated trace: " + std::to_string(produced) + " of " +
                           std::to_string(body_bytes) + " body bytes");
  }
  Trace trace;
  Reader rd(body, file);
  if (rd.byte("header") != kTagHeader) rd.fail("no capture header");
  CaptureHeader& h = trace.header;
  h.version = version;
  h.gpuvp_version = rd.str("gpuvp version");
  h.program.resize(rd.count("program arguments", 1));
  for (std::string& a : h.program) a = rd.str("program argument");
  h.config_source = rd.str("config source");
  h.config_yaml = rd.str("configuration");
  h.sm_count = rd.var32("SM count");
  h.core_clock_hz = rd.var("core clock");
  for (;;) {
    const uint8_t tag = rd.byte("record tag");
    if (tag == kTagKernel) {
      trace.kernels.push_back(decode_kernel(rd));
      for (const CtaTrace& cta : trace.kernels.back().ctas) {
        if (cta.sm >= h.sm_count) rd.fail("CTA on SM " + std::to_string(cta.sm) + " of " + std::to_string(h.sm_count));
      }
    } else if (tag == kTagEnd) {
      if (rd.var("kernel count") != trace.kernels.size()) rd.fail("kernel count differs from the kernels present");
      h.far_faults = rd.var("far faults");
      if (!rd.done()) rd.fail("data after the end record");
      break;
    } else {
      rd.fail("unknown record tag " + std::to_string(tag));
    }
  }
  return trace;
}

void mark_shared_lines(Trace& trace) {
  std::vector<uint64_t> written;
  for (const KernelTrace& k : trace.kernels) {
    for (const CtaTrace& cta : k.ctas) {
      for (const WarpTrace& w : cta.warps) {
        for (const Request& r : w.requests) {
          if (r.write || r.kind == AccessKind::Atomic || r.kind == AccessKind::Reduction) written.push_back(r.address);
        }
      }
    }
  }
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  for (KernelTrace& k : trace.kernels) {
    for (CtaTrace& cta : k.ctas) {
      for (WarpTrace& w : cta.warps) {
        for (Request& r : w.requests) r.shared = !std::binary_search(written.begin(), written.end(), r.address);
      }
    }
  }
}

void interleave_l1_hits(Trace& trace, uint32_t captured_hit_latency) {
  for (KernelTrace& k : trace.kernels) {
    for (CtaTrace& cta : k.ctas) {
      // New index of each request, per warp, for the barrier anchors of other warps.
      std::vector<std::vector<uint32_t>> moved(cta.warps.size());
      std::vector<WarpTrace> rebuilt(cta.warps.size());
      for (size_t wi = 0; wi < cta.warps.size(); ++wi) {
        const WarpTrace& w = cta.warps[wi];
        WarpTrace& out = rebuilt[wi];
        out.slot = w.slot;
        out.requests.reserve(w.requests.size() + w.l1_hits.size());
        moved[wi].resize(w.requests.size());
        size_t h = 0;
        uint64_t previous = cta.begin_cycle;  // ready cycle of the record before
        for (size_t i = 0; i <= w.requests.size(); ++i) {
          const uint64_t base = i == 0 ? cta.begin_cycle : w.requests[i - 1].issue_cycle;
          const uint64_t base_order = i == 0 ? (w.requests.empty() ? 0 : w.requests[0].order) : w.requests[i - 1].order;
          std::vector<std::pair<uint32_t, uint64_t>> hits;  // (new index, captured completion) before request i
          for (uint64_t n = 1; h < w.l1_hits.size() && w.l1_hits[h].after == i; ++h, ++n) {
            const L1Hit& hit = w.l1_hits[h];
            Request r;
            r.address = hit.address;
            r.length = kLineBytes;
            r.sector_mask = hit.mask;
            r.l1_access = hit.mask;
            r.kind = AccessKind::Load;
            r.captured_hit = true;
            r.issue_cycle = base + hit.offset;
            r.gap = static_cast<uint32_t>(r.issue_cycle - std::min(r.issue_cycle, previous));
            // Between the neighbours in capture order (orders are spread out below).
            r.order = i == 0 ? (base_order << 16) - std::min<uint64_t>(base_order << 16, w.l1_hits.size() + 1 - n)
                             : (base_order << 16) + n;
            previous = std::max(previous, r.issue_cycle);
            // A merge was answered by another request's response, whose capture time the trace
            // does not hold: its wait stays in the gaps after it.
            hits.emplace_back(static_cast<uint32_t>(out.requests.size()),
                              hit.merged ? ~uint64_t{0} : r.issue_cycle + captured_hit_latency);
            out.requests.push_back(r);
          }
          if (i == w.requests.size()) break;
          Request r = w.requests[i];
          r.order <<= 16;
          if (r.mshr_after != 0) {  // the captured wait stands
            r.gap += r.mshr_wait;
            r.mshr_after = 0;
            r.mshr_wait = 0;
            r.mshr_gap = 0;
          }
          if (r.dep_count == 0 && !hits.empty()) {  // its gap counted from request i-1: now from the last hit
            const uint64_t shift = previous - base;
            r.gap = static_cast<uint32_t>(r.gap - std::min<uint64_t>(r.gap, shift));
          }
          const uint32_t dep_first = static_cast<uint32_t>(out.deps.size());
          for (uint32_t d = 0; d < r.dep_count; ++d) out.deps.push_back(moved[wi][w.deps[r.dep_first + d]]);
          // The hits back before it was ready are waited for: its gap counts from the latest of
          // them when that came back after its other dependencies (or it had none).
          const bool had_deps = r.dep_count != 0;
          uint64_t latest_hit = 0;
          for (const auto& [index, done] : hits) {
            if (done >= r.issue_cycle) continue;
            out.deps.push_back(index);
            latest_hit = std::max(latest_hit, done);
          }
          if (latest_hit != 0) {
            const auto since = static_cast<uint32_t>(r.issue_cycle - latest_hit);
            r.gap = had_deps ? std::min(r.gap, since) : since;
          }
          r.dep_first = dep_first;
          r.dep_count = static_cast<uint32_t>(out.deps.size()) - dep_first;
          std::sort(out.deps.begin() + dep_first, out.deps.end());
          moved[wi][i] = static_cast<uint32_t>(out.requests.size());
          previous = std::max(previous, r.issue_cycle);
          out.requests.push_back(r);
        }
      }
      for (BarrierTrace& b : cta.barriers) {
        for (BarrierArrival& a : b.arrivals) {
          if (a.warp != kNone) a.request = moved[a.warp][a.request];
        }
      }
      cta.warps = std::move(rebuilt);
    }
  }
}

TraceTotals totals(const Trace& trace) {
  TraceTotals t;
  for (const KernelTrace& k : trace.kernels) {
    t.ctas += k.ctas.size();
    t.uvm_operations += k.uvm.size();
    for (const CtaTrace& cta : k.ctas) t.barriers += cta.barriers.size();
    for (const CtaTrace& cta : k.ctas) {
      t.warps += cta.warps.size();
      for (const WarpTrace& w : cta.warps) {
        t.requests += w.requests.size();
        t.deps += w.deps.size();
        for (const L1Hit& h : w.l1_hits) ++(h.merged ? t.l1_merges : t.l1_hits);
        for (const Request& r : w.requests) {
          if (r.mshr_after != 0) ++t.mshr_deps;
          if (r.barrier) ++t.barrier_deps;
          switch (r.kind) {
            case AccessKind::Load: ++t.loads; break;
            case AccessKind::Store: ++t.stores; break;
            case AccessKind::Atomic:
            case AccessKind::Reduction: ++t.atomics; break;
            default: ++t.other; break;
          }
        }
      }
    }
  }
  return t;
}

}  // namespace gpuvp::elastic
