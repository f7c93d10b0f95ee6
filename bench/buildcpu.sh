#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/buildcpu.sh: the collector's CPU epoch after epoch while the machine
# is busy with a parallel build (this project's own, from a copy of its
# source, `make clean` and `make -j` over and over), vitalsd with the
# shipped configuration and short epochs; with --base, an older build run
# in turn with this one under the same build, rounds alternating.  Prints
# per run the daemon's own CPU (/proc), the events per second its epochs
# counted, samples kept and dropped, and per epoch its collector CPU in
# parts (vitals.cpu.sampling: what t steers, handling the samples;
# .fixed: start-up and the boundary's work; .other: the steady work, metrics
# each second and timers; .programs: the BPF programs counting events; an
# older build stores fewer) and each vital's t.  With --floor, bench/floor
# (empty programs on the same tracepoints, cpu-clock sampled at 99 Hz) is
# run in turn too, its run-time statistics on, and its programs' CPU is
# printed: what any monitor of these events pays before it counts.  With
# --exact, bench/floor --exact is run in turn the same way: the floor's
# programs each counting their event with one atomic add under a label
# like the probe's, what the simplest exact per-label count pays.
# Prints; asserts nothing.
#
#   bench/buildcpu.sh [--rounds N] [--seconds S] [--epoch SECONDS]
#                     [--jobs J] [--base DIR] [--floor] [--exact]
#
# Defaults: 2 rounds of 60 s per build, 20 s epochs, make -j twice the
# CPUs.  Needs root and a built tree (run from it, or with top_builddir).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "${top_builddir:-$src}" && pwd)
rounds=2 secs=60 epoch=20 jobs=$(($(nproc) * 2)) base= floor= exact=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
	--seconds) secs=${2:?--seconds needs a value}; shift 2 ;;
	--epoch) epoch=${2:?--epoch needs a value}; shift 2 ;;
	--jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
	--base) base=${2:?--base needs a directory}; shift 2 ;;
	--floor) floor=1; shift ;;
	--exact) exact=1; shift ;;
	-h|--help) sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "buildcpu: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$rounds" "$secs" "$epoch" "$jobs"; do
	case $v in
	''|*[!0-9]*|0) echo "buildcpu: '$v' is not a positive integer" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "buildcpu: needs root (the kernel probes)" >&2; exit 2; }
for b in "$top" $base; do
	[ -x "$b/daemon/vitalsd" ] && [ -x "$b/cli/vitals" ] ||
		{ echo "buildcpu: $b is not a built tree (daemon/vitalsd, cli/vitals)" >&2; exit 2; }
done
[ -z "$base" ] || base=$(cd "$base" && pwd)
[ -z "$floor$exact" ] || [ -x "$top/bench/floor" ] ||
	{ echo "buildcpu: --floor and --exact need $top/bench/floor (make bench/floor)" >&2; exit 2; }

# churn_conf: each tree's own shipped file (an older one's may not know
# the keys of this one's).
. "$src/bench/churn.sh"
tmp=$(mktemp -d /var/tmp/vitals-buildcpu.XXXXXX) ||
	{ echo "buildcpu: cannot make a directory under /var/tmp" >&2; exit 1; }
