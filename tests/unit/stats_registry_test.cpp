#include "platform/stats/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

using gpuvp::stats::Buckets;
using gpuvp::stats::Registry;
using nlohmann::json;

namespace {

// A small fixed sequence of operations touching every stat kind and scope.
// `now` outlives r's use of it (the registry keeps the time source).
void exercise(Registry& r, std::uint64_t& now) {
    now = 0;
    r.set_time_source([&now] { return now; });
    std::vector<gpuvp::stats::Counter*> instructions;
    for (int sm = 0; sm < 3; ++sm) {
        auto& g = r.group("gpu.sm[" + std::to_string(sm) + "]");
        auto& ins = g.counter("instructions", "warp-instr", "warp instructions issued");
        instructions.push_back(&ins);
        auto& cyc = g.counter("cycles", "cycle", "active cycles");
        g.ratio("ipc", "instructions per active cycle", ins, cyc);
        g.histogram("latency", "cycle", "load latency", Buckets::log2(8));
    }
    auto& l2 = r.group("memory.l2");
    auto& hits = l2.counter("hits", "access", "L2 hits");
    auto& acc = l2.counter("accesses", "access", "L2 accesses");
    l2.ratio("hit_rate", "L2 hit rate", hits, acc, 100.0);

    r.begin_kernel(7, "vecadd");
    for (std::size_t sm = 0; sm < 3; ++sm) *instructions[sm] += 10 * (sm + 1);
    now = 1000;
    r.end_kernel(7);
    hits += 3;
    acc += 7;
}

}  // namespace

TEST(StatsRegistry, IdenticalRunsGiveByteIdenticalJson) {
    std::uint64_t ta = 0, tb = 0;
    Registry a, b;
    exercise(a, ta);
    exercise(b, tb);
    EXPECT_EQ(a.json(), b.json());
    EXPECT_EQ(a.summary(), b.summary());
}

TEST(StatsRegistry, JsonCarriesNamesUnitsDocsAndLayout) {
    std::uint64_t now = 0;
    Registry r;
    exercise(r, now);
    const json j = json::parse(r.json());
    EXPECT_EQ(j["format"], "gpuvp-stats");
    const auto& ins = j["run"]["groups"]["gpu.sm[1]"]["counters"]["instructions"];
    EXPECT_EQ(ins["value"], 20);
    EXPECT_EQ(ins["unit"], "warp-instr");
    EXPECT_EQ(ins["doc"], "warp instructions issued");
    EXPECT_EQ(j["run"]["groups"]["memory.l2"]["ratios"]["hit_rate"]["value"].get<double>(),
              100.0 * 3 / 7);
    EXPECT_EQ(j["run"]["groups"]["gpu.sm[0]"]["ratios"]["ipc"]["numerator"],
              "gpu.sm[0].instructions");
    // Aggregate over gpu.sm[*]
    const auto& agg = j["run"]["aggregates"]["gpu.sm[*]"];
    EXPECT_EQ(agg["instances"], 3);
    EXPECT_EQ(agg["counters"]["instructions"]["value"], 60);
    EXPECT_TRUE(agg["ratios"]["ipc"]["value"].is_null());  // 0 cycles
    EXPECT_EQ(j["run"]["aggregates"].count("memory.l2"), 0u);
    // Kernel scope
    ASSERT_EQ(j["kernels"].size(), 1u);
    EXPECT_EQ(j["kernels"][0]["id"], 7);
    EXPECT_EQ(j["kernels"][0]["name"], "vecadd");
    EXPECT_EQ(j["kernels"][0]["begin_ps"], 0);
    EXPECT_EQ(j["kernels"][0]["end_ps"], 1000);
    EXPECT_EQ(j["kernels"][0]["groups"]["gpu.sm[2]"]["counters"]["instructions"], 30);
    EXPECT_EQ(j["kernels"][0]["groups"]["memory.l2"]["counters"]["hits"], 0);
    EXPECT_EQ(j["kernels"][0]["aggregates"]["gpu.sm[*]"]["counters"]["instructions"], 60);

    const std::string s = r.summary();
    EXPECT_NE(s.find("kernel 7 \"vecadd\" 0 ps .. 1000 ps"), std::string::npos) << s;
    EXPECT_NE(s.find("gpu.sm[*].instructions"), std::string::npos) << s;
    EXPECT_NE(s.find("memory.l2.hit_rate"), std::string::npos) << s;
    EXPECT_EQ(s.find("gpu.sm[1].instructions"), std::string::npos) << s;  // instances only aggregated
}

