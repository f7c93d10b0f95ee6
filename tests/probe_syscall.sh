#!/bin/sh
# SPDX-License-Identifier: MIT
# syscall probe on a real machine: a getppid loop must top the syscall
# vital with its syscall number, and the in-kernel HCA must count exactly
# the calls it made (the count is the sum of the HCA counters of its label).
. "$top_srcdir/tests/lib.sh"
need_probe syscall
loop=$(workload syscall_loop) && [ -x "$loop" ] || fail "no syscall_loop workload"
conf=$(probe_config syscall 2s "comm: syscall_loop")
"$VITALSD" -c "$conf" -n 2 2> "$TMP/log" &
daemon=$!
sleep 0.5
"$loop" 1 > "$TMP/loop.json" || fail "syscall_loop failed"
wait "$daemon" || { cat "$TMP/log" >&2; fail "vitalsd failed"; }
python3 "$top_srcdir/tests/vital_share.py" syscall syscall_loop $(epochs_json) > "$TMP/r.json"
cat "$TMP/loop.json" "$TMP/r.json" >&2
python3 - "$TMP/r.json" "$TMP/loop.json" <<'PY' || fail "syscall vital does not match the loop"
import json, sys
r = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
nr = w["nr"]
assert r["top_comm"] == "syscall_loop", "top comm %r" % r["top_comm"]
# The loop's label is sampled at each power of t its count crosses, each
# sample with the loop's syscall number.  A sample's count is its HCA
# slot's: a label of the start-up or exit that hashes to the loop's slot
# (1 in hca_size, ~40 labels; the exe id, a hash of the binary's inode,
# varies with the checkout) reads as heavy too, with its own number.
heavy = [s for s in r["samples"] if s["count"] > 1000]
assert heavy, "no sample of a heavy label"
top = max(set(s["label"] for s in heavy), key=lambda l: sum(1 for s in heavy if s["label"] == l))
ops = [s["op"] for s in heavy if s["label"] == top]
assert len(ops) >= 10 and all(o == nr for o in ops), "heavy label's syscall numbers %r, want %d" % (set(ops), nr)
slot = set(s["slot"] for s in heavy if s["label"] == top)
others = [(s["label"], s["op"], s["slot"]) for s in heavy if s["label"] != top]
assert all(o[2] in slot for o in others), "heavy samples of other labels in other slots: %r" % others
# With comm filtered in the kernel, the vital holds only the workload's
# calls: its getppid loop plus the few calls of its start-up and exit.
extra = r["events"] - w["calls"]
assert 0 <= extra <= 200, "HCA counted %d events for %d calls" % (r["events"], w["calls"])
assert r["wsum"] == r["events"], "weights of 1 must sum to the event count"
print("calls %d, counted %d (+%d start-up/exit calls)" % (w["calls"], r["events"], extra))
PY

# The in-kernel first-sighting filter.  With the smallest HCA (32
# counters) about a third of syscall_loop's ~30 call-site labels (start-up,
# loop, exit) share a counter with one counted before, and adding 1 to it
# rarely crosses a power of t (16 here); only the filter samples those.
# Each label must still be sampled: the same set as with a wide HCA, where
# each label's first event crosses from 0.
labels_with() {
	rm -rf "$TMP/data" && mkdir -p "$TMP/data"
	conf=$(probe_config syscall 5s "comm: syscall_loop")
	printf 'sketch:\n  hca_size: %s\n  threshold: 16\n  max_samples: 65536\n' \
		"$1" >> "$conf"
	"$VITALSD" -c "$conf" -n 1 2> "$TMP/log" &
	daemon=$!
	sleep 0.5
	"$loop" 0.2 > /dev/null || fail "syscall_loop failed"
	sleep 0.2
	kill -TERM "$daemon"
	wait "$daemon" || { cat "$TMP/log" >&2; fail "vitalsd failed"; }
	python3 "$top_srcdir/tests/vital_share.py" syscall syscall_loop \
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

# The programs' kernel time counts as collector CPU within the epoch, as
# the paper's cycles consumed by Chopstix, so t doubles before the
# boundary once the collector reaches cpu_high (checked once a second).
# syscall_loop makes millions of calls a second, each counted in tens of
# ns: far over 2% of a CPU, where vitalsd's own CPU (one probe, few
# samples) stays under it.  When only vitalsd's own CPU was counted
# within the epoch, t stayed 2.
rm -rf "$TMP/data" && mkdir -p "$TMP/data"
conf=$(probe_config syscall 3s "comm: syscall_loop")
printf 'sketch:\n  cpu_high: 0.02\n  cpu_low: 0.005\n' >> "$conf"
"$VITALSD" -c "$conf" -n 3 2> "$TMP/log" &
daemon=$!
sleep 0.5
"$loop" 10 > /dev/null || fail "syscall_loop failed"
wait "$daemon" || { cat "$TMP/log" >&2; fail "vitalsd failed"; }
python3 - $(epochs_json) <<'PY' || fail "the programs' CPU does not raise t"
import json, sys
e = json.load(open(sys.argv[-1]))
v = [v for v in e["vitals"] if v["name"] == "syscall"][0]
share = e["cpu_ns"] / e["length_ns"]
print("syscall_loop: %d calls in %.1f s, collector %.1f%% of a CPU, t %d"
      % (v["events"], e["length_ns"] / 1e9, 100 * share, v["threshold"]))
assert share >= 0.02, "collector CPU %.2f%% under cpu_high" % (100 * share)
assert v["threshold"] >= 8, "t %d: not doubled within the epoch" % v["threshold"]
PY
