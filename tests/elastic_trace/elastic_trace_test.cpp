// The elastic trace format: a written trace reads back field for field; a damaged file (not a
// trace, another version, unfinished, truncated, a flipped byte, a mutated body re-compressed
// with a valid checksum) is a TraceFormatError naming the file, never a crash.
#include <gtest/gtest.h>

#include <functional>

#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "platform/elastic_trace/elastic_trace.h"
#include "platform/elastic_trace/trace_inspect.h"

namespace gpuvp::elastic {
namespace {

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/elastic_trace_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

CaptureHeader sample_header() {
  CaptureHeader h;
  h.gpuvp_version = "9.9.9";
  h.program = {"./app", "--size", "1024"};
  h.config_source = "v100";
  h.config_yaml = "gpu:\n  sm:\n    count: 4\n";
  h.sm_count = 4;
  h.core_clock_hz = 1'312'000'000;
  return h;
}

KernelTrace sample_kernel(uint64_t id) {
  KernelTrace k;
  k.id = id;
  k.name = "vector_add";
  k.begin_ps = 1'000'000 * id;
  k.end_ps = k.begin_ps + 777'000;
  k.cycles = 1019;
  k.end_gap = 12;
  k.shared_capacity = 96 * 1024;
  UvmRecord map;
  map.operation.kind = UvmOperation::Kind::kMap;
  map.operation.base = 0x7000'0000;
  map.operation.bytes = 1 << 20;
  map.before_ps = 5'000'000;
  UvmRecord advise = map;
  advise.operation.kind = UvmOperation::Kind::kAdvise;
  advise.operation.advice = 3;
  advise.operation.location = 1;
  advise.before_ps = 4'000;
  k.uvm = {map, advise};
  k.copies.push_back(CopyWrite{0x7000'0000, 128, 0x3});
  for (uint32_t c = 0; c < 3; ++c) {
    CtaTrace cta;
    cta.cta = 10 + c;
    cta.sm = c % 4;
    cta.begin_after = c == 2 ? 0 : kNone;
    cta.begin_gap = 40 + c;
    cta.end_gap = 3;
    cta.begin_cycle = 40 + c;
    cta.end_cycle = 900 + c;
    for (uint32_t w = 0; w < 2; ++w) {
      WarpTrace warp;
      warp.slot = 8 * c + w;
      for (uint32_t i = 0; i < 4; ++i) {
        Request r;
        r.address = 0x1000'0000 + 0x80 * (i * 7 + w) - (i == 3 ? 0x10000 : 0);  // one backwards step
        r.length = 128;
        r.sector_mask = static_cast<uint8_t>(1u << i);
        r.kind = i == 3 ? AccessKind::Store : AccessKind::Load;
        r.write = i == 3;
        r.holds_cta_end = i != 3;
        r.gap = 5 + i;
        r.issue_cycle = cta.begin_cycle + 10 * (i + 1);
        r.order = 100 * c + 10 * w + i;
        r.dep_first = static_cast<uint32_t>(warp.deps.size());
        if (i == 3) {
          warp.deps.push_back(0);
          warp.deps.push_back(2);
          r.dep_count = 2;
          if (w == 1) {  // held back by the MSHRs until the SM's second MSHR-freeing response
            r.mshr_wait = 7;
            r.mshr_after = 2;
            r.mshr_gap = 9;
          }
        }
        if (i == 2 && w == 1) {  // past barrier 1, 31 cycles after its release
          r.barrier = true;
          r.barrier_index = 1;
          r.barrier_gap = 31;
        }
        if (i == 1 && w == 0) {  // past barrier 0
          r.barrier = true;
          r.barrier_gap = 17;
        }
        if (r.kind == AccessKind::Load && i != 2) r.l1_access = static_cast<uint8_t>(r.sector_mask | 0x8);  // (2 bypassed L1)
        warp.requests.push_back(r);
      }
      // An L1 hit before the first request, two after request 1 (one merged), one at the end.
      warp.l1_hits.push_back(L1Hit{0, 3, 0x1000'0400, 0x1, false});
      warp.l1_hits.push_back(L1Hit{2, 1, 0x1000'0080, 0xf, false});
      warp.l1_hits.push_back(L1Hit{2, 4, 0x0fff'0000, 0x6, true});
      warp.l1_hits.push_back(L1Hit{4, 9, 0x1000'0100, 0x8, false});
      cta.warps.push_back(warp);
    }
    // Barrier 0: warp 1 arrived before it had any request, warp 0 after its first; barrier 1:
    // warp 0 after its second response, warp 1 after its second request, a third warp (without
    // requests) after barrier 0's release.
    cta.barriers.resize(2);
    cta.barriers[0].arrivals = {BarrierArrival{kNone, kNone, 0, false, 15}, BarrierArrival{kNone, 0, 0, false, 3}};
    cta.barriers[1].arrivals = {BarrierArrival{kNone, 0, 1, true, 5}, BarrierArrival{kNone, 1, 1, false, 2},
                                BarrierArrival{0, kNone, 0, false, 7}};  // (the last 7 after barrier 0's release)
    k.ctas.push_back(cta);
  }
  return k;
}

std::string write_sample(const std::string& dir) {
  TraceWriter writer(dir, sample_header());
  writer.add_kernel(sample_kernel(1));
  writer.add_kernel(sample_kernel(2));
  writer.close(5);
  return writer.path();
}

TEST(ElasticTrace, RoundTripsEveryField) {
  const std::string dir = temp_dir("roundtrip");
  write_sample(dir);
  const Trace t = read_trace(dir);
  const CaptureHeader want = sample_header();
  EXPECT_EQ(t.header.version, kFormatVersion);
  EXPECT_EQ(t.header.gpuvp_version, want.gpuvp_version);
  EXPECT_EQ(t.header.program, want.program);
  EXPECT_EQ(t.header.config_source, want.config_source);
  EXPECT_EQ(t.header.config_yaml, want.config_yaml);
  EXPECT_EQ(t.header.sm_count, 4u);
  EXPECT_EQ(t.header.core_clock_hz, want.core_clock_hz);
  EXPECT_EQ(t.header.far_faults, 5u);
  ASSERT_EQ(t.kernels.size(), 2u);
  for (uint64_t id = 1; id <= 2; ++id) {
    const KernelTrace& got = t.kernels[id - 1];
    const KernelTrace k = sample_kernel(id);
    EXPECT_EQ(got.id, k.id);
    EXPECT_EQ(got.name, k.name);
    EXPECT_EQ(got.begin_ps, k.begin_ps);
    EXPECT_EQ(got.end_ps, k.end_ps);
    EXPECT_EQ(got.cycles, k.cycles);
    EXPECT_EQ(got.end_gap, k.end_gap);
    EXPECT_EQ(got.shared_capacity, k.shared_capacity);
    ASSERT_EQ(got.uvm.size(), 2u);
    for (size_t u = 0; u < 2; ++u) {
      EXPECT_EQ(got.uvm[u].operation.kind, k.uvm[u].operation.kind);
      EXPECT_EQ(got.uvm[u].operation.base, k.uvm[u].operation.base);
      EXPECT_EQ(got.uvm[u].operation.bytes, k.uvm[u].operation.bytes);
      EXPECT_EQ(got.uvm[u].operation.advice, k.uvm[u].operation.advice);
      EXPECT_EQ(got.uvm[u].operation.location, k.uvm[u].operation.location);
      EXPECT_EQ(got.uvm[u].before_ps, k.uvm[u].before_ps);
    }
    ASSERT_EQ(got.copies.size(), 1u);
    EXPECT_EQ(got.copies[0].address, k.copies[0].address);
    EXPECT_EQ(got.copies[0].sector_mask, 0x3);
    ASSERT_EQ(got.ctas.size(), k.ctas.size());
    for (size_t c = 0; c < k.ctas.size(); ++c) {
      const CtaTrace& a = got.ctas[c];
      const CtaTrace& b = k.ctas[c];
      EXPECT_EQ(a.cta, b.cta);
      EXPECT_EQ(a.sm, b.sm);
      EXPECT_EQ(a.begin_after, b.begin_after);
      EXPECT_EQ(a.begin_gap, b.begin_gap);
      EXPECT_EQ(a.end_gap, b.end_gap);
      EXPECT_EQ(a.begin_cycle, b.begin_cycle);
      EXPECT_EQ(a.end_cycle, b.end_cycle);
      ASSERT_EQ(a.barriers.size(), b.barriers.size());
      for (size_t i = 0; i < b.barriers.size(); ++i) {
        ASSERT_EQ(a.barriers[i].arrivals.size(), b.barriers[i].arrivals.size());
        for (size_t j = 0; j < b.barriers[i].arrivals.size(); ++j) {
          const BarrierArrival& x = a.barriers[i].arrivals[j];
          const BarrierArrival& y = b.barriers[i].arrivals[j];
          EXPECT_EQ(x.barrier, y.barrier);
          EXPECT_EQ(x.warp, y.warp);
          EXPECT_EQ(x.request, y.request);
          EXPECT_EQ(x.on_response, y.on_response);
          EXPECT_EQ(x.gap, y.gap);
        }
      }
      ASSERT_EQ(a.warps.size(), b.warps.size());
      for (size_t w = 0; w < b.warps.size(); ++w) {
        EXPECT_EQ(a.warps[w].slot, b.warps[w].slot);
        EXPECT_EQ(a.warps[w].deps, b.warps[w].deps);
        ASSERT_EQ(a.warps[w].l1_hits.size(), b.warps[w].l1_hits.size());
        for (size_t h = 0; h < b.warps[w].l1_hits.size(); ++h) {
          const L1Hit& x = a.warps[w].l1_hits[h];
          const L1Hit& y = b.warps[w].l1_hits[h];
          EXPECT_EQ(x.after, y.after);
          EXPECT_EQ(x.offset, y.offset);
          EXPECT_EQ(x.address, y.address);
          EXPECT_EQ(x.mask, y.mask);
          EXPECT_EQ(x.merged, y.merged);
        }
        ASSERT_EQ(a.warps[w].requests.size(), b.warps[w].requests.size());
        for (size_t i = 0; i < b.warps[w].requests.size(); ++i) {
          const Request& x = a.warps[w].requests[i];
          const Request& y = b.warps[w].requests[i];
          EXPECT_EQ(x.address, y.address);
          EXPECT_EQ(x.length, y.length);
          EXPECT_EQ(x.sector_mask, y.sector_mask);
          EXPECT_EQ(x.kind, y.kind);
          EXPECT_EQ(x.write, y.write);
          EXPECT_EQ(x.holds_cta_end, y.holds_cta_end);
          EXPECT_EQ(x.gap, y.gap);
          EXPECT_EQ(x.dep_first, y.dep_first);
          EXPECT_EQ(x.dep_count, y.dep_count);
          EXPECT_EQ(x.issue_cycle, y.issue_cycle);
          EXPECT_EQ(x.order, y.order);
          EXPECT_EQ(x.mshr_wait, y.mshr_wait);
          EXPECT_EQ(x.mshr_after, y.mshr_after);
          EXPECT_EQ(x.mshr_gap, y.mshr_gap);
          EXPECT_EQ(x.barrier, y.barrier);
          EXPECT_EQ(x.barrier_index, y.barrier_index);
          EXPECT_EQ(x.barrier_gap, y.barrier_gap);
          EXPECT_EQ(x.l1_access, y.l1_access);
        }
      }
    }
  }
  const TraceTotals totals_seen = totals(t);
  EXPECT_EQ(totals_seen.ctas, 6u);
  EXPECT_EQ(totals_seen.requests, 48u);
  EXPECT_EQ(totals_seen.stores, 12u);
  EXPECT_EQ(totals_seen.deps, 24u);
  EXPECT_EQ(totals_seen.mshr_deps, 6u);
  EXPECT_EQ(totals_seen.barrier_deps, 12u);
  EXPECT_EQ(totals_seen.barriers, 12u);
  EXPECT_EQ(totals_seen.l1_hits, 36u);
  EXPECT_EQ(totals_seen.l1_merges, 12u);
  const std::string summary = trace_summary(t, 1000);
  EXPECT_NE(summary.find("./app --size 1024"), std::string::npos) << summary;
  EXPECT_NE(summary.find("far faults"), std::string::npos) << summary;
  EXPECT_NE(summary.find("4 host operations"), std::string::npos) << summary;
  EXPECT_NE(trace_records(t, 0, 3).find("advise 0x70000000"), std::string::npos);
  const std::string records = trace_records(t, 0, 3);
  EXPECT_NE(records.find("first 3 requests shown"), std::string::npos) << records;
}

// An MSHR dependency may only count responses of requests its SM issued before it: one that
// counts more could never be met on replay.
TEST(ElasticTrace, RejectsAnMshrDependencyOnResponsesThatCannotCome) {
  const std::string dir = temp_dir("mshr_after");
  {
    TraceWriter writer(dir, sample_header());
    KernelTrace k = sample_kernel(1);
    k.ctas[1].warps[1].requests[3].mshr_after = 7;  // SM 1 had six loads before this store
    writer.add_kernel(k);
    writer.close(0);
  }
  try {
    read_trace(dir);
    FAIL() << "a trace with an impossible MSHR dependency was accepted";
  } catch (const TraceFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("MSHR dependency"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(kTraceFileName), std::string::npos) << e.what();
  }
  {
    TraceWriter writer(dir, sample_header());
    KernelTrace k = sample_kernel(1);
    k.ctas[1].warps[1].requests[3].mshr_after = 6;  // exactly as many: accepted
    writer.add_kernel(k);
    writer.close(0);
  }
  EXPECT_EQ(read_trace(dir).kernels.at(0).ctas.at(1).warps.at(1).requests.at(3).mshr_after, 6u);
}

// A barrier's arrivals come after earlier requests of warps of the same CTA than the request
// that waits for it: one after a later request (or a request or warp that does not exist), or a
// dependency on a barrier the CTA lacks, could leave a replay waiting forever.
TEST(ElasticTrace, RejectsABarrierDependencyOnALaterRequest) {
  const std::string dir = temp_dir("barrier");
  // Warp 1's request 2 (order 112) waits for barrier 1, whose second arrival follows warp 1's request 1.
  const std::vector<std::pair<uint32_t, uint32_t>> bad = {{1, 2}, {1, 3}, {0, 4}, {2, 0}};  // (warp, request)
  for (const auto& [warp, request] : bad) {
    {
      TraceWriter writer(dir, sample_header());
      KernelTrace k = sample_kernel(1);
      k.ctas[1].barriers[1].arrivals[1].warp = warp;
      k.ctas[1].barriers[1].arrivals[1].request = request;
      writer.add_kernel(k);
      writer.close(0);
    }
    try {
      read_trace(dir);
      FAIL() << "a barrier arrival after warp " << warp << " request " << request << " was accepted";
    } catch (const TraceFormatError& e) {
      EXPECT_NE(std::string(e.what()).find("barrier"), std::string::npos) << e.what();
    }
  }
  {
    TraceWriter writer(dir, sample_header());
    KernelTrace k = sample_kernel(1);
    k.ctas[1].warps[1].requests[2].barrier_index = 2;  // no such barrier
    writer.add_kernel(k);
    writer.close(0);
  }
  EXPECT_THROW(read_trace(dir), TraceFormatError);
  {
    TraceWriter writer(dir, sample_header());
    KernelTrace k = sample_kernel(1);
    k.ctas[1].barriers[1].arrivals[1].request = 0;  // warp 1's request 0 (order 110): earlier, accepted
    writer.add_kernel(k);
    writer.close(0);
  }
  EXPECT_EQ(read_trace(dir).kernels.at(0).ctas.at(1).barriers.at(1).arrivals.at(1).request, 0u);
}

// An L1 hit sits among its warp's requests: one placed after more requests than the warp has,
// or with no sector, is corrupt; so is a load's L1 access mask that lacks a requested sector,
// and a unified-memory operation of no known kind.
TEST(ElasticTrace, RejectsMisplacedL1HitsAndUnknownOperations) {
  const std::string dir = temp_dir("l1_hits");
  const std::vector<std::pair<std::function<void(WarpTrace&)>, std::string>> bad = {
      {[](WarpTrace& w) { w.l1_hits.back().after = 5; }, "L1 hit after more requests"},
      {[](WarpTrace& w) { w.l1_hits.front().mask = 0; }, "L1 hit sectors"},
      {[](WarpTrace& w) { w.requests[1].l1_access = 0x1; }, "L1 access mask"},
  };
  {  // an unknown unified-memory operation
    TraceWriter writer(dir, sample_header());
    KernelTrace k = sample_kernel(1);
    k.uvm[0].operation.kind = static_cast<UvmOperation::Kind>(UvmOperation::kKinds);
    writer.add_kernel(k);
    writer.close(0);
  }
  try {
    read_trace(dir);
    FAIL() << "accepted an unknown unified-memory operation";
  } catch (const TraceFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown unified-memory operation"), std::string::npos) << e.what();
  }
  for (const auto& [corrupt, message] : bad) {
    {
      TraceWriter writer(dir, sample_header());
      KernelTrace k = sample_kernel(1);
      corrupt(k.ctas[2].warps[1]);
      writer.add_kernel(k);
      writer.close(0);
    }
    try {
      read_trace(dir);
      FAIL() << "accepted a trace with a bad " << message;
    } catch (const TraceFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// For a replay that redoes the L1, hits become requests in their place: ready their offset
// after the record before them, a later request that was ready after a hit's data came back
// depends on it (a merge's completion is not in the trace: nothing depends on it), and
// dependencies, barrier anchors and orders follow the new indices.
TEST(ElasticTrace, InterleavesL1HitsAsRequestsInTheirPlace) {
  Trace t;
  KernelTrace k;
  CtaTrace cta;
  cta.begin_cycle = 100;
  WarpTrace w0;
  Request a;  // ready at 110
  a.kind = AccessKind::Load;
  a.gap = 10;
  a.issue_cycle = 110;
  a.order = 1;
  Request b = a;  // ready at 200, 90 after a (no dependency)
  b.gap = 90;
  b.issue_cycle = 200;
  b.order = 2;
  Request c = a;  // ready at 260, 40 after b's response
  c.gap = 40;
  c.issue_cycle = 260;
  c.order = 5;
  c.dep_first = 0;
  c.dep_count = 1;
  w0.deps = {1};
  w0.requests = {a, b, c};
  w0.l1_hits.push_back(L1Hit{1, 20, 0x4000, 0x3, false});   // 130: back at 158, before b
  w0.l1_hits.push_back(L1Hit{1, 60, 0x5000, 0x1, true});    // 170: a merge
  w0.l1_hits.push_back(L1Hit{2, 50, 0x6000, 0xf, false});   // 250: back at 278, after c was ready
  WarpTrace w1;
  Request d = a;  // past a barrier that warp 0 arrived at after its request c
  d.issue_cycle = 300;
  d.order = 6;
  d.barrier = true;
  cta.barriers.resize(1);
  cta.barriers[0].arrivals = {BarrierArrival{kNone, 0, 2, false, 10}};
  w1.requests = {d};
  cta.warps = {w0, w1};
  k.ctas = {cta};
  t.kernels = {k};
  interleave_l1_hits(t, 28);
  const WarpTrace& w = t.kernels[0].ctas[0].warps[0];
  ASSERT_EQ(w.requests.size(), 6u);
  const std::vector<bool> hit = {false, true, true, false, true, false};
  for (size_t i = 0; i < hit.size(); ++i) EXPECT_EQ(w.requests[i].captured_hit, hit[i]) << i;
  EXPECT_EQ(w.requests[1].gap, 20u);
  EXPECT_EQ(w.requests[1].l1_access, 0x3);
  EXPECT_EQ(w.requests[2].gap, 40u);
  // b: depends on the first hit (back at 158), 42 after it; not on the merge.
  EXPECT_EQ(w.requests[3].dep_count, 1u);
  EXPECT_EQ(w.deps[w.requests[3].dep_first], 1u);
  EXPECT_EQ(w.requests[3].gap, 42u);
  EXPECT_EQ(w.requests[4].gap, 50u);
  // c: still on b (now index 3), its gap unchanged; the last hit came back after c was ready.
  EXPECT_EQ(w.requests[5].dep_count, 1u);
  EXPECT_EQ(w.deps[w.requests[5].dep_first], 3u);
  EXPECT_EQ(w.requests[5].gap, 40u);
  for (size_t i = 1; i < w.requests.size(); ++i) EXPECT_LT(w.requests[i - 1].order, w.requests[i].order) << i;
  EXPECT_EQ(t.kernels[0].ctas[0].barriers[0].arrivals[0].request, 5u);
}

TEST(ElasticTrace, MarksLinesNoRequestWritesAsShared) {
  const std::string dir = temp_dir("shared");
  write_sample(dir);
  Trace t = read_trace(dir);
  mark_shared_lines(t);
  for (const CtaTrace& cta : t.kernels[0].ctas) {
    for (const WarpTrace& w : cta.warps) {
      EXPECT_TRUE(w.requests[0].shared);  // loads of lines nobody writes
      EXPECT_FALSE(w.requests[3].shared);  // the store's line
    }
  }
}

void expect_error(const std::string& path, const std::string& words) {
  try {
    read_trace(path);
    ADD_FAILURE() << "read a damaged trace without an error (" << words << ")";
  } catch (const TraceFormatError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(words), std::string::npos) << message;
    EXPECT_NE(message.find("elastic.gvet"), std::string::npos) << message;
  }
}

TEST(ElasticTrace, RejectsWhatIsNotATrace) {
  const std::string dir = temp_dir("not");
  std::filesystem::create_directories(dir);
  expect_error(dir, "cannot open");
  spit(dir + "/elastic.gvet", "hello, this is not a trace at all");
  expect_error(dir, "not a gpuvp elastic trace");
  spit(dir + "/elastic.gvet", "");
  expect_error(dir, "not a gpuvp elastic trace");
}

TEST(ElasticTrace, RejectsAnotherFormatVersion) {
  const std::string dir = temp_dir("version");
  const std::string path = write_sample(dir);
  std::string bytes = slurp(path);
  bytes[8] = static_cast<char>(kFormatVersion + 1);
  spit(path, bytes);
  expect_error(dir, "format version " + std::to_string(kFormatVersion + 1));
}

TEST(ElasticTrace, RejectsAnUnfinishedCapture) {
  const std::string dir = temp_dir("unfinished");
  {
    TraceWriter writer(dir, sample_header());
    writer.add_kernel(sample_kernel(1));
  }  // never closed: the capture died
  expect_error(dir, "unfinished");
}

TEST(ElasticTrace, RejectsTruncatedFiles) {
  const std::string dir = temp_dir("truncated");
  const std::string path = write_sample(dir);
  const std::string bytes = slurp(path);
  for (size_t keep : {size_t{10}, size_t{24}, size_t{30}, bytes.size() / 2, bytes.size() - 1}) {
    spit(path, bytes.substr(0, keep));
    try {
      read_trace(dir);
      ADD_FAILURE() << "read a trace cut to " << keep << " bytes";
    } catch (const TraceFormatError& e) {
      const std::string message = e.what();
      EXPECT_TRUE(message.find("truncated") != std::string::npos || message.find("not a gpuvp") != std::string::npos ||
                  message.find("corrupt") != std::string::npos)
          << message;
    }
  }
}

// The header's body size bounds the body but never sizes an allocation: a header declaring
// 60 GiB in front of a small frame once made the reader zero 60 GiB before decompressing (found by
// the elastic fuzzer). A body size smaller than the frame's content is an error too.
TEST(ElasticTrace, DeclaredBodySizeIsNotTrusted) {
  const std::string dir = temp_dir("declared");
  const std::string path = write_sample(dir);
  const std::string bytes = slurp(path);
  auto with_body_size = [&](uint64_t declared) {
    std::string damaged = bytes;
    for (int i = 0; i < 8; ++i) damaged[16 + i] = static_cast<char>(declared >> (8 * i));
    spit(path, damaged);
  };
  uint64_t real = 0;
  for (int i = 0; i < 8; ++i) real |= uint64_t{static_cast<uint8_t>(bytes[16 + i])} << (8 * i);
  with_body_size(uint64_t{60} << 30);
  expect_error(dir, "truncated trace: " + std::to_string(real) + " of " + std::to_string(uint64_t{60} << 30));
  with_body_size(real / 2);
  expect_error(dir, "more data than the header's body size");
  with_body_size(real);
  EXPECT_NO_THROW(read_trace(dir));
}

TEST(ElasticTrace, RejectsFlippedBytes) {
  const std::string dir = temp_dir("flipped");
  const std::string path = write_sample(dir);
  const std::string bytes = slurp(path);
  for (size_t at = 24; at < bytes.size(); at += 7) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    spit(path, damaged);
    EXPECT_THROW(read_trace(dir), TraceFormatError) << "byte " << at;
  }
}

// A body damaged before compression passes zstd's checksum: the parser's own bounds checks
// must reject or accept it, never crash or allocate without bound.
TEST(ElasticTrace, ParsesEveryMutatedBodyWithoutCrashing) {
  const std::string dir = temp_dir("mutated");
  const std::string path = write_sample(dir);
  const std::string bytes = slurp(path);
  std::string body(1 << 20, '\0');
  const size_t raw = ZSTD_decompress(body.data(), body.size(), bytes.data() + 24, bytes.size() - 24);
  ASSERT_FALSE(ZSTD_isError(raw)) << ZSTD_getErrorName(raw);
  body.resize(raw);
  uint64_t rejected = 0;
  for (size_t at = 0; at < body.size(); ++at) {
    for (uint8_t value : {uint8_t{0x00}, uint8_t{0xff}}) {
      std::string mutated = body;
      if (static_cast<uint8_t>(mutated[at]) == value) continue;
      mutated[at] = static_cast<char>(value);
      std::string frame(ZSTD_compressBound(mutated.size()), '\0');
      frame.resize(ZSTD_compress(frame.data(), frame.size(), mutated.data(), mutated.size(), 1));
      spit(path, bytes.substr(0, 24) + frame);
      try {
        read_trace(dir);
      } catch (const TraceFormatError& e) {
        ++rejected;
        EXPECT_NE(std::string(e.what()).find("elastic.gvet"), std::string::npos);
      }
    }
  }
  EXPECT_GT(rejected, body.size() / 2);  // much of the damage is noticed
}

}  // namespace
}  // namespace gpuvp::elastic
