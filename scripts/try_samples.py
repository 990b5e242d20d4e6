#!/usr/bin/env python3
"""Builds and runs the public CUDA sample collection on gpuvp and prints the README's table.

Usage:
  scripts/try_samples.py --tree DIR [--gpuvp build/gpuvp] [--out DIR] [--timeout 300]
                         [--functional-timeout SECONDS] [--jobs 2] [--only NAME,...]
                         [--classify-only]

DIR holds the collection's Samples/ and Common/ (extract them from a checkout, e.g.
`git archive HEAD Samples Common | tar -x -C DIR`). Every sample under Samples/0_* .. 6_* and
8_Platform_Specific is classified from its CMakeLists.txt and sources: graphics interop, a math
library, several GPUs, the driver API / NVRTC, other host libraries, or runtime-only. Each
runtime-only sample is built unmodified with `nvcc -cudart shared` for sm_75 (SASS and PTX; with
`-rdc=true -lcudadevrt` where its CMake asks for separable compilation), run under
`gpuvp run` from its own folder (so its data/ is found) with a timeout, and judged by its exit
code and output: passes its own check, runs without a self-check, waived by the sample, fails
(first error line) or timed out. A few samples are run shrunk (SHRUNK below: the arguments and
why). Logs go to OUT/NAME.log; OUT/results.tsv has one line per sample.

Nothing in the build or the tests depends on this script; it regenerates the README's
"Public CUDA samples" table.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

CATEGORIES = ["0_Introduction", "1_Utilities", "2_Concepts_and_Techniques", "3_CUDA_Features",
              "4_CUDA_Libraries", "5_Domain_Specific", "6_Performance"]

# Samples whose default problem is hours of simulation: the arguments they are run with.
SHRUNK = {
    "reductionMultiBlockCG": ["-n=262144"],
}

# Samples that need a GPU other than the first (peer access, several devices): by name, since the
# test is in their logic (they waive with one GPU) rather than in what they link.
MULTI_GPU = {"simpleP2P", "p2pBandwidthLatencyTest", "conjugateGradientMultiDeviceCG",
             "streamOrderedAllocationP2P", "topologyQuery", "EGLStream_CUDA_CrossGPU",
             "simpleCUFFT_MGPU", "simpleCUFFT_2d_MGPU", "simpleCUBLASXT"}

# Samples calling a math library only for host-side tables: linked with it and tried.
HOST_TABLES_ONLY = {"MC_EstimatePiInlineQ": ("curand",)}
EXTRA_LIBS = {"MC_EstimatePiInlineQ": ["-lcurand"]}

MATH_LIBS = ("cublas", "cufft", "curand", "cusparse", "cusolver", "npp", "nvjpeg")
GRAPHICS = re.compile(r"OPENGL|GLUT|OpenGL::|GLFW|EGL|Vulkan|D3D1[12]|NvSci|nvsci|GLES|cudla")
GRAPHICS_SRC = re.compile(r"#\s*include\s*[<\"](GL/|GLES|EGL/|vulkan|d3d|nvscibuf|cudaEGL|"
                          r"cuda_gl_interop|cuda_egl_interop)")


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def sample_dirs(tree):
    for cat in CATEGORIES:
        base = os.path.join(tree, "Samples", cat)
        for name in sorted(os.listdir(base)):
            d = os.path.join(base, name)
            if os.path.isfile(os.path.join(d, "CMakeLists.txt")):
                yield cat, name, d
    tegra = os.path.join(tree, "Samples", "8_Platform_Specific", "Tegra")
    if os.path.isdir(tegra):
        for name in sorted(os.listdir(tegra)):
            d = os.path.join(tegra, name)
            if os.path.isfile(os.path.join(d, "CMakeLists.txt")):
                yield "8_Platform_Specific", name, d


def sources_text(d):
    text = []
    for root, _, files in os.walk(d):
        for f in sorted(files):
            if f.endswith((".cu", ".cuh", ".cpp", ".c", ".h", ".hpp")):
                text.append(read(os.path.join(root, f)))
    return "\n".join(text)


def api_prefix(lib):
    """The prefix of a math library's host API: CUDA::cufft_static -> cufft, CUDA::nppif -> npp."""
    for p in MATH_LIBS:
        if lib.startswith(p):
            return p
    return lib


