#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Kernel run time of vitalsd's BPF programs per run of a command.

bench/bpfcost.py [-c CONFIG] [-n RUNS] [-r ROUNDS] [--settle S] -- CMD [ARG...]

Runs CMD RUNS times under vitalsd (default config), under bench/floor
(empty programs on the same tracepoints) and under no monitor, ROUNDS
times each in turn, and prints from the kernel's BPF run-time stats
(kernel.bpf_stats_enabled, on only while CMD runs) each program's runs and
nanoseconds per run of CMD, vitalsd's and the floor's totals, and both
against the CPU time CMD takes unmonitored.  The stats' own two clock
reads per program run (~30 ns here) are in both totals, so their
difference is what vitalsd's programs do beyond an empty one.  Wall-time
rows (bench/overhead) drift more than this between rounds on a shared
machine; this measures only the programs' own time, not what they cost
the command through the caches they evict.  Needs root and bpftool.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.environ.get("top_builddir") or os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))
SRC = os.environ.get("top_srcdir") or TOP


def die(msg, code=1):
    sys.stderr.write("bpfcost: %s\n" % msg)
    sys.exit(code)


def progs():
    """Every loaded BPF program: id -> (name, run_cnt, run_time_ns)."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"], check=True,
                         capture_output=True, text=True).stdout
    return dict((p["id"], (p.get("name", "?"), p.get("run_cnt", 0),
                           p.get("run_time_ns", 0)))
                for p in json.loads(out or "[]"))


STATS = "/proc/sys/kernel/bpf_stats_enabled"


def stats(value):
    """Set the sysctl; return what it was."""
    with open(STATS) as f:
        old = f.read().strip()
    with open(STATS, "w") as f:
        f.write(value + "\n")
    return old


def run_cmd(cmd, runs):
    """CPU seconds of the children (user + system) for runs of cmd."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
            die("%s failed" % " ".join(cmd))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def start(mon, conf, tmp):
    """Start a monitor; wait until its programs are attached."""
    log = open(os.path.join(tmp, mon + ".log"), "w+")
    if mon == "vitalsd":
        argv = [os.path.join(TOP, "core", "vitalsd"), "-c", conf]
        ready = "started"
    else:
        argv = [os.path.join(TOP, "bench", "floor")]
        ready = "attached"
    p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        log.seek(0)
        if ready in log.read():
            return p, log
        if p.poll() is not None:
            break
        time.sleep(0.1)
    log.seek(0)
    p.kill()
    die("%s did not start:\n%s" % (mon, log.read()[-2000:]))


def measure(mon, cmd, runs, conf, tmp, settle):
    """Per-program (runs, ns) of the monitor's programs over runs of cmd."""
    old = set(progs())
    p, log = start(mon, conf, tmp)
    time.sleep(settle)
    was = None
    try:
        was = stats("1")
        a = progs()
        run_cmd(cmd, runs)
        b = progs()
    finally:
        if was is not None:
            stats(was)
        p.send_signal(signal.SIGTERM)
        p.wait()
        log.close()
    res = {}
    for i, (name, cnt, ns) in b.items():
        if i in old or i not in a:
            continue
        r, n = res.get(name, (0, 0))
        res[name] = (r + cnt - a[i][1], n + ns - a[i][2])
    return res


def config(path, tmp):
    """The config with its data_dir (and log) pointed into tmp."""
    lines = [l for l in open(path) if not l.startswith(("data_dir:", "log:"))]
    out = os.path.join(tmp, "vitals.yaml")
    with open(out, "w") as f:
        f.write("data_dir: %s\nlog: stderr\n" % os.path.join(tmp, "data"))
        f.writelines(lines)
    return out


def main():
    ap = argparse.ArgumentParser(
        usage="bpfcost.py [-c CONFIG] [-n RUNS] [-r ROUNDS] [--settle S] "
        "-- CMD [ARG...]")
    ap.add_argument("-c", dest="config",
                    default=os.path.join(SRC, "conf", "vitals.yaml"))
    ap.add_argument("-n", dest="runs", type=int, default=200)
    ap.add_argument("-r", dest="rounds", type=int, default=2)
    ap.add_argument("--settle", type=float, default=2.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    cmd = o.cmd[1:] if o.cmd[:1] == ["--"] else o.cmd
    if not cmd:
        ap.error("no command to run")
    if o.runs < 1 or o.rounds < 1 or o.settle < 0:
        ap.error("-n and -r must be at least 1, --settle not negative")
    if os.geteuid() != 0:
        die("needs root (BPF programs and their run-time stats)")
    if shutil.which("bpftool") is None:
        die("bpftool is not installed (apt-get install bpftool)")
    if not os.access(o.config, os.R_OK):
        die("%s: cannot read the config" % o.config, 2)
    os.environ.setdefault("VITALS_PLUGIN_PATH", ":".join(
        os.path.join(TOP, d) for d in ("probes", "filters", "plugins")))
    with tempfile.TemporaryDirectory(prefix="bpfcost.") as tmp:
        conf = config(o.config, tmp)
        tot = {"vitalsd": {}, "floor": {}}
        cpu = []
        for r in range(o.rounds):
            sys.stderr.write("bpfcost: round %d/%d\n" % (r + 1, o.rounds))
            cpu.append(run_cmd(cmd, o.runs))
            for mon in ("floor", "vitalsd") if r % 2 == 0 else ("vitalsd", "floor"):
                res = measure(mon, cmd, o.runs, conf, tmp, o.settle)
                for name, (cnt, ns) in res.items():
                    a, b = tot[mon].get(name, (0, 0))
                    tot[mon][name] = (a + cnt, b + ns)
    ops = float(o.runs * o.rounds)
    base = sum(cpu) / ops * 1e9
    print("bpfcost: %s, %d runs x %d rounds; unmonitored CPU %.1f us a run"
          % (" ".join(cmd), o.runs, o.rounds, base / 1e3))
    print("%-28s %12s %10s %12s" % ("vitalsd program", "runs/op", "ns/run",
                                    "ns/op"))
    for name, (cnt, ns) in sorted(tot["vitalsd"].items(),
                                  key=lambda kv: -kv[1][1]):
        if cnt:
            print("%-28s %12.2f %10.1f %12.1f" % (name, cnt / ops, ns / cnt,
                                                  ns / ops))
    v = sum(ns for _, ns in tot["vitalsd"].values()) / ops
    f = sum(ns for _, ns in tot["floor"].values()) / ops
    fr = sum(c for c, _ in tot["floor"].values()) / ops
    print("total: vitalsd %.1f ns/op (%.2f%% of the run's CPU), floor %.1f "
          "ns/op over %.1f runs (%.2f%%), vitalsd above floor %.1f ns/op "
          "(%.2f%%)" % (v, 100 * v / base, f, fr, 100 * f / base, v - f,
                        100 * (v - f) / base))


if __name__ == "__main__":
    main()
