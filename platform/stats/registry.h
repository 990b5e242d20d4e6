// gpuvp statistics: named counters, histograms and derived ratios per module instance,
// with whole-run and per-kernel scopes, written as JSON and as a short human summary.
//
// One Registry per simulation (no global state): the platform owns it and hands it to
// modules. A module asks for its Group once at construction and keeps references to its
// stats; the hot path is a plain uint64 increment through that reference (no lookup, no
// atomics). In the parallel SM phase each SM touches only the counters of its own group.
//
//   auto& g   = registry.group("gpu.sm[3]");
//   auto& ins = g.counter("instructions", "warp-instr", "warp instructions issued");
//   auto& cyc = g.counter("cycles", "cycle", "cycles the SM was active");
//   g.ratio("ipc", "warp instructions per active cycle", ins, cyc);
//   auto& lat = g.histogram("load_latency", "cycle", "load round trip", Buckets::log2(16));
//   ++ins; lat.sample(412);
//
// ORDERING (determinism): groups are output in natural order of their path (digit runs
// compare as numbers: gpu.sm[2] < gpu.sm[10]); the stats of a group in registration order
// per kind (counters, then histograms, then ratios). No unordered container reaches output.
// Doubles are printed by nlohmann-json (shortest round-trip form), so output is a pure
// function of the recorded values: identical runs give byte-identical JSON.
//
// AGGREGATES: every group whose path contains instance indices "[n]" also belongs to the
// aggregate named by replacing each "[n]" with "[*]" (gpu.cluster[1].sm[3] ->
// gpu.cluster[*].sm[*]). An aggregate holds, per stat name, the sum of counters, the merge
// of histograms with the same bucket layout, and ratios recomputed as
// scale * sum(numerators) / sum(denominators) (so an aggregate hit rate is the hit rate of
// all accesses, not the mean of per-instance rates).
//
// RATIOS: value = scale * numerator / denominator, computed at output. A zero denominator
// gives JSON null (and "n/a" in the summary), never NaN, inf or 0.
//
// SCOPES: "run" covers everything since the registry was built. begin_kernel(id, name) /
// end_kernel(id) bracket a kernel; its scope records the DELTA of every counter and
// histogram bucket between the two calls. Scopes are time windows, not ownership: when
// kernels overlap (concurrent streams), each kernel's scope contains all activity of the
// platform during its window, including that of the other kernel. Stats that must be
// attributed exactly to one kernel are counted per kernel by the module itself (the TLM
// GpuExtension carries the kernel id). Histogram min/max are whole-run only (a window's
// min/max cannot be derived from two snapshots); kernel scopes give count, sum, mean and
// bucket counts. Stats registered while a kernel is open count from zero.
//
// JSON LAYOUT (keys in this order; "..." = repeated):
// {
//   "format": "gpuvp-stats", "version": 1,
//   "run": {
//     "groups": {
//       "<path>": {
//         "counters":   { "<name>": { "value": u64, "unit": s, "doc": s }, ... },
//         "histograms": { "<name>": { "unit": s, "doc": s, "layout": "linear"|"log2",
//                          "count": u64, "sum": u64, "min": u64|null, "max": u64|null,
//                          "mean": f64|null,
//                          "buckets": [ { "lo": u64, "hi": u64|null, "count": u64 }, ... ] } },
//         "ratios":     { "<name>": { "value": f64|null, "doc": s,
//                          "numerator": "<path>.<name>", "denominator": "<path>.<name>",
//                          "scale": f64 } }
//       }, ...
//     },
//     "aggregates": {
//       "<path with [*]>": { "instances": n,
//          "counters": { "<name>": { "value", "unit", "doc" } },
//          "histograms": { "<name>": { same fields as above } },
//          "ratios": { "<name>": { "value", "doc", "scale" } } }, ...
//     }
//   },
//   "kernels": [   // in begin_kernel order
//     { "id": u64, "name": s, "complete": bool,   // complete=false: still open at output
//       "begin_ps": u64, "end_ps": u64,           // only when a time source is set
//       "groups":     { "<path>": { "counters": { "<name>": u64 },
//                                   "histograms": { "<name>": { "count", "sum", "mean",
//                                                   "buckets": [u64, ...] } },
//                                   "ratios": { "<name>": f64|null } } },
//       "aggregates": { "<path with [*]>": { same compact form plus "instances" } } }, ...
//   ]
// }
// With KernelDetail::PerName, "kernel_detail": "per_name" follows "version" and each entry of
// "kernels" is one kernel name, in first-launch order:
//     { "name": s, "launches": u64, "running": u64,  // running: launches still open at output
//       "begin_ps": u64, "end_ps": u64,              // first begin, last end (with a time source)
//       "time_ps": { "sum": u64, "min": u64, "max": u64 },  // per-launch durations
//       "groups": { "<path>": { "counters": { "<name>": u64 (sum) },
//                               "per_launch_min": { "<name>": u64 }, "per_launch_max": { ... },
//                               "histograms": { sums, compact form }, "ratios": { from sums } } },
//       "aggregates": { compact form of the sums, plus "instances" } }
// per_launch_min/max appear for groups without an instance index only.
// Empty "counters"/"histograms"/"ratios" objects are omitted. "hi" is exclusive; null
// means unbounded (overflow bucket).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpuvp::stats {