TEST(StatsRegistry, GroupsInNaturalOrderStatsInRegistrationOrder) {
    Registry r;
    r.group("gpu.sm[10]").counter("z", "", "");
    r.group("gpu.sm[2]").counter("b", "", "");
    r.group("gpu.sm[2]").counter("a", "", "");
    r.group("gpu.cp").counter("x", "", "");
    const std::string s = r.json();
    const auto p_cp = s.find("\"gpu.cp\""), p2 = s.find("\"gpu.sm[2]\""), p10 = s.find("\"gpu.sm[10]\"");
    EXPECT_LT(p_cp, p2);
    EXPECT_LT(p2, p10);
    EXPECT_LT(s.find("\"b\""), s.find("\"a\""));
}

TEST(StatsRegistry, CounterReferencesAreStable) {
    Registry r;
    auto& c = r.group("gpu.sm[0]").counter("first", "", "");
    for (int i = 0; i < 1000; ++i) r.group("gpu.sm[0]").counter("c" + std::to_string(i), "", "");
    for (int i = 0; i < 100; ++i) r.group("g" + std::to_string(i));
    ++c;
    EXPECT_EQ(r.find_group("gpu.sm[0]")->find_counter("first"), &c);
    EXPECT_EQ(c.value(), 1u);
}

TEST(StatsRegistry, DuplicateAndBadNamesThrow) {
    Registry r;
    auto& g = r.group("gpu.sm[0]");
    auto& c = g.counter("hits", "", "");
    EXPECT_THROW(g.counter("hits", "", ""), std::invalid_argument);
    EXPECT_THROW(g.histogram("hits", "", "", Buckets::log2(4)), std::invalid_argument);
    EXPECT_THROW(g.ratio("hits", "", c, c), std::invalid_argument);
    EXPECT_NO_THROW(r.group("gpu.sm[1]").counter("hits", "", ""));  // other group: fine
    EXPECT_EQ(&r.group("gpu.sm[0]"), &g);                            // get-or-create
    EXPECT_THROW(g.counter("bad name", "", ""), std::invalid_argument);
    EXPECT_THROW(g.counter("", "", ""), std::invalid_argument);
    EXPECT_THROW(r.group("gpu.sm[x]"), std::invalid_argument);
    EXPECT_THROW(r.group("gpu..sm"), std::invalid_argument);
    EXPECT_THROW(r.group(""), std::invalid_argument);
    try {
        g.counter("hits", "", "");
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("gpu.sm[0].hits"), std::string::npos);
    }
    Registry other;
    auto& foreign = other.group("x").counter("n", "", "");
    EXPECT_THROW(g.ratio("mix", "", c, foreign), std::invalid_argument);
}

TEST(StatsRegistry, ZeroDenominatorGivesNull) {
    Registry r;
    auto& g = r.group("memory.l2[0]");
    auto& h = g.counter("hits", "", "");
    auto& a = g.counter("accesses", "", "");
    g.ratio("hit_rate", "", h, a);
    json j = json::parse(r.json());
    EXPECT_TRUE(j["run"]["groups"]["memory.l2[0]"]["ratios"]["hit_rate"]["value"].is_null());
    EXPECT_EQ(r.summary().find("hit_rate"), std::string::npos);  // the summary leaves out empty stats
    r.set_summary_keys({"memory.l2[*].hit_rate"});                  // unless asked for by name
    EXPECT_NE(r.summary().find("n/a"), std::string::npos);
    a += 4;
    h += 1;
    j = json::parse(r.json());
    EXPECT_DOUBLE_EQ(j["run"]["groups"]["memory.l2[0]"]["ratios"]["hit_rate"]["value"].get<double>(), 0.25);
}

