#include "platform/stats/registry.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpuvp::stats {

using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------- Buckets

Buckets Buckets::linear(std::uint64_t lo, std::uint64_t width, std::size_t count) {
    if (width == 0 || count == 0)
        throw std::invalid_argument("stats: linear buckets need width > 0 and count > 0");
    std::vector<std::uint64_t> edges;
    if (lo > 0) edges.push_back(0);  // underflow bucket
    for (std::size_t i = 0; i <= count; ++i) {
        if (i > 0 && (std::numeric_limits<std::uint64_t>::max() - lo) / i < width)
            throw std::invalid_argument("stats: linear buckets overflow uint64");
        edges.push_back(lo + i * width);  // the last edge opens the overflow bucket
    }
    Buckets b(Kind::Linear, std::move(edges));
    b.lin_lo_ = lo;
    b.lin_width_ = width;
    return b;
}

Buckets Buckets::log2(std::size_t count) {
    if (count == 0 || count > 64)
        throw std::invalid_argument("stats: log2 buckets need 1 <= count <= 64");
    std::vector<std::uint64_t> edges{0};
    for (std::size_t k = 1; k <= count; ++k) edges.push_back(std::uint64_t{1} << (k - 1));
    return Buckets(Kind::Log2, std::move(edges));
}

std::size_t Buckets::index_of(std::uint64_t v) const noexcept {
    const std::size_t last = edges_.size() - 1;
    if (kind_ == Kind::Log2) {
        // bucket k >= 1 holds [2^(k-1), 2^k): k = bit width of v.
        const std::size_t k = v == 0 ? 0 : 64 - static_cast<std::size_t>(__builtin_clzll(v));
        return std::min(k, last);
    }
    const std::size_t base = lin_lo_ > 0 ? 1 : 0;
    if (v < lin_lo_) return 0;
    const std::uint64_t i = (v - lin_lo_) / lin_width_;
    return i >= last - base ? last : base + static_cast<std::size_t>(i);
}

// ---------------------------------------------------------------- Histogram

Histogram::Histogram(std::string name, std::string unit, std::string doc, Buckets b)
    : counts_(b.size(), 0), buckets_(std::move(b)), name_(std::move(name)),
      unit_(std::move(unit)), doc_(std::move(doc)) {}

void Histogram::sample(std::uint64_t v) noexcept {
    if (count_ == 0 || v < min_) min_ = v;
    if (count_ == 0 || v > max_) max_ = v;
    ++count_;
    sum_ += v;
    ++counts_[buckets_.index_of(v)];
}

// ---------------------------------------------------------------- names

namespace {

bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

void check_stat_name(const std::string& path, const std::string& name) {
    bool ok = !name.empty() && name.front() != '.' && name.back() != '.';
    for (char c : name) ok = ok && (is_name_char(c) || c == '.');
    if (!ok)
        throw std::invalid_argument("stats: bad stat name '" + name + "' in group '" + path +
                                    "' (use [A-Za-z0-9_.])");
}

void check_path(const std::string& path) {
    // segment := ident ( '[' digits ']' )? ; path := segment ( '.' segment )*
    std::size_t i = 0;
    bool ok = !path.empty();
    while (ok && i < path.size()) {
        const std::size_t start = i;
        while (i < path.size() && is_name_char(path[i])) ++i;
        ok = i > start;
        if (ok && i < path.size() && path[i] == '[') {
            const std::size_t d = ++i;
            while (i < path.size() && std::isdigit(static_cast<unsigned char>(path[i]))) ++i;
            ok = i > d && i < path.size() && path[i] == ']';
            ++i;
        }
        if (ok && i < path.size()) {
            ok = path[i] == '.' && i + 1 < path.size();
            ++i;
        }
    }
    if (!ok)
        throw std::invalid_argument("stats: bad instance path '" + path +
                                    "' (expected e.g. gpu.sm[3] or memory.l2[0])");
}

std::optional<double> ratio_value(std::uint64_t num, std::uint64_t den, double scale) {
    if (den == 0) return std::nullopt;
    return scale * static_cast<double>(num) / static_cast<double>(den);
}

ojson opt(std::optional<double> v) { return v ? ojson(*v) : ojson(nullptr); }

}  // namespace

