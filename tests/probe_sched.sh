#!/bin/sh
# SPDX-License-Identifier: MIT
# sched probe on a real machine.  runq (4 spinning threads per CPU) must
# wait on the run queue as long as the kernel's own schedstat says.  With
# the kernel counting only pipe_sleeper (renamed) and no delay threshold,
# sched must count exactly its switch-ins (perf's count of its switch-outs,
# plus one), wait one or two events per read (an idle read of a pipe is a
# wait for an event, not for a resource: none in blocking), and its reads
# must wait at the pipe read site.  fsync_writer's waits for its writes
# (uninterruptible) are blocking.  Nothing here may depend on how fast or
# how busy the machine is: each workload runs under a name of its own that
# the kernel's comm filter keeps every other process out by, and the
# checks compare the vitals with the kernel's and the workloads' own
# accounts.
. "$top_srcdir/tests/lib.sh"
need_probe sched
command -v perf > /dev/null || skip "perf is not installed (apt-get install linux-perf)"

# start_daemon CONF: a fresh data directory, vitalsd attached.
start_daemon() {
	rm -rf "$TMP/data" && mkdir -p "$TMP/data"
	daemon_start "$1"
}

# (a) Run-queue delay: runq's threads outnumber the CPUs, so they wait for
# a CPU all along, however many other processes wait with them (a share
# of the vital, or runq topping it, would depend on those).  Its spinners
# go on until each was preempted 100 times, so the waits the kernel's
# account leaves out (below) are a small share at any load.  min_delay 0
# counts every wait, as the kernel does: at the default 100 us the waits
# left out depend on the load (short preemptions by kernel threads under
# I/O: 21% of the delay with stress-ng --io beside it).
name="prunq$$_"
workload_copy runq "$name"
conf=$(probe_config sched 60s "vitals: [sched], comm: $name, min_delay: 0s")
start_daemon "$conf"
"$TMP/$name" 2 100 > "$TMP/runq.json" || fail "runq failed"
daemon_stop
python3 "$top_srcdir/tests/vital_share.py" sched "$name" $(epochs_json) > "$TMP/a.json"
python3 - "$TMP/a.json" "$TMP/runq.json" "$name" <<'PY' || fail "sched vital does not show runq"
import json, sys
r = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
mine = [s for s in r["samples"] if s["pid"] == w["pid"]]
assert mine, "no sample of runq's pid %d" % w["pid"]
# Only runq is counted (catches a comm filter that lets others in).
assert len(mine) == len(r["samples"]), "samples of others: %r" % set(
    (s["comm"], s["pid"]) for s in r["samples"] if s["pid"] != w["pid"])
# The kernel's own account: the spinners' run_delay (schedstat) as they
# stopped.  The delays are the kernel's; what may differ is the main
# thread's waits and each spinner's wait after it read schedstat: with
# at least 100 waits each, that last one is about 1% of its delay, at
# any load.  (Catches delays lost, counted twice, or measured from the
# wrong stamp.)
kern = w["run_delay_ns"]
assert kern > 0, "no run_delay from schedstat"
# On failure, the vital's whole weight tells weight not counted from
# weight counted in slots no runq sample named.
assert abs(r["weight"] - kern) <= 0.03 * kern, \
    "runq waited %.3f s, the kernel says %.3f s (the vital: %.3f s in %d " \
    "epochs, %d samples of runq)" % (r["weight"] / 1e9, kern / 1e9,
                                     r["wsum"] / 1e9, r["epochs"], len(r["samples"]))
# (Catches a wrong label, delay, thread id or exe.)
for s in mine:
    assert s["label"] == w["pid"], "label %#x is not the pid" % s["label"]
    assert s["args"][0] == s["weight"] >= 1, "delay %r" % s["args"]
    assert s["args"][1] == s["tid"], "woken pid %r, tid %d" % (s["args"], s["tid"])
    assert s["exe"].endswith("/" + sys.argv[3]), "exe %r in %r" % (s["exe"], s)
# A new thread's first switch-in is counted from when its fork queued it
# (cause 2).  Spinners created while the CPUs are busy wait behind the
# others, and the first events of the label are sampled.  Its delay lies
# within runq's life (catches a delay from a stamp of 0 or of another
# thread).
new = [s for s in mine if s["args"][3] == 2]
assert new, "no new thread's first switch-in sampled: causes %r" % \
    sorted(set(s["args"][3] for s in mine))
assert all(s["tid"] != w["pid"] and s["args"][0] < w["elapsed_ns"]
           for s in new), "new-thread delays %r" % [s["args"] for s in new]
