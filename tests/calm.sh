#!/bin/sh
# SPDX-License-Identifier: MIT
# Findings a person can trust, on the real machine (doc/findings.md).
# vitalsd runs the shipped configuration (conf/vitals.yaml: every probe,
# ewma, rules, diff, affinity, topk) with 10 s epochs.  Calm: of N epochs
# (VITALS_CALM_EPOCHS, 30) at most 1% may carry a warning or worse (none
# of 30); each is printed with its text.  Then the fault workloads run one
# after the other, two epochs each, from just after an epoch boundary:
# each must be flagged (a warning, or one grouped with another filter's)
# within its two epochs, naming its exe, by the filter meant for it, and
# `vitals top` must rank it first in the vital meant for it:
#
#   busy            ewma       cpu       a busy loop
#   signal_storm    ewma       signal    a signal storm
#   page_toucher    ewma       umem      pages touched and dropped (a leak's pattern)
#   udp_sender      ewma       socket    a UDP flood
#   lock_contention ewma       lock      mmap_lock contention
#   fsync_writer    ewma       blocking  waits for the disk (its rise of diskio
#                                        or blocking; rule #5 says it is
#                                        blocked on the disk when that is a
#                                        fifth of its time, which a fast disk
#                                        may not make it)
#   runq            ewma       sched     more runnable threads than CPUs
#   pipe_sleeper    -          wait      an idle wait: no warning at all, and
#                                        none of it in blocking
#
# What is asserted does not depend on the machine's speed: who is named,
# by which filter, in which epochs, who ranks first.  It does depend on
# the machine being calm: when other work kept the CPUs busy (idle under
# half the time in the calm epochs), the calm epochs measure that work,
# not the filters, and the test skips saying so (VITALS_CALM_FORCE=1 runs
# it anyway).  Warnings naming another test suite's copies of these
# workloads (under a tests/workloads/ or /tmp/vitals-test. directory) are
# printed but not counted: they are faults, found.  VITALS_CALM_KEEP=DIR
# keeps the store and what was read from it in DIR.  Needs root.
. "$top_srcdir/tests/lib.sh"
for p in cpu sched diskio kmem umem syscall signal socket lock; do
	need_probe $p
done
N=${VITALS_CALM_EPOCHS:-30}
EPOCH=10