// ---------------------------------------------------------------- Group

void Group::claim_name(const std::string& name) {
    check_stat_name(path_, name);
    if (std::find(names_.begin(), names_.end(), name) != names_.end())
        throw std::invalid_argument("stats: duplicate stat '" + path_ + "." + name + "'");
    names_.push_back(name);
}

Counter& Group::counter(const std::string& name, const std::string& unit, const std::string& doc) {
    claim_name(name);
    const std::size_t index = registry_->all_counters_.size();
    counters_.push_back(std::unique_ptr<Counter>(new Counter(*this, name, unit, doc, index)));
    registry_->all_counters_.push_back(counters_.back().get());
    return *counters_.back();
}

Histogram& Group::histogram(const std::string& name, const std::string& unit,
                            const std::string& doc, Buckets buckets) {
    claim_name(name);
    histograms_.push_back(
        std::unique_ptr<Histogram>(new Histogram(name, unit, doc, std::move(buckets))));
    histograms_.back()->index_ = registry_->all_histograms_.size();
    registry_->all_histograms_.push_back(histograms_.back().get());
    return *histograms_.back();
}

void Group::ratio(const std::string& name, const std::string& doc, const Counter& numerator,
                  const Counter& denominator, double scale) {
    const auto& all = registry_->all_counters_;
    auto mine = [&](const Counter& c) {
        return c.index_ < all.size() && all[c.index_] == &c;
    };
    if (!mine(numerator) || !mine(denominator))
        throw std::invalid_argument("stats: ratio '" + path_ + "." + name +
                                    "' uses a counter of another registry");
    claim_name(name);
    ratios_.push_back(Ratio{name, doc, &numerator, &denominator, scale});
}

const Counter* Group::find_counter(const std::string& name) const {
    for (const auto& c : counters_)
        if (c->name() == name) return c.get();
    return nullptr;
}

const Histogram* Group::find_histogram(const std::string& name) const {
    for (const auto& h : histograms_)
        if (h->name() == name) return h.get();
    return nullptr;
}

// ---------------------------------------------------------------- Registry internals

struct Registry::Snapshot {
    struct Hist {
        std::uint64_t count = 0, sum = 0;
        std::vector<std::uint64_t> buckets;
    };
    std::vector<std::uint64_t> counters;
    std::vector<Hist> histograms;
};

struct Registry::KernelScope {
    std::uint64_t id;
    std::string name;
    bool complete = false;
    std::uint64_t begin_ps = 0, end_ps = 0;
    Snapshot begin, end;
};

// One kernel name's launches (KernelDetail::PerName): deltas summed over the launches that
// ended, per-counter extremes of a launch, and launch times.
struct Registry::NameScope {
    std::string name;
    std::uint64_t launches = 0;  // folded (ended) launches
    std::uint64_t first_begin_ps = 0, last_end_ps = 0;
    std::uint64_t time_sum_ps = 0, time_min_ps = 0, time_max_ps = 0;
    Snapshot sum;
    std::vector<std::uint64_t> min, max;  // indexed like sum.counters
};

// Values of one scope, indexed like all_counters_ / all_histograms_.
struct Registry::View {
    bool whole_run = true;  // run scope: metadata and min/max are written
    Snapshot values;
    // Per-name scopes: per-launch extremes of each counter (written for non-indexed groups).
    const std::vector<std::uint64_t>* min = nullptr;
    const std::vector<std::uint64_t>* max = nullptr;
    std::uint64_t launches = 0;
};

Registry::Registry() = default;
Registry::~Registry() = default;

