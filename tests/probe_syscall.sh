#!/bin/sh
# SPDX-License-Identifier: MIT
# syscall probe on a real machine: a getppid loop's label must carry its
# syscall number, and the in-kernel HCA must count exactly the calls it
# made (the count is the sum of the HCA counters of its label).  Nothing
# here may depend on how fast or how busy the machine is: the loop makes a
# fixed number of calls (however long they take), under a name of its own
# that the kernel's comm filter keeps every other process out by, and the
# checks compare the vital with the loop's own count of its calls.
. "$top_srcdir/tests/lib.sh"
need_probe syscall
name="psys$$_"
workload_copy syscall_loop "$name"
loop="$TMP/$name"

# threshold_max 2 keeps t at 2 whatever the collector's CPU (the loop's
# calls cost the programs more the faster it runs): its label is sampled
# at each power of 2 its count crosses.  One epoch, ended after the loop.
conf=$(probe_config syscall 60s "comm: $name")
printf 'sketch:\n  threshold_max: 2\n' >> "$conf"
daemon_start "$conf"
"$loop" 0.001 2097152 > "$TMP/loop.json" || fail "syscall_loop failed"
daemon_stop
python3 "$top_srcdir/tests/vital_share.py" syscall "$name" $(epochs_json) > "$TMP/r.json"
cat "$TMP/loop.json" "$TMP/r.json" >&2
python3 - "$TMP/r.json" "$TMP/loop.json" <<'PY' || fail "syscall vital does not match the loop"
import json, sys
r = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
nr = w["nr"]
# Only the loop is counted (catches a comm filter that lets others in).
others = set((s["comm"], s["pid"]) for s in r["samples"] if s["pid"] != w["pid"])
assert r["samples"] and not others, "samples of others: %r" % others
# The loop's label is sampled at each power of 2 its count crosses, each
# sample with the loop's syscall number: 2^21 calls cross 2^10..2^21, 12
# of them over 1000; 10 allow the last crossing to go unsampled (a CPU
# that moves to an exit call's label adds its pending weight untested).
# A sample's count is its HCA slot's: a label of the start-up or exit
# that hashes to the loop's slot (1 in hca_size, ~40 labels; the exe id,
# a hash of the binary's inode, varies with the copy) reads as heavy
# too, with its own number.  (Catches a wrong op, or crossings not sampled.)
heavy = [s for s in r["samples"] if s["count"] > 1000]
assert heavy, "no sample of a heavy label"
top = max(set(s["label"] for s in heavy), key=lambda l: sum(1 for s in heavy if s["label"] == l))
ops = [s["op"] for s in heavy if s["label"] == top]
assert len(ops) >= 10 and all(o == nr for o in ops), "heavy label's syscall numbers %r (%d samples), want %d" % (set(ops), len(ops), nr)
slot = set(s["slot"] for s in heavy if s["label"] == top)
others = [(s["label"], s["op"], s["slot"]) for s in heavy if s["label"] != top]
assert all(o[2] in slot for o in others), "heavy samples of other labels in other slots: %r" % others
# With comm filtered in the kernel, the vital holds only the workload's
# calls: its getppid loop plus the few calls of its start-up and exit
# (~35 here).  Catches calls lost or counted twice, whatever the speed.
extra = r["events"] - w["calls"]
assert 0 <= extra <= 200, "HCA counted %d events for %d calls" % (r["events"], w["calls"])
assert r["wsum"] == r["events"], "weights of 1 must sum to the event count"
print("calls %d, counted %d (+%d start-up/exit calls), %d samples of the loop's label" %
      (w["calls"], r["events"], extra, len(ops)))
PY

# The in-kernel first-sighting filter.  With the smallest HCA (32
# counters) about a third of syscall_loop's ~30 call-site labels (start-up,
# loop, exit) share a counter with one counted before, and adding 1 to it
# rarely crosses a power of t (16 here); only the filter samples those.
# Each label must still be sampled: the same set as with a wide HCA, where
# each label's first event crosses from 0.  The labels are the program's
# call sites, the same in every run at any speed; the daemon is attached
# before the loop starts (daemon_start waits for it).
labels_with() {
	rm -rf "$TMP/data" && mkdir -p "$TMP/data"
	conf=$(probe_config syscall 60s "comm: $name")
	printf 'sketch:\n  hca_size: %s\n  threshold: 16\n  max_samples: 65536\n' \
		"$1" >> "$conf"
	daemon_start "$conf"
	"$loop" 0.001 65536 > /dev/null || fail "syscall_loop failed"
	daemon_stop
	python3 "$top_srcdir/tests/vital_share.py" syscall "$name" \
		$(epochs_json) > "$TMP/labels$1.json"
}
labels_with 65536
labels_with 32
python3 - "$TMP/labels65536.json" "$TMP/labels32.json" <<'PY' || fail "first sightings are not sampled"
import json, sys
wide, one = (json.load(open(f)) for f in sys.argv[1:3])
lw = set(s["label"] for s in wide["samples"])
l1 = set(s["label"] for s in one["samples"])
assert len(lw) >= 10, "only %d labels with a wide HCA" % len(lw)
assert l1 == lw, "32 counters: %d labels sampled, wide HCA: %d (missing %s)" % (
    len(l1), len(lw), sorted("%#x" % l for l in lw - l1)[:5])