# Skip at once on a machine other work keeps busy (the CPUs idle under half
# of 5 s), rather than measure that work for minutes.
idle=$(python3 -c 'import time
def t():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return v[3] + v[4], sum(v)
a = t(); time.sleep(5); b = t()
print(int(100 * (b[0] - a[0]) / max(1, b[1] - a[1])))')
[ "$idle" -ge 50 ] || [ "${VITALS_CALM_FORCE:-0}" = 1 ] ||
	skip "the machine is busy with other work (CPUs idle $idle% of 5 s): calm epochs cannot be measured here (VITALS_CALM_FORCE=1 to run anyway)"

# The shipped configuration with 10 s epochs, its store in $TMP.
mkdir -p "$TMP/data"
sed -e "s|^epoch: .*|epoch: ${EPOCH}s|" -e "s|^data_dir: .*|data_dir: $TMP/data|" \
	"$top_srcdir/conf/vitals.yaml" > "$TMP/vitals.yaml"
grep -q "^epoch: ${EPOCH}s" "$TMP/vitals.yaml" || fail "no epoch key in conf/vitals.yaml"
"$VITALSD" -c "$TMP/vitals.yaml" --check-config > "$TMP/check.log" 2>&1 ||
	{ cat "$TMP/check.log" >&2; fail "the shipped configuration does not check"; }

"$VITALSD" -c "$TMP/vitals.yaml" 2> "$TMP/log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
until grep -q 'started' "$TMP/log"; do
	kill -0 "$daemon" 2>/dev/null || { cat "$TMP/log" >&2; fail "vitalsd did not start"; }
	i=$((i + 1))
	[ "$i" -lt 300 ] || fail "vitalsd did not start in 30 s"
	sleep 0.1
done

# Sleep until `off` seconds past the next epoch boundary; print that boundary.
boundary() {
	python3 -c 'import sys, time
e, off = float(sys.argv[1]), float(sys.argv[2])
b = (int(time.time() // e) + 1) * e
time.sleep(max(0.0, b + off - time.time()))
print(int(b))' "$EPOCH" "$1"
}

# ---- calm: N whole epochs, after the first (partial or merged) one ----
first=$(boundary 0.1)
calm_from=$((first + EPOCH)) # the first whole epoch, merged or not
calm_to=$((calm_from + N * EPOCH))
python3 -c 'import time, sys; time.sleep(max(0, float(sys.argv[1]) + 0.1 - time.time()))' "$calm_to"

# ---- the faults, two epochs each, back to back ----
: > "$TMP/faults.txt"
for w in busy signal_storm page_toucher udp_sender lock_contention \
	fsync_writer runq pipe_sleeper; do
	src=$(workload $w) && [ -x "$src" ] || fail "no $w workload"
	exe="$TMP/c$$_$w"
	cp "$src" "$exe" || fail "cannot copy $w"
	b=$(boundary 0.2)
	"$exe" $((2 * EPOCH - 1)) > "$TMP/$w.json" || fail "$w failed"
	echo "$w $exe $b" >> "$TMP/faults.txt"
done
end=$(boundary 2)
kill -TERM "$daemon"
wait "$daemon" || { cat "$TMP/log" >&2; fail "vitalsd failed"; }
trap 'rm -rf "$TMP"' EXIT

"$VITALS" -d "$TMP/data" -c "$TMP/vitals.yaml" findings --stored \
	--from @$first --to @$end --severity info --json > "$TMP/findings.json" ||
	fail "vitals findings --stored"
"$VITALS" -d "$TMP/data" epochs --json > "$TMP/epochs.json" || fail "vitals epochs"
while read -r w exe b; do
	for v in cpu signal umem socket lock blocking diskio sched wait; do
		"$VITALS" -d "$TMP/data" -c "$TMP/vitals.yaml" top --from @$b \
			--to @$((b + 2 * EPOCH)) --vital $v -k 3 --json \
			> "$TMP/top-$w-$v.json" 2>/dev/null || echo '{"findings": []}' > "$TMP/top-$w-$v.json"
	done
done < "$TMP/faults.txt"

echo "$calm_from $calm_to $first $end" > "$TMP/range.txt"
if [ -n "${VITALS_CALM_KEEP:-}" ]; then
	mkdir -p "$VITALS_CALM_KEEP" && cp -r "$TMP"/* "$VITALS_CALM_KEEP"/ ||
		fail "cannot keep the store in $VITALS_CALM_KEEP"
fi
python3 - "$TMP" "$calm_from" "$calm_to" "$EPOCH" "${VITALS_CALM_FORCE:-0}" <<'PY'
import gzip, json, os, sys, time

d, calm_from, calm_to, epoch, force = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
NS = 10**9
SEV = {"info": 1, "warn": 2, "crit": 3}
fs = json.load(open(os.path.join(d, "findings.json")))
if isinstance(fs, dict):
    fs = fs["findings"]
epochs = json.load(open(os.path.join(d, "epochs.json")))


def hms(ns):
    return time.strftime("%H:%M:%S", time.localtime(ns / NS))


def loud(f):
    return SEV[f["severity"]] >= 2 or "[grouped with " in f["text"]


def other_suite(f):
    label = f.get("label") or ""
    return "/tests/workloads/" in label or label.startswith("/tmp/vitals-test.")


# ---- calm ----
calm = [e for e in epochs
        if calm_from * NS <= e["start_ns"] < calm_to * NS]
marked, counted, discounted = set(), [], []
for f in fs:
    if SEV[f["severity"]] < 2:
        continue
    made = f["end_ns"] - f["timescale_s"] * NS  # the epoch it was made at
    if not calm_from * NS <= made < calm_to * NS:
        continue
    (discounted if other_suite(f) else counted).append(f)
    if not other_suite(f):
        marked.add(made // (epoch * NS))
print("calm: %d epochs (%s .. %s), %d with a warning or worse (%.1f%%); "
      "%d warnings naming other suites' fault workloads not counted" % (
          len(calm), hms(calm_from * NS), hms(calm_to * NS), len(marked),
          100.0 * len(marked) / max(1, len(calm)), len(discounted)))
for f in counted + discounted:
    print("  %s %-5s %-9s %-8s %s%s" % (hms(f["end_ns"]), f["severity"], f["filter"],
          f.get("vital") or "-", f["text"],
          "  (not counted)" if other_suite(f) else ""))

# Was the machine calm?  The proc probe's idle share in the calm epochs.
shares = []
for path in sorted(e["path"] for e in calm):
    with gzip.open(path) as g:
        e = json.load(g)
    if calm_from * NS <= e["start_ns"] < calm_to * NS:
        m = e.get("metrics", {}).get("proc.cpu.idle_pct")
        if m:
            shares.append(m["mean"])
mean_idle = sum(shares) / len(shares) if shares else 100.0
print("the CPUs were idle %.0f%% of the calm epochs" % mean_idle)
busy = mean_idle < 50

# ---- the faults ----
def top_exes(w, vital):
    """The exes `vitals top` ranked in vital over w's epochs, first first
    (through the topk filter, else its own ranking)."""
    top = json.load(open(os.path.join(d, "top-%s-%s.json" % (w, vital))))
    if "findings" in top:
        return [f["label"] for f in top["findings"] if f.get("vital") == vital]
    return [x["exe"] or x["comm"] for x in
            top.get("vitals", {}).get(vital, {}).get("exes", [])]


def top_first(w, vital):
    ranked = top_exes(w, vital)
    return ranked[0] if ranked else None


MEANT = {
    "busy": ("ewma", "cpu"), "signal_storm": ("ewma", "signal"),
    "page_toucher": ("ewma", "umem"), "udp_sender": ("ewma", "socket"),
    "lock_contention": ("ewma", "lock"), "fsync_writer": ("ewma", "blocking"),
    "runq": ("ewma", "sched"), "pipe_sleeper": (None, "wait"),
}
bad = []
print("fault            filter    vital     flagged  top   finding")
for line in open(os.path.join(d, "faults.txt")):
    w, exe, b = line.split()
    b = int(b) * NS
    flt, vital = MEANT[w]
    mine = [f for f in fs if (f.get("label") or "") == exe
            and b < f["end_ns"] <= b + 2 * epoch * NS]
    first = top_first(w, vital)
    if flt is None:
        warned = [f for f in mine if loud(f)]
        inblk = exe in top_exes(w, "blocking")
        print("%-16s %-9s %-9s %-8s %-5s %s" % (w, "-", vital,
              "no" if not warned else "WARNED", "1st" if first == exe else "no",
              "idle waits: none in blocking" if not inblk else "IN BLOCKING"))
        if warned:
            bad.append("%s: warned about: %s" % (w, warned[0]["text"]))
        if inblk:
            bad.append("%s: its idle waits are in blocking" % w)
        continue
    hit = [f for f in mine if f["filter"] == flt and loud(f)
           and (flt != "rules" or "(rule #5)" in f["text"])]
    hit.sort(key=lambda f: f["end_ns"])
    at = (hit[0]["end_ns"] - b) // (epoch * NS) if hit else None
    print("%-16s %-9s %-9s %-8s %-5s %s" % (
        w, flt, vital, "epoch %d" % at if hit else "MISSED",
        "1st" if first == exe else "no", hit[0]["text"][:200] if hit else
        "; ".join("%s %s: %s" % (f["filter"], f["severity"], f["text"][:80])
                  for f in mine[:3])))
    if not hit:
        bad.append("%s: not flagged by %s within 2 epochs" % (w, flt))
    if first != exe:
        bad.append("%s: %s ranks %s first, not it" % (w, vital, first))

allowed = len(calm) // 100
if len(marked) > allowed:
    bad.append("%d of %d calm epochs carry a warning or worse (at most %d)" % (
        len(marked), len(calm), allowed))
if len(calm) < int(0.9 * (calm_to - calm_from) / epoch):
    bad.append("only %d calm epochs were stored" % len(calm))
for x in bad:
    print("FAIL: " + x, file=sys.stderr)
if bad and busy and not force:
    print("SKIP: the machine was busy with other work (CPUs idle %.0f%% of "
          "the calm epochs): calm epochs cannot be measured here "
          "(VITALS_CALM_FORCE=1 to fail anyway)" % mean_idle, file=sys.stderr)
    sys.exit(77)
sys.exit(1 if bad else 0)
PY