bool Registry::NaturalLess::operator()(const std::string& a, const std::string& b) const {
    std::size_t i = 0, j = 0;
    auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && digit(a[ie])) ++ie;
            while (je < b.size() && digit(b[je])) ++je;
            // strip leading zeros, then compare by length, then lexicographically
            std::size_t iz = i, jz = j;
            while (iz + 1 < ie && a[iz] == '0') ++iz;
            while (jz + 1 < je && b[jz] == '0') ++jz;
            if (ie - iz != je - jz) return ie - iz < je - jz;
            const int c = a.compare(iz, ie - iz, b, jz, je - jz);
            if (c != 0) return c < 0;
            if (ie - i != je - j) return ie - i < je - j;  // "01" vs "1": keep total order
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::string Registry::aggregate_path(const std::string& p) {
    std::string out;
    for (std::size_t i = 0; i < p.size(); ++i) {
        out += p[i];
        if (p[i] == '[') {
            while (i + 1 < p.size() && p[i + 1] != ']') ++i;
            out += '*';
        }
    }
    return out;
}

Group& Registry::group(const std::string& path) {
    if (last_group_ != nullptr && last_group_->first == path) return *last_group_->second;
    auto it = groups_.find(path);
    if (it == groups_.end()) {
        check_path(path);
        auto g = std::unique_ptr<Group>(new Group(*this, path));
        it = groups_.emplace(path, std::move(g)).first;
    }
    last_group_ = &*it;
    return *it->second;
}

const Group* Registry::find_group(const std::string& path) const {
    auto it = groups_.find(path);
    return it == groups_.end() ? nullptr : it->second.get();
}

void Registry::set_time_source(std::function<std::uint64_t()> now_ps) { now_ps_ = std::move(now_ps); }

void Group::save_values(std::vector<std::uint64_t>& out) const {
    out.clear();
    for (const auto& c : counters_) out.push_back(c->value_);
    for (const auto& h : histograms_) {
        out.insert(out.end(), {h->count_, h->sum_, h->min_, h->max_});
        out.insert(out.end(), h->counts_.begin(), h->counts_.end());
    }
}

void Group::load_values(const std::vector<std::uint64_t>& values) {
    std::size_t expected = counters_.size();
    for (const auto& h : histograms_) expected += 4 + h->counts_.size();
    if (values.size() != expected) {
        throw std::invalid_argument("statistics group " + path_ + ": " + std::to_string(values.size()) +
                                    " values for a layout of " + std::to_string(expected));
    }
    std::size_t i = 0;
    for (const auto& c : counters_) c->value_ = values[i++];
    for (const auto& h : histograms_) {
        h->count_ = values[i++];
        h->sum_ = values[i++];
        h->min_ = values[i++];
        h->max_ = values[i++];
        for (auto& bucket : h->counts_) bucket = values[i++];
    }
}

void Registry::set_before_read(std::function<void()> before_read) { before_read_ = std::move(before_read); }
void Registry::set_summary_keys(std::vector<std::string> keys) { summary_keys_ = std::move(keys); }

Registry::Snapshot Registry::snapshot() const {
    Snapshot s;
    s.counters.reserve(all_counters_.size());
    for (const Counter* c : all_counters_) s.counters.push_back(c->value());
    s.histograms.reserve(all_histograms_.size());
    for (const Histogram* h : all_histograms_) s.histograms.push_back({h->count_, h->sum_, h->counts_});
    return s;
}

void Registry::begin_kernel(std::uint64_t id, const std::string& name) {
    for (const auto& k : kernels_)
        if (k.id == id && !k.complete)
            throw std::logic_error("stats: begin_kernel(" + std::to_string(id) +
                                   "): kernel already open");
    if (before_read_) before_read_();
    KernelScope k{id, name, false, now_ps_ ? now_ps_() : 0, 0, snapshot(), {}};
    kernels_.push_back(std::move(k));
    if (kernel_detail_ == KernelDetail::PerName && name_index_.try_emplace(name, names_.size()).second) {
        names_.emplace_back();
        names_.back().name = name;
    }
}

