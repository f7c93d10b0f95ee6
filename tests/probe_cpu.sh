#!/bin/sh
# SPDX-License-Identifier: MIT
# cpu probe on a real machine: a busy loop's samples must fall in its loop
# function (symbolized through the ELF symbol table), and their count must
# match the CPU time it got at the sampling frequency.  The kernel's comm
# filter keeps other processes out, so the count does not depend on how
# busy the machine is or on HCA collisions with them.
. "$top_srcdir/tests/lib.sh"
need_probe cpu
busy=$(workload busy) && [ -x "$busy" ] || fail "no busy workload"
conf=$(probe_config cpu 2s "frequency: 199, comm: busy")
"$VITALSD" -c "$conf" -n 2 2> "$TMP/log" &
daemon=$!
sleep 0.5
# Run it through python to learn the CPU time it really got (the machine
# may be busy with other work): the samples must match that, not 2.5 s.
python3 -c 'import resource, subprocess, sys
subprocess.run([sys.argv[1], "2.5"], check=True, stdout=open(sys.argv[2], "w"))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$busy" "$TMP/busy.json" > "$TMP/cpu_s" ||
	fail "busy workload failed"
wait "$daemon" || { cat "$TMP/log" >&2; fail "vitalsd failed"; }
python3 "$top_srcdir/tests/vital_share.py" cpu busy $(epochs_json) > "$TMP/r.json"
cat "$TMP/r.json" >&2
python3 - "$TMP/r.json" "$TMP/cpu_s" <<'PY' || fail "cpu vital does not show the busy loop"
import json, sys
r = json.load(open(sys.argv[1]))
cpu_s = float(open(sys.argv[2]).read())
assert r["top_comm"] == "busy", "top comm %r" % r["top_comm"]
# 199 samples per CPU second it ran; the timer samples whatever runs at
# each tick, so allow 20% either way.
w = r["events"]
want = cpu_s * 199
assert 0.8 * want <= w <= 1.2 * want, "busy got %d samples for %.2f CPU s (want ~%d)" % (w, cpu_s, want)
user = [s for s in r["samples"] if s["op"] == 0]
assert user, "no user-mode samples"
inloop = [s for s in user if s.get("usyms") and s["usyms"][0] == "busy_loop"]
assert len(inloop) * 10 >= len(user) * 9, "%d of %d user samples in busy_loop" % (len(inloop), len(user))
assert all(s["exe"].endswith("/busy") for s in r["samples"]), "exe not resolved"
print("top comm %s; busy share %.1f%%, %d samples for %.2f CPU s (%.0f expected), %d/%d in busy_loop" % (r["top_comm"], 100 * r["share"], w, cpu_s, want, len(inloop), len(user)))
PY
