#!/bin/sh
# SPDX-License-Identifier: MIT
# Findings a person can trust, on the real machine (doc/findings.md).
# vitalsd runs the shipped configuration (conf/vitals.yaml: every probe,
# ewma, rules, diff, affinity, topk), only its epoch shortened to
# VITALS_CALM_EPOCH seconds (3: the filters' floors are per second and
# their persistence is counted in epochs, so the same configuration
# holds at 3 s; 10 s, the epoch a person would pick to try it, is the
# measurement in doc/findings.md, VITALS_CALM_EPOCH=10).  After a warmup
# of 12 epochs (diff's baseline; ewma's and affinity's are shorter) come
# N calm epochs (VITALS_CALM_EPOCHS, 60): at most 1% of them may carry a
# warning or worse; each is printed with its text.  Then the fault
# workloads run one after the other, two epochs each, from just after an
# epoch boundary: each must be flagged (a warning, or one grouped with
# another filter's) within its two epochs, naming its exe, by the filter
# meant for it, and `vitals top` must rank it first in the vital meant
# for it:
#
#   busy            ewma       cpu       a busy loop
#   signal_storm    ewma       signal    a signal storm
#   mem_leak        ewma       umem      a leak of 320 MiB/s, never freed
#                                        (rule #2 names a slower leak
#                                        after leak_epochs, 12 epochs)
#   udp_sender      ewma       socket    a UDP flood
#   lock_contention ewma       lock      mmap_lock contention: blocked on
#                                        a resource (a lock)
#   fsync_writer    ewma       blocking  waits for the disk (D state);
#                                        blocking must name it first
#   runq            ewma       sched     more runnable threads than CPUs
#   pipe_sleeper    -          wait      an idle wait: no warning at all,
#                                        and none of it in blocking
#
# Nothing asserted depends on the machine's speed: who is named, by which
# filter, in which epochs, who ranks first.  Load is another matter: CI
# runs `make check` under `stress-ng --cpu 2`, and this machine is shared
# with other test suites.  A warning about such load is not a false alarm
# of the filters but a fault found (stress-ng is a busy loop; another
# suite's copies of these workloads are faults, its benchmarks write
# stores as fast as the disk goes), so warnings whose exe is a known load
# are printed but not counted: VITALS_CALM_LOAD (basenames, default
# stress-ng), and the processes of other suites (exes under another
# build tree of vitals, or another test's /tmp/vitals-test. directory).
# Everything else is counted: the kworkers, shells, compilers, git and
# vitalsd itself, which the load makes wait, must not be warned about (a
# victim among many is info), so the calm part holds under that load too.
# The ranking asks for the workload first among the exes that are not a
# known load (stress-ng's workers out-spin a busy loop).  Other work than
# that (a build, another suite's tests) is measured too, from the cpu
# vital: when it took more than a quarter of the CPUs and a check failed,
# the test skips saying so, as it measured that work and not the filters
# (VITALS_CALM_FORCE=1 fails instead).
# VITALS_CALM_KEEP=DIR keeps the store and what was read from it in DIR.
# Needs root.
. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root: the shipped configuration's probes are BPF"
for p in cpu sched diskio kmem umem syscall signal socket lock; do
	need_probe $p
done
N=${VITALS_CALM_EPOCHS:-60}
EPOCH=${VITALS_CALM_EPOCH:-3}
WARMUP=12

# The shipped configuration with EPOCH s epochs, its store in $TMP.
mkdir -p "$TMP/data"
sed -e "s|^epoch: .*|epoch: ${EPOCH}s|" -e "s|^data_dir: .*|data_dir: $TMP/data|" \
	"$top_srcdir/conf/vitals.yaml" > "$TMP/vitals.yaml"
grep -q "^epoch: ${EPOCH}s" "$TMP/vitals.yaml" || fail "no epoch key in conf/vitals.yaml"
"$VITALSD" -c "$TMP/vitals.yaml" --check-config > "$TMP/check.log" 2>&1 ||
	{ cat "$TMP/check.log" >&2; fail "the shipped configuration does not check"; }

: > "$TMP/log"
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

# ---- calm: N whole epochs, after the first (partial or merged) one and
# the filters' warmup ----
first=$(boundary 0.1)
calm_from=$((first + (1 + WARMUP) * EPOCH))
calm_to=$((calm_from + N * EPOCH))
python3 -c 'import time, sys; time.sleep(max(0, float(sys.argv[1]) + 0.1 - time.time()))' "$calm_to"

