#!/bin/sh
# SPDX-License-Identifier: MIT
# The systemd unit as built: systemd-analyze's offline security review
# scores it at most 4.5 (an unhardened unit scores 9.6), and, as root,
# vitalsd with every kernel probe runs and counts with only the
# capabilities of the unit's CapabilityBoundingSet, so the set cannot
# drift from what the probes need; and vitalsd started with all of root's
# keeps exactly that set (of what it had), in every thread.
. "$top_srcdir/tests/lib.sh"

UNIT="$top_builddir/conf/vitalsd.service"
[ -f "$UNIT" ] || fail "$UNIT not built"

# ---- the review ----
if command -v systemd-analyze >/dev/null 2>&1 &&
    systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	cp "$UNIT" "$TMP/vitalsd.service"
	systemd-analyze security --offline=true "$TMP/vitalsd.service" \
		>"$TMP/review.out" 2>&1 || :
	score=$(sed -n 's/.*Overall exposure level for vitalsd.service: \([0-9.]*\).*/\1/p' "$TMP/review.out")
	[ -n "$score" ] || { cat "$TMP/review.out" >&2; fail "no exposure level in systemd-analyze's review"; }
	python3 -c 'import sys; sys.exit(float(sys.argv[1]) > 4.5)' "$score" ||
		{ cat "$TMP/review.out" >&2; fail "the unit's exposure level is $score, above 4.5"; }
	echo "systemd-analyze security: exposure $score"
else
	echo "SKIP: no systemd-analyze with --offline: the unit's review is not run" >&2
fi

# ---- the daemon with the unit's capabilities only ----
[ "$(id -u)" -eq 0 ] || skip "running with the unit's capabilities needs root"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) missing"
need_probe syscall
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' |
	sed 's/cap_/+/g; s/ /,/g')
[ -n "$caps" ] || fail "no CapabilityBoundingSet= in $UNIT"
echo "bounding set: $caps"
cat >"$TMP/v.yaml" <<EOC
epoch: 2s
data_dir: $TMP/data
probes:
  cpu: {}
  syscall: {}
  sched: {}
  signal: {}
  socket: {}
  proc: {}
plugins:
  store: {}
EOC
# More spinning threads than CPUs, for the cpu vital to sample and the
# sched vital to see waiting, however quiet the machine is (killed after
# the run, or it stops on its own).
busy=$(workload runq) && [ -x "$busy" ] || fail "no runq workload"
"$busy" 8 >/dev/null 2>&1 &
bpid=$!
setpriv --inh-caps=-all --bounding-set=-all,"$caps" -- \
	"$VITALSD" -c "$TMP/v.yaml" --epochs 2 >"$TMP/run.out" 2>"$TMP/run.err" ||
	{ kill "$bpid" 2>/dev/null; cat "$TMP/run.err" >&2; fail "vitalsd failed with the unit's capabilities"; }
kill "$bpid" 2>/dev/null
wait "$bpid" 2>/dev/null || :
cat "$TMP/run.err"
! grep -q "unavailable\|denied\|not permitted" "$TMP/run.err" ||
	fail "a probe could not run with the unit's capabilities"
# Over every epoch of the run (the last may be cut short).
python3 - $(epochs_json) <<'PY' || fail "a vital counted nothing with the unit's capabilities"
import json, sys
es = [json.load(open(f)) for f in sys.argv[1:]]
got = {}
for e in es:
    for v in e["vitals"]:
        got[v["name"]] = got.get(v["name"], 0) + v["events"]
for name in ("cpu", "syscall", "sched"):
    assert got.get(name, 0) > 0, "%s: %r" % (name, got)
# Kernel frames are named: the addresses of /proc/kallsyms were readable.
frames = [f for e in es for v in e["vitals"] for s in v.get("samples", [])
          for f in s.get("ksyms", [])]
assert any(not f.startswith("0x") for f in frames), "no kernel symbol named"
print("counted with the unit's capabilities:", ", ".join("%s %d" % kv for kv in sorted(got.items())))
PY

# ---- started as full root, every thread keeps the unit's set only ----
"$VITALSD" -c "$TMP/v.yaml" --data-dir "$TMP/data2" --epochs 4 2>"$TMP/root.err" &
pid=$!
i=0
until grep -q "started" "$TMP/root.err"; do
	kill -0 "$pid" 2>/dev/null || { cat "$TMP/root.err" >&2; fail "vitalsd as root exited"; }
	i=$((i + 1))
	[ "$i" -lt 600 ] || fail "vitalsd as root did not start in 60 s"
	sleep 0.1
done
python3 - "$UNIT" "$pid" <<'PY' || { kill "$pid"; fail "vitalsd kept other capabilities than the unit's"; }
import glob, re, sys
unit, pid = sys.argv[1:]
num = {}
for line in open("/usr/include/linux/capability.h"):
    m = re.match(r"#define (CAP_[A-Z_]+)\s+(\d+)\s*$", line)
    if m:
        num[m.group(1)] = int(m.group(2))
names = re.search(r"^CapabilityBoundingSet=(.*)$", open(unit).read(), re.M).group(1).split()
# What it started with bounds it (a container may lack some of the set).
had = int(re.search(r"^CapBnd:\s+([0-9a-f]+)$", open("/proc/self/status").read(), re.M).group(1), 16)
want = sum(1 << num[n] for n in names) & had
for st in glob.glob("/proc/%s/task/*/status" % pid):
    caps = dict(re.findall(r"^(Cap\w+):\s+([0-9a-f]+)$", open(st).read(), re.M))
    for k in ("CapEff", "CapPrm", "CapBnd"):
        assert int(caps[k], 16) == want, "%s %s %s, the unit's set is %x" % (st, k, caps[k], want)
    assert int(caps["CapInh"], 16) == 0, st
print("every thread of vitalsd keeps %x (%s)" % (want, " ".join(names)))
PY
wait "$pid" || { cat "$TMP/root.err" >&2; fail "vitalsd as root failed"; }
