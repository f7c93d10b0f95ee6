#!/bin/sh
# SPDX-License-Identifier: MIT
# sched probe on a real machine.  runq (4 spinning threads per CPU) must
# top the sched vital with the delay its extra threads must wait.  With
# the kernel counting only pipe_sleeper (renamed) and no delay threshold,
# sched must count exactly its switch-ins (perf's count of its switch-outs,
# plus one), wait one or two events per read (an idle read of a pipe is a
# wait for an event, not for a resource: none in blocking), and its reads
# must wait at the pipe read site.  fsync_writer's waits for its writes
# (uninterruptible) are blocking.
. "$top_srcdir/tests/lib.sh"
need_probe sched
command -v perf > /dev/null || skip "perf is not installed (apt-get install linux-perf)"
runq=$(workload runq) && [ -x "$runq" ] || fail "no runq workload"
sleeper=$(workload pipe_sleeper) && [ -x "$sleeper" ] || fail "no pipe_sleeper workload"

# start_daemon CONF: run vitalsd in the background until its probes run.
start_daemon() {
	rm -rf "$TMP/data" && mkdir -p "$TMP/data"
	"$VITALSD" -c "$1" -n 1000 2> "$TMP/log" &
	daemon=$!
	i=0
	until grep -q 'started' "$TMP/log"; do
		kill -0 "$daemon" 2>/dev/null || { cat "$TMP/log" >&2; fail "vitalsd did not start"; }
		i=$((i + 1))
		[ "$i" -lt 300 ] || fail "vitalsd did not start in 30 s"
		sleep 0.1
	done
}

# stop_daemon: SIGTERM writes the current epoch and exits 0.
stop_daemon() {
	kill -TERM "$daemon"
	wait "$daemon" || { cat "$TMP/log" >&2; fail "vitalsd failed"; }
}

# (a) Run-queue delay: runq's process label tops the vital.  Its threads
# outnumber the CPUs by (threads - cpus), which wait for a CPU all along.
name="prunq$$"
cp "$runq" "$TMP/$name" || fail "cannot copy runq"
conf=$(probe_config sched 1s "vitals: [sched]")
# A wide HCA: runq's slot is then hardly ever shared with another label.
printf 'sketch:\n  hca_size: 65536\n' >> "$conf"
start_daemon "$conf"
"$TMP/$name" 2 > "$TMP/runq.json" || fail "runq failed"
stop_daemon
python3 "$top_srcdir/tests/vital_share.py" sched "$name" $(epochs_json) > "$TMP/a.json"
python3 - "$TMP/a.json" "$TMP/runq.json" "$name" <<'PY' || fail "sched vital does not show runq"
import json, sys
r = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
assert r["top_comm"] == sys.argv[3], "top comm %r" % r["top_comm"]
assert r["share"] >= 0.5, "runq holds %.0f%% of the delay" % (100 * r["share"])
least = (w["threads"] - w["cpus"]) * w["seconds"] * 1e9 / 2
assert r["weight"] >= least, "runq waited %.2f s" % (r["weight"] / 1e9)
# The kernel's own account: the spinners' run_delay (schedstat) as they
# stopped.  The delays are the kernel's; what may differ is what
# min_delay leaves out (waits under 100 us), the main thread's waits and
# the spinners' waits after they read schedstat (a share that grows with
# the CPUs, each a spinner's exit).
kern = w["run_delay_ns"]
assert kern > 0, "no run_delay from schedstat"
# On failure, the vital's whole weight tells weight not counted from
# weight counted in slots no runq sample named.
assert abs(r["weight"] - kern) <= 0.03 * kern, \
    "runq waited %.3f s, the kernel says %.3f s (the vital: %.3f s in %d " \
    "epochs, %d samples of runq)" % (r["weight"] / 1e9, kern / 1e9,
                                     r["wsum"] / 1e9, r["epochs"], len(r["samples"]))
mine = [s for s in r["samples"] if s["pid"] == w["pid"]]
assert mine, "no sample of runq's pid %d" % w["pid"]
for s in mine:
    assert s["label"] == w["pid"], "label %#x is not the pid" % s["label"]
    assert s["args"][0] == s["weight"] >= 100000, "delay %r" % s["args"]
    assert s["args"][1] == s["tid"], "woken pid %r, tid %d" % (s["args"], s["tid"])
    assert s["exe"].endswith("/" + sys.argv[3]), "exe %r in %r" % (s["exe"], s)
# A new thread's first switch-in is counted from when its fork queued it
# (cause 2).  Spinners created while the CPUs are busy
# wait behind the others, and the first events of the label are sampled.
new = [s for s in mine if s["args"][3] == 2]
assert new, "no new thread's first switch-in sampled: causes %r" % \
    sorted(set(s["args"][3] for s in mine))
assert all(s["tid"] != w["pid"] and s["args"][0] < w["seconds"] * 1e9
           for s in new), "new-thread delays %r" % [s["args"] for s in new]