# Stage two: a preempted spinner carries where it was preempted.
pre = [s for s in mine if s["args"][3] == 3 and s["tid"] != w["pid"]]
assert pre, "no preempted spinner sampled"
assert all(s["args"][2] != 0 and s.get("kstack") for s in pre), "no preemption site"
print("runq: %.3f s of run-queue delay (schedstat run_delay %.3f s) in %.1f s, "
      "each spinner preempted >= %d times, %d samples, %d of new threads (max %.2f ms)" %
      (r["weight"] / 1e9, kern / 1e9, w["elapsed_ns"] / 1e9, w["preempted_min"],
       len(mine), len(new), max(s["args"][0] for s in new) / 1e6))
PY

# (b, c) Exact counts of one process: every switch-in counts a delay.  A
# name of its own keeps other pipe_sleeper runs out of the comm filter.
name="psched$$_"
workload_copy pipe_sleeper "$name"
conf=$(probe_config sched 60s "comm: $name, min_delay: 0s")
start_daemon "$conf"
# perf counts the process's context switches (switch-outs) from its exec.
perf stat -x, -o "$TMP/perf.csv" -e context-switches -- "$TMP/$name" 2 \
	> "$TMP/sleeper.json" || fail "perf stat or pipe_sleeper failed"
daemon_stop
python3 "$top_srcdir/tests/vital_share.py" sched "$name" $(epochs_json) > "$TMP/s.json"
python3 "$top_srcdir/tests/vital_share.py" wait "$name" $(epochs_json) > "$TMP/b.json"
python3 "$top_srcdir/tests/vital_share.py" blocking "$name" $(epochs_json) > "$TMP/r.json"
python3 - "$TMP/s.json" "$TMP/b.json" "$TMP/sleeper.json" "$TMP/perf.csv" "$TMP/r.json" <<'PY' || fail "pipe_sleeper counts are wrong"
import bisect, json, sys
s = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
w = json.load(open(sys.argv[3]))
perf = [int(l.split(",")[0]) for l in open(sys.argv[4])
        if "context-switches" in l]
r = json.load(open(sys.argv[5]))
# Its sleeps are all interruptible: waits for an event, none a resource's.
assert r["events"] == 0, "pipe_sleeper has %d blocking events" % r["events"]
assert perf, "no perf count"
# Each switch-in was stamped (woken, new or preempted) and counted once.
# perf counts switch-outs but not the two final ones at thread exit; the
# writer thread starts with a switch-in: switch-ins = switch-outs + 1.
# Both count the process's own switches, as many as the load makes.
# (Catches switch-ins lost or counted twice.)
assert abs(s["events"] - (perf[0] + 1)) <= 2, \
    "sched counted %d switch-ins, perf %d switch-outs" % (s["events"], perf[0])
# The writer sleeps 100 ms before each write; the reader blocks at most
# once per read, plus its last (EOF) read and start-up: counts of its own
# reads, however many the load lets it make.  (Catches blocks lost,
# counted twice, or short of the writer's sleeps.)
reads = w["reads"]
assert reads <= b["events"] <= 2 * reads + 4, \
    "%d blocks for %d reads" % (b["events"], reads)
assert b["wsum"] >= reads * 100000000, "writer slept %d ns" % b["wsum"]


# Kernel frames are stored by image and offset (doc/design.md): the
# kernel's own are offsets from _text.
def symbolizer():
    syms, text = [], 0
    with open("/proc/kallsyms") as f:
        for line in f:
            a, t, n = line.split()[:3]
            if n == "_text":
                text = int(a, 16)
            if t in "tTwW" and int(a, 16):
                syms.append((int(a, 16), n))
    syms.sort()
    addrs = [a for a, _ in syms]

    def name(pc):
        i = bisect.bisect_right(addrs, text + (pc & (2**48 - 1))) - 1
        return syms[i][1] if i >= 0 else "?"
    return name if syms else None


name = None
pipe = []
for x in b["samples"]:
    assert x["args"][0] == x["weight"] >= 1000000, "blocked %r" % x["args"]
    kst = [pc & (2**64 - 1) for pc in x.get("kstack", [])]
    assert kst and all(1 << 48 <= pc < 0xffff800000000000 for pc in kst), \
        "not a kernel stack by image and offset: %r" % kst
    if x.get("ksyms"):
        top = x["ksyms"][0]
    else:
        name = name or symbolizer()
        top = name(kst[0]) if name else None
    if top is not None and "pipe_read" in top and x["tid"] == w["pid"]:
        pipe.append(x)
if name is not None or any(x.get("ksyms") for x in b["samples"]):
    assert pipe, "no sample of the reader waiting in pipe_read"
    assert all(x["op"] & 0xff == 1 for x in pipe), "reader not interruptible"
