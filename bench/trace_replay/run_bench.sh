#!/usr/bin/env bash
# Elastic trace capture and replay on the V100 preset, measured side by side with the
# execution-driven (detailed) model, each figure from one run on this machine:
#   1. capture overhead: CPU seconds of `gpuvp run --capture` over `gpuvp run`;
#   2. the memory side's share of a detailed run (perf samples in the crossbar, clusters, L2,
#      HBM, copy engine and their wake queues, plus the SystemC kernel) and the replay speed-up
#      bound it implies (1 / share);
#   3. a sweep, each point a detailed run and a replay of the trace captured on v100: L2 of
#      1.5, 3, 6 (v100) and 12 MiB, HBM clock 0.5x, 1x, 2x: kernel cycles of both, the error,
#      and the CPU-time speed-up of the replay; whether the replay ranks the points as the
#      detailed model does;
#   4. weak scaling: the vectorAdd trace replicated x1, x2, x4 (84..336 SMs), without and with
#      address offsetting; strong scaling: the matmul trace in task mode on 10..84 SMs;
#      both plotted as SVG files into OUT-DIR.
# Workloads: vectorAdd 2^20 (memory-bound) and matmul 256 (shared-memory tiles) from
# bench/timing, BFS from sw/workloads (irregular).
#
#   bench/trace_replay/run_bench.sh [build-dir = build] [out-dir = build/trace_replay_bench]
#   (needs gpuvp, lib/libcudart.so.13, nvcc, workload_bfs; perf for part 2, else it is skipped)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
out=${2:-$build/trace_replay_bench}
mkdir -p "$out"
out=$(cd "$out" && pwd)
nvcc=${GPUVP_NVCC:-/usr/local/cuda/bin/nvcc}
gpuvp="$build/gpuvp"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$nvcc" -cudart shared -o "$work/vector_add" "$here/../timing/vector_add.cu"
"$nvcc" -cudart shared -o "$work/matmul" "$here/../timing/matmul.cu"
declare -A program=([vectorAdd]="$work/vector_add 1048576" [matmul]="$work/matmul 256"
                    [bfs]="$build/sw/workloads/bin/workload_bfs")
workloads=(vectorAdd matmul bfs)
results="$out/results.txt"
: > "$results"

cpu() {  # command...: runs it, prints user+system CPU seconds (children included)
  /usr/bin/time -f '%U %S' -o "$work/time.txt" "$@" > "$work/out.txt" 2> "$work/err.txt" || {
    echo "failed: $*" >&2; cat "$work/out.txt" "$work/err.txt" >&2; exit 1; }
  awk '{printf "%.3f\n", $1 + $2}' "$work/time.txt"
}
cycles() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run']['groups']['gpu']['counters']['cycles']['value'])" "$1"; }

echo "== 1. capture overhead (CPU seconds, one run each)"
for w in "${workloads[@]}"; do
  # shellcheck disable=SC2086
  plain=$(cpu "$gpuvp" run --config v100 --stats "$work/$w-plain.json" -- ${program[$w]})
  # shellcheck disable=SC2086
  captured=$(cpu "$gpuvp" run --config v100 --capture "$work/$w-trace" --stats "$work/$w-base.json" -- ${program[$w]})
  bytes=$(stat -c %s "$work/$w-trace/elastic.gvet")
  echo "capture $w $plain $captured $bytes" >> "$results"
done

echo "== 2. memory-side share of a detailed run (perf)"
if perf record -q -F 1999 -o "$work/probe.data" -- true > /dev/null 2>&1; then
  for w in "${workloads[@]}"; do
    # shellcheck disable=SC2086
    perf record -q -F 1999 -o "$work/$w.perf" -- "$gpuvp" run --config v100 -- ${program[$w]} > /dev/null 2>&1
    perf report -i "$work/$w.perf" --stdio --comm gpuvp --sort dso,sym 2> /dev/null > "$work/$w.report"
    python3 - "$work/$w.report" "$w" >> "$results" <<'PY'
