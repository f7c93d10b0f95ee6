#!/bin/sh
# SPDX-License-Identifier: MIT
# The programs' CPU over the budget (root): when the probes' programs,
# counting each event in the kernel, take more of a CPU in an epoch than
# sketch.cpu_high allows, vitalsd says so in its log, naming the probe and
# its share, once, and not again in the next epochs (hourly at most)
# unless the share grew fourfold since it was said.
# The budget is set so low (a millionth of a CPU) that any counting is
# over it; the loop runs until four epochs are stored, however fast the
# machine is, and each stored epoch's vitals.cpu.programs shows which
# epochs were over it.  With cpu_high 0 (the watermark off) it says nothing.
. "$top_srcdir/tests/lib.sh"
need_probe syscall
name="pcpu$$_"
workload_copy syscall_loop "$name"

# run CPU_HIGH N: vitalsd with the syscall probe (2 s epochs) and
# sketch.cpu_high (and cpu_low) CPU_HIGH, the loop run until N epochs
# are stored; sets conf.
run() {
	rm -rf "$TMP/data"
	conf=$(probe_config syscall 2s "comm: $name")
	printf 'sketch:\n  cpu_high: %s\n  cpu_low: %s\n' "$1" "$1" >>"$conf"
	daemon_start "$conf"
	i=0
	until [ "$(count_epochs "$TMP/data")" -ge "$2" ]; do
		"$TMP/$name" 0.2 >/dev/null || fail "syscall loop failed"
		i=$((i + 1))
		[ "$i" -lt 600 ] || fail "no $2 epochs in 600 loops"
	done
	daemon_stop
}

run 0.000001 4
grep 'programs took' "$TMP/daemon.log" >"$TMP/warned" || true
cat "$TMP/warned" >&2
[ -s "$TMP/warned" ] ||
	{ cat "$TMP/daemon.log" >&2; fail "no warning of the programs' CPU"; }
assert_grep 'above sketch.cpu_high \(0.0001%\): syscall [0-9.]+%' "$TMP/warned"
assert_grep "leaving a probe out of $conf" "$TMP/warned"
python3 - "$TMP/warned" $(epochs_json) <<'PY' || fail "warned of every epoch over the budget, or of one not 4x the last"
import json, re, sys
said = [float(re.search(r"programs took ([0-9.]+)%", l).group(1))
        for l in open(sys.argv[1])]
# Again within the hour only for a share four times the last one said.
for a, b in zip(said, said[1:]):
    assert b >= 4 * a, said
over = 0
for fn in sys.argv[2:]:
    e = json.load(open(fn))
    m = e.get("metrics", {})
    p = m.get("vitals.cpu.programs", {}).get("last", 0)
    print("%s: programs %.6f s in %.2f s" % (fn, p, e["length_ns"] / 1e9),
          file=sys.stderr)
    over += p > 0.000001 * e["length_ns"] / 1e9
# The warnings came fewer times than the budget was exceeded.
assert over > len(said), (over, said)
PY

# cpu_high 0 turns the watermark off, and the warning with it: the same
# loop until two epochs are stored, at least one with the programs' time
# measured, and no warning.
run 0 2
if grep 'programs took' "$TMP/daemon.log"; then
	fail "a warning of the programs' CPU with cpu_high 0"
fi
python3 - $(epochs_json) <<'PY' || fail "no epoch measured the programs' time"
import json, sys
def programs(fn):
    m = json.load(open(fn)).get("metrics", {})
    return m.get("vitals.cpu.programs", {}).get("last", 0)
assert any(programs(fn) > 0 for fn in sys.argv[1:])
PY