TEST(StatsHistogram, Log2BucketEdges) {
    const Buckets b = Buckets::log2(4);  // [0,1) [1,2) [2,4) [4,8) [8,inf)
    ASSERT_EQ(b.size(), 5u);
    EXPECT_EQ(b.index_of(0), 0u);
    EXPECT_EQ(b.index_of(1), 1u);
    EXPECT_EQ(b.index_of(2), 2u);
    EXPECT_EQ(b.index_of(3), 2u);
    EXPECT_EQ(b.index_of(4), 3u);
    EXPECT_EQ(b.index_of(7), 3u);
    EXPECT_EQ(b.index_of(8), 4u);
    EXPECT_EQ(b.index_of(UINT64_MAX), 4u);
    EXPECT_EQ(b.lower(3), 4u);
    EXPECT_EQ(b.upper(3), 8u);
    EXPECT_FALSE(b.bounded(4));
    const Buckets full = Buckets::log2(64);
    EXPECT_EQ(full.index_of(UINT64_MAX), 64u);
    EXPECT_EQ(full.index_of(std::uint64_t{1} << 62), 63u);
    EXPECT_THROW(Buckets::log2(0), std::invalid_argument);
    EXPECT_THROW(Buckets::log2(65), std::invalid_argument);
}

TEST(StatsHistogram, LinearBucketEdges) {
    const Buckets b = Buckets::linear(10, 5, 3);  // [0,10) [10,15) [15,20) [20,25) [25,inf)
    ASSERT_EQ(b.size(), 5u);
    EXPECT_EQ(b.index_of(0), 0u);
    EXPECT_EQ(b.index_of(9), 0u);
    EXPECT_EQ(b.index_of(10), 1u);
    EXPECT_EQ(b.index_of(14), 1u);
    EXPECT_EQ(b.index_of(15), 2u);
    EXPECT_EQ(b.index_of(24), 3u);
    EXPECT_EQ(b.index_of(25), 4u);
    const Buckets z = Buckets::linear(0, 4, 2);  // no underflow: [0,4) [4,8) [8,inf)
    ASSERT_EQ(z.size(), 3u);
    EXPECT_EQ(z.index_of(3), 0u);
    EXPECT_EQ(z.index_of(4), 1u);
    EXPECT_EQ(z.index_of(8), 2u);
    EXPECT_THROW(Buckets::linear(0, 0, 2), std::invalid_argument);
}

TEST(StatsHistogram, CountSumMinMaxAndJson) {
    Registry r;
    auto& h = r.group("gpu.sm[0]").histogram("lat", "cycle", "latency", Buckets::linear(0, 10, 2));
    for (std::uint64_t v : {5, 15, 25, 3}) h.sample(v);
    EXPECT_EQ(h.count(), 4u);
    EXPECT_EQ(h.sum(), 48u);
    EXPECT_EQ(h.min(), 3u);
    EXPECT_EQ(h.max(), 25u);
    const json j = json::parse(r.json())["run"]["groups"]["gpu.sm[0]"]["histograms"]["lat"];
    EXPECT_EQ(j["layout"], "linear");
    EXPECT_EQ(j["min"], 3);
    EXPECT_EQ(j["max"], 25);
    EXPECT_DOUBLE_EQ(j["mean"].get<double>(), 12.0);
    ASSERT_EQ(j["buckets"].size(), 3u);
    EXPECT_EQ(j["buckets"][0]["count"], 2);
    EXPECT_EQ(j["buckets"][2]["lo"], 20);
    EXPECT_TRUE(j["buckets"][2]["hi"].is_null());
    EXPECT_EQ(j["buckets"][2]["count"], 1);
}

TEST(StatsHistogram, EmptyHistogramHasNullMinMaxMean) {
    Registry r;
    r.group("a").histogram("h", "", "", Buckets::log2(2));
    const json j = json::parse(r.json())["run"]["groups"]["a"]["histograms"]["h"];
    EXPECT_TRUE(j["min"].is_null());
    EXPECT_TRUE(j["max"].is_null());
    EXPECT_TRUE(j["mean"].is_null());
}