print("pipe_sleeper: %d switch-ins (perf: %d switch-outs), %d waits for %d reads, "
      "%.2f s off-CPU, %d pipe_read samples" %
      (s["events"], perf[0], b["events"], reads, b["wsum"] / 1e9, len(pipe)))
PY

# (d) User frames of processes gone before their samples are read: a copy
# of sleep, run 60 times, blocks once in clock_nanosleep and exits.
# vitalsd is stopped (SIGSTOP) while they run, so it reads every sample
# after its process exited, however long the runs take on a busy machine.
# Blocking samples carry the files of the thread's user frames, so its PC
# in libc is placed by module and offset though /proc no longer has its
# maps.  The rest of its stack is sleep's own code (placed by its text
# range) or the walk of code built without frame pointers going astray
# (cut).
ATMP=$(cd "$TMP" && pwd -P) || fail "cannot resolve $TMP"
name="pblk$$_"
cp /bin/sleep "$ATMP/$name" || fail "cannot copy /bin/sleep"
conf=$(probe_config sched 1s "vitals: [wait], comm: $name, ustack: true")
start_daemon "$conf"
kill -STOP "$DAEMON"
i=0
while [ "$i" -lt 60 ]; do "$ATMP/$name" 0.01 || fail "sleep failed"; i=$((i + 1)); done
kill -CONT "$DAEMON"
sleep 0.3
daemon_stop
python3 - "$name" $(epochs_json) <<'PY' || fail "blocking frames of gone processes are not placed"
import json, sys
name, files = sys.argv[1], sys.argv[2:]
total = placed = libc = 0
for f in files:
    e = json.load(open(f))
    mods = dict((m["id"], m["path"]) for m in e.get("modules", []))
    for v in e["vitals"]:
        if v["name"] != "wait":
            continue
        for s in v["samples"]:
            if s["comm"] != name or not s["ustack"]:
                continue
            total += 1
            top = s["ustack"][0]
            if top >> 48:
                placed += 1
                libc += "/libc.so" in mods.get((top >> 48) - 1, "")
print("wait: 60 runs of %s sleeping 10 ms: %d samples with a user stack, "
      "%d with the PC placed, %d in libc" % (name, total, placed, libc))
# The runs block at one site, one label: sampled at its first sighting
# and each power of t in the epoch, 5-6 times at t = 2; each run sleeps
# its 10 ms however slow the machine.  Every sample is of a process gone,
# so a PC placed in libc was placed by the files the kernel sent: none
# are without them (catches the files missing or not used).  Not all
# are: read after exit, 5-10 of 5-10 were placed here, once 5 of 7
# (while several other vitalsd ran probes that make the same lookups; a
# lookup where interrupts are off fails while the CPU's release of an
# earlier lookup's mmap lock is pending); read as the runs went on,
# with the daemon attached before the first run, 3-13 of 5-14.
assert total >= 4, "%d samples" % total
assert libc >= 1, "PCs placed %d of %d, %d in libc" % (placed, total, libc)
PY

# (e) Waits for a resource: fsync_writer's fsyncs sleep uninterruptibly
# (D state) for its new data to reach the disk, so with min_block 0 every
# fsync it made is at least one blocking event (a count the workload
# keeps, whatever the speed of the disk or the load on the CPUs: a share
# of its time would shrink as it waits longer for a CPU), and every
# sample's state is uninterruptible and not TASK_IDLE.
name="pfsync$$_"
workload_copy fsync_writer "$name"
conf=$(probe_config sched 1s "vitals: [blocking, wait], comm: $name, min_block: 0")
start_daemon "$conf"
"$TMP/$name" 2 > "$TMP/fsync.json" || fail "fsync_writer failed"
daemon_stop
python3 "$top_srcdir/tests/vital_share.py" blocking "$name" $(epochs_json) > "$TMP/fb.json"
python3 - "$TMP/fb.json" "$TMP/fsync.json" <<'PY' || fail "fsync_writer's waits are not blocking"
import json, sys
b = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
assert b["samples"], "no blocking sample of fsync_writer"
bad = [x["op"] for x in b["samples"] if not x["op"] & 2 or x["op"] & 0x400]
assert not bad, "blocking samples not in D state: %r" % bad
assert b["events"] >= w["fsyncs"], \
    "%d blocking events for %d fsyncs" % (b["events"], w["fsyncs"])
print("fsync_writer: %d fsyncs, %d blocking events, blocked %.2f s of %g s (%d samples, all D state)" %
      (w["fsyncs"], b["events"], b["wsum"] / 1e9, w["seconds"], len(b["samples"])))
PY
