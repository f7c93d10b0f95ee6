#!/bin/sh
# SPDX-License-Identifier: MIT
# The programs' CPU over the budget (root): when the probes' programs,
# counting each event in the kernel, take more of a CPU in an epoch than
# sketch.cpu_high allows, vitalsd says so in its log, naming the probe and
# its share, once, and not again in the next epochs (hourly at most).
# The budget is set so low (a millionth of a CPU) that any counting is
# over it; the loop runs until four epochs are stored, however fast the
# machine is, and each stored epoch's vitals.cpu.programs shows which
# epochs were over it.
. "$top_srcdir/tests/lib.sh"
need_probe syscall
name="pcpu$$_"
workload_copy syscall_loop "$name"
conf=$(probe_config syscall 2s "comm: $name")
printf 'sketch:\n  cpu_high: 0.000001\n  cpu_low: 0.000001\n' >>"$conf"
daemon_start "$conf"
i=0
until [ "$(count_epochs "$TMP/data")" -ge 4 ]; do
	"$TMP/$name" 0.2 >/dev/null || fail "syscall loop failed"
	i=$((i + 1))
	[ "$i" -lt 600 ] || fail "no four epochs in 600 loops"
done
daemon_stop
grep 'programs took' "$TMP/daemon.log" >"$TMP/warned" || true
cat "$TMP/warned" >&2
[ "$(wc -l <"$TMP/warned")" -eq 1 ] ||
	{ cat "$TMP/daemon.log" >&2; fail "not one warning of the programs' CPU"; }
assert_grep 'above sketch.cpu_high \(0.0001%\): syscall [0-9.]+%' "$TMP/warned"
assert_grep "leaving a probe out of $conf" "$TMP/warned"
python3 - $(epochs_json) <<'PY' || fail "fewer than two epochs over the budget"
import json, sys
over = 0
for fn in sys.argv[1:]:
    e = json.load(open(fn))
    m = e.get("metrics", {})
    if isinstance(m, list):
        m = dict((x["name"], x["value"]) for x in m)
    p = m.get("vitals.cpu.programs", {}).get("last", 0)
    print("%s: programs %.6f s in %.2f s" % (fn, p, e["length_ns"] / 1e9),
          file=sys.stderr)
    over += p > 0.000001 * e["length_ns"] / 1e9
# The warning above came once although the budget was exceeded again.
assert over >= 2, over
PY