TEST(StatsScopes, PerKernelDeltas) {
    Registry r;
    auto& g = r.group("gpu.sm[0]");
    auto& c = g.counter("instructions", "", "");
    auto& h = g.histogram("lat", "", "", Buckets::log2(4));
    c += 5;
    h.sample(1);
    r.begin_kernel(1, "k1");
    c += 10;
    h.sample(5);
    h.sample(6);
    r.end_kernel(1);
    c += 100;
    r.begin_kernel(2, "k2");
    auto& late = g.counter("late", "", "");  // registered inside the scope: counts from zero
    late += 2;
    c += 1;
    r.end_kernel(2);
    const json j = json::parse(r.json());
    EXPECT_EQ(j["kernels"][0]["groups"]["gpu.sm[0]"]["counters"]["instructions"], 10);
    const auto& kh = j["kernels"][0]["groups"]["gpu.sm[0]"]["histograms"]["lat"];
    EXPECT_EQ(kh["count"], 2);
    EXPECT_EQ(kh["sum"], 11);
    EXPECT_EQ(kh["buckets"], json::array({0, 0, 0, 2, 0}));
    EXPECT_EQ(j["kernels"][1]["groups"]["gpu.sm[0]"]["counters"]["instructions"], 1);
    EXPECT_EQ(j["kernels"][1]["groups"]["gpu.sm[0]"]["counters"]["late"], 2);
    EXPECT_EQ(j["kernels"][0]["groups"]["gpu.sm[0]"]["counters"]["late"], 0);
    EXPECT_EQ(j["run"]["groups"]["gpu.sm[0]"]["counters"]["instructions"]["value"], 116);
    EXPECT_FALSE(j["kernels"][0].contains("begin_ps"));  // no time source set
}

// The before-read hook (a model whose counters other host threads update finishes that work
// there) runs before every read of the counters: what it adds is in the scope it opens or closes
// and in the reports.
TEST(StatsScopes, BeforeReadHookRunsBeforeEachRead) {
    Registry r;
    auto& c = r.group("gpu.sm[0]").counter("cycles", "", "");
    int reads = 0;
    r.set_before_read([&] {
        ++reads;
        c += 1;  // work another thread had under way
    });
    r.begin_kernel(1, "k");  // c = 1 at the snapshot
    c += 10;
    r.end_kernel(1);  // c = 12 at the snapshot
    EXPECT_EQ(reads, 2);
    const json j = json::parse(r.json());  // c = 13
    EXPECT_EQ(reads, 3);
    EXPECT_EQ(j["kernels"][0]["groups"]["gpu.sm[0]"]["counters"]["cycles"], 11);
    EXPECT_EQ(j["run"]["groups"]["gpu.sm[0]"]["counters"]["cycles"]["value"], 13);
    EXPECT_NE(r.summary().find("14"), std::string::npos);
    EXPECT_EQ(reads, 4);
    r.set_before_read(nullptr);
    (void)r.json();
    EXPECT_EQ(reads, 4);
}

TEST(StatsScopes, OverlappingKernelsAreTimeWindows) {
    Registry r;
    auto& c = r.group("gpu.sm[0]").counter("instructions", "", "");
    r.begin_kernel(1, "a");
    c += 1;        // only a open
    r.begin_kernel(2, "b");
    c += 10;       // both open: counted in both windows
    r.end_kernel(1);
    c += 100;      // only b open
    const json open = json::parse(r.json());
    EXPECT_FALSE(open["kernels"][1]["complete"].get<bool>());
    EXPECT_EQ(open["kernels"][1]["groups"]["gpu.sm[0]"]["counters"]["instructions"], 110);
    r.end_kernel(2);
    c += 1000;
    const json j = json::parse(r.json());
    EXPECT_EQ(j["kernels"][0]["groups"]["gpu.sm[0]"]["counters"]["instructions"], 11);
    EXPECT_EQ(j["kernels"][1]["groups"]["gpu.sm[0]"]["counters"]["instructions"], 110);
    EXPECT_TRUE(j["kernels"][1]["complete"].get<bool>());
}

TEST(StatsScopes, KernelIdErrorsAndReuse) {
    Registry r;
    EXPECT_THROW(r.end_kernel(3), std::logic_error);
    r.begin_kernel(3, "k");
    EXPECT_THROW(r.begin_kernel(3, "again"), std::logic_error);
    r.end_kernel(3);
    EXPECT_THROW(r.end_kernel(3), std::logic_error);
    EXPECT_NO_THROW(r.begin_kernel(3, "relaunch"));
    r.end_kernel(3);
    EXPECT_EQ(json::parse(r.json())["kernels"].size(), 2u);
}