def classify(cat, name, d):
    """Returns (kind, detail): kind 'runtime' for samples to build and run."""
    cmake = read(os.path.join(d, "CMakeLists.txt"))
    src = sources_text(d)
    libs = sorted(set(m.lower() for m in re.findall(r"CUDA::([A-Za-z_]+)", cmake)))
    if cat == "8_Platform_Specific":
        return "tegra", "Tegra only (cuDLA, NvSci, EGL, OpenGL ES)"
    if GRAPHICS.search(cmake) or GRAPHICS_SRC.search(src):
        return "graphics", "graphics interop"
    # A library linked but never called (conjugateGradientMultiBlockCG links cuBLAS) does not count;
    # one that only hands out host tables (curandGetDirectionVectors) is linked and tried.
    math = [l for l in libs if l.startswith(MATH_LIBS) and l not in HOST_TABLES_ONLY.get(name, ())
            and re.search(r"\b%s[A-Z]\w*\(" % api_prefix(l), src)]
    if math:
        return "mathlib", ", ".join(math)
    if name in MULTI_GPU:
        return "multigpu", "several GPUs / peer access"
    if "find_package(MPI" in cmake:
        return "otherlib", "MPI"
    if "cuda_driver" in libs or "nvrtc" in libs or "nvjitlink" in libs or "LLVM" in cmake:
        what = [l for l in libs if l in ("cuda_driver", "nvrtc", "nvjitlink")]
        return "driver", " + ".join(what) or "driver API"
    return "runtime", ""


def build_command(name, d, common, exe):
    cmake = read(os.path.join(d, "CMakeLists.txt"))
    m = re.search(r"add_executable\(\s*%s\s+([^)]*)\)" % re.escape(name), cmake)
    if m:
        srcs = [s for s in m.group(1).split() if not s.startswith("$")]
    else:
        srcs = sorted(f for f in os.listdir(d) if f.endswith((".cu", ".cpp")))
    cmd = ["nvcc", "-cudart", "shared", "-std=c++17", "-O2",
           "-gencode", "arch=compute_75,code=[sm_75,compute_75]",
           "-Wno-deprecated-gpu-targets", "-I", common, "-I", d]
    for sub in ("inc", "src", "include"):
        if os.path.isdir(os.path.join(d, sub)):
            cmd += ["-I", os.path.join(d, sub)]
    if "--extended-lambda" in cmake:
        cmd.append("--extended-lambda")
    if re.search(r"CUDA_SEPARABLE_COMPILATION\s+ON", cmake):
        cmd += ["-rdc=true", "-lcudadevrt"]
    if "OpenMP" in cmake:
        cmd += ["-Xcompiler", "-fopenmp"]
    cmd += [os.path.normpath(os.path.join(d, s)) for s in srcs]
    cmd += EXTRA_LIBS.get(name, []) + ["-o", exe]
    return cmd


# Samples that check their result and print only a failure, then exit 0 either way: (the line
# showing the check ran, the failure line).
PRINTED_CHECK = {name: (re.compile(r"^\s*(Relative error:|Spot\s+\|)", re.MULTILINE),
                        re.compile(r"does not match expected result"))
                 for name in ("MC_EstimatePiInlineP", "MC_EstimatePiInlineQ", "MC_SingleAsianOptionP")}

PASS = re.compile(r"passed|result = pass|\bPASS\b|returned OK|Compare OK|Test Successful|Test success|"
                  r"^\s*OK\s*$|^Success$|0 Failures", re.IGNORECASE | re.MULTILINE)
