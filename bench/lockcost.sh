#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/lockcost.sh: what vitalsd costs a workload that does nothing but
# contend for a kernel lock.  tests/workloads/lock_contention's threads map,
# touch and unmap a page in a loop, so they wait for their process's
# mmap_lock; each round runs it with no monitor, under vitalsd with the
# shipped configuration, and under the same configuration without the lock
# probe, in turn (the order reversed every other round), and prints the
# workload's operations a second under each, their medians and the ratios
# to no monitor: what the lock probe adds is the gap between the last two.
# With --base DIR, each round also runs DIR's vitalsd (an older build tree)
# with its own shipped configuration, and the paired difference between
# the two builds is printed.  Prints; asserts nothing.
#
#   bench/lockcost.sh [--rounds N] [--seconds S] [--threads T] [--base DIR]
#
# Defaults: 4 rounds of 5 s per run, 4 threads.  Needs root and a built
# tree with the workloads (`make bench-lockcost` builds what it needs; run
# from the tree, or with top_builddir).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "${top_builddir:-$src}" && pwd)
rounds=4 secs=5 threads=4 base=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
	--seconds) secs=${2:?--seconds needs a value}; shift 2 ;;
	--threads) threads=${2:?--threads needs a value}; shift 2 ;;
	--base) base=${2:?--base needs a build tree}; shift 2 ;;
	-h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "lockcost: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$rounds" "$secs" "$threads"; do
	case $v in
	''|*[!0-9]*|0) echo "lockcost: '$v' is not a positive integer" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "lockcost: needs root (the kernel probes)" >&2; exit 2; }
wl=$top/tests/workloads/lock_contention
[ -x "$top/daemon/vitalsd" ] || { echo "lockcost: $top/daemon/vitalsd is not built" >&2; exit 2; }
[ -x "$wl" ] || { echo "lockcost: $wl is not built (make bench-lockcost builds it)" >&2; exit 2; }
if [ -n "$base" ]; then
	base=$(cd "$base" 2>/dev/null && pwd) && [ -x "$base/daemon/vitalsd" ] ||
		{ echo "lockcost: --base: no built daemon/vitalsd in that tree" >&2; exit 2; }
fi

cd "$top" || exit 1
. "$src/bench/churn.sh"
churn_tmp lockcost
conf=$(churn_conf "$top")
# The shipped file less its lock probe: the "  lock:" key and what is
# indented under it.
awk '/^  lock:/ { skip = 1; next } skip && /^    / { next } { skip = 0; print }' \
	"$conf" >"$tmp/nolock.yaml"
grep -q '^  lock:' "$conf" ||
	{ echo "lockcost: $conf has no lock probe to leave out" >&2; exit 2; }

# measure NAME [CONFIG [TREE]]: the workload's operations a second, under
# vitalsd (TREE's, this tree's by default) with CONFIG if given.
measure() {
	if [ $# -gt 1 ]; then
		t=${3:-$top}
		rm -rf "$tmp/data"
		VITALS_PLUGIN_PATH="$t/probes:$t/filters:$t/outputs" \
			"$t/daemon/vitalsd" -c "$2" -D "$tmp/data" >"$tmp/$1.log" 2>&1 &
		daemon=$!
		churn_started lockcost "$tmp/$1.log" "$daemon"
		sleep 2 # its first sightings' burst
	fi
	ops=$("$wl" "$secs" "$threads" | sed -n 's/.*"ops":\([0-9]*\).*/\1/p')
	if [ -n "$daemon" ]; then
		kill -INT "$daemon"
		wait "$daemon"
		daemon=
	fi
	[ -n "$ops" ] || { echo "lockcost: the workload printed no ops" >&2; exit 1; }
	echo "$1 $((ops / secs))" >>"$tmp/ops"
	printf '  %-8s %10d ops/s\n' "$1" $((ops / secs))
}

[ -z "$base" ] || base_conf=$(churn_conf "$base")

echo "lockcost: lock_contention, $threads threads, $rounds round(s) of $secs s per run"
r=1
while [ "$r" -le "$rounds" ]; do
	echo "round $r"
	if [ $((r % 2)) -eq 1 ]; then
		measure none
		measure vitalsd "$conf"
		measure nolock "$tmp/nolock.yaml"
		[ -z "$base" ] || measure base "$base_conf" "$base"
	else
		[ -z "$base" ] || measure base "$base_conf" "$base"
		measure nolock "$tmp/nolock.yaml"
		measure vitalsd "$conf"
		measure none
	fi
	r=$((r + 1))
done
python3 - "$tmp/ops" <<'EOF'
import math, statistics, sys
ops = {}
for line in open(sys.argv[1]):
    name, v = line.split()
    ops.setdefault(name, []).append(int(v))
none = statistics.median(ops["none"])
print("median ops/s (ratio to no monitor):")
for name, what in (("none", "no monitor"),
                   ("vitalsd", "vitalsd, shipped file"),
                   ("nolock", "vitalsd without lock"),
                   ("base", "the base build's vitalsd")):
    if name not in ops:
        continue
    m = statistics.median(ops[name])
    print("  %-24s %10.0f  %.3f" % (what, m, m / none))
# Paired by round: a round's runs saw the same machine.
pairs = [("vitalsd", "none", "vitalsd"), ("vitalsd", "nolock", "the lock probe")]
if "base" in ops:
    pairs += [("base", "none", "the base build"),
              ("vitalsd", "base", "this build over the base")]
for name, base, what in pairs:
    d = [100 * (a - b) / z for a, b, z in
         zip(ops[name], ops[base], ops["none"])]
    se = (" +- %.1f" % (statistics.stdev(d) / math.sqrt(len(d)))
          if len(d) > 1 else "")
    print("%s, paired by round: %+.1f%%%s of the workload's throughput" %
          (what, statistics.mean(d), se))
print("(mean +- standard error over %d rounds)" % len(ops["none"]))
EOF