slots = len(set(s["slot"] for s in one["samples"]))
print("first sightings: %d call-site labels in %d of 32 HCA counters, all "
      "sampled, as with 65536" % (len(l1), slots))
PY

# The programs' kernel time counts as collector CPU (the epoch's cpu_ns,
# and its metric vitals.cpu.programs), as the paper's cycles consumed by
# Chopstix, but t does not double for it: t changes how many events are
# sampled, not what counting them costs.  t doubles within an epoch for
# each cpu_high of the CPU it steers (vitals.cpu.sampling: vitalsd's own
# handling the samples).  A share of the CPU would depend on how fast the
# loop runs; what does not is the programs' time per call: at least 10 ns
# (a hashed add, and the run-time stats' own clock reads in the window it
# is measured in), so the collector's CPU must exceed vitalsd's own by 10
# ns for each call counted, and that alone (at least 40 ms against a 6 ms
# budget) would have doubled t had it counted.  The loop runs at least
# 4 s, across the stats window of at least one 3 s epoch (from its
# middle), and makes at least 4M calls.  cpu_low 0 keeps t from halving.
rm -rf "$TMP/data" && mkdir -p "$TMP/data"
conf=$(probe_config syscall 3s "comm: $name")
printf 'sketch:\n  cpu_high: 0.002\n  cpu_low: 0\n' >> "$conf"
daemon_start "$conf"
"$loop" 4 4000000 > "$TMP/loop.json" || fail "syscall_loop failed"
sleep 1.2 # the last of the programs' time reported (once a second)
own=$(daemon_cpu_ns) || fail "cannot read vitalsd's CPU time"
daemon_stop
python3 - "$own" "$TMP/loop.json" $(epochs_json) <<'PY' || fail "the programs' CPU is not collector CPU, or t doubles for it"
import json, sys
own, w = int(sys.argv[1]), json.load(open(sys.argv[2]))
cpu = events = progs_metric = 0
t, budget = 2, 0.002 * 3e9
for f in sys.argv[3:]:
    e = json.load(open(f))
    v = [v for v in e["vitals"] if v["name"] == "syscall"][0]
    m = dict((k, x["last"] * 1e9) for k, x in e["metrics"].items()
             if k.startswith("vitals.cpu."))
    cpu += e["cpu_ns"]
    events += v["events"]
    progs_metric += m["vitals.cpu.programs"]
    print("epoch %d: %.2f s, %d calls counted, collector %.1f ms (sampling "
          "%.1f, fixed %.1f, programs %.1f), t %d" % (
        e["seq"], e["length_ns"] / 1e9, v["events"], e["cpu_ns"] / 1e6,
        m["vitals.cpu.sampling"] / 1e6, m["vitals.cpu.fixed"] / 1e6,
        m["vitals.cpu.programs"] / 1e6, v["threshold"]))
    # The parts add up to the whole (each stored to the microsecond).
    assert abs(sum(m.values()) - e["cpu_ns"]) < 1e4, "parts %r != %d" % (
        m, e["cpu_ns"])
    # A doubling needs a budget's worth of the CPU t steers since the last
    # one (catches t doubling for the programs' time).
    d = v["threshold"].bit_length() - t.bit_length()
    assert d >= 0, "t halved from %d to %d with cpu_low 0" % (t, v["threshold"])
    assert d * budget <= m["vitals.cpu.sampling"] + 1e4, \
        "t %d -> %d on %.1f ms of the CPU it steers" % (
            t, v["threshold"], m["vitals.cpu.sampling"] / 1e6)
    t = v["threshold"]
progs = cpu - own
print("syscall_loop: %d calls, %d counted; collector %.1f ms, vitalsd's own "
      "%.1f ms: the programs %.1f ns a call; t %d"
      % (w["calls"], events, cpu / 1e6, own / 1e6, progs / max(events, 1), t))
assert events >= w["calls"], "counted %d of %d calls" % (events, w["calls"])
# (Catches the programs' time left out of the collector's CPU.)
assert progs >= 10 * events, "the programs' time is not in the collector's CPU"
assert progs_metric >= 10 * events, "vitals.cpu.programs holds less"
PY