# A sample whose exit code is its check: exit(ok ? EXIT_SUCCESS : EXIT_FAILURE) and the like.
EXIT_CHECK = re.compile(r"\?\s*EXIT_SUCCESS\s*:\s*EXIT_FAILURE|\?\s*EXIT_FAILURE\s*:\s*EXIT_SUCCESS")
FAIL = re.compile(r"FAIL|mismatch|incorrect|error", re.IGNORECASE)


def first_error(text):
    for line in text.splitlines():
        if re.search(r"error|fail|fault|abort|unsupported|not supported|Segmentation", line,
                     re.IGNORECASE) and "warning" not in line:
            return line.strip()[:200]
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip()[:200] if lines else ""


def from_log(args, name, d):
    """Judges a sample again from the log of an earlier run (--from-logs)."""
    result = judge_log(read(os.path.join(args.out, name + ".log")), d)
    functional = os.path.join(args.out, name + ".log.functional")
    if result[0] == "timeout" and os.path.exists(functional):
        again = judge_log(read(functional), d)
        return (again[0] + "-functional",) + again[1:]
    return result


def judge_log(log, d):
    m = re.search(r"^rc=(-?\d+) seconds=(\d+)$", log, re.MULTILINE)
    if not m:
        if log:
            return "build", first_error(log), 0.0
        return "notrun", "", 0.0
    stdout = log.split("--- stdout\n", 1)[1].split("\n--- stderr\n", 1)[0]
    text = log.split("--- stdout\n", 1)[1]
    return judge(d, int(m.group(1)), stdout, text, float(m.group(2)))


def run_one(args, cat, name, d):
    out = os.path.abspath(args.out)
    exe = os.path.join(out, "bin", name)
    log = os.path.join(out, name + ".log")
    cmd = build_command(name, d, os.path.join(args.tree, "Common"), exe)
    srcs_mtime = max(os.path.getmtime(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)
    if os.path.exists(exe) and os.path.getmtime(exe) > srcs_mtime:
        b = subprocess.CompletedProcess(cmd, 0, "", "")  # built by an earlier run
    else:
        b = subprocess.run(["nice", "-n", "10"] + cmd, capture_output=True, text=True)
    if b.returncode != 0:
        with open(log, "w") as f:
            f.write(" ".join(cmd) + "\n" + b.stdout + b.stderr)
        return "build", first_error(b.stdout + b.stderr), 0.0
    while args.wait_file and not os.path.exists(args.wait_file):
        time.sleep(5)
    result = run_and_judge(args, name, d, cmd, exe, log, args.gpuvp_args, args.timeout)
    if result[0] == "timeout" and args.functional_timeout > 0:
        # Too slow for the timing model within the limit: the program's own check on the
        # functional model (same PTX semantics, no timing) says whether it runs correctly.
        functional = run_and_judge(args, name, d, cmd, exe, log + ".functional",
                                   args.gpuvp_args + ["--set", "sim.kernel_model=functional"],
                                   args.functional_timeout)
        return (functional[0] + "-functional",) + functional[1:]
    return result


def run_and_judge(args, name, d, cmd, exe, log, gpuvp_args, timeout):
    run = ["timeout", "-k", "10", str(timeout), "nice", "-n", "10",
           os.path.abspath(args.gpuvp), "run"] + gpuvp_args + ["--", exe] + SHRUNK.get(name, [])
    t0 = time.time()
    p = subprocess.run(run, cwd=d, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       errors="replace")
    secs = time.time() - t0
    text = p.stdout + "\n" + p.stderr
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + " ".join(run) + "\nrc=%d seconds=%.0f\n" % (p.returncode, secs))
        f.write("--- stdout\n" + p.stdout + "\n--- stderr\n" + p.stderr)
    return judge(d, p.returncode, p.stdout, text, secs)


