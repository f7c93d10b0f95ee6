#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/disk.sh: the store's disk use per day.  Runs vitalsd with the
# shipped configuration twice, on a quiet machine and under bench/soak.sh's
# churn, keeps what each run stored, and prints with bench/epochsize the
# bytes per epoch and MB/day of those same epochs written in the old
# format (1) and the compact one, part by part.  Needs root and a built
# tree; prints, asserts nothing.
#
#   bench/disk.sh [--minutes M] [--epoch SECONDS] [--exes N]
#                 [--budget SIZE] [--base DIR] [--reuse]
#
# Defaults: 5 minutes per run, 60 s epochs (the shipped length), 400
# executables, the shipped disk budget.  --budget SIZE runs both again
# with sketch.disk_budget set to SIZE (e.g. 8K; 0: off) after the
# shipped runs, as runs quiet-budget and churn-budget.  The stores are
# kept in bench/store-disk-NAME of the build tree; --reuse measures them
# again without running the daemon.  --base DIR runs an older build
# tree's vitalsd beside this one in every run, with its own shipped
# configuration and store (bench/store-disk-NAME-base), so both
# see the same machine, and prints its figures after this build's.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
top=${top_builddir:-$src}
cd "$top" || exit 1
minutes=5 epoch=60 exes=400 reuse=0 budget= base=
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=${2:?--minutes needs a value}; shift 2 ;;
	--epoch) epoch=${2:?--epoch needs a value}; shift 2 ;;
	--exes) exes=${2:?--exes needs a value}; shift 2 ;;
	--budget) budget=${2:?--budget needs a size}; shift 2 ;;
	--base) base=${2:?--base needs a build directory}; shift 2 ;;
	--reuse) reuse=1; shift ;;
	-h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "disk: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$minutes" "$epoch" "$exes"; do
	case $v in
	''|*[!0-9]*|0) echo "disk: '$v' is not a positive integer" >&2; exit 2 ;;
	esac
done
if [ -n "$base" ]; then
	base=$(cd "$base" 2>/dev/null && pwd) && [ -x "$base/daemon/vitalsd" ] ||
		{ echo "disk: --base: no built daemon/vitalsd there" >&2; exit 2; }
fi
[ -x bench/epochsize ] || { echo "disk: bench/epochsize is not built (make bench/epochsize)" >&2; exit 2; }

. "$src/bench/churn.sh"
churn_tmp disk

# start NAME TREE [BUDGET]: TREE's vitalsd in the background (pid in
# $daemon), its store in bench/store-disk-NAME, sketch.disk_budget set to
# BUDGET if given.
start() {
	rm -rf "bench/store-disk-$1"
	sed -e "s|^epoch: .*|epoch: ${epoch}s|" \
	    -e "s|^data_dir: .*|data_dir: $top/bench/store-disk-$1|" \
	    ${3:+-e "s|^  disk_budget: .*|  disk_budget: $3|"} \
	    "$(churn_conf "$2")" >"$tmp/vitals-$1.yaml"
	VITALS_PLUGIN_PATH="$2/probes:$2/filters:$2/outputs" \
	    "$2/daemon/vitalsd" -c "$tmp/vitals-$1.yaml" 2>"$tmp/vitalsd-$1.log" &
	daemon=$!
}

# stop NAME: stop $daemon, which must still be running.
stop() {
	kill -0 "$daemon" 2>/dev/null ||
		{ tail -20 "$tmp/vitalsd-$1.log" >&2; echo "disk: vitalsd ($1) died" >&2; exit 1; }
	kill -INT "$daemon"
	wait "$daemon"
	daemon=
}

# run NAME CHURN [BUDGET]: vitalsd for the minutes asked, its store into
# bench/store-disk-NAME (and --base's into bench/store-disk-NAME-base),
# with the churn running alongside if CHURN is 1, and
# sketch.disk_budget set to BUDGET if given.
run() {
	basepid=
	if [ -n "$base" ]; then
		start "$1-base" "$base" ${3:+"$3"}
		basepid=$daemon
	fi
	start "$1" "$top" ${3:+"$3"}
	if [ "$2" -eq 1 ]; then
		churn "$tmp" "$exes" &
		cpid=$!
	fi
	echo "disk: $1: vitalsd (pid $daemon) for $minutes min, ${epoch} s epochs" >&2
	sleep $((minutes * 60))
	if [ "$2" -eq 1 ]; then
		kill "$cpid" 2>/dev/null
		wait "$cpid" 2>/dev/null
	fi
	stop "$1"
	if [ -n "$basepid" ]; then
		daemon=$basepid
		stop "$1-base"
	fi
}

if [ "$reuse" -eq 0 ]; then
	[ "$(id -u)" -eq 0 ] || { echo "disk: needs root (the kernel probes)" >&2; exit 2; }
	for f in daemon/vitalsd tests/workloads/busy; do
		[ -x "$f" ] || { echo "disk: $f is not built: run make and make check" >&2; exit 2; }
	done
	churn_prepare "$tmp" "$exes"
	run quiet 0
	run churn 1
	if [ -n "$budget" ]; then
		run quiet-budget 0 "$budget"
		run churn-budget 1 "$budget"
	fi
fi
names="quiet churn"
[ -z "$budget" ] || names="$names quiet-budget churn-budget"
[ -z "$base" ] || names=$(for n in $names; do printf '%s %s-base ' "$n" "$n"; done)
for name in $names; do
	echo "== $name: $(find "bench/store-disk-$name" -name '*.json.gz' | wc -l) epochs"
	bench/epochsize "bench/store-disk-$name"
done