TEST(StatsAggregates, NestedIndicesAndRatioOfSums) {
    EXPECT_EQ(Registry::aggregate_path("gpu.cluster[1].sm[13]"), "gpu.cluster[*].sm[*]");
    EXPECT_EQ(Registry::aggregate_path("memory.l2"), "memory.l2");
    Registry r;
    for (int i = 0; i < 2; ++i) {
        auto& g = r.group("memory.l2[" + std::to_string(i) + "]");
        auto& h = g.counter("hits", "", "");
        auto& a = g.counter("accesses", "", "");
        g.ratio("hit_rate", "", h, a);
        h += i == 0 ? 1 : 9;
        a += i == 0 ? 10 : 10;
        auto& hist = g.histogram("lat", "", "", Buckets::log2(4));
        hist.sample(i == 0 ? 2 : 100);
    }
    const json j = json::parse(r.json())["run"]["aggregates"]["memory.l2[*]"];
    EXPECT_DOUBLE_EQ(j["ratios"]["hit_rate"]["value"].get<double>(), 0.5);  // 10/20
    EXPECT_EQ(j["histograms"]["lat"]["count"], 2);
    EXPECT_EQ(j["histograms"]["lat"]["min"], 2);
    EXPECT_EQ(j["histograms"]["lat"]["max"], 100);
}

TEST(StatsSummary, SummaryKeysSelectLines) {
    std::uint64_t now = 0;
    Registry r;
    exercise(r, now);
    r.set_summary_keys({"memory.l2.hits", "gpu.sm[*].ipc"});
    const std::string s = r.summary();
    EXPECT_NE(s.find("memory.l2.hits"), std::string::npos) << s;
    EXPECT_NE(s.find("gpu.sm[*].ipc"), std::string::npos) << s;
    EXPECT_EQ(s.find("memory.l2.accesses"), std::string::npos) << s;
    EXPECT_EQ(s.find("gpu.sm[*].instructions"), std::string::npos) << s;
}

namespace {

// The same launches under both kernel details: `launches` launches alternating two names, each
// adding a launch-dependent amount to an indexed and a non-indexed counter and one histogram
// sample, with a ratio of the two; a stat registered after the first launches.
void launch_many(Registry& r, std::uint64_t& now, int launches) {
    now = 0;
    r.set_time_source([&now] { return now; });
    auto& sm = r.group("gpu.sm[0]");
    auto& instructions = sm.counter("instructions", "warp-instr", "");
    auto& hist = sm.histogram("latency", "cycle", "", Buckets::log2(8));
    auto& gpu = r.group("gpu");
    auto& cycles = gpu.counter("cycles", "cycle", "");
    gpu.ratio("ipc", "", instructions, cycles);
    gpuvp::stats::Counter* late = nullptr;
    for (int i = 0; i < launches; ++i) {
        r.begin_kernel(static_cast<std::uint64_t>(i), i % 2 == 0 ? "even" : "odd");
        instructions += static_cast<std::uint64_t>(3 * i + 1);
        cycles += static_cast<std::uint64_t>(100 + i % 7);
        hist.sample(static_cast<std::uint64_t>(i));
        if (i == 4) late = &gpu.counter("late", "", "");
        if (late != nullptr) *late += 1;
        now += 10 + static_cast<std::uint64_t>(i % 5);
        r.end_kernel(static_cast<std::uint64_t>(i));
        now += 1;
    }
}

}  // namespace