def judge(d, rc, prog_out, text, secs):
    if rc in (124, 137, -9):  # timeout, or killed after its grace period
        return "timeout", "", secs
    if rc == 2:  # EXIT_WAIVED of the samples' helpers
        return "waived", first_waive(text), secs
    if rc != 0:
        return "fail", first_error(text), secs
    # A kernel that faulted fails the run, whatever the program printed after it.
    faulted = re.search(r"^gpuvp: kernel .* faulted: .*$", text, re.MULTILINE)
    if faulted:
        return "fail", faulted.group(0)[:200], secs
    if re.search(r"FAIL|Test failed", prog_out):
        return "fail", first_error(prog_out), secs
    printed = PRINTED_CHECK.get(os.path.basename(d))
    if printed:
        if printed[1].search(prog_out):
            return "fail", first_error(prog_out), secs
        if printed[0].search(prog_out):
            return "pass", "printed check", secs
    if PASS.search(prog_out):
        return "pass", "", secs
    if EXIT_CHECK.search(sources_text(d)):
        return "pass", "exit code", secs
    return "nocheck", "", secs


def first_waive(text):
    for line in text.splitlines():
        if re.search(r"waiv|requires|need", line, re.IGNORECASE):
            return line.strip()[:200]
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tree", required=True, help="folder holding Samples/ and Common/")
    ap.add_argument("--gpuvp", default="build/gpuvp")
    ap.add_argument("--out", default="/tmp/gpuvp-samples")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated sample names")
    ap.add_argument("--wait-file", default="", help="build first, run once this file exists")
    ap.add_argument("--from-logs", action="store_true", help="judge the logs of an earlier run again")
    ap.add_argument("--classify-only", action="store_true")
    ap.add_argument("--gpuvp-args", default="", help="extra arguments to `gpuvp run`")
    ap.add_argument("--functional-timeout", type=int, default=0,
                    help="seconds: a sample that times out on the timing model runs again on the "
                         "functional model with this limit (its result is marked -functional)")
    args = ap.parse_args()
    args.tree = os.path.abspath(args.tree)
    args.gpuvp_args = args.gpuvp_args.split()
    os.makedirs(os.path.join(args.out, "bin"), exist_ok=True)
    only = set(filter(None, args.only.split(",")))

    samples = []
    for cat, name, d in sample_dirs(args.tree):
        if only and name not in only:
            continue
        kind, detail = classify(cat, name, d)
        samples.append((cat, name, d, kind, detail))

    results = {}
    todo = [s for s in samples if s[3] == "runtime"] if not args.classify_only else []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        worker = (lambda a, c, n, d: from_log(a, n, d)) if args.from_logs else run_one
        futs = {pool.submit(worker, args, s[0], s[1], s[2]): s for s in todo}
        for fut in concurrent.futures.as_completed(futs):
            s = futs[fut]
            res = fut.result()
            results[s[1]] = res
            print("%-32s %-8s %5.0fs %s" % (s[1], res[0], res[2], res[1]), file=sys.stderr,
                  flush=True)

    with open(os.path.join(args.out, "results.tsv"), "w") as f:
        for cat, name, d, kind, detail in samples:
            res = results.get(name, (kind, detail, 0.0))
            f.write("%s\t%s\t%s\t%s\t%.0f\n" % (cat, name, res[0], res[1] or detail, res[2]))
    order = ["pass", "nocheck", "waived", "fail", "build", "pass-functional", "nocheck-functional",
             "waived-functional", "fail-functional", "timeout-functional", "timeout", "notrun",
             "graphics", "mathlib", "multigpu", "driver", "otherlib", "tegra", "runtime"]
    by = {}
    for cat, name, d, kind, detail in samples:
        res = results.get(name, (kind, detail, 0.0))
        by.setdefault(res[0], []).append((name, res[1] or detail))
    print("| result | count | samples |\n|---|---|---|")
    for k in order:
        if k in by:
            items = ", ".join(n + (" (%s)" % r if r and k not in ("nocheck",) else "")
                              for n, r in by[k])
            print("| %s | %d | %s |" % (k, len(by[k]), items))


if __name__ == "__main__":
    main()
