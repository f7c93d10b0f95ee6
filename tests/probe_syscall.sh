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
ops = [s["op"] for s in r["samples"] if s["count"] > 1000]
assert ops and all(o == nr for o in ops), "heavy samples' syscall numbers %r, want %d" % (set(ops), nr)
# With comm filtered in the kernel, the vital holds only the workload's
# calls: its getppid loop plus the few calls of its start-up and exit.
extra = r["events"] - w["calls"]
assert 0 <= extra <= 200, "HCA counted %d events for %d calls" % (r["events"], w["calls"])
assert r["wsum"] == r["events"], "weights of 1 must sum to the event count"
print("calls %d, counted %d (+%d start-up/exit calls)" % (w["calls"], r["events"], extra))
PY
