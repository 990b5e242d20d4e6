#!/usr/bin/python3
"""gpuvp report: a self-contained HTML page of charts from a gpuvp statistics file.

Run by `gpuvp report STATS.json -o report.html`, which passes the configuration's peak figures
(--peaks JSON). Charts are drawn by matplotlib (Debian's python3-matplotlib) as SVG and inlined,
so the page needs no network and no script library to be viewed. Output is a pure function of
the inputs (fixed SVG ids, no dates), so the same statistics give the same page.
"""

import argparse
import html
import io
import json
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("gpuvp report: this python3 (%s) has no matplotlib: install Debian's python3-matplotlib "
          "(scripts/setup.sh), or set GPUVP_PYTHON to a python3 that has it" % sys.executable, file=sys.stderr)
    sys.exit(1)

plt.rcParams["svg.hashsalt"] = "gpuvp-report"  # deterministic ids in the SVG
plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller files, selectable labels
plt.rcParams["font.size"] = 9

SECTOR_BYTES = 32
DETAILED_KERNELS = 24  # kernels with their own section, longest first; the rest are listed
TABLE_KERNELS = 200    # rows of the kernel table, longest first

STALLS = [
    ("stall_memory", "memory (waiting on a load)"),
    ("stall_scoreboard", "scoreboard (register dependency)"),
    ("stall_fu_busy", "functional unit busy"),
    ("stall_barrier", "barrier"),
    ("stall_fetch", "instruction fetch"),
    ("stall_idle", "no warp on the sub-core"),
]
LIMITERS = ["ctas", "threads", "warps", "registers", "shared_memory"]


def svg_of(fig, label):
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]  # drop the XML prologue and DOCTYPE: inline in HTML
    return '<figure class="chart" data-chart="%s">%s<figcaption>%s</figcaption></figure>' % (
        html.escape(label), text, html.escape(label))


def counters(scope, group):
    return scope.get("groups", {}).get(group, {}).get("counters", {})


def agg_counters(scope, group):
    return scope.get("aggregates", {}).get(group, {}).get("counters", {})


def ratio(scope, group, name, aggregate=False):
    where = scope.get("aggregates" if aggregate else "groups", {}).get(group, {})
    return where.get("ratios", {}).get(name)


def kernel_time_ps(kernel):
    t = kernel.get("time_ps")
    if isinstance(t, dict):
        return t.get("sum", 0)
    if t is not None:
        return t
    return counters(kernel, "gpu").get("time_ps", 0)


def short(name, limit=60):
    return name if len(name) <= limit else name[: limit - 3] + "..."


def fmt_rate(value, unit):
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if value >= scale:
            return "%.2f %s%s" % (value / scale, prefix, unit)
    return "%.2f %s" % (value, unit)


def label_of(kernel):
    """A kernel scope's name; per launch, with the launch's id (names repeat)."""
    if "launches" in kernel or "id" not in kernel:
        return kernel["name"]
    return "%s (launch %d)" % (kernel["name"], kernel["id"])


def speed_of_light(kernel, peaks):
    """Achieved / peak, in percent, for issue and the three bandwidths."""
    gpu = counters(kernel, "gpu")
    cycles = gpu.get("cycles", 0)
    seconds = kernel_time_ps(kernel) / 1e12
    rows = []
    issue_peak = peaks["sm_count"] * peaks["subcores"]
    if cycles:
        achieved = gpu.get("warp_instructions", 0) / cycles
        rows.append(("issue", achieved / issue_peak, "%.2f of %d warp-inst/cycle" % (achieved, issue_peak)))
    if seconds > 0:
        sm = agg_counters(kernel, "gpu.sm[*]")
        l1 = sm.get("l1_sector_accesses", gpu.get("l1_sector_accesses", 0)) * SECTOR_BYTES / seconds
        l2 = gpu.get("l2_sector_accesses", 0) * SECTOR_BYTES / seconds
        hbm = gpu.get("dram_bytes", 0) / seconds
        for label, achieved, peak in (("L1", l1, peaks["l1_bandwidth"]), ("L2", l2, peaks["l2_bandwidth"]),
                                      ("HBM", hbm, peaks["hbm_bandwidth"])):
            rows.append((label, achieved / peak, "%s of %s" % (fmt_rate(achieved, "B/s"), fmt_rate(peak, "B/s"))))
    return rows