# meant W: the vitals `vitals top` ranks for workload W (see the header).
meant() {
	case $1 in
	busy) echo cpu ;; signal_storm) echo signal ;; mem_leak) echo umem ;;
	udp_sender) echo socket ;; lock_contention) echo lock ;;
	fsync_writer) echo blocking ;; runq) echo sched ;;
	pipe_sleeper) echo wait blocking ;;
	esac
}

# ---- the faults, two epochs each, back to back ----
: > "$TMP/faults.txt"
# Worked out before the first boundary: a python3 started after one (a
# pyenv shim runs a dozen short processes) would fill the cpu vital's
# share of first sightings in the fault's first epoch before the fault
# began, and the fault's own first sighting would wait for the next.
secs=$(python3 -c "print($EPOCH * 2 - 0.5)")
for w in busy signal_storm mem_leak udp_sender lock_contention \
	fsync_writer runq pipe_sleeper; do
	src=$(workload $w) && [ -x "$src" ] || fail "no $w workload"
	exe="$TMP/c$$_$w"
	cp "$src" "$exe" || fail "cannot copy $w"
	# From 0.2 s after a boundary to 0.3 s before the second one after it.
	# The leak keeps 320 MiB/s: its second epoch must fault more than
	# umem's floor (50000 pages/s, 195 MiB/s); 10 s epochs hold 6.1 GiB.
	case $w in mem_leak) args="320 8192" ;; *) args= ;; esac
	b=$(boundary 0.2)
	"$exe" "$secs" $args > "$TMP/$w.json" ||
		fail "$w failed"
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
	for v in $(meant $w); do
		"$VITALS" -d "$TMP/data" -c "$TMP/vitals.yaml" top --from @$b \
			--to @$((b + 2 * EPOCH)) --vital $v -k 10 --json \
			> "$TMP/top-$w-$v.json" 2>/dev/null || echo '{"findings": []}' > "$TMP/top-$w-$v.json"
	done
done < "$TMP/faults.txt"

# Who used the CPUs while the test measured: the cpu vital's exes.
for r in "calm $calm_from $calm_to" "faults $calm_to $end"; do
	set -- $r
	"$VITALS" -d "$TMP/data" -c "$TMP/vitals.yaml" top --no-filter \
		--from @$2 --to @$3 --vital cpu -k 1000 --json > "$TMP/cpu-$1.json" ||
		fail "vitals top --no-filter"
done