class Group;
class Registry;

// A monotonically increasing event count owned by one module instance.
class Counter {
public:
    Counter(const Counter&) = delete;
    Counter& operator=(const Counter&) = delete;

    Counter& operator++() noexcept { ++value_; return *this; }
    Counter& operator+=(std::uint64_t n) noexcept { value_ += n; return *this; }
    void add(std::uint64_t n) noexcept { value_ += n; }
    std::uint64_t value() const noexcept { return value_; }

    const std::string& name() const noexcept { return name_; }
    const std::string& unit() const noexcept { return unit_; }
    const std::string& doc() const noexcept { return doc_; }
    const Group& group() const noexcept { return *group_; }

private:
    friend class Group;
    friend class Registry;
    Counter(const Group& g, std::string name, std::string unit, std::string doc, std::size_t index)
        : group_(&g), name_(std::move(name)), unit_(std::move(unit)), doc_(std::move(doc)),
          index_(index) {}

    std::uint64_t value_ = 0;  // first member: the hot path touches only this
    const Group* group_;
    std::string name_, unit_, doc_;
    std::size_t index_;  // position in the registry's flat counter list (for snapshots)
};

// Bucket layout of a histogram.
//  linear(lo, width, n): buckets [lo + i*width, lo + (i+1)*width) for i < n, plus an
//                        underflow bucket [0, lo) when lo > 0 and an overflow bucket
//                        [lo + n*width, inf).
//  log2(n):              bucket 0 = [0, 1), bucket k = [2^(k-1), 2^k) for 1 <= k < n,
//                        plus an overflow bucket [2^(n-1), inf). n <= 64.
class Buckets {
public:
    enum class Kind { Linear, Log2 };
    static Buckets linear(std::uint64_t lo, std::uint64_t width, std::size_t count);
    static Buckets log2(std::size_t count);

    Kind kind() const noexcept { return kind_; }
    std::size_t size() const noexcept { return edges_.size(); }      // incl. under/overflow
    std::uint64_t lower(std::size_t i) const { return edges_.at(i); }  // inclusive
    bool bounded(std::size_t i) const { return i + 1 < edges_.size(); }
    std::uint64_t upper(std::size_t i) const { return edges_.at(i + 1); }  // exclusive
    std::size_t index_of(std::uint64_t v) const noexcept;
    bool operator==(const Buckets& o) const { return kind_ == o.kind_ && edges_ == o.edges_; }

private:
    Buckets(Kind k, std::vector<std::uint64_t> edges) : kind_(k), edges_(std::move(edges)) {}
    Kind kind_;
    std::vector<std::uint64_t> edges_;  // lower edge of each bucket, strictly increasing
    std::uint64_t lin_lo_ = 0, lin_width_ = 1;
};

class Histogram {
public:
    Histogram(const Histogram&) = delete;
    Histogram& operator=(const Histogram&) = delete;

    void sample(std::uint64_t v) noexcept;
    std::uint64_t count() const noexcept { return count_; }
    std::uint64_t sum() const noexcept { return sum_; }
    std::uint64_t min() const noexcept { return min_; }  // meaningful when count() > 0
    std::uint64_t max() const noexcept { return max_; }
    std::uint64_t bucket_count(std::size_t i) const { return counts_.at(i); }
    const Buckets& buckets() const noexcept { return buckets_; }

    const std::string& name() const noexcept { return name_; }
    const std::string& unit() const noexcept { return unit_; }
    const std::string& doc() const noexcept { return doc_; }

private:
    friend class Group;
    friend class Registry;
    Histogram(std::string name, std::string unit, std::string doc, Buckets b);

    std::uint64_t count_ = 0, sum_ = 0, min_ = 0, max_ = 0;
    std::vector<std::uint64_t> counts_;
    Buckets buckets_;
    std::string name_, unit_, doc_;
    std::size_t index_ = 0;  // position in the registry's flat histogram list
};

// A derived ratio, computed only at output: scale * numerator / denominator.
struct Ratio {
    std::string name, doc;
    const Counter* numerator;
    const Counter* denominator;
    double scale;
};

// The stats of one module instance. Obtained from Registry::group(); not copyable.
class Group {
public:
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;

    const std::string& path() const noexcept { return path_; }

    // Register a stat. Names are [A-Za-z0-9_.]+ and unique within the group across kinds;
    // a duplicate throws std::invalid_argument naming "<path>.<name>". The returned
    // reference stays valid for the life of the registry.
    Counter& counter(const std::string& name, const std::string& unit, const std::string& doc);
    Histogram& histogram(const std::string& name, const std::string& unit,
                         const std::string& doc, Buckets buckets);
    // numerator/denominator must belong to the same registry (any group).
    void ratio(const std::string& name, const std::string& doc, const Counter& numerator,
               const Counter& denominator, double scale = 1.0);