def chart_speed_of_light(rows, title):
    fig, ax = plt.subplots(figsize=(5.2, 0.45 * len(rows) + 0.8))
    labels = [r[0] for r in rows]
    values = [100.0 * r[1] for r in rows]
    ax.barh(labels, [100] * len(rows), color="#e8e8e8")
    ax.barh(labels, values, color=["#3b7dd8" if v < 60 else "#e07b00" if v < 85 else "#c0392b" for v in values])
    for i, (value, row) in enumerate(zip(values, rows)):
        ax.text(min(value, 100) + 1, i, "%.1f %%  (%s)" % (value, row[2]), va="center", fontsize=8)
    ax.set_xlim(0, 160)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.invert_yaxis()
    ax.set_xlabel("% of peak")
    ax.set_title(title, fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return svg_of(fig, title)


def chart_stalls(kernel, title):
    sm = agg_counters(kernel, "gpu.sm[*]")
    issued = sm.get("warp_instructions", 0)
    parts = [("issued", issued)] + [(label, sm.get(key, 0)) for key, label in STALLS]
    total = sum(v for _, v in parts)
    if total == 0:
        return None
    fig, ax = plt.subplots(figsize=(5.2, 0.32 * len(parts) + 0.8))
    labels = [p[0] for p in parts]
    values = [100.0 * p[1] / total for p in parts]
    ax.barh(labels, values, color=["#2e9e5b"] + ["#b55d5d"] * (len(parts) - 1))
    for i, v in enumerate(values):
        ax.text(v + 0.5, i, "%.1f %%" % v, va="center", fontsize=8)
    ax.set_xlim(0, 115)
    ax.invert_yaxis()
    ax.set_xlabel("% of sub-core issue slots (cycles with resident warps, all SMs)")
    ax.set_title(title, fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return svg_of(fig, title)


def hit_rates(kernel):
    rows = []
    for label, value in (
        ("L1 sectors", ratio(kernel, "gpu", "l1_hit_rate")),
        ("L2 sectors", ratio(kernel, "gpu", "l2_hit_rate")),
        ("HBM row buffer", ratio(kernel, "gpu", "row_buffer_hit_rate")),
        ("constant cache", ratio(kernel, "gpu.sm[*]", "const_hit_rate", aggregate=True)),
        ("L1 TLB", ratio(kernel, "uvm.l1_tlb[*]", "hit_rate", aggregate=True)),
    ):
        if value is not None:
            rows.append((label, value))
    sm = agg_counters(kernel, "gpu.sm[*]")
    fetches = sm.get("icache_hits", 0) + sm.get("icache_misses", 0)
    if fetches:
        rows.append(("instruction cache", sm.get("icache_hits", 0) / fetches))
    return rows


def chart_hit_rates(rows, title):
    fig, ax = plt.subplots(figsize=(5.2, 0.32 * len(rows) + 0.8))
    labels = [r[0] for r in rows]
    values = [100.0 * r[1] for r in rows]
    ax.barh(labels, [100] * len(rows), color="#e8e8e8")
    ax.barh(labels, values, color="#6a5acd")
    for i, v in enumerate(values):
        ax.text(min(v, 100) + 1, i, "%.1f %%" % v, va="center", fontsize=8)
    ax.set_xlim(0, 115)
    ax.invert_yaxis()
    ax.set_xlabel("hit rate, %")
    ax.set_title(title, fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return svg_of(fig, title)


def occupancy(kernel, peaks):
    sched = counters(kernel, "gpu.cta_scheduler")
    limits = [name for name in LIMITERS if sched.get("occupancy_limited_by_" + name, 0) > 0]
    hist = kernel.get("groups", {}).get("gpu.cta_scheduler", {}).get("histograms", {})
    launches = max(1, kernel.get("launches", 1))
    def mean_of(name):
        h = hist.get(name)
        return None if not h or not h.get("count") else h["sum"] / h["count"]
    achieved = ratio(kernel, "gpu.sm[*]", "achieved_occupancy", aggregate=True)
    return {
        "achieved": achieved,
        "ctas_per_sm": mean_of("ctas_per_sm"),
        "registers": mean_of("registers_per_thread"),
        "shared": mean_of("shared_bytes_per_cta"),
        "limiters": limits,
        "launches": launches,
    }


def chart_kernel_timeline(kernels, title):
    spans = [(k["name"], k["begin_ps"], k["end_ps"]) for k in kernels if "begin_ps" in k and "end_ps" in k]
    if not spans:
        return None
    names = []
    for name, _, _ in spans:
        if name not in names:
            names.append(name)
    shown = names[:30]
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(shown) + 1.2))
    colors = plt.get_cmap("tab20")
    for name, begin, end in spans:
        if name not in shown:
            continue
        row = shown.index(name)
        ax.barh(row, max(end - begin, 1) / 1e6, left=begin / 1e6, color=colors(row % 20), height=0.6)
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels([short(n, 48) for n in shown], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (us)")
    ax.set_title(title, fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return svg_of(fig, title)


def chart_uvm_timeline(kernels, title):
    points = []
    for k in kernels:
        g = counters(k, "uvm.gmmu")
        if "begin_ps" in k and (g.get("far_faults", 0) or g.get("migrated_bytes", 0)):
            points.append((k["begin_ps"] / 1e6, k.get("end_ps", k["begin_ps"]) / 1e6, g.get("far_faults", 0),
                           g.get("migrated_bytes", 0) / 4096.0, g.get("evicted_bytes", 0) / 4096.0))
    if not points:
        return None
    points.sort()
    fig, ax = plt.subplots(figsize=(9, 2.8))
    width = [max(p[1] - p[0], 1e-3) for p in points]
    left = [p[0] for p in points]
    ax.bar(left, [p[2] for p in points], width=width, align="edge", color="#c0392b", alpha=0.8, label="far faults")
    ax.bar(left, [p[3] for p in points], width=width, align="edge", color="#3b7dd8", alpha=0.45,
           label="pages migrated to the GPU (4 KiB)")
    if any(p[4] for p in points):
        ax.bar(left, [p[4] for p in points], width=width, align="edge", color="#7f8c8d", alpha=0.6,
               label="pages evicted (4 KiB)")
    ax.set_xlabel("simulated time (us); one bar per kernel scope, spanning it")
    ax.set_ylabel("count")
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title(title, fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return svg_of(fig, title)


CSS = """
body { font-family: sans-serif; margin: 24px auto; max-width: 1180px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 13px; font-family: monospace; word-break: break-all; }
.kernel { margin-bottom: 28px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure.chart { margin: 0; } figure.chart svg { display: block; height: auto; max-width: 100%; }
figcaption { font-size: 11px; color: #555; }
table { border-collapse: collapse; font-size: 12px; } td, th { padding: 2px 8px; text-align: left; }
th { background: #f0f0f0; } .note { font-size: 12px; color: #555; }
"""

# Runs once the page is laid out: records how many charts were drawn and their sizes in the page
# (data attributes a headless browser test reads back from the DOM), and any script error.
CHECK_SCRIPT = """
window.addEventListener('error', function (e) { document.body.setAttribute('data-script-error', String(e.message)); });
window.addEventListener('load', function () {
  var charts = document.querySelectorAll('figure.chart svg');
  var sized = 0;
  charts.forEach(function (svg) { var r = svg.getBoundingClientRect(); if (r.width > 50 && r.height > 30) sized++; });
  document.body.setAttribute('data-charts', String(charts.length));
  document.body.setAttribute('data-charts-sized', String(sized));
});
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("stats")
    parser.add_argument("output")
    parser.add_argument("--peaks", required=True, help="JSON: sm_count, subcores, l1/l2/hbm_bandwidth, config")
    args = parser.parse_args()
    peaks = json.loads(args.peaks)
    try:
        with open(args.stats) as f:
            stats = json.load(f)
    except (OSError, ValueError) as e:
        print("gpuvp report: %s: %s" % (args.stats, e), file=sys.stderr)
        return 1
    if stats.get("format") != "gpuvp-stats" or "kernels" not in stats:
        print("gpuvp report: %s: not a gpuvp statistics file (no \"format\": \"gpuvp-stats\")" % args.stats,
              file=sys.stderr)
        return 1

    kernels = stats["kernels"]
    per_name = stats.get("kernel_detail") == "per_name"
    body = []
    body.append("<h1>gpuvp report: %s</h1>" % html.escape(args.stats.split("/")[-1]))
    total_ps = sum(kernel_time_ps(k) for k in kernels)
    body.append('<p class="note">Configuration for the peaks: %s (%d SMs x %d schedulers; L1 %s, L2 %s, HBM %s). '
                "%d kernel %s, %s of kernel time. L1 peak assumed one 128 B line per SM per cycle; "
                "L2 and HBM peaks from the configuration.</p>" % (
                    html.escape(peaks.get("config", "?")), peaks["sm_count"], peaks["subcores"],
                    fmt_rate(peaks["l1_bandwidth"], "B/s"), fmt_rate(peaks["l2_bandwidth"], "B/s"),
                    fmt_rate(peaks["hbm_bandwidth"], "B/s"), len(kernels),
                    "names (statistics per kernel name)" if per_name else "launches", "%.3f us" % (total_ps / 1e6)))

    body.append("<h2>Kernel timeline</h2>")
    timeline = chart_kernel_timeline(kernels, "kernels over simulated time" +
                                     (" (per name: first launch to last end)" if per_name else ""))
    body.append(timeline or '<p class="note">No kernel times in this file.</p>')

    uvm = chart_uvm_timeline(kernels, "unified memory: far faults and migrations per kernel")
    if uvm:
        body.append("<h2>Unified memory</h2>")
        body.append(uvm)
        run_gmmu = {name: c.get("value", 0) for name, c in counters(stats.get("run", {}), "uvm.gmmu").items()}
        body.append('<p class="note">Whole run: %d far faults, %d bytes migrated, %d bytes evicted. For the fault '
                    "tracks at finer grain, record a trace (<code>gpuvp run --trace</code>).</p>" % (
                        run_gmmu.get("far_faults", 0), run_gmmu.get("migrated_bytes", 0),
                        run_gmmu.get("evicted_bytes", 0)))

    order = sorted(range(len(kernels)), key=lambda i: (-kernel_time_ps(kernels[i]), i))
    detailed = order[:DETAILED_KERNELS]
    body.append("<h2>Kernels</h2>")
    body.append("<table><tr><th>kernel</th><th>launches</th><th>time (us)</th><th>cycles</th><th>IPC</th></tr>")
    for i in order[:TABLE_KERNELS]:
        k = kernels[i]
        gpu = counters(k, "gpu")
        ipc = ratio(k, "gpu", "ipc")
        body.append("<tr><td><a href=\"#k%d\">%s</a></td><td>%d</td><td>%.3f</td><td>%d</td><td>%s</td></tr>" % (
            i, html.escape(short(label_of(k), 70)), k.get("launches", 1), kernel_time_ps(k) / 1e6,
            gpu.get("cycles", 0), "%.2f" % ipc if ipc is not None else "n/a"))
    body.append("</table>")
    if len(order) > TABLE_KERNELS:
        body.append('<p class="note">The table lists the %d longest of %d kernel scopes.</p>' % (
            TABLE_KERNELS, len(order)))
    if len(order) > len(detailed):
        body.append('<p class="note">Charts for the %d longest kernels; %d more are in the table only.</p>' % (
            len(detailed), len(order) - len(detailed)))

    for i in detailed:
        k = kernels[i]
        body.append('<div class="kernel" id="k%d"><h3>%s</h3>' % (i, html.escape(label_of(k))))
        occ = occupancy(k, peaks)
        facts = []
        if occ["achieved"] is not None:
            facts.append("achieved occupancy %.1f %% of the SMs' warp slots" % (100.0 * occ["achieved"]))
        if occ["ctas_per_sm"] is not None:
            facts.append("%.1f CTAs per SM" % occ["ctas_per_sm"])
        if occ["registers"] is not None:
            facts.append("%.0f registers per thread" % occ["registers"])
        if occ["shared"] is not None:
            facts.append("%.0f B shared memory per CTA" % occ["shared"])
        facts.append("limited by " + (", ".join(l.replace("_", " ") for l in occ["limiters"]) or "nothing recorded"))
        body.append('<p class="note">Occupancy: %s.</p>' % html.escape("; ".join(facts)))
        body.append('<div class="charts">')
        rows = speed_of_light(k, peaks)
        if rows:
            body.append(chart_speed_of_light(rows, "speed of light: achieved vs peak"))
        stalls = chart_stalls(k, "issue slots: issued, or why not (warp stalls)")
        if stalls:
            body.append(stalls)
        rates = hit_rates(k)
        if rates:
            body.append(chart_hit_rates(rates, "cache and TLB hit rates"))
        body.append("</div></div>")

    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpuvp report</title>"
            "<style>%s</style><script>%s</script></head><body>\n%s\n</body></html>\n" % (
                CSS, CHECK_SCRIPT, "\n".join(body)))
    try:
        with open(args.output, "w") as f:
            f.write(page)
    except OSError as e:
        print("gpuvp report: cannot write %s: %s" % (args.output, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