echo "$calm_from $calm_to $first $end" > "$TMP/range.txt"
if [ -n "${VITALS_CALM_KEEP:-}" ]; then
	mkdir -p "$VITALS_CALM_KEEP" && cp -r "$TMP"/* "$VITALS_CALM_KEEP"/ ||
		fail "cannot keep the store in $VITALS_CALM_KEEP"
fi
python3 - "$TMP" "$calm_from" "$calm_to" "$EPOCH" "${VITALS_CALM_LOAD:-stress-ng}" \
	"$top_builddir" "$(nproc)" "${VITALS_CALM_FORCE:-0}" "$VITALS" <<'PY'
import gzip, json, os, subprocess, sys, time

d, calm_from, calm_to, epoch = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4])
load = set(sys.argv[5].replace(",", " ").split())
builddir = os.path.realpath(sys.argv[6])
ncpu, force = int(sys.argv[7]), sys.argv[8] == "1"
vitals_cli = sys.argv[9]
HZ = 99  # the shipped cpu probe's frequency per CPU
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


BUILT = ("/daemon/.libs/", "/cli/.libs/", "/bench/.libs/", "/tests/.libs/",
         "/tests/workloads/")


def other_build(path):
    """Whether path is in another build tree of vitals than this test's
    (a directory with config.status and daemon/, or, for a tree gone
    since, one of its programs' places): another test suite."""
    p = os.path.dirname(path)
    while p not in ("", "/"):
        if (os.path.exists(os.path.join(p, "config.status"))
                and os.path.isdir(os.path.join(p, "daemon"))):
            return os.path.realpath(p) != builddir
        p = os.path.dirname(p)
    return (any(b in path for b in BUILT)
            and not os.path.realpath(path).startswith(builddir + "/"))


def known_load(label):
    """Whether exe label is a known load: a VITALS_CALM_LOAD exe, or
    another test suite's processes (its workloads, daemons, commands) on
    a machine shared with other builds (see the header)."""
    label = label or ""
    if os.path.basename(label) in load:
        return True
    if label.startswith("/tmp/vitals-test.") and not label.startswith(d + "/"):
        return True
    return label.startswith("/") and other_build(label)


def other_suite(f):
    return known_load(f.get("label"))


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
      "%d warnings naming known load (other suites' processes, %s) not counted" % (
          len(calm), hms(calm_from * NS), hms(calm_to * NS), len(marked),
          100.0 * len(marked) / max(1, len(calm)), len(discounted),
          ", ".join(sorted(load)) or "-"))
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


def foreign(part, seconds):
    """The share of the machine's CPU time that processes other than the
    known load, vitalsd and the test's own workloads used in part."""
    cpu = json.load(open(os.path.join(d, "cpu-%s.json" % part)))
    cpu = cpu.get("vitals", {}).get("cpu", {})
    used = sum(x["count"] for x in cpu.get("exes", [])
               if not known_load(x["exe"]) and not x["exe"].startswith(d + "/")
               and os.path.basename(x["exe"]) not in ("vitalsd", "lt-vitalsd"))
    return used / float(HZ * ncpu * max(1, seconds))


busy = {"calm": foreign("calm", calm_to - calm_from),
        "faults": foreign("faults", int(open(os.path.join(
            d, "range.txt")).read().split()[3]) - calm_to)}
print("other work than the known load used %.0f%% of the CPUs in the calm "
      "epochs, %.0f%% while the faults ran" % (100 * busy["calm"],
                                               100 * busy["faults"]))

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
    """The first of the exes ranked that is not a known load: on a shared
    machine another suite's benchmark may out-write fsync_writer."""
    ranked = [x for x in top_exes(w, vital) if not known_load(x)]
    return ranked[0] if ranked else None


def explain(w, exe, b, flt, vital):
    """Why w was missed: the filter's findings in its epochs, whoever they
    name, and how the vital's epochs sampled it (t, samples kept and
    dropped, the slots its samples are in and who else is sampled there)."""
    vitals = {vital}
    for f in fs:
        if f["filter"] == flt and b < f["end_ns"] <= b + 2 * epoch * NS:
            print("    %s %s %s: %s" % (hms(f["end_ns"]), f["severity"],
                                       f.get("label"), f["text"][:240]))
            vitals.add(f.get("vital") or vital)
    for e in epochs:
        if not b <= e["start_ns"] < b + 2 * epoch * NS:
            continue
        out = subprocess.run([vitals_cli, "show", e["path"], "--json"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print("    %s: vitals show failed: %s" % (e["path"], out.stderr))
            continue
        for v in json.loads(out.stdout)["vitals"]:
            if v["name"] not in vitals:
                continue
            samples = v.get("samples", [])
            mine = [s for s in samples if s.get("exe") == exe]
            slots = sorted(set(s["slot"] for s in mine))
            others = ["%s@%d" % (s.get("exe") or s.get("comm"), s["count"])
                      for s in samples
                      if s["slot"] in slots and s.get("exe") != exe]
            print("    epoch %s %s: t %d, %d samples, %d dropped, %d unique; "
                  "%s's counts %s in slots %s; others there: %s" % (
                      hms(e["start_ns"]), v["name"], v["threshold"],
                      len(samples), v["samples_dropped"], v["unique"],
                      os.path.basename(exe), [s["count"] for s in mine],
                      slots, ", ".join(others) or "none"))


MEANT = {
    "busy": ("ewma", "cpu"), "signal_storm": ("ewma", "signal"),
    "mem_leak": ("ewma", "umem"), "udp_sender": ("ewma", "socket"),
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
        "; ".join("%s %s: %s" % (f["filter"], f["severity"], f["text"][:400])
                  for f in mine[:3])))
    if not hit:
        bad.append("%s: not flagged by %s within 2 epochs" % (w, flt))
        explain(w, exe, b, flt, vital)
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
if bad and max(busy.values()) > 0.25 and not force:
    print("SKIP: other work than the known load kept the CPUs %.0f%% busy: "
          "that work was measured, not the filters (VITALS_CALM_FORCE=1 "
          "fails instead)" % (100 * max(busy.values())), file=sys.stderr)
    sys.exit(77)
sys.exit(1 if bad else 0)
PY