TEST(StatsScopes, PerNameTotalsEqualTheSumsOfThePerLaunchScopes) {
    constexpr int kLaunches = 2000;
    std::uint64_t now_a = 0, now_b = 0;
    Registry per_launch, per_name;
    per_name.set_kernel_detail(Registry::KernelDetail::PerName);
    launch_many(per_launch, now_a, kLaunches);
    launch_many(per_name, now_b, kLaunches);
    const std::string per_launch_text = per_launch.json(), per_name_text = per_name.json();
    const json a = json::parse(per_launch_text), b = json::parse(per_name_text);
    ASSERT_EQ(a["kernels"].size(), static_cast<std::size_t>(kLaunches));
    ASSERT_EQ(b["kernels"].size(), 2u);
    EXPECT_EQ(b["kernel_detail"], "per_name");
    EXPECT_EQ(b["run"], a["run"]);  // the run scope does not depend on the detail
    EXPECT_LT(per_name_text.size() * 100, per_launch_text.size());

    for (const char* name : {"even", "odd"}) {
        std::uint64_t launches = 0, instructions = 0, cycles = 0, late = 0, samples = 0, sample_sum = 0;
        std::uint64_t cycles_min = ~0ULL, cycles_max = 0, late_min = ~0ULL, time_sum = 0, time_min = ~0ULL, time_max = 0;
        for (const auto& k : a["kernels"]) {
            if (k["name"] != name) continue;
            ++launches;
            instructions += k["groups"]["gpu.sm[0]"]["counters"]["instructions"].get<std::uint64_t>();
            const auto c = k["groups"]["gpu"]["counters"]["cycles"].get<std::uint64_t>();
            cycles += c;
            cycles_min = std::min(cycles_min, c);
            cycles_max = std::max(cycles_max, c);
            const auto l = k["groups"]["gpu"]["counters"]["late"].get<std::uint64_t>();
            late += l;
            late_min = std::min(late_min, l);
            samples += k["groups"]["gpu.sm[0]"]["histograms"]["latency"]["count"].get<std::uint64_t>();
            sample_sum += k["groups"]["gpu.sm[0]"]["histograms"]["latency"]["sum"].get<std::uint64_t>();
            const auto t = k["end_ps"].get<std::uint64_t>() - k["begin_ps"].get<std::uint64_t>();
            time_sum += t;
            time_min = std::min(time_min, t);
            time_max = std::max(time_max, t);
        }
        const json& n = b["kernels"][std::string(name) == "even" ? 0 : 1];
        ASSERT_EQ(n["name"], name);
        EXPECT_EQ(n["launches"], launches);
        EXPECT_EQ(n["running"], 0);
        EXPECT_EQ(n["groups"]["gpu.sm[0]"]["counters"]["instructions"], instructions);
        EXPECT_EQ(n["aggregates"]["gpu.sm[*]"]["counters"]["instructions"], instructions);
        EXPECT_EQ(n["groups"]["gpu"]["counters"]["cycles"], cycles);
        EXPECT_EQ(n["groups"]["gpu"]["per_launch_min"]["cycles"], cycles_min);
        EXPECT_EQ(n["groups"]["gpu"]["per_launch_max"]["cycles"], cycles_max);
        EXPECT_EQ(n["groups"]["gpu"]["counters"]["late"], late);
        EXPECT_EQ(n["groups"]["gpu"]["per_launch_min"]["late"], late_min);  // 0: absent in early launches
        EXPECT_FALSE(n["groups"]["gpu.sm[0]"].contains("per_launch_min"));  // indexed groups: sums only
        EXPECT_EQ(n["groups"]["gpu.sm[0]"]["histograms"]["latency"]["count"], samples);
        EXPECT_EQ(n["groups"]["gpu.sm[0]"]["histograms"]["latency"]["sum"], sample_sum);
        EXPECT_DOUBLE_EQ(n["groups"]["gpu"]["ratios"]["ipc"].get<double>(),
                         static_cast<double>(instructions) / static_cast<double>(cycles));
        EXPECT_EQ(n["time_ps"]["sum"], time_sum);
        EXPECT_EQ(n["time_ps"]["min"], time_min);
        EXPECT_EQ(n["time_ps"]["max"], time_max);
    }

    // The summary names each kernel once, not each launch.
    const std::string summary = per_name.summary();
    EXPECT_NE(summary.find("kernel \"even\": 1000 launches"), std::string::npos) << summary;
    EXPECT_NE(summary.find("kernel \"odd\": 1000 launches"), std::string::npos) << summary;
    EXPECT_NE(summary.find("run (2000 launches of 2 kernels)"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("kernel 17 "), std::string::npos) << summary;
    EXPECT_LT(summary.size() * 100, per_launch.summary().size());
}

TEST(StatsScopes, PerNameCountsLaunchesStillRunning) {
    Registry r;
    r.set_kernel_detail(Registry::KernelDetail::PerName);
    auto& c = r.group("gpu").counter("cycles", "", "");
    r.begin_kernel(1, "k");
    c += 5;
    r.end_kernel(1);
    r.begin_kernel(2, "k");
    c += 7;
    const json j = json::parse(r.json());
    ASSERT_EQ(j["kernels"].size(), 1u);
    EXPECT_EQ(j["kernels"][0]["launches"], 2);
    EXPECT_EQ(j["kernels"][0]["running"], 1);
    EXPECT_EQ(j["kernels"][0]["groups"]["gpu"]["counters"]["cycles"], 12);
    EXPECT_THROW(r.set_kernel_detail(Registry::KernelDetail::PerLaunch), std::logic_error);
    r.end_kernel(2);
    EXPECT_EQ(json::parse(r.json())["kernels"][0]["running"], 0);
}
