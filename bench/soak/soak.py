#!/usr/bin/env python3
"""Soak test of `gpuvp serve`; started by bench/soak/run.sh MINUTES.

One served platform; CLIENTS client loops, each running the workload programs
(build/sw/workloads/bin/workload_NAME, nvcc -cudart shared, each checks its results against a CPU
reference and prints "PASS NAME: ..." and exits 0 only when they match) one after another with
gpuvp's libcudart.so.13; a killer that SIGKILLs the running program of one client at
pseudo-random moments (random.Random(seed): the kill times and the clients they hit are the same
on every run with the same seed; which program and how far into it the kill lands depends on how
fast the host runs); a sampler that reads the server's VmRSS, VmHWM, open descriptors
(/proc/PID/fd) and threads every second. After MINUTES the clients finish the program they run,
the platform is left to settle, one more program of every workload runs alone (the platform still
serves), the server is stopped with SIGTERM and its statistics file is read.

It fails (exit 1) when a program that was not killed failed its check, exited non-zero, or did not
finish within --program-timeout (a lost request: a command that never got its completion); when
the server died, logged a crash, did not stop or left its socket folder behind; when the server's
peak RSS (VmHWM) grew by more than --rss-growth-pct over the second half of the run; when its
descriptor or thread count did not come back to what it was before the first client; when its own
counters do not balance (peers connected = disconnected, channels opened = released, contexts
created = released, modules loaded = unloaded, device bytes mapped = unmapped, no ring faults);
or when no kill happened. docs/hardening.md ("Soak") has the details and measured figures.
"""

import argparse
import csv
import ctypes
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time

# Workloads of 0.01-2.3 s each alone on the timing model (V100 preset; 4 concurrent clients share the
# one simulation thread, so about four times that under the soak): device memory, module loads,
# many launches, shared and global atomics, device printf, the device heap, a kernel fault that the
# platform reports and survives, and long enough kernels that kills land mid-kernel.
# Override with --workloads.
DEFAULT_WORKLOADS = ["vector_add", "gemm", "histogram", "atomics", "bfs", "printf", "device_fault", "device_heap",
                     "kmeans", "transpose", "warp_reduce", "hotspot"]

CRASH_MARKERS = ("terminate called", "Assertion", "AddressSanitizer", "UndefinedBehaviorSanitizer",
                 "LeakSanitizer", "Segmentation fault", "Aborted", "core dumped", "runtime error:")

PR_SET_PDEATHSIG = 1