    // Read access (tests, reports). nullptr when absent.
    const Counter* find_counter(const std::string& name) const;
    const Histogram* find_histogram(const std::string& name) const;

    // Every counter's and histogram's values, in registration order: a module stepped by
    // another process (an SM of another MPI rank) sends them, and load_values() sets this
    // group's from the same group there. load_values throws std::invalid_argument when the
    // count does not fit this group's layout.
    void save_values(std::vector<std::uint64_t>& out) const;
    void load_values(const std::vector<std::uint64_t>& values);

private:
    friend class Registry;
    Group(Registry& r, std::string path) : registry_(&r), path_(std::move(path)) {}
    void claim_name(const std::string& name);

    Registry* registry_;
    std::string path_;
    std::vector<std::unique_ptr<Counter>> counters_;
    std::vector<std::unique_ptr<Histogram>> histograms_;
    std::vector<Ratio> ratios_;
    std::vector<std::string> names_;  // all stat names of this group, for duplicate checks
};

class Registry {
public:
    Registry();
    ~Registry();
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    // Get or create the group of a module instance, e.g. "gpu.sm[3]", "memory.l2[0]".
    // Paths are dot-separated [A-Za-z0-9_] segments, each optionally followed by "[n]".
    Group& group(const std::string& instance_path);
    const Group* find_group(const std::string& instance_path) const;

    // Optional: a clock for kernel scopes (e.g. the platform passes
    // [] { return sc_time_stamp().value(); } at 1 ps resolution). When set, kernel scopes
    // carry begin_ps / end_ps. Keeps this library free of SystemC.
    void set_time_source(std::function<std::uint64_t()> now_ps);
    // Optional: called before the registry reads its counters (kernel scopes, json(),
    // summary()); a model whose counters other host threads may be updating (windowed SMs)
    // finishes that work here. Null: none.
    void set_before_read(std::function<void()> before_read);

    // Kernel scopes. begin_kernel throws std::logic_error if `id` is already open;
    // end_kernel throws if `id` is not open. An id may be reused after it ended (a new
    // scope entry is recorded).
    void begin_kernel(std::uint64_t id, const std::string& name);
    void end_kernel(std::uint64_t id);

    // What "kernels" holds: one scope per launch (the default), or one per kernel name, which
    // keeps output small for programs that launch thousands of kernels. Per name, a launch is
    // folded into its name's totals when it ends (no per-launch state is kept), and the entry
    // gives the launch count, counters and histograms summed over the launches, ratios
    // recomputed from the sums, and for counters of non-indexed groups the per-launch minimum
    // and maximum. Set it before the first begin_kernel.
    enum class KernelDetail { PerLaunch, PerName };
    void set_kernel_detail(KernelDetail detail);
    KernelDetail kernel_detail() const noexcept { return kernel_detail_; }

    // Whole-run JSON (layout in the file comment), 2-space indented, trailing newline.
    std::string json() const;
    // Human summary: per kernel and for the run, one line per aggregate counter/ratio and
    // per counter/ratio of non-indexed groups. With summary keys set, only those stats
    // ("<path>.<name>", path may be an aggregate path with [*]).
    std::string summary() const;
    void set_summary_keys(std::vector<std::string> keys);

    // Aggregate path of an instance path: every "[n]" replaced with "[*]".
    static std::string aggregate_path(const std::string& instance_path);

private:
    friend class Group;
    struct KernelScope;
    struct Snapshot;
    struct View;
    Snapshot snapshot() const;
    View run_view() const;
    View kernel_view(const KernelScope& k) const;
    struct ScopeData;
    ScopeData collect(const View& v) const;
    void write_scope(nlohmann::ordered_json& out, const View& v) const;
    void summarize_scope(std::string& out, const View& v) const;

    struct NaturalLess {
        bool operator()(const std::string& a, const std::string& b) const;
    };
    std::map<std::string, std::unique_ptr<Group>, NaturalLess> groups_;
    // The entry group() found last: modules register a group's statistics one after another,
    // and each lookup in groups_ costs a dozen natural-order string comparisons.
    const std::pair<const std::string, std::unique_ptr<Group>>* last_group_ = nullptr;
    std::vector<Counter*> all_counters_;      // registration order; index = Counter::index_
    std::vector<Histogram*> all_histograms_;  // registration order
    std::vector<KernelScope> kernels_;        // begin order (per name: the open ones only)
    struct NameScope;
    void fold(const KernelScope& k, NameScope& totals) const;
    NameScope name_totals(const NameScope& name) const;
    std::vector<NameScope> names_;            // KernelDetail::PerName: first-launch order
    std::map<std::string, std::size_t> name_index_;  // kernel name -> position in names_
    KernelDetail kernel_detail_ = KernelDetail::PerLaunch;
    std::function<std::uint64_t()> now_ps_;
    std::function<void()> before_read_;
    std::vector<std::string> summary_keys_;
};

}  // namespace gpuvp::stats