void Registry::end_kernel(std::uint64_t id) {
    for (auto it = kernels_.begin(); it != kernels_.end(); ++it) {
        KernelScope& k = *it;
        if (k.id == id && !k.complete) {
            if (before_read_) before_read_();
            k.end = snapshot();
            k.end_ps = now_ps_ ? now_ps_() : 0;
            k.complete = true;
            if (kernel_detail_ == KernelDetail::PerName) {
                fold(k, names_[name_index_.at(k.name)]);
                kernels_.erase(it);
            }
            return;
        }
    }
    throw std::logic_error("stats: end_kernel(" + std::to_string(id) + "): kernel not open");
}

void Registry::set_kernel_detail(KernelDetail detail) {
    if (!kernels_.empty() || !names_.empty())
        throw std::logic_error("stats: set_kernel_detail after the first begin_kernel");
    kernel_detail_ = detail;
}

void Registry::fold(const KernelScope& k, NameScope& totals) const {
    const View v = kernel_view(k);
    const Snapshot& d = v.values;
    // Counters registered after earlier launches were 0 in those launches.
    const std::uint64_t absent = 0;
    if (totals.sum.counters.size() < d.counters.size()) {
        const std::size_t old = totals.sum.counters.size();
        totals.sum.counters.resize(d.counters.size(), 0);
        totals.min.resize(d.counters.size(), absent);
        totals.max.resize(d.counters.size(), absent);
        if (totals.launches == 0)
            for (std::size_t i = old; i < d.counters.size(); ++i) totals.min[i] = d.counters[i];
    }
    for (std::size_t i = 0; i < d.counters.size(); ++i) {
        totals.sum.counters[i] += d.counters[i];
        totals.min[i] = totals.launches == 0 ? d.counters[i] : std::min(totals.min[i], d.counters[i]);
        totals.max[i] = std::max(totals.max[i], d.counters[i]);
    }
    for (std::size_t i = 0; i < d.histograms.size(); ++i) {
        if (i == totals.sum.histograms.size())
            totals.sum.histograms.push_back({0, 0, std::vector<std::uint64_t>(d.histograms[i].buckets.size(), 0)});
        auto& h = totals.sum.histograms[i];
        h.count += d.histograms[i].count;
        h.sum += d.histograms[i].sum;
        for (std::size_t j = 0; j < h.buckets.size(); ++j) h.buckets[j] += d.histograms[i].buckets[j];
    }
    const std::uint64_t end = k.complete ? k.end_ps : (now_ps_ ? now_ps_() : 0);
    const std::uint64_t time = end - k.begin_ps;
    if (totals.launches == 0) {
        totals.first_begin_ps = k.begin_ps;
        totals.time_min_ps = time;
    }
    totals.last_end_ps = std::max(totals.last_end_ps, end);
    totals.time_sum_ps += time;
    totals.time_min_ps = std::min(totals.time_min_ps, time);
    totals.time_max_ps = std::max(totals.time_max_ps, time);
    ++totals.launches;
}

// A name's totals with its launches still open folded in (as if they ended now), every stat
// registered so far present.
Registry::NameScope Registry::name_totals(const NameScope& name) const {
    NameScope t = name;
    for (const auto& k : kernels_)
        if (k.name == name.name) fold(k, t);
    t.sum.counters.resize(all_counters_.size(), 0);
    t.min.resize(all_counters_.size(), 0);
    t.max.resize(all_counters_.size(), 0);
    for (std::size_t i = t.sum.histograms.size(); i < all_histograms_.size(); ++i)
        t.sum.histograms.push_back({0, 0, std::vector<std::uint64_t>(all_histograms_[i]->counts_.size(), 0)});
    return t;
}

Registry::View Registry::run_view() const { return View{true, snapshot()}; }

