#!/bin/sh
# SPDX-License-Identifier: MIT
# The disk budget against the kernel's sketch (root): once a vital's sample
# store holds its share, a label first seen after that and heavy enough to
# cross a power of t must still get a sample in the same epoch (a leak that
# starts once the share is spent).  A crowd of 200 processes, each its own
# exe so its own label, fills the syscall vital's share (64 samples in a
# first epoch); then a heavy loop of a new exe makes 2^21 calls.  Nothing
# depends on the machine's speed: the crowd ends before the heavy loop
# starts, and its samples reach user space first (one ring, in order).
. "$top_srcdir/tests/lib.sh"
need_probe syscall
loop=$(workload syscall_loop) && [ -x "$loop" ] || fail "no syscall_loop workload"
name="pbud$$_"
mkdir -p "$TMP/bin"
i=100
while [ "$i" -lt 300 ]; do
	cp "$loop" "$TMP/bin/${name}c$i" || fail "cannot copy syscall_loop"
	i=$((i + 1))
done
cp "$loop" "$TMP/bin/${name}heavy" || fail "cannot copy syscall_loop"

# One-hour epochs: the crowd and the heavy loop fall in one (checked
# below).  t stays at 65536 with the floor at 2: a crowd label (4096
# calls, or a few times more on a fast machine) is sampled when first
# seen at 2 and crosses no power of t; the heavy label crosses 65536.  4096 counters from the start, so
# that the crowd's labels seldom share one (a counter of two crowd labels
# could be past 65536 before the heavy one's events come).
conf=$(probe_config syscall 3600s "comm: $name")
printf 'sketch:\n  hca_size: 4096\n  floor: 2\n  threshold: 65536\n  threshold_max: 65536\n  disk_budget: 1K\n' >>"$conf"
daemon_start "$conf"
i=100
while [ "$i" -lt 300 ]; do
	"$TMP/bin/${name}c$i" 0.001 1 >/dev/null || fail "crowd loop $i failed"
	i=$((i + 1))
done
"$TMP/bin/${name}heavy" 0.001 2097152 >"$TMP/heavy.json" || fail "heavy loop failed"
daemon_stop
python3 - "$name" $(epochs_json) <<'PY' || fail "the heavy label has no sample past the budget"
import json, sys
name, files = sys.argv[1], sys.argv[2:]
found = False
for fn in files:
    e = json.load(open(fn))
    metrics = e.get("metrics", {})
    if isinstance(metrics, list):
        metrics = dict((m["name"], m["value"]) for m in metrics)
    for v in e["vitals"]:
        if v["name"] != "syscall":
            continue
        comms = [s["comm"] for s in v.get("samples", [])]
        crowd = sum(1 for c in comms if c.startswith(name + "c"))
        heavy = sum(1 for c in comms if c == name + "heavy")
        dropped = metrics.get("vitals.disk_budget.dropped", {}).get("last", 0)
        allowed = metrics.get("vitals.disk_budget.samples", {}).get("last", 0)
        print("%s: %d crowd samples, %d heavy, %s dropped by the budget" % (
            fn, crowd, heavy, dropped), file=sys.stderr)
        if crowd == 0:
            continue
        # The crowd's 200 labels filled the share: the budget bound.  The
        # samples dropped are those that reached vitalsd before the kernel
        # was told the share was spent (it then sends no first sightings):
        # many on a fast machine, maybe none on a loaded one.
        assert crowd < 200, "the budget did not bound the crowd (%d)" % crowd
        assert 0 < allowed < 200, \
            "the epoch does not record that the budget bound it"
        # The heavy loop came after the crowd, in the same epoch.
        assert heavy > 0, "no sample of the heavy loop past the share"
        found = True
assert found, "no epoch held the crowd"
PY
