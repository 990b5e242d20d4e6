#!/usr/bin/python3
"""Charts of a gpuvp sweep's results.json, as PNG and SVG (run by `gpuvp plot`).

One swept knob (or --x): the metric against the knob, one line per program (and per value of
any other swept knob). Two swept knobs without --x: one heat map per program. --baseline: the
speedup over that point of each program (baseline value / value: the metric is a time or a
cycle count), as seed 000 Figure 5 shows it. Axes carry the knobs' units from the knob
registry, converted to a readable scale (Hz -> MHz, bytes -> KiB/MiB, ps -> us).
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: labels are searchable in the SVG
matplotlib.rcParams["svg.hashsalt"] = "gpuvp-sweep"  # stable element ids: same results, same file
import matplotlib.pyplot as plt  # noqa: E402

SCALES = {
    "frequency": [(1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz"), (1, "Hz")],
    "size": [(2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1, "B")],
    "time": [(1e12, "s"), (1e9, "ms"), (1e6, "us"), (1e3, "ns"), (1, "ps")],
    "bandwidth": [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s"), (1, "B/s")],
}
METRIC_DIMENSION = {"ps": "time", "B": "size", "B/s": "bandwidth", "Hz": "frequency"}


def scale_for(dimension, values):
    """The largest unit in which the smallest value is still at least 1."""
    scales = SCALES.get(dimension)
    values = [abs(v) for v in values if v]
    if not scales or not values:
        return 1.0, None
    low = min(values)
    for factor, symbol in scales:
        if low >= factor:
            return factor, symbol
    return scales[-1]


def number(v):
    return "%g" % v


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--x")
    parser.add_argument("--y")
    parser.add_argument("--baseline-json", default="{}")
    parser.add_argument("--baseline-text", default="")
    parser.add_argument("--out")
    args = parser.parse_args()

    with open(args.results) as f:
        doc = json.load(f)
    knobs = {k["name"]: k for k in doc["knobs"]}
    knob_order = [k["name"] for k in doc["knobs"]]
    metrics = {m["column"]: m for m in doc["metrics"]}
    y = args.y or doc["metrics"][0]["column"]
    baseline = json.loads(args.baseline_json)
    rows = [r for r in doc["rows"] if r["status"] == "ok" and r["metrics"].get(y) is not None]
    skipped = len(doc["rows"]) - len(rows)
    if not rows:
        sys.exit("gpuvp plot: error: no point of %s has a value of %s (status ok)" % (args.results, y))
    programs = [p["name"] for p in doc["programs"] if any(r["program"] == p["name"] for r in rows)]
    # Zipped knobs move together: each axis is drawn by its first knob.
    axes = doc.get("axes") or [[k] for k in knob_order]
    swept = [a[0] for a in axes if len({json.dumps(r["knobs"][a[0]]) for r in rows}) > 1]

    # Speedup: each program's baseline point (every knob of the baseline must match).
    def matches(row):
        for name, value in baseline.items():
            v = row["knobs"][name]
            if isinstance(value, float) or isinstance(value, int):
                if not isinstance(v, (int, float)) or abs(v - value) > 1e-9 * max(1.0, abs(value)):
                    return False
            elif v != value:
                return False
        return True

    base_value = {}
    if baseline:
        for program in programs:
            candidates = [r for r in rows if r["program"] == program and matches(r)]
            if len(candidates) != 1:
                sys.exit("gpuvp plot --baseline: error: %s matches %d points of program %s; name one point (every "
                         "swept knob: %s)" % (args.baseline_text, len(candidates), program, ", ".join(knob_order)))
            base_value[program] = candidates[0]["metrics"][y]

    metric = metrics[y]
    metric_values = [r["metrics"][y] for r in rows]
    if baseline:
        def value_of(r):
            v = r["metrics"][y]
            return base_value[r["program"]] / v if v else float("nan")
        y_label = "speedup (x)"
        y_factor = 1.0
    else:
        y_factor, y_symbol = scale_for(METRIC_DIMENSION.get(metric.get("unit", ""), ""), metric_values)
        unit = y_symbol or metric.get("unit") or ""
        y_label = y + (" (%s)" % unit if unit else "")
        def value_of(r):
            return r["metrics"][y] / y_factor
        if metric.get("kernel"):
            y_label += ", kernel " + metric["kernel"]

    def axis(name):
        """Scale and label of a knob axis."""
        k = knobs[name]
        values = [r["knobs"][name] for r in rows]
        if all(isinstance(v, (int, float)) for v in values):
            factor, symbol = scale_for(k["dimension"], values)
            unit = symbol or k["unit"] or ""
            return factor, name + (" (%s)" % unit if unit else "")
        return None, name

    def knob_text(row, name):
        v = row["knobs"][name]
        if not isinstance(v, (int, float)):
            return str(v)
        factor, symbol = scale_for(knobs[name]["dimension"], [r["knobs"][name] for r in rows])
        return number(v / factor) + (" " + symbol if symbol else "")

    if args.x:
        x = args.x
        heat = False
    elif len(swept) == 2:
        x, heat = swept[0], True
    else:
        x, heat = (swept[0] if swept else None), False

    if baseline:
        title = "%s: %s speedup over %s" % (doc["name"], y, args.baseline_text.replace(",", ", "))
    else:
        title = "%s: %s" % (doc["name"], y)
    if heat:
        other = swept[1]
        fx, x_label = axis(x)
        fy, o_label = axis(other)
        xs = sorted({r["knobs"][x] for r in rows}, key=lambda v: (isinstance(v, str), v))
        os_ = sorted({r["knobs"][other] for r in rows}, key=lambda v: (isinstance(v, str), v))
        fig, panels = plt.subplots(1, len(programs), figsize=(4.8 * len(programs) + 1, 4.2), squeeze=False)
        for ax, program in zip(panels[0], programs):
            grid = [[float("nan")] * len(xs) for _ in os_]
            for r in rows:
                if r["program"] == program:
                    grid[os_.index(r["knobs"][other])][xs.index(r["knobs"][x])] = value_of(r)
            image = ax.imshow(grid, origin="lower", cmap="viridis", aspect="auto")
            for i in range(len(os_)):
                for j in range(len(xs)):
                    if not math.isnan(grid[i][j]):
                        ax.text(j, i, "%.3g" % grid[i][j], ha="center", va="center", color="white", fontsize=9)
            ax.set_xticks(range(len(xs)), [number(v / fx) if fx else v for v in xs])
            ax.set_yticks(range(len(os_)), [number(v / fy) if fy else v for v in os_])
            ax.set_xlabel(x_label)
            ax.set_ylabel(o_label)
            ax.set_title(program)
            fig.colorbar(image, ax=ax, label=y_label)
        fig.suptitle(title, fontsize=11)
        kind = "heatmap"
    else:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        if x is None:
            ax.bar(programs, [value_of(next(r for r in rows if r["program"] == p)) for p in programs])
            ax.set_xlabel("program")
        else:
            fx, x_label = axis(x)
            x_axis = next((a for a in axes if x in a), [x])
            others = [k for k in swept if k not in x_axis]
            series = {}
            for r in rows:
                key = (r["program"],) + tuple(knob_text(r, k) for k in others)
                series.setdefault(key, []).append(r)
            for key, members in series.items():
                members.sort(key=lambda r: r["knobs"][x])
                label = key[0] + "".join(", %s=%s" % (k, v) for k, v in zip(others, key[1:]))
                xs = [r["knobs"][x] / fx if fx else r["knobs"][x] for r in members]
                ax.plot(xs, [value_of(r) for r in members], marker="o", label=label)
                if fx and len(xs) <= 12:
                    ax.set_xticks(xs, [number(v) for v in xs])
            ax.set_xlabel(x_label)
            ax.legend(fontsize=8)
            ax.grid(True, alpha=0.3)
        ax.set_ylabel(y_label)
        if baseline:
            ax.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
        ax.set_title(title, fontsize=10)
        kind = "line"

    if args.out:
        prefix = args.out
    else:
        name = "%s-%s%s" % ("speedup" if baseline else y, kind, "-" + x if x else "")
        prefix = os.path.join(os.path.dirname(os.path.abspath(args.results)), name.replace("/", "_"))
    fig.tight_layout()
    written = []
    for extension in ("png", "svg"):
        path = "%s.%s" % (prefix, extension)
        metadata = {"Date": None} if extension == "svg" else {"Software": None}
        fig.savefig(path, dpi=110, metadata=metadata)
        written.append(path)
    note = " (%d point(s) without a value left out)" % skipped if skipped else ""
    print("gpuvp plot: %s%s" % (", ".join(written), note))


if __name__ == "__main__":
    main()
