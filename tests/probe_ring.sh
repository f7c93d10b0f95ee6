#!/bin/sh
# SPDX-License-Identifier: MIT
# A probe's ring buffer full: the samples that find no room are lost, the
# events are still counted, and vitalsd says how many were lost while the
# store had room for them and which option holds more; every epoch's
# metric vitals.rings.lost says how many in all.  vitalsd is stopped
# (SIGSTOP) while the workload runs, so nothing drains the 4 KiB ring (6
# records) whatever the machine's speed:
# the loop's label crosses a power of 2 about 20 times at threshold 2, and
# its start-up and exit have some 40 labels, each a first sighting.
. "$top_srcdir/tests/lib.sh"
need_probe syscall
name="pring$$_"
workload_copy syscall_loop "$name"
loop="$TMP/$name"

conf=$(probe_config syscall 60s "comm: $name, ringbuf: 4K")
printf 'sketch:\n  threshold_max: 2\n  sample_memory: 0\n' >> "$conf"
daemon_start "$conf"
kill -STOP "$DAEMON" || fail "cannot stop vitalsd"
"$loop" 0.001 1048576 > "$TMP/loop.json" || { kill -CONT "$DAEMON"; fail "syscall_loop failed"; }
kill -CONT "$DAEMON" || fail "cannot continue vitalsd"
daemon_stop
cat "$TMP/daemon.log" >&2
lost=$(sed -n 's/.*syscall: \([0-9]*\) sample(s) lost to a full ring buffer of 4 KiB while the store had room (the events are counted; the probe.s ringbuf option holds more).*/\1/p' "$TMP/daemon.log" |
	awk '{ n += $1 } END { print n + 0 }')
[ "$lost" -gt 0 ] || fail "no notice of samples lost to the full ring in the log"
python3 "$top_srcdir/tests/vital_share.py" syscall "$name" $(epochs_json) > "$TMP/r.json"
python3 - "$TMP/r.json" "$TMP/loop.json" "$lost" $(epochs_json) <<'PY' || fail "lost samples not as told"
import json, sys
r = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
lost = int(sys.argv[3])
dropped = metric = 0
for fn in sys.argv[4:]:
    e = json.load(open(fn))
    for v in e.get("vitals", []):
        if v["name"] == "syscall":
            dropped += v["samples_dropped"]
    # Every epoch says what the rings lost, room or not.
    m = e["metrics"]["vitals.rings.lost"]
    assert m["n"] == 1 and m["unit"] == "samples", m
    metric += m["last"]
# The epochs count the lost samples among those not kept (with sample_memory
# 0 and the loop's few labels, no store bound drops any); the ring held at
# most 6 of the 60 or so the programs sent while vitalsd was stopped.
assert dropped >= lost, "epochs say %d samples dropped, the log %d lost" % (dropped, lost)
assert metric >= lost, "vitals.rings.lost says %d, the log %d" % (metric, lost)
assert metric <= dropped, "vitals.rings.lost says %d, samples_dropped %d" % (metric, dropped)
assert lost >= 10, "only %d samples lost with a 4 KiB ring and vitalsd stopped" % lost
# Only the samples were lost: the HCA counted every call of the loop.
extra = r["events"] - w["calls"]
assert 0 <= extra <= 200, "HCA counted %d events for %d calls" % (r["events"], w["calls"])
print("%d samples lost (epochs: %d dropped, vitals.rings.lost %d), %d calls counted of %d" %
      (lost, dropped, metric, r["events"], w["calls"]))
PY
