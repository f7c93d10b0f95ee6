#!/bin/sh
# SPDX-License-Identifier: MIT
# The programs' CPU a stored epoch reports (vitals.cpu.programs), against
# the kernel's own count of the daemon's programs' run time (root).
# vitalsd turns the kernel's run-time statistics on only in a short
# window each epoch and reckons the rest; here they are on for the whole
# run (kernel.bpf_stats_enabled), so the run time each of its programs'
# descriptors shows (/proc/PID/fdinfo) is the truth to compare with.
# The syscall probe counts only this test's processes: a trickle of them
# from before the start (so the first windows count a few events among
# every other process's system calls, which its programs also run on),
# then a loop of system calls for at least two epochs.  The sum over the
# epochs must be within a factor of 1.5 of the kernel's (it was within
# 5%, under stress-ng too): when a window of few events gave the cost
# "per event" (the machine's calls over the trickle's), the first epoch
# of the loop was reckoned at three times its cost, the run at twice.
. "$top_srcdir/tests/lib.sh"
need_probe syscall
[ -w /proc/sys/kernel/bpf_stats_enabled ] ||
	skip "kernel.bpf_stats_enabled cannot be set here"
name="pc$$_"
workload_copy syscall_loop "${name}l"
cp /bin/sleep "$TMP/${name}s" || fail "cannot copy sleep"

stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
trickle=
trap 'echo "$stats" >/proc/sys/kernel/bpf_stats_enabled
[ -z "$trickle" ] || kill "$trickle" 2>/dev/null
[ -z "$DAEMON" ] || { kill -CONT "$DAEMON"; kill "$DAEMON"; } 2>/dev/null
rm -rf "$TMP"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# A few dozen counted calls a second, each sleep's.
(while :; do "$TMP/${name}s" 0.05; done) &
trickle=$!

conf=$(probe_config syscall 2s "comm: $name")
daemon_start "$conf"
until [ "$(count_epochs "$TMP/data")" -ge 2 ]; do
	kill -0 "$DAEMON" || fail "vitalsd died"
	sleep 0.2
done
# Two epochs at least of the loop, however slow the machine.
n=$(count_epochs "$TMP/data")
until [ "$(count_epochs "$TMP/data")" -ge $((n + 2)) ]; do
	"$TMP/${name}l" 0.5 >/dev/null || fail "syscall loop failed"
done

# The kernel's run time of the daemon's programs, each once.
kernel=$(cat /proc/"$DAEMON"/fdinfo/* 2>/dev/null | awk '
	/^prog_id:/ { id = $2 }
	/^run_time_ns:/ { if (!(id in seen)) { seen[id] = 1; ns += $2 } }
	END { printf "%.0f\n", ns }')
daemon_stop

python3 - "$kernel" $(epochs_json) <<'PY' || fail "programs' CPU not within 1.5x of the kernel's"
import json, sys
kernel = int(sys.argv[1]) / 1e9
total = 0.0
for fn in sys.argv[2:]:
    e = json.load(open(fn))
    p = e.get("metrics", {}).get("vitals.cpu.programs", {}).get("last", 0)
    total += p
    print("%s: programs %.6f s in %.2f s" % (fn, p, e["length_ns"] / 1e9),
          file=sys.stderr)
print("epochs' programs %.6f s, kernel's %.6f s, ratio %.2f" %
      (total, kernel, total / kernel if kernel else float("inf")), file=sys.stderr)
assert kernel > 0, "the kernel counted no run time"
assert kernel / 1.5 <= total <= kernel * 1.5, (total, kernel)
PY
