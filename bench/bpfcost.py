#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Kernel run time of vitalsd's BPF programs per run of a command.

bench/bpfcost.py [--cpu] [-c CONFIG] [-n RUNS] [-r ROUNDS] [-w WARM]
    [--settle S] [--adapt S] [--also CONFIG2] [--sample-hz HZ]
    -- CMD [ARG...]

Runs CMD RUNS times under vitalsd (default config), under bench/floor
(empty programs on the same tracepoints) and under no monitor, ROUNDS
times each in turn, and prints from the kernel's BPF run-time stats
(kernel.bpf_stats_enabled, on only while CMD runs) each program's runs,
nanoseconds per run of the program (and of the floor's program on the
same tracepoint) and per run of CMD, vitalsd's and the floor's totals,
and both against the CPU time CMD takes unmonitored.  With -w, each
monitor first sees CMD run WARM times unmeasured: the labels CMD makes
are then known in the epoch, as they are to a daemon that has run a
while, so only crossings of powers of t are sampled (without it, every
label's first event is, as just after a start or an epoch boundary).  The stats' own two clock
reads per program run (~30 ns here) are in both totals, so their
difference is what vitalsd's programs do beyond an empty one.  Wall-time
rows (bench/overhead) drift more than this between rounds on a shared
machine; this measures only the programs' own time, not what they cost
the command through the caches they evict.  Needs root and bpftool.

Every round's vitalsd resumes the t the last one stopped with (a restart
takes it from the last epoch in the data directory), so t only rises
over the rounds.  With --adapt S, vitalsd first runs for S seconds under
CMD run back to back, unmeasured, as a daemon left running under the
command would: its t rises to what the collector's CPU mark allows, and
every round starts there.  Without it the first rounds measure a daemon
at the configured t, the burst of samples after a first start.

With --cpu the stats stay off and what is measured is the command's own
CPU time (user + system, from its rusage) per run under each monitor and
under none, paired by round.  A fourth monitor joins there, "exact"
(bench/floor --exact): the floor's programs each counting their event
with one atomic add to a hashed slot, under a label like the probe's,
what the simplest exact in-kernel per-label count costs.  The figures are
everything a monitor costs the command, the dispatch to the programs and
the cache lines they evict included, which the stats cannot see.  A
command of steady CPU time (one compile) resolves a fraction of a percent
over some hundreds of runs.  With --also CONFIG2, a fifth arm runs
vitalsd with that configuration (its own data directory, adapted too),
and the difference between the two configurations is paired by round:
the machine drifts by about a percent between invocations, more than
one probe's share, so two configurations are compared within one.