# Stage two: a preempted spinner carries where it was preempted.
pre = [s for s in mine if s["args"][3] == 3 and s["tid"] != w["pid"]]
assert pre, "no preempted spinner sampled"
assert all(s["args"][2] != 0 and s.get("kstack") for s in pre), "no preemption site"
print("runq: %.3f s of run-queue delay (schedstat run_delay %.3f s), %.1f%% "
      "of the vital's %.2f s, %d samples, %d of new threads (max %.2f ms)" %
      (r["weight"] / 1e9, kern / 1e9, 100 * r["share"], r["wsum"] / 1e9, len(mine),
       len(new), max(s["args"][0] for s in new) / 1e6))
PY

# (b, c) Exact counts of one process: every switch-in counts a delay.  A
# name of its own keeps other pipe_sleeper runs out of the comm filter.
name="psched$$"
cp "$sleeper" "$TMP/$name" || fail "cannot copy pipe_sleeper"
conf=$(probe_config sched 1s "comm: $name, min_delay: 0s")
start_daemon "$conf"
# perf counts the process's context switches (switch-outs) from its exec.
perf stat -x, -o "$TMP/perf.csv" -e context-switches -- "$TMP/$name" 2 \
	> "$TMP/sleeper.json" || fail "perf stat or pipe_sleeper failed"
stop_daemon
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
assert abs(s["events"] - (perf[0] + 1)) <= 2, \
    "sched counted %d switch-ins, perf %d switch-outs" % (s["events"], perf[0])
# The writer sleeps 100 ms before each write; the reader blocks at most
# once per read, plus its last (EOF) read and start-up.
reads = w["reads"]
assert reads <= b["events"] <= 2 * reads + 4, \
    "%d blocks for %d reads" % (b["events"], reads)
assert b["wsum"] >= reads * 100000000, "writer slept %d ns" % b["wsum"]


def symbolizer():
    syms = []
    with open("/proc/kallsyms") as f:
        for line in f:
            a, t, n = line.split()[:3]
            if t in "tTwW" and int(a, 16):
                syms.append((int(a, 16), n))
    syms.sort()
    addrs = [a for a, _ in syms]

    def name(pc):
        i = bisect.bisect_right(addrs, pc) - 1
        return syms[i][1] if i >= 0 else "?"
    return name if syms else None


name = None
pipe = []
for x in b["samples"]:
    assert x["args"][0] == x["weight"] >= 1000000, "blocked %r" % x["args"]
    kst = [pc & (2**64 - 1) for pc in x.get("kstack", [])]
    assert kst and all(pc >= 0xffff800000000000 for pc in kst), \
        "not a kernel stack: %r" % kst
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
# of sleep, run 60 times, blocks once in clock_nanosleep and exits within
# a millisecond of waking, long before vitalsd drains its samples (every
# 100 ms).  Blocking samples carry the files of the thread's user frames,
# so its PC in libc is placed by module and offset though /proc no longer
# has its maps.  The rest of its stack is sleep's own code (placed by its
# text range) or the walk of code built without frame pointers going
# astray (cut).
ATMP=$(cd "$TMP" && pwd -P) || fail "cannot resolve $TMP"
name="pblk$$"
cp /bin/sleep "$ATMP/$name" || fail "cannot copy /bin/sleep"
conf=$(probe_config sched 1s "vitals: [wait], comm: $name, ustack: true")
start_daemon "$conf"
i=0
while [ "$i" -lt 60 ]; do "$ATMP/$name" 0.01 || fail "sleep failed"; i=$((i + 1)); done
sleep 0.3
stop_daemon
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
# and each power of t in each 1 s epoch, 5-6 times an epoch at t = 2.
assert total >= 4, "%d samples" % total
assert placed >= 0.8 * total and libc >= 1, "PCs placed %d of %d" % (placed, total)
PY

# (e) Waits for a resource: fsync_writer's writes and fsyncs sleep
# uninterruptibly (D state) and are blocking, at least a tenth of its time
# (it does nothing but write and wait for the disk), every sample's state
# uninterruptible and not TASK_IDLE; none of it is wait's.
fw=$(workload fsync_writer) && [ -x "$fw" ] || fail "no fsync_writer workload"
name="pfsync$$"
cp "$fw" "$TMP/$name" || fail "cannot copy fsync_writer"
conf=$(probe_config sched 1s "vitals: [blocking, wait], comm: $name")
start_daemon "$conf"
"$TMP/$name" 2 > "$TMP/fsync.json" || fail "fsync_writer failed"
stop_daemon
python3 "$top_srcdir/tests/vital_share.py" blocking "$name" $(epochs_json) > "$TMP/fb.json"
python3 - "$TMP/fb.json" "$TMP/fsync.json" <<'PY' || fail "fsync_writer's waits are not blocking"
import json, sys
b = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
assert b["samples"], "no blocking sample of fsync_writer"
bad = [x["op"] for x in b["samples"] if not x["op"] & 2 or x["op"] & 0x400]
assert not bad, "blocking samples not in D state: %r" % bad
assert b["wsum"] >= 0.1 * w["seconds"] * 1e9, \
    "fsync_writer blocked %.3f s of %g s" % (b["wsum"] / 1e9, w["seconds"])
print("fsync_writer: blocked %.2f s of %g s in %d events (%d samples, all D state)" %
      (b["wsum"] / 1e9, w["seconds"], b["events"], len(b["samples"])))
PY