import re, sys
memory = re.compile(r"gpuvp::memory::|Crossbar|SmCluster|CopyEngine|WakeQueue|HbmController|L2Slice|PayloadPool|tlm_generic_payload|TlmMonitor")
kernel = re.compile(r"sc_core::|libsystemc|sc_dt::")
m = k = total = 0.0
for line in open(sys.argv[1]):
    hit = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)", line)
    if not hit:
        continue
    share, dso, sym = float(hit.group(1)), hit.group(2), hit.group(3)
    total += share
    if memory.search(sym):
        m += share
    elif kernel.search(sym) or "systemc" in dso:
        k += share
print("share %s %.1f %.1f %.1f" % (sys.argv[2], m, k, total))
PY
  done
else
  echo "perf unavailable: part 2 skipped" >&2
fi

echo "== 3. sweep: detailed vs replay"
points=("v100:" "L2=1.5MiB:memory.l2.slice_size=48KiB" "L2=3MiB:memory.l2.slice_size=96KiB"
        "L2=12MiB:memory.l2.slice_size=384KiB" "HBMx0.5:memory.hbm.clock=438.5MHz" "HBMx2:memory.hbm.clock=1754MHz")
for w in "${workloads[@]}"; do
  for point in "${points[@]}"; do
    name=${point%%:*}
    set_arg=${point#*:}
    sets=()
    [ -n "$set_arg" ] && sets=(--set "$set_arg")
    if [ "$name" = v100 ]; then
      detailed_s=$(awk -v w="$w" '$1 == "capture" && $2 == w {print $3}' "$results")
      detailed=$(cycles "$work/$w-plain.json")
    else
      # shellcheck disable=SC2086
      detailed_s=$(cpu "$gpuvp" run --config v100 "${sets[@]}" --stats "$work/d.json" -- ${program[$w]})
      detailed=$(cycles "$work/d.json")
    fi
    replay_s=$(cpu "$gpuvp" replay "$work/$w-trace" "${sets[@]}" --stats "$work/r.json")
    replayed=$(cycles "$work/r.json")
    echo "sweep $w $name $detailed $replayed $detailed_s $replay_s" >> "$results"
  done
done

echo "== 4. weak and strong scaling"
for k in 1 2 4; do
  shared=$(cpu "$gpuvp" replay "$work/vectorAdd-trace" --replicate "$k" --stats "$work/r.json"; cycles "$work/r.json")
  offset=$shared  # one replica: nothing to offset
  if [ "$k" -gt 1 ]; then
    offset=$(cpu "$gpuvp" replay "$work/vectorAdd-trace" --replicate "$k" --offset-stride 1GiB --stats "$work/r.json"
             cycles "$work/r.json")
  fi
  echo "weak $k $(echo "$shared" | tail -1) $(echo "$offset" | tail -1)" >> "$results"
done
for sms in 10 20 40 84; do
  c=$(cpu "$gpuvp" replay "$work/matmul-trace" --tasks dynamic --task-sms "$sms" --stats "$work/r.json"; cycles "$work/r.json")
  echo "strong $sms $(echo "$c" | tail -1)" >> "$results"
done

python3 - "$results" "$out" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
out = sys.argv[2]
print("\ncapture overhead (CPU s, one run each)")
print("%-10s %9s %12s %8s %12s" % ("workload", "run", "run+capture", "ratio", "trace bytes"))
for r in rows:
    if r[0] == "capture":
        print("%-10s %9.2f %12.2f %7.2fx %12s" % (r[1], float(r[2]), float(r[3]), float(r[3]) / float(r[2]), r[4]))
shares = {r[1]: r for r in rows if r[0] == "share"}
if shares:
    print("\nmemory side's share of a detailed run (perf samples; bound = 1 / (memory + SystemC kernel))")
    for w, r in shares.items():
        m, k = float(r[2]), float(r[3])
        print("%-10s memory side %5.1f %%  SystemC kernel %5.1f %%  replay speed-up bound %5.1fx" % (w, m, k, 100.0 / max(m + k, 0.1)))
print("\nsweep: kernel cycles, detailed vs replay of the v100 capture; CPU s and replay speed-up")
print("%-10s %-10s %12s %12s %8s %10s %9s %8s" % ("workload", "point", "detailed", "replay", "error", "detailed-s", "replay-s", "speedup"))
by_w = {}
for r in rows:
    if r[0] != "sweep":
        continue
    w, p, d, rp, ds, rs = r[1], r[2], int(r[3]), int(r[4]), float(r[5]), float(r[6])
    by_w.setdefault(w, []).append((p, d, rp))
    print("%-10s %-10s %12d %12d %+7.2f%% %10.2f %9.2f %7.1fx" % (w, p, d, rp, 100.0 * (rp - d) / d, ds, rs, ds / max(rs, 0.01)))
for w, pts in by_w.items():
    for group in (["v100", "L2=1.5MiB", "L2=3MiB", "L2=12MiB"], ["v100", "HBMx0.5", "HBMx2"]):
        sel = [p for p in pts if p[0] in group]
        rank_d = [p[0] for p in sorted(sel, key=lambda p: p[1])]
        rank_r = [p[0] for p in sorted(sel, key=lambda p: p[2])]
        print("%-10s ranking %-40s %s" % (w, "(" + ", ".join(group) + ")", "same" if rank_d == rank_r else "differs: detailed %s, replay %s" % (rank_d, rank_r)))

def svg(path, title, xlabel, series, xs):
    W, H, L, B = 520, 320, 70, 50
    ys = [y for _, pts in series for y in pts]
    ymax = max(ys) * 1.1
    def X(i): return L + (W - L - 20) * (i / max(len(xs) - 1, 1))
    def Y(v): return H - B - (H - B - 30) * (v / ymax)
    colors = ["#1f77b4", "#d62728", "#2ca02c"]
    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="18" font-size="14">%s</text>' % (L, title),
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, W - 20, H - B),
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, L, 30)]
    for i, x in enumerate(xs):
        s.append('<text x="%.0f" y="%d" text-anchor="middle">%s</text>' % (X(i), H - B + 16, x))
    s.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % ((W + L) // 2, H - 12, xlabel))
    for t in range(5):
        v = ymax * t / 4
        s.append('<text x="%d" y="%.0f" text-anchor="end">%d</text>' % (L - 4, Y(v) + 4, v))
    s.append('<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">kernel cycles</text>' % (H // 2, H // 2))
    for n, (name, pts) in enumerate(series):
        c = colors[n % len(colors)]
        s.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (c, " ".join("%.0f,%.0f" % (X(i), Y(v)) for i, v in enumerate(pts))))
        for i, v in enumerate(pts):
            s.append('<circle cx="%.0f" cy="%.0f" r="3" fill="%s"/>' % (X(i), Y(v), c))
        s.append('<text x="%d" y="%d" fill="%s">%s</text>' % (W - 200, 40 + 16 * n, c, name))
    s.append("</svg>")
    open(path, "w").write("\n".join(s) + "\n")

weak = [r for r in rows if r[0] == "weak"]
strong = [r for r in rows if r[0] == "strong"]
print("\nweak scaling, vectorAdd trace replicated (kernel cycles)")
for r in weak:
    print("  x%s (%3d SMs): shared data %8s   offset 1 GiB %8s" % (r[1], 84 * int(r[1]), r[2], r[3]))
print("strong scaling, matmul trace in task mode (kernel cycles)")
for r in strong:
    print("  %3s SMs: %8s" % (r[1], r[2]))
svg(out + "/weak_scaling.svg", "Weak scaling: vectorAdd 2^20 trace replicated", "replicas (x84 SMs)",
    [("no offsetting (shared)", [int(r[2]) for r in weak]), ("offset 1 GiB per replica", [int(r[3]) for r in weak])],
    ["x" + r[1] for r in weak])
svg(out + "/strong_scaling.svg", "Strong scaling: matmul 256 CTAs as tasks", "SMs",
    [("task mode, dynamic", [int(r[2]) for r in strong])], [r[1] for r in strong])
print("\nplots: %s/weak_scaling.svg, %s/strong_scaling.svg" % (out, out))
PY