daemon= builder=
cleanup() {
	[ -z "$builder" ] || kill -- -"$builder" 2>/dev/null
	[ -z "$daemon" ] || kill "$daemon" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# The workload: a configured copy of the source, built over and over.
echo "buildcpu: configuring a copy of the source for the build loop" >&2
git -C "$src" archive --format=tar HEAD 2>/dev/null | tar -x -C "$tmp" 2>/dev/null ||
	cp -a "$src/." "$tmp/"
mkdir -p "$tmp/b"
(cd "$tmp" && { [ -x configure ] || autoreconf -fi >/dev/null 2>&1; } &&
	cd b && ../configure -q >/dev/null 2>&1) ||
	{ echo "buildcpu: cannot configure the copy" >&2; exit 1; }
# In a session of its own (set -m needs a terminal), so that the cleanup
# kills the loop and its makes as one process group.
setsid sh -c 'cd "$1" && while :; do make -s clean >/dev/null 2>&1;
	make -s -j"$2" >/dev/null 2>&1; done' buildloop "$tmp/b" "$jobs" &
builder=$!
sleep 5

# run NAME TREE: vitalsd of TREE for the seconds asked, then its figures.
run() {
	rm -rf "$tmp/data-$1"
	sed -e "s|^epoch: .*|epoch: ${epoch}s|" \
	    -e "s|^data_dir: .*|data_dir: $tmp/data-$1|" \
	    "$(churn_conf "$2")" >"$tmp/$1.yaml"
	VITALS_PLUGIN_PATH="$2/probes:$2/filters:$2/outputs" \
	    "$2/daemon/vitalsd" -c "$tmp/$1.yaml" >"$tmp/$1.log" 2>&1 &
	daemon=$!
	sleep "$secs"
	kill -0 "$daemon" 2>/dev/null ||
		{ tail -20 "$tmp/$1.log" >&2; echo "buildcpu: vitalsd died" >&2; exit 1; }
	own=$(python3 -c 'import os, sys
f = open("/proc/%s/stat" % sys.argv[1]).read().rsplit(")", 1)[1].split()
print("%.2f" % ((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")))' "$daemon")
	kill -INT "$daemon"
	wait "$daemon"
	daemon=
	for f in $(find "$tmp/data-$1" -name '*.json.gz' | sort); do
		"$2/cli/vitals" show "$f" --json | tr -d '\n'
		echo
	done | python3 -c '
import json, sys
name, own, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
eps = [json.loads(l) for l in sys.stdin if l.strip()]
L = sum(e["length_ns"] for e in eps) / 1e9 or 1
ev = sum(v["events"] for e in eps for v in e["vitals"])
kept = sum(len(v.get("samples", [])) for e in eps for v in e["vitals"])
drop = sum(v.get("samples_dropped", 0) for e in eps for v in e["vitals"])
print("%s: daemon CPU %.2f s in %.0f s (%.2f%% of a CPU); %.0f events/s; "
      "samples kept %d, dropped %d" % (name, own, secs, 100 * own / secs,
                                       ev / L, kept, drop))
for e in eps:
    m, l = e.get("metrics", {}), e["length_ns"] / 1e9
    part = lambda k: m.get("vitals.cpu." + k, {}).get("last")
    parts = " =" + " +".join(
        " %s %.2f%%" % (k, 100 * part(k) / l)
        for k in ("sampling", "fixed", "other", "programs")
        if part(k) is not None) if part("sampling") is not None else ""
    print("  %5.1f s epoch: collector %.2f%%%s; t %s" % (
        l, 100 * e["cpu_ns"] / 1e9 / l, parts,
        " ".join("%s=%d" % (v["name"], v["threshold"]) for v in e["vitals"])))
' "$1" "$own" "$secs"
	grep 'programs took' "$tmp/$1.log" | sed 's/^/  log: /'
}

# floor_run NAME [--exact]: bench/floor with its statistics for the
# seconds asked.
floor_run() {
	"$top/bench/floor" ${2:-} --stats --sample 99 >"$tmp/$1.out" 2>&1 &
	daemon=$!
	sleep "$secs"
	kill -INT "$daemon" 2>/dev/null
	wait "$daemon"
	daemon=
	awk -v name="$1" -v secs="$secs" '
	    /^floor: attached/ { what = substr($0, 8) }
	    /^floor: programs ran/ {
		n = $4; ns = $7; found = 1
		printf "%s: %s; programs %.2f%% of a CPU, %.0f runs/s, %.0f ns a run\n",
		    name, what, 100 * ns / 1e9 / secs, n / secs, n ? ns / n : 0
	    }
	    END { if (!found) printf "%s: no statistics (see below)\n", name }
	' "$tmp/$1.out"
	grep -q '^floor: programs ran' "$tmp/$1.out" || cat "$tmp/$1.out"
}

echo "buildcpu: make -j$jobs in a loop, $rounds round(s) of $secs s per build, ${epoch} s epochs" >&2
r=1
while [ "$r" -le "$rounds" ]; do
	[ -z "$base" ] || run "base-$r" "$base"
	run "this-$r" "$top"
	[ -z "$floor" ] || floor_run "floor-$r"
	[ -z "$exact" ] || floor_run "exact-$r" --exact
	r=$((r + 1))
done