Registry::View Registry::kernel_view(const KernelScope& k) const {
    View v{false, k.complete ? k.end : snapshot()};
    // Stats registered after the kernel ended are absent from its end snapshot: delta 0.
    v.values.counters.resize(all_counters_.size(), 0);
    for (std::size_t i = v.values.histograms.size(); i < all_histograms_.size(); ++i)
        v.values.histograms.push_back({0, 0, std::vector<std::uint64_t>(all_histograms_[i]->counts_.size(), 0)});
    // Stats registered after begin_kernel count from zero (missing from the begin snapshot).
    for (std::size_t i = 0; i < k.begin.counters.size(); ++i) v.values.counters[i] -= k.begin.counters[i];
    for (std::size_t i = 0; i < k.begin.histograms.size(); ++i) {
        auto& h = v.values.histograms[i];
        const auto& b = k.begin.histograms[i];
        h.count -= b.count;
        h.sum -= b.sum;
        for (std::size_t j = 0; j < h.buckets.size(); ++j) h.buckets[j] -= b.buckets[j];
    }
    return v;
}

// ---------------------------------------------------------------- JSON

namespace {

struct HistAcc {  // a histogram's values in one scope, possibly merged over instances
    const Histogram* meta = nullptr;
    std::uint64_t count = 0, sum = 0, min = 0, max = 0;
    bool has_minmax = false;
    std::vector<std::uint64_t> buckets;
};

// ordered_json keeps an object's members in a vector of (const key, value) pairs: growing it
// copies every member deeply (a const key cannot be moved), and operator[] searches the keys
// one by one. The statistics build objects of known size with unique keys, so they reserve
// them and append without the search (a few hundred groups, each with its counters, made
// writing the statistics a quadratic deep copy).
ojson object_with(std::size_t members) {
    ojson j = ojson::object();
    j.get_ref<ojson::object_t&>().reserve(members);
    return j;
}

// `key` must not be in `object` yet. The reference is valid until the next append to `object`
// beyond its reserved size.
ojson& append(ojson& object, std::string key, ojson value) {
    ojson::object_t& members = object.get_ref<ojson::object_t&>();
    members.emplace_back(std::move(key), std::move(value));
    return members.back().second;
}

ojson hist_json(const HistAcc& h, bool whole_run) {
    ojson j = object_with(10);
    std::optional<double> mean;
    if (h.count > 0) mean = static_cast<double>(h.sum) / static_cast<double>(h.count);
    if (!whole_run) {
        append(j, "count", h.count);
        append(j, "sum", h.sum);
        append(j, "mean", opt(mean));
        append(j, "buckets", h.buckets);
        return j;
    }
    const Buckets& b = h.meta->buckets();
    append(j, "unit", h.meta->unit());
    append(j, "doc", h.meta->doc());
    append(j, "layout", b.kind() == Buckets::Kind::Linear ? "linear" : "log2");
    append(j, "count", h.count);
    append(j, "sum", h.sum);
    append(j, "min", h.count > 0 && h.has_minmax ? ojson(h.min) : ojson(nullptr));
    append(j, "max", h.count > 0 && h.has_minmax ? ojson(h.max) : ojson(nullptr));
    append(j, "mean", opt(mean));
    ojson arr = ojson::array();
    arr.get_ref<ojson::array_t&>().reserve(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) {
        ojson e = object_with(3);
        append(e, "lo", b.lower(i));
        append(e, "hi", b.bounded(i) ? ojson(b.upper(i)) : ojson(nullptr));
        append(e, "count", h.buckets[i]);
        arr.push_back(std::move(e));
    }
    append(j, "buckets", std::move(arr));
    return j;
}

std::string qualified(const Counter& c) { return c.group().path() + "." + c.name(); }

std::string fmt_double(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

// Everything one scope outputs, in output order.
struct Registry::ScopeData {
    struct CounterVal { const Counter* meta; std::uint64_t value; };
    struct RatioVal { const Ratio* meta; std::uint64_t num, den; };
    struct Entry {  // a group or an aggregate
        std::size_t instances = 1;
        std::vector<CounterVal> counters;
        std::vector<HistAcc> histograms;
        std::vector<RatioVal> ratios;
    };
    std::vector<std::pair<std::string, Entry>> groups;  // natural path order
    std::map<std::string, Entry, NaturalLess> aggregates;
};

Registry::ScopeData Registry::collect(const View& v) const {
    ScopeData d;
    const Snapshot& s = v.values;
    for (const auto& [path, g] : groups_) {
        ScopeData::Entry e;
        for (const auto& c : g->counters_) e.counters.push_back({c.get(), s.counters[c->index_]});
        for (const auto& h : g->histograms_) {
            const auto& hs = s.histograms[h->index_];
            e.histograms.push_back(HistAcc{h.get(), hs.count, hs.sum, h->min_, h->max_,
                                           v.whole_run, hs.buckets});
        }
        for (const auto& r : g->ratios_)
            e.ratios.push_back({&r, s.counters[r.numerator->index_], s.counters[r.denominator->index_]});

        if (path.find('[') != std::string::npos) {
            auto [it, fresh] = d.aggregates.try_emplace(aggregate_path(path));
            ScopeData::Entry& a = it->second;
            if (fresh) {
                a = e;
            } else {
                ++a.instances;
                // Merge by stat name; stats an earlier instance lacks are appended.
                for (const auto& c : e.counters) {
                    auto f = std::find_if(a.counters.begin(), a.counters.end(),
                                          [&](const auto& x) { return x.meta->name() == c.meta->name(); });
                    if (f == a.counters.end()) a.counters.push_back(c); else f->value += c.value;
                }
                for (const auto& h : e.histograms) {
                    auto f = std::find_if(a.histograms.begin(), a.histograms.end(),
                                          [&](const auto& x) { return x.meta->name() == h.meta->name(); });
                    if (f == a.histograms.end()) { a.histograms.push_back(h); continue; }
                    if (!(f->meta->buckets() == h.meta->buckets())) continue;  // layouts differ
                    if (h.count > 0) {
                        if (f->count == 0 || h.min < f->min) f->min = h.min;
                        if (f->count == 0 || h.max > f->max) f->max = h.max;
                    }
                    f->count += h.count;
                    f->sum += h.sum;
                    for (std::size_t i = 0; i < f->buckets.size(); ++i) f->buckets[i] += h.buckets[i];
                }
                for (const auto& r : e.ratios) {
                    auto f = std::find_if(a.ratios.begin(), a.ratios.end(),
                                          [&](const auto& x) { return x.meta->name == r.meta->name; });
                    if (f == a.ratios.end()) { a.ratios.push_back(r); continue; }
                    f->num += r.num;
                    f->den += r.den;
                }
            }
        }
        d.groups.emplace_back(path, std::move(e));
    }
    return d;
}

void Registry::write_scope(ojson& out, const View& v) const {
    const ScopeData d = collect(v);
    const bool full = v.whole_run;
    auto entry_json = [&](const ScopeData::Entry& e, bool aggregate, bool extremes) {
        ojson j = object_with(6);
        if (aggregate) append(j, "instances", e.instances);
        if (!e.counters.empty()) {
            ojson& cs = append(j, "counters", object_with(e.counters.size()));
            for (const auto& c : e.counters) {
                if (!full) { append(cs, c.meta->name(), c.value); continue; }
                ojson x = object_with(3);
                append(x, "value", c.value);
                append(x, "unit", c.meta->unit());
                append(x, "doc", c.meta->doc());
                append(cs, c.meta->name(), std::move(x));
            }
            if (extremes && v.min != nullptr && v.max != nullptr) {
                ojson& lo = append(j, "per_launch_min", object_with(e.counters.size()));
                for (const auto& c : e.counters) append(lo, c.meta->name(), (*v.min)[c.meta->index_]);
                ojson& hi = append(j, "per_launch_max", object_with(e.counters.size()));
                for (const auto& c : e.counters) append(hi, c.meta->name(), (*v.max)[c.meta->index_]);
            }
        }
        if (!e.histograms.empty()) {
            ojson& hs = append(j, "histograms", object_with(e.histograms.size()));
            for (const auto& h : e.histograms) append(hs, h.meta->name(), hist_json(h, full));
        }
        if (!e.ratios.empty()) {
            ojson& rs = append(j, "ratios", object_with(e.ratios.size()));
            for (const auto& r : e.ratios) {
                const auto value = opt(ratio_value(r.num, r.den, r.meta->scale));
                if (!full) { append(rs, r.meta->name, value); continue; }
                ojson x = object_with(5);
                append(x, "value", value);
                append(x, "doc", r.meta->doc);
                if (!aggregate) {
                    append(x, "numerator", qualified(*r.meta->numerator));
                    append(x, "denominator", qualified(*r.meta->denominator));
                }
                append(x, "scale", r.meta->scale);
                append(rs, r.meta->name, std::move(x));
            }
        }
        return j;
    };
    out.get_ref<ojson::object_t&>().reserve(out.size() + 2);
    ojson& gs = append(out, "groups", object_with(d.groups.size()));
    for (const auto& [path, e] : d.groups) append(gs, path, entry_json(e, false, path.find('[') == std::string::npos));
    ojson& as = append(out, "aggregates", object_with(d.aggregates.size()));
    for (const auto& [path, e] : d.aggregates) append(as, path, entry_json(e, true, false));
}

std::string Registry::json() const {
    if (before_read_) before_read_();
    ojson root = object_with(5);
    append(root, "format", "gpuvp-stats");
    append(root, "version", 1);
    if (kernel_detail_ == KernelDetail::PerName) append(root, "kernel_detail", "per_name");
    write_scope(append(root, "run", object_with(2)), run_view());
    ojson& ks = append(root, "kernels", ojson::array());
    for (const auto& name : names_) {
        const NameScope t = name_totals(name);
        ojson j = object_with(8);
        append(j, "name", t.name);
        append(j, "launches", t.launches);
        append(j, "running", t.launches - name.launches);
        if (now_ps_) {
            append(j, "begin_ps", t.first_begin_ps);
            append(j, "end_ps", t.last_end_ps);
            append(j, "time_ps", {{"sum", t.time_sum_ps}, {"min", t.time_min_ps}, {"max", t.time_max_ps}});
        }
        write_scope(j, View{false, t.sum, &t.min, &t.max, t.launches});
        ks.push_back(std::move(j));
    }
    for (const auto& k : kernels_) {
        if (kernel_detail_ == KernelDetail::PerName) break;  // open launches are in their name's totals
        ojson j = object_with(7);
        append(j, "id", k.id);
        append(j, "name", k.name);
        append(j, "complete", k.complete);
        if (now_ps_) {
            append(j, "begin_ps", k.begin_ps);
            append(j, "end_ps", k.complete ? k.end_ps : now_ps_());
        }
        write_scope(j, kernel_view(k));
        ks.push_back(std::move(j));
    }
    return root.dump(2) + "\n";
}

void Registry::summarize_scope(std::string& out, const View& v) const {
    const ScopeData d = collect(v);
    auto wanted = [&](const std::string& key, bool aggregate_or_plain) {
        if (summary_keys_.empty()) return aggregate_or_plain;
        return std::find(summary_keys_.begin(), summary_keys_.end(), key) != summary_keys_.end();
    };
    auto line = [&](const std::string& key, const std::string& value, const std::string& unit) {
        std::string l = "  " + key;
        if (l.size() < 44) l.resize(44, ' ');
        l += " " + value;
        if (!unit.empty()) l += " " + unit;
        out += l + "\n";
    };
    // Without chosen keys the summary is for reading: stats that saw nothing (zero counters,
    // empty histograms, ratios without a denominator) stay in the JSON only.
    const bool skip_empty = summary_keys_.empty();
    auto emit = [&](const std::string& path, const ScopeData::Entry& e, bool show) {
        // Per-name scopes of several launches: the sum, and a launch's extremes where known.
        const bool extremes = v.min != nullptr && v.launches > 1 && path.find('[') == std::string::npos;
        for (const auto& c : e.counters) {
            if (!wanted(path + "." + c.meta->name(), show) || (skip_empty && c.value == 0)) continue;
            std::string unit = c.meta->unit();
            if (extremes && (*v.min)[c.meta->index_] != (*v.max)[c.meta->index_]) {
                unit += " (per launch " + std::to_string((*v.min)[c.meta->index_]) + ".." +
                        std::to_string((*v.max)[c.meta->index_]) + ")";
            }
            line(path + "." + c.meta->name(), std::to_string(c.value), unit);
        }
        for (const auto& h : e.histograms) {
            if (!wanted(path + "." + h.meta->name(), show) || (skip_empty && h.count == 0)) continue;
            std::string s = "count " + std::to_string(h.count);
            if (h.count > 0) {
                s += " mean " + fmt_double(static_cast<double>(h.sum) / static_cast<double>(h.count));
                if (h.has_minmax) s += " min " + std::to_string(h.min) + " max " + std::to_string(h.max);
            }
            line(path + "." + h.meta->name(), s, h.meta->unit());
        }
        for (const auto& r : e.ratios) {
            if (!wanted(path + "." + r.meta->name, show)) continue;
            const auto val = ratio_value(r.num, r.den, r.meta->scale);
            if (skip_empty && !val) continue;
            line(path + "." + r.meta->name, val ? fmt_double(*val) : "n/a", "");
        }
    };
    for (const auto& [path, e] : d.aggregates) emit(path, e, true);
    for (const auto& [path, e] : d.groups) emit(path, e, path.find('[') == std::string::npos);
}

std::string Registry::summary() const {
    if (before_read_) before_read_();
    std::string out;
    std::uint64_t launches = 0;
    for (const auto& name : names_) {
        const NameScope t = name_totals(name);
        launches += t.launches;
        out += "kernel \"" + t.name + "\": " + std::to_string(t.launches) + " launch" + (t.launches == 1 ? "" : "es");
        if (t.launches != name.launches) out += " (" + std::to_string(t.launches - name.launches) + " still running)";
        if (now_ps_) {
            out += ", " + std::to_string(t.time_sum_ps) + " ps in all";
            if (t.launches > 1 && t.time_min_ps != t.time_max_ps)
                out += " (per launch " + std::to_string(t.time_min_ps) + ".." + std::to_string(t.time_max_ps) + " ps)";
        }
        out += t.launches > 1 ? ", statistics summed over the launches\n" : "\n";
        summarize_scope(out, View{false, t.sum, &t.min, &t.max, t.launches});
    }
    if (kernel_detail_ == KernelDetail::PerName) {
        out += "run (" + std::to_string(launches) + " launch" + (launches == 1 ? "" : "es") + " of " +
               std::to_string(names_.size()) + " kernel" + (names_.size() == 1 ? "" : "s") + ")\n";
        summarize_scope(out, run_view());
        return out;
    }
    for (const auto& k : kernels_) {
        out += "kernel " + std::to_string(k.id) + " \"" + k.name + "\"";
        if (now_ps_) {
            const std::uint64_t end = k.complete ? k.end_ps : now_ps_();
            out += " " + std::to_string(k.begin_ps) + " ps .. " + std::to_string(end) + " ps";
        }
        if (!k.complete) out += " (still running)";
        out += "\n";
        summarize_scope(out, kernel_view(k));
    }
    out += "run (" + std::to_string(kernels_.size()) + " kernel scope" +
           (kernels_.size() == 1 ? "" : "s") + ")\n";
    summarize_scope(out, run_view());
    return out;
}

}  // namespace gpuvp::stats