The floor and exact monitors also sample on every CPU at --sample-hz
(99, the default configuration's cpu frequency; 0: not), cycles where a
PMU has them, else cpu-clock, as the cpu probe does, with a program
that returns at once (exact: counts the sample): the interrupts any
monitor with a cpu vital pays.  Without --cpu the floor's sampling
program runs on every CPU for the whole measured window, as vitalsd's
cpu program does, and is in both totals.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import statistics
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


def bpftool(*args):
    out = subprocess.run(["bpftool"] + list(args) + ["-j"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out or "[]")


def progs():
    """Every loaded BPF program: id -> (name, run_cnt, run_time_ns)."""
    return dict((p["id"], (p.get("name", "?"), p.get("run_cnt", 0),
                           p.get("run_time_ns", 0)))
                for p in bpftool("prog", "show"))


def tracepoints():
    """Program id -> the tracepoint its link attaches it to."""
    return dict((l["prog_id"], l["tp_name"]) for l in bpftool("link", "show")
                if "tp_name" in l)


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


def start(mon, conf, tmp, hz=0):
    """Start a monitor; wait until its programs are attached.  The floor
    and exact monitors sample at hz on every CPU unless 0."""
    log = open(os.path.join(tmp, mon + ".log"), "w+")
    if mon in ("vitalsd", "also"):
        argv = [os.path.join(TOP, "daemon", "vitalsd"), "-c", conf]
        ready = "started"
    else:
        argv = [os.path.join(TOP, "bench", "floor")]
        if mon == "exact":
            argv.append("--exact")
        if hz:
            argv += ["--sample", str(hz)]
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


def stop(p, log):
    """Stop a monitor start() started."""
    p.send_signal(signal.SIGTERM)
    p.wait()
    log.close()


def measure(mon, cmd, runs, conf, tmp, settle, warm, hz):
    """Per-program (runs, ns, tracepoint) of the monitor's programs over
    runs of cmd, after warm runs unmeasured."""
    old = set(progs())
    p, log = start(mon, conf, tmp, hz)
    time.sleep(settle)
    was = None
    try:
        run_cmd(cmd, warm)
        tps = tracepoints()
        was = stats("1")
        a = progs()
        run_cmd(cmd, runs)
        b = progs()
    finally:
        if was is not None:
            stats(was)
        stop(p, log)
    res = {}
    for i, (name, cnt, ns) in b.items():
        if i in old or i not in a:
            continue
        r, n, _ = res.get(name, (0, 0, None))
        res[name] = (r + cnt - a[i][1], n + ns - a[i][2], tps.get(i))
    return res


def cpu_arm(mon, cmd, runs, conf, tmp, settle, warm, hz):
    """CPU seconds per run of cmd under a monitor (or none), after warm
    runs unmeasured; the stats stay off."""
    p = log = None
    if mon != "none":
        p, log = start(mon, conf, tmp, hz)
        time.sleep(settle)
    try:
        run_cmd(cmd, warm)
        return run_cmd(cmd, runs) / runs
    finally:
        if p is not None:
            stop(p, log)


def adapt(cmd, conf, tmp, secs, mon="vitalsd"):
    """Run vitalsd for secs seconds under cmd back to back; return the
    t it stopped with, from its last epoch ("VITAL T, ...")."""
    sys.stderr.write("bpfcost: adapting t for %g s\n" % secs)
    p, log = start(mon, conf, tmp)
    end = time.time() + secs
    try:
        while time.time() < end:
            run_cmd(cmd, 1)
    finally:
        stop(p, log)
    out = subprocess.run(
        [os.path.join(TOP, "cli", "vitals"), "--data-dir",
         data_dir(tmp, mon), "show", "--last", "--json"],
        capture_output=True, text=True)
    if out.returncode != 0:
        die("vitals show --last: %s" % out.stderr.strip())
    return ", ".join("%s %d" % (v["name"], v["threshold"])
                     for v in json.loads(out.stdout)["vitals"])


def mean_se(xs):
    """Mean and its standard error (0 for a single value)."""
    se = statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0.0
    return statistics.fmean(xs), se


def cpu_main(o, cmd, confs, tmp):
    """--cpu: the command's CPU per run under each monitor, by round;
    confs has vitalsd's configuration, and "also"'s with --also."""
    mons = ("none", "floor", "exact", "vitalsd") + \
        (("also",) if "also" in confs else ())
    got = dict((m, []) for m in mons)
    for r in range(o.rounds):
        sys.stderr.write("bpfcost: round %d/%d\n" % (r + 1, o.rounds))
        for mon in mons if r % 2 == 0 else tuple(reversed(mons)):
            got[mon].append(cpu_arm(mon, cmd, o.runs,
                                    confs.get(mon, confs["vitalsd"]), tmp,
                                    o.settle, o.warm, o.sample_hz))
    print("bpfcost: %s, %d runs x %d rounds%s; CPU time a run (user + "
          "system), BPF stats off%s" % (
              " ".join(cmd), o.runs, o.rounds,
              ", after %d warm-up runs" % o.warm if o.warm else "",
              sampling(o)))
    print("%-8s %12s %22s %14s" % ("monitor", "CPU/run", "added (by round)",
                                   "added/run"))
    none = got["none"]
    for mon in mons:
        m = statistics.fmean(got[mon])
        if mon == "none":
            print("%-8s %10.1f us" % (mon, m * 1e6))
            continue
        pct = [100 * (a - b) / b for a, b in zip(got[mon], none)]
        pm, pse = mean_se(pct)
        am = statistics.fmean([a - b for a, b in zip(got[mon], none)])
        print("%-8s %10.1f us %12s%% +- %4.2f %+11.1f us" % (
            mon, m * 1e6, "%+.2f" % pm, pse, am * 1e6))
    for above in ("floor", "exact") + (("also",) if "also" in got else ()):
        pct = [100 * (a - b) / n for a, b, n in
               zip(got["vitalsd"], got[above], none)]
        pm, pse = mean_se(pct)
        print("vitalsd above %-5s: %+.2f%% +- %.2f of the run's CPU "
              "(mean over rounds +- its standard error)" % (
                  "the " + above if above == "floor" else above, pm, pse))


def sampling(o):
    """The floor's sampling, as the header tells it."""
    if not o.sample_hz:
        return ""
    return "; %s sample%s at %d Hz on every CPU" % (
        "floor and exact" if o.cpu else "the floor", "" if o.cpu else "s",
        o.sample_hz)


def data_dir(tmp, mon):
    """The data directory of a vitalsd arm ("vitalsd" or "also")."""
    return os.path.join(tmp, "data" if mon == "vitalsd" else mon + "-data")


def config(path, tmp, mon="vitalsd"):
    """The config with its data_dir (and log) pointed into tmp."""
    lines = [l for l in open(path) if not l.startswith(("data_dir:", "log:"))]
    out = os.path.join(tmp, mon + ".yaml")
    with open(out, "w") as f:
        f.write("data_dir: %s\nlog: stderr\n" % data_dir(tmp, mon))
        f.writelines(lines)
    return out


def main():
    ap = argparse.ArgumentParser(
        usage="bpfcost.py [--cpu] [-c CONFIG] [-n RUNS] [-r ROUNDS] "
        "[-w WARM] [--settle S] [--adapt S] [--also CONFIG2] [--sample-hz HZ] "
        "-- CMD [ARG...]")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("-c", dest="config",
                    default=os.path.join(SRC, "conf", "vitals.yaml"))
    ap.add_argument("-n", dest="runs", type=int, default=200)
    ap.add_argument("-r", dest="rounds", type=int, default=2)
    ap.add_argument("-w", "--warm", dest="warm", type=int, default=0)
    ap.add_argument("--settle", type=float, default=2.0)
    ap.add_argument("--adapt", type=float, default=0.0)
    ap.add_argument("--also", dest="also")
    ap.add_argument("--sample-hz", dest="sample_hz", type=int, default=99)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    cmd = o.cmd[1:] if o.cmd[:1] == ["--"] else o.cmd
    if not cmd:
        ap.error("no command to run")
    if o.runs < 1 or o.rounds < 1 or o.settle < 0 or o.warm < 0 or \
            o.adapt < 0 or not 0 <= o.sample_hz <= 10000:
        ap.error("-n and -r must be at least 1, -w, --settle and --adapt "
                 "not negative, --sample-hz 0 to 10000")
    if os.geteuid() != 0:
        die("needs root (BPF programs and their run-time stats)")
    if not o.cpu and shutil.which("bpftool") is None:
        die("bpftool is not installed (apt-get install bpftool)")
    if o.also is not None and not o.cpu:
        ap.error("--also needs --cpu")
    for path in (o.config, o.also):
        if path is not None and not os.access(path, os.R_OK):
            die("%s: cannot read the config" % path, 2)
    os.environ.setdefault("VITALS_PLUGIN_PATH", ":".join(
        os.path.join(TOP, d) for d in ("probes", "filters", "outputs")))
    with tempfile.TemporaryDirectory(prefix="bpfcost.") as tmp:
        conf = config(o.config, tmp)
        confs = {"vitalsd": conf}
        if o.also is not None:
            confs["also"] = config(o.also, tmp, "also")
            print("bpfcost: vitalsd runs %s; also, %s" % (o.config, o.also))
        for mon in sorted(confs, reverse=True):
            if o.adapt > 0:
                print("bpfcost: %s adapted for %g s under the command: t %s"
                      % (mon, o.adapt, adapt(cmd, confs[mon], tmp, o.adapt,
                                             mon)))
        if o.cpu:
            cpu_main(o, cmd, confs, tmp)
            return
        tot = {"vitalsd": {}, "floor": {}}
        cpu = []
        for r in range(o.rounds):
            sys.stderr.write("bpfcost: round %d/%d\n" % (r + 1, o.rounds))
            cpu.append(run_cmd(cmd, o.runs))
            for mon in ("floor", "vitalsd") if r % 2 == 0 else ("vitalsd", "floor"):
                res = measure(mon, cmd, o.runs, conf, tmp, o.settle, o.warm,
                              o.sample_hz)
                for name, (cnt, ns, tp) in res.items():
                    a, b, _ = tot[mon].get(name, (0, 0, None))
                    tot[mon][name] = (a + cnt, b + ns, tp)
    ops = float(o.runs * o.rounds)
    base = sum(cpu) / ops * 1e9
    print("bpfcost: %s, %d runs x %d rounds%s; unmonitored CPU %.1f us a run%s"
          % (" ".join(cmd), o.runs, o.rounds,
             ", after %d warm-up runs" % o.warm if o.warm else "",
             base / 1e3, sampling(o)))
    # The floor's program on each tracepoint: what attaching alone costs.
    fl = dict((tp, (cnt, ns)) for cnt, ns, tp in tot["floor"].values() if tp)
    print("%-24s %-18s %10s %8s %8s %11s %11s" % (
        "vitalsd program", "tracepoint", "runs/op", "ns/run", "floor",
        "ns/op", "above/op"))
    for name, (cnt, ns, tp) in sorted(tot["vitalsd"].items(),
                                      key=lambda kv: -kv[1][1]):
        if not cnt:
            continue
        fc, fns = fl.get(tp, (0, 0))
        fnr = fns / fc if fc else 0.0
        print("%-24s %-18s %10.2f %8.1f %8s %11.1f %11.1f" % (
            name, tp or "-", cnt / ops, ns / cnt,
            "%.1f" % fnr if fc else "-", ns / ops, (ns - cnt * fnr) / ops))
    v = sum(ns for _, ns, _ in tot["vitalsd"].values()) / ops
    f = sum(ns for _, ns, _ in tot["floor"].values()) / ops
    fr = sum(c for c, _, _ in tot["floor"].values()) / ops
    print("total: vitalsd %.1f ns/op (%.2f%% of the run's CPU), floor %.1f "
          "ns/op over %.1f runs (%.2f%%), vitalsd above floor %.1f ns/op "
          "(%.2f%%)" % (v, 100 * v / base, f, fr, 100 * f / base, v - f,
                        100 * (v - f) / base))


if __name__ == "__main__":
    main()