def die_with_parent():
    """preexec_fn: the server gets SIGKILL when the thread that started it (the main thread) ends,
    so a soak killed by a test timeout leaves no platform behind."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:  # pragma: no cover - best effort
        pass


class Program:
    """One run of one workload program by one client."""

    def __init__(self, client, seq, workload):
        self.client = client
        self.seq = seq
        self.workload = workload
        self.pid = None
        self.start = None        # seconds since the loops started
        self.end = None
        self.rc = None
        self.kill_sent = False   # the soak sent SIGKILL
        self.kill_after = None   # seconds into the program
        self.hung = False
        self.status = None       # ok, killed, failed, hung, spawn-error
        self.detail = ""

    def classify(self, out, err):
        if self.kill_sent and self.rc == -signal.SIGKILL:
            self.status = "killed"
        elif self.hung:
            self.status = "hung"
            self.detail = "no exit within the program timeout"
        elif self.rc == 0 and ("PASS %s:" % self.workload) in out and "FAIL " not in out:
            self.status = "ok"
        else:
            self.status = "failed"
            if self.rc is not None and self.rc < 0:
                self.detail = "killed by signal %d (not by the soak)" % -self.rc
            elif self.rc != 0:
                self.detail = "exit %d" % self.rc
            else:
                self.detail = "exit 0 without a PASS line"
            lines = [l for l in (out + err).splitlines() if l.strip()]
            if lines:
                self.detail += ": " + lines[-1][:200]


class Soak:
    def __init__(self, args):
        self.args = args
        self.build = args.build_dir
        self.gpuvp = os.path.join(self.build, "gpuvp")
        self.cudart_dir = os.path.join(self.build, "lib")
        self.bin_dir = os.path.join(self.build, "sw", "workloads", "bin")
        self.out = args.out
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.current = [None] * args.clients      # (Popen, Program) of what each client runs now
        self.programs = []                        # every Program of the loops
        self.final_programs = []
        self.kills = []                           # the kill schedule as it happened
        self.samples = []                         # (t, rss KiB, hwm KiB, fds, threads, running, done)
        self.failures = []                        # reasons the soak fails
        self.reported = 0                         # failed programs logged while the loops ran
        self.server = None
        self.server_died_at = None
        self.t0 = None
        self.deadline = None
        self.env = None

    # ------------------------------------------------------------------ helpers

    def now(self):
        return time.monotonic() - self.t0 if self.t0 is not None else 0.0

    def log(self, text):
        print("soak: " + text, flush=True)

    def fail(self, reason):
        with self.lock:
            self.failures.append(reason)

    def read_proc(self):
        """(rss KiB, hwm KiB, fds, threads) of the server, or None when it is gone."""
        pid = self.server.pid
        try:
            fields = {}
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    key, _, value = line.partition(":")
                    fields[key] = value.strip()
            if fields.get("State", "").startswith("Z"):
                return None
            fds = len(os.listdir("/proc/%d/fd" % pid))
            return (int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0]), fds, int(fields["Threads"]))
        except (OSError, KeyError, ValueError, IndexError):
            return None

    def sample(self):
        proc = self.read_proc()
        if proc is None:
            return None
        with self.lock:
            running = sum(1 for c in self.current if c is not None)
            done = sum(1 for p in self.programs if p.status is not None)
        row = (round(self.now(), 1),) + proc + (running, done)
        with self.lock:
            self.samples.append(row)
        return row

    def run_program(self, client, seq, workload, timeout, record_current):
        """Runs one workload program against the server; returns its Program, classified."""
        program = Program(client, seq, workload)
        program.start = self.now()
        try:
            proc = subprocess.Popen([os.path.join(self.bin_dir, "workload_" + workload)], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, text=True,
                                    errors="replace")
        except OSError as e:
            program.status, program.detail = "spawn-error", str(e)
            program.end = self.now()
            return program
        program.pid = proc.pid
        if record_current:
            with self.lock:
                self.current[client] = (proc, program)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            program.hung = True
            proc.kill()
            out, err = proc.communicate()
        if record_current:
            with self.lock:
                self.current[client] = None
        program.end = self.now()
        program.rc = proc.returncode
        program.classify(out, err)
        if program.status not in ("ok", "killed"):
            name = "failure-client%d-%04d-%s.txt" % (client, seq, workload)
            with open(os.path.join(self.out, name), "w") as f:
                f.write("%s: %s\n--- stdout\n%s--- stderr\n%s" % (workload, program.detail, out, err))
            program.detail += " (output in %s)" % name
        return program

    # ------------------------------------------------------------------ threads

    def client_loop(self, client):
        workloads = self.args.workloads
        offset = client * max(1, len(workloads) // self.args.clients)
        seq = 0
        while not self.stop.is_set() and time.monotonic() < self.deadline and self.server.poll() is None:
            workload = workloads[(seq + offset) % len(workloads)]
            program = self.run_program(client, seq, workload, self.args.program_timeout, True)
            with self.lock:
                self.programs.append(program)
            if program.status not in ("ok", "killed"):
                with self.lock:
                    self.reported += 1
                    report = self.reported <= 10 and not self.stop.is_set()
                if report:
                    self.log("client %d: %s %s at %.1f s: %s" % (client, workload, program.status, program.end,
                                                                 program.detail))
            seq += 1

    def killer(self):
        rng = random.Random(self.args.seed)
        lo, hi = self.args.kill_every
        scheduled = 0.0
        while True:
            scheduled += rng.uniform(lo, hi)
            target = rng.randrange(self.args.clients)
            wait = self.t0 + scheduled - time.monotonic()
            if self.t0 + scheduled >= self.deadline or (wait > 0 and self.stop.wait(wait)) or self.stop.is_set():
                return
            # The client may be between two programs (a few ms): wait up to a second for the next.
            entry = {"scheduled": round(scheduled, 2), "client": target}
            give_up = time.monotonic() + 1.0
            while True:
                with self.lock:
                    current = self.current[target]
                    if current is not None and current[0].poll() is None:
                        proc, program = current
                        program.kill_sent = True
                        program.kill_after = round(self.now() - program.start, 2)
                        proc.send_signal(signal.SIGKILL)
                        entry.update(at=round(self.now(), 2), pid=proc.pid, workload=program.workload,
                                     into=program.kill_after)
                        break
                if time.monotonic() >= give_up or self.stop.is_set():
                    entry.update(at=round(self.now(), 2), pid=None, workload="", into=None)
                    break
                time.sleep(0.01)
            with self.lock:
                self.kills.append(entry)

    def sampler(self):
        while not self.stop.wait(self.args.sample_every):
            if self.sample() is None and self.server.poll() is not None:
                self.server_died_at = self.now()
                self.fail("the server died at %.1f s (exit %s)" % (self.now(), self.server.returncode))
                self.stop.set()
                return

    # ------------------------------------------------------------------ phases

    def preflight(self):
        missing = [p for p in (self.gpuvp, os.path.join(self.cudart_dir, "libcudart.so.13")) if not os.path.exists(p)]
        if missing:
            print("soak: error: not built: %s (build with scripts/build.sh)" % ", ".join(missing), file=sys.stderr)
            sys.exit(1)
        programs = [os.path.join(self.bin_dir, "workload_" + w) for w in self.args.workloads]
        missing = [p for p in programs if not os.access(p, os.X_OK)]
        if len(missing) == len(programs):
            print("soak: error: the CUDA workload programs are not built (scripts/build.sh builds them "
                  "with nvcc): no %s" % missing[0], file=sys.stderr)
            sys.exit(1)
        if missing:
            print("soak: error: no such workload program: %s" % ", ".join(missing), file=sys.stderr)
            sys.exit(2)

    def start_server(self):
        command = [self.gpuvp, "serve", "--stats", os.path.join(self.out, "serve-stats.json")]
        if self.args.model == "functional":
            command += ["--set", "sim.kernel_model=functional"]
        for s in self.args.set:
            command += ["--set", s]
        self.server_log = os.path.join(self.out, "serve.log")
        self.server_err = os.path.join(self.out, "serve.err")
        with open(self.server_log, "w") as out, open(self.server_err, "w") as err:
            self.server = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                           preexec_fn=die_with_parent)
        self.log("server: %s (pid %d)" % (" ".join(command), self.server.pid))
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up:
            with open(self.server_log) as f:
                for line in f:
                    if line.startswith("export GPUVP_SOCKET="):
                        return line.strip().split("=", 1)[1]
            if self.server.poll() is not None:
                break
            time.sleep(0.1)
        self.fail("the server did not print its socket (exit %s); see %s" % (self.server.poll(), self.server_err))
        return None

    def settle(self, baseline_fds, limit_s=15.0):
        """Waits until the server's descriptors are back to the baseline (it handles disconnections
        on its I/O thread) or limit_s passes; returns the last sample."""
        give_up = time.monotonic() + limit_s
        row = self.sample()
        while row is not None and row[3] != baseline_fds and time.monotonic() < give_up:
            time.sleep(0.25)
            row = self.sample()
        return row

    def stop_server(self):
        if self.server is not None and self.server.poll() is not None and self.server_died_at is None:
            self.server_died_at = self.now()
            self.fail("the server died (exit %s)" % self.server.returncode)
        if self.server is None or self.server.poll() is not None:
            return self.server.returncode if self.server is not None else None
        self.server.send_signal(signal.SIGTERM)
        try:
            return self.server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.fail("the server did not stop within 60 s of SIGTERM")
            self.server.kill()
            self.server.wait()
            return None

    def cleanup(self):
        self.stop.set()
        with self.lock:
            for current in self.current:
                if current is not None and current[0].poll() is None:
                    current[0].kill()
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
                # A killed server cannot remove its socket folder.
                socket_dir = os.path.dirname(getattr(self, "socket", "") or "")
                if socket_dir.startswith("/") and os.path.basename(socket_dir).startswith("gpuvp-"):
                    subprocess.run(["rm", "-rf", "--", socket_dir], check=False)

    def run(self):
        args = self.args
        self.preflight()
        os.makedirs(self.out, exist_ok=True)
        for name in os.listdir(self.out):
            if name.startswith("failure-") or name in ("serve-stats.json", "samples.csv", "programs.csv", "kills.csv"):
                os.remove(os.path.join(self.out, name))
        model = "functional model (sim.kernel_model=functional)" if args.model == "functional" else "timing model (v100)"
        self.log("%g min, %d clients, seed %d, one client killed every %g-%g s, %s; workloads %s; output in %s" %
                 (args.minutes, args.clients, args.seed, args.kill_every[0], args.kill_every[1], model,
                  " ".join(args.workloads), self.out))

        socket = self.start_server()
        if socket is None:
            return self.report(None, None)
        self.env = dict(os.environ)
        self.env["GPUVP_SOCKET"] = socket
        self.socket = socket
        self.env["LD_LIBRARY_PATH"] = self.cudart_dir + (
            ":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
        self.env.pop("GPUVP_VERBOSE", None)

        # Baseline: the idle server before its first client.
        time.sleep(1.0)
        self.t0 = time.monotonic()
        baseline = self.sample()
        if baseline is None:
            self.fail("the server is not running before the first client")
            return self.report(None, None)
        self.t0 = time.monotonic()
        with self.lock:
            self.samples = [(0.0,) + baseline[1:]]
        self.deadline = self.t0 + args.minutes * 60.0

        threads = [threading.Thread(target=self.sampler, name="sampler", daemon=True),
                   threading.Thread(target=self.killer, name="killer", daemon=True)]
        threads += [threading.Thread(target=self.client_loop, args=(c,), name="client%d" % c, daemon=True)
                    for c in range(args.clients)]
        for t in threads:
            t.start()
        # The clients stop starting programs at the deadline and finish the one they run (each is
        # bounded by the program timeout, so this wait is too).
        hard_stop = self.deadline + args.program_timeout + 30
        for t in threads[2:]:
            t.join(max(0.0, hard_stop - time.monotonic()))
        if any(t.is_alive() for t in threads[2:]):
            self.fail("the client loops did not end within the program timeout after the deadline")
            self.cleanup()
            return self.report(baseline, None)
        loops_end = self.now()
        self.stop.set()
        threads[1].join(5)
        threads[0].join(args.sample_every + 5)
        self.stop.clear()

        after_loops = None
        after_final = None
        if self.server.poll() is None:
            after_loops = self.settle(baseline[3])
            # Still serving: one more program of every workload, alone.
            for i, workload in enumerate(args.workloads):
                program = self.run_program(-1, i, workload, args.program_timeout, False)
                self.final_programs.append(program)
                self.log("final %s: %s%s" % (workload, program.status, ": " + program.detail if program.detail else ""))
            after_final = self.settle(baseline[3])
        self.loops_end = loops_end
        self.server_rc = self.stop_server()
        return self.report(baseline, (after_loops, after_final))

    # ------------------------------------------------------------------ report

    def write_csv(self):
        with open(os.path.join(self.out, "samples.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["t_s", "rss_kib", "hwm_kib", "fds", "threads", "clients_running", "programs_done"])
            w.writerows(self.samples)
        with open(os.path.join(self.out, "programs.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["client", "seq", "workload", "pid", "start_s", "end_s", "exit", "status", "killed_after_s", "detail"])
            for p in self.programs + self.final_programs:
                w.writerow([p.client, p.seq, p.workload, p.pid, "%.2f" % (p.start or 0), "%.2f" % (p.end or 0), p.rc,
                            p.status, p.kill_after if p.kill_after is not None else "", p.detail])
        with open(os.path.join(self.out, "kills.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["scheduled_s", "client", "at_s", "pid", "workload", "into_program_s"])
            for k in self.kills:
                w.writerow([k["scheduled"], k["client"], k.get("at"), k.get("pid") or "", k.get("workload", ""),
                            k.get("into") if k.get("into") is not None else ""])

    def curve(self, loop_samples):
        rows = loop_samples
        limit = self.args.curve_rows
        if len(rows) > limit:
            step = (len(rows) - 1) / (limit - 1)
            rows = [rows[round(i * step)] for i in range(limit)]
        lines = ["     t(s)  RSS(MiB)  peak(MiB)  fds  threads  running  programs done"]
        for t, rss, hwm, fds, threads, running, done in rows:
            lines.append("  %7.1f  %8.1f  %9.1f  %3d  %7d  %7d  %13d" % (t, rss / 1024.0, hwm / 1024.0, fds, threads,
                                                                        running, done))
        return "\n".join(lines)

    def rss_check(self, loop_samples, loops_end):
        """Flat: the server's peak RSS (VmHWM, which also counts the peaks between two samples) grew by
        at most --rss-growth-pct over the second half of the loops. The first half is the warm-up and
        the reference: the RSS climbs while the client programs meet in new combinations (glibc keeps
        freed memory for reuse), then stays under the peak they reach; a leak keeps raising it."""
        mid = [s for s in loop_samples if s[0] <= loops_end / 2]
        second = [s for s in loop_samples if s[0] >= loops_end / 2]
        if len(mid) < 2 or len(second) < 2:
            return None
        hwm_mid, hwm_end = mid[-1][2], loop_samples[-1][2]
        growth = 100.0 * (hwm_end - hwm_mid) / hwm_mid
        # For the record: the sampled RSS's range and least-squares slope over the second half.
        ts = [s[0] for s in second]
        rs = [s[1] / 1024.0 for s in second]
        mt, mr = statistics.fmean(ts), statistics.fmean(rs)
        var = sum((t - mt) ** 2 for t in ts)
        slope = 60.0 * sum((t - mt) * (r - mr) for t, r in zip(ts, rs)) / var if var > 0 else 0.0
        return hwm_mid, hwm_end, growth, min(rs), max(rs), slope

    def report(self, baseline, after):
        args = self.args
        self.write_csv()
        loops_end = getattr(self, "loops_end", self.now())
        progs = self.programs
        count = lambda status: sum(1 for p in progs if p.status == status)
        ok, killed, failed, hung = count("ok"), count("killed"), count("failed"), count("hung")
        spawn_errors = count("spawn-error")
        completed = ok + failed
        print()
        self.log("programs: %d started, %d completed (%d correct, %d failed), %d hung, %d killed by the soak%s" %
                 (len(progs), completed, ok, failed, hung, killed,
                  ", %d could not be started" % spawn_errors if spawn_errors else ""))
        for w in args.workloads:
            mine = [p for p in progs if p.workload == w]
            done = [p.end - p.start for p in mine if p.status == "ok"]
            self.log("  %-14s %4d correct, %3d killed, %d failed/hung; mean %.1f s when completed" %
                     (w, sum(1 for p in mine if p.status == "ok"), sum(1 for p in mine if p.status == "killed"),
                      sum(1 for p in mine if p.status in ("failed", "hung", "spawn-error")),
                      statistics.fmean(done) if done else 0.0))
        sent = [k for k in self.kills if k.get("pid")]
        self.log("kills: %d scheduled by seed %d, %d sent (%d landed in a running program: exit by SIGKILL), "
                 "%d found the client between programs" %
                 (len(self.kills), args.seed, len(sent), killed, len(self.kills) - len(sent)))
        if sent:
            intos = sorted(k["into"] for k in sent)
            self.log("  kills landed %.2f-%.2f s into a program (median %.2f s)" %
                     (intos[0], intos[-1], statistics.median(intos)))
        bad = [p for p in progs if p.status in ("failed", "hung", "spawn-error")]
        for p in bad[:5]:
            self.fail("client %d program %d (%s) %s at %.1f s: %s" % (p.client, p.seq, p.workload, p.status, p.end,
                                                                     p.detail))
        if len(bad) > 5:
            self.fail("... and %d more programs failed or hung (%s)" % (len(bad) - 5, os.path.join(self.out, "programs.csv")))
        if args.minutes * 60 >= 2 * args.kill_every[1] and not sent and not self.failures:
            self.fail("no client was killed")
        if baseline is not None and len(progs) and completed == 0:
            self.fail("no program completed")

        # Server: RSS, descriptors, threads.
        loop_samples = [s for s in self.samples if s[0] <= loops_end + 1e-9]
        if baseline is not None and loop_samples:
            print()
            self.log("the server's RSS, open descriptors and threads (every %g s, %d samples, %s):" %
                     (args.sample_every, len(loop_samples), os.path.join(self.out, "samples.csv")))
            print(self.curve(loop_samples), flush=True)
            rss = self.rss_check(loop_samples, loops_end)
            if rss is None:
                self.log("RSS: too few samples to judge flatness (idle %.1f MiB, peak %.1f MiB)" %
                         (baseline[1] / 1024.0, loop_samples[-1][2] / 1024.0))
            else:
                hwm_mid, hwm_end, growth, low, high, slope = rss
                flat = growth <= args.rss_growth_pct
                self.log("RSS: idle %.1f MiB; peak (VmHWM) %.1f MiB at half time, %.1f MiB at the end: %+.1f %% "
                         "(limit %g %%) -> %s; second half: RSS %.1f-%.1f MiB, trend %+.2f MiB/min" %
                         (baseline[1] / 1024.0, hwm_mid / 1024.0, hwm_end / 1024.0, growth, args.rss_growth_pct,
                          "flat" if flat else "GROWING", low, high, slope))
                if not flat:
                    self.fail("the server's peak RSS grew %.1f %% over the second half (limit %g %%)" %
                              (growth, args.rss_growth_pct))
            max_fds = max(s[3] for s in loop_samples)
            max_threads = max(s[4] for s in loop_samples)
            after_loops, after_final = after if after is not None else (None, None)
            fmt = lambda row, i: str(row[i]) if row is not None else "?"
            self.log("descriptors: %d before the first client, at most %d during the loops, %s after the loops, "
                     "%s after the final programs" % (baseline[3], max_fds, fmt(after_loops, 3), fmt(after_final, 3)))
            self.log("threads: %d before the first client, at most %d during the loops, %s after the loops, "
                     "%s after the final programs" % (baseline[4], max_threads, fmt(after_loops, 4),
                                                      fmt(after_final, 4)))
            for label, row in (("after the loops", after_loops), ("after the final programs", after_final)):
                if row is None:
                    continue
                if row[3] != baseline[3]:
                    self.fail("the server holds %d descriptors %s, %d before the first client" %
                              (row[3], label, baseline[3]))
                if row[4] != baseline[4]:
                    self.fail("the server runs %d threads %s, %d before the first client" % (row[4], label, baseline[4]))

        # Still serving.
        for p in self.final_programs:
            if p.status != "ok":
                self.fail("final program %s after the loops: %s %s" % (p.workload, p.status, p.detail))
        if baseline is not None and not self.final_programs and self.server_died_at is None:
            self.fail("the final programs did not run")
        if self.final_programs and all(p.status == "ok" for p in self.final_programs):
            self.log("still serving: %d final programs (one per workload) after the loops, all correct" %
                     len(self.final_programs))

        # The server's own account: every connection ended, every channel and context released.
        server_rc = getattr(self, "server_rc", None)
        if self.server is not None:
            if self.server_died_at is not None:
                pass  # said already
            elif server_rc != 0:
                self.fail("the server exited with %s on SIGTERM" % server_rc)
            try:
                with open(self.server_err, errors="replace") as f:
                    err_lines = f.read().splitlines()
            except OSError:
                err_lines = []
            socket_dir = os.path.dirname(getattr(self, "socket", "") or "")
            if server_rc == 0 and socket_dir and os.path.exists(socket_dir):
                self.fail("the server left its socket folder %s behind" % socket_dir)
            crashes = [l for l in err_lines if any(m in l for m in CRASH_MARKERS)]
            if crashes:
                self.fail("the server's stderr reports a crash: %s" % crashes[0][:200])
            self.log("server: %s; %d lines on its stderr (%s)" %
                     ("died at %.1f s" % self.server_died_at if self.server_died_at is not None
                      else "exit %s on SIGTERM" % server_rc, len(err_lines), self.server_err))
            self.check_stats()

        print()
        argv = sys.argv[1:]
        if "--root" in argv:
            i = argv.index("--root")
            del argv[i:i + 2]
        if "--seed" not in argv:
            argv += ["--seed", str(args.seed)]
        self.log("seed %d; the same kill schedule again: bench/soak/run.sh %s" % (args.seed, " ".join(argv)))
        if self.failures:
            for reason in self.failures:
                self.log("FAIL: " + reason)
            self.log("FAILED (%d problems)" % len(self.failures))
            return 1
        self.log("PASSED")
        return 0

    def check_stats(self):
        path = os.path.join(self.out, "serve-stats.json")
        try:
            with open(path) as f:
                groups = json.load(f)["run"]["groups"]
        except (OSError, ValueError, KeyError) as e:
            self.fail("no statistics from the server (%s: %s)" % (path, e))
            return

        def counter(group, name):
            try:
                return int(groups[group]["counters"][name]["value"])
            except (KeyError, TypeError, ValueError):
                self.fail("the statistics have no %s.%s" % (group, name))
                return -1

        bridge = {n: counter("bridge", n) for n in (
            "peers_connected", "peers_disconnected", "channels_opened", "channels_released", "channels_abandoned",
            "commands", "completions", "errors", "ring_faults")}
        cp = {n: counter("gpu.command_processor", n) for n in (
            "contexts_created", "contexts_released", "kernels_launched", "kernels_cancelled", "kernel_faults",
            "modules_loaded", "modules_unloaded", "bytes_mapped", "bytes_unmapped")}
        started = len(self.programs) + len(self.final_programs)
        completed = sum(1 for p in self.programs + self.final_programs if p.status in ("ok", "failed"))
        self.log("server statistics (%s):" % path)
        self.log("  peers connected %d, disconnected %d (%d programs started, %d completed)" %
                 (bridge["peers_connected"], bridge["peers_disconnected"], started, completed))
        self.log("  channels opened %d, released %d (abandoned %d); contexts created %d, released %d" %
                 (bridge["channels_opened"], bridge["channels_released"], bridge["channels_abandoned"],
                  cp["contexts_created"], cp["contexts_released"]))
        self.log("  modules loaded %d, unloaded %d; device memory mapped %d B, unmapped %d B" %
                 (cp["modules_loaded"], cp["modules_unloaded"], cp["bytes_mapped"], cp["bytes_unmapped"]))
        self.log("  kernels launched %d, cancelled (program killed mid-kernel) %d, faulted %d" %
                 (cp["kernels_launched"], cp["kernels_cancelled"], cp["kernel_faults"]))
        self.log("  commands fetched %d, completions posted %d (%d not completed: commands of killed programs), "
                 "error completions %d, ring faults %d" %
                 (bridge["commands"], bridge["completions"], bridge["commands"] - bridge["completions"],
                  bridge["errors"], bridge["ring_faults"]))
        if bridge["peers_connected"] != bridge["peers_disconnected"]:
            self.fail("peers connected %d != disconnected %d" % (bridge["peers_connected"], bridge["peers_disconnected"]))
        if not completed <= bridge["peers_connected"] <= started:
            self.fail("peers connected %d is not between the programs completed (%d) and started (%d)" %
                      (bridge["peers_connected"], completed, started))
        if bridge["channels_opened"] != bridge["channels_released"]:
            self.fail("channels opened %d != released %d" % (bridge["channels_opened"], bridge["channels_released"]))
        if cp["contexts_created"] != cp["contexts_released"]:
            self.fail("contexts created %d != released %d" % (cp["contexts_created"], cp["contexts_released"]))
        if cp["modules_loaded"] != cp["modules_unloaded"]:
            self.fail("modules loaded %d != unloaded %d" % (cp["modules_loaded"], cp["modules_unloaded"]))
        if cp["bytes_mapped"] != cp["bytes_unmapped"]:
            self.fail("device memory mapped %d B != unmapped %d B" % (cp["bytes_mapped"], cp["bytes_unmapped"]))
        if bridge["ring_faults"] != 0:
            self.fail("%d ring faults" % bridge["ring_faults"])
        if bridge["completions"] > bridge["commands"]:
            self.fail("more completions (%d) than commands (%d)" % (bridge["completions"], bridge["commands"]))


def main():
    parser = argparse.ArgumentParser(prog="bench/soak/run.sh", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("minutes", type=float, help="how long the clients loop (fractions allowed)")
    parser.add_argument("--root", required=True, help=argparse.SUPPRESS)
    parser.add_argument("--build-dir", help="the build folder (default: $GPUVP_BUILD_DIR or build/)")
    parser.add_argument("--out", help="where the logs, CSVs and statistics go (default: BUILD/soak)")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", "1")),
                        help="seed of the kill schedule (default 1, or $SOAK_SEED)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent client loops (default 4)")
    parser.add_argument("--kill-every", type=float, nargs=2, default=[2.0, 6.0], metavar=("MIN", "MAX"),
                        help="seconds between two kills, uniform in [MIN, MAX] (default 2 6)")
    parser.add_argument("--sample-every", type=float, default=1.0, help="seconds between samples (default 1)")
    parser.add_argument("--model", choices=["timing", "functional"], default="timing",
                        help="kernel model of the served platform (default timing, as gpuvp serve)")
    parser.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE",
                        help="a configuration override for gpuvp serve (repeatable)")
    parser.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                        help="comma-separated workload names (default %(default)s)")
    parser.add_argument("--program-timeout", type=float, default=120.0,
                        help="seconds a program may take before it counts as hung (default 120)")
    parser.add_argument("--rss-growth-pct", type=float,
                        help="largest allowed growth of the server's peak RSS over the second half (default 10; 50 "
                             "for runs under 5 minutes, whose RSS is still climbing to its plateau)")
    parser.add_argument("--time-limit", type=float,
                        help="seconds after which the whole soak stops and fails (default: MINUTES plus 5 min)")
    parser.add_argument("--curve-rows", type=int, default=16, help="rows of the printed curve (default 16)")
    args = parser.parse_args()
    if args.minutes <= 0 or args.clients < 1 or args.kill_every[0] <= 0 or args.kill_every[1] < args.kill_every[0]:
        parser.error("MINUTES and the kill interval must be positive, CLIENTS at least 1")
    args.workloads = [w for w in args.workloads.split(",") if w]
    if not args.workloads:
        parser.error("no workloads")
    build = args.build_dir or os.environ.get("GPUVP_BUILD_DIR") or os.path.join(args.root, "build")
    args.build_dir = os.path.abspath(build)
    args.out = os.path.abspath(args.out or os.path.join(args.build_dir, "soak"))

    if args.rss_growth_pct is None:
        args.rss_growth_pct = 10.0 if args.minutes >= 5 else 50.0
    if args.time_limit is None:
        args.time_limit = args.minutes * 60 + 300

    soak = Soak(args)

    def on_signal(number, _frame):
        raise KeyboardInterrupt(number)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.setitimer(signal.ITIMER_REAL, args.time_limit)
    try:
        rc = soak.run()
    except KeyboardInterrupt as e:
        why = ("its time limit of %g s passed" % args.time_limit if e.args and e.args[0] == signal.SIGALRM
               else "interrupted")
        print("soak: FAILED: %s; stopping the clients and the server (logs in %s)" % (why, args.out),
              file=sys.stderr, flush=True)
        soak.cleanup()
        try:
            soak.write_csv()
        except OSError:
            pass
        rc = 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        soak.cleanup()
    sys.exit(rc)


if __name__ == "__main__":
    main()
