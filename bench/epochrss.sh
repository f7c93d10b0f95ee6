#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/epochrss.sh: vitalsd's peak resident memory per epoch.  Runs the
# daemon of each build given with the shipped configuration's filters,
# timescales and sketch sizes, its probes replaced by the synthetic probe
# at a high rate (no kernel probe: the same events in every run), and
# after each epoch file appears reads the process's peak resident memory
# (VmHWM) and resets it (clear_refs 5), so each figure is the peak of one
# epoch: collecting, closing, filtering, encoding and writing it.  With two
# builds it prints the second's figures over the first's.  Prints;
# asserts nothing.
#
#   bench/epochrss.sh [--epochs N] [--epoch SECONDS] [--rate R] BUILD [BASE]
#
# BUILD and BASE are build trees (daemon/vitalsd, probes/, filters/,
# outputs/); BASE, when given, runs first and is the "before".  Defaults:
# 20 epochs of 2 s, 200000 events per second per vital, six vitals.  The
# first 2 epochs (filter queues filling, the store's first directory) are
# left out of the summary.
set -u
cd "$(dirname "$0")/.."
src=$PWD
epochs=20 epoch=2 rate=200000
while [ $# -gt 0 ]; do
	case $1 in
	--epochs) epochs=${2:?--epochs needs a value}; shift 2 ;;
	--epoch) epoch=${2:?--epoch needs a value}; shift 2 ;;
	--rate) rate=${2:?--rate needs a value}; shift 2 ;;
	-h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "epochrss: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] && [ $# -le 2 ] ||
	{ echo "epochrss: give one build tree, or a base and a build (see --help)" >&2; exit 2; }
for v in "$epochs" "$epoch" "$rate"; do
	case $v in
	''|*[!0-9]*|0) echo "epochrss: '$v' is not a positive integer" >&2; exit 2 ;;
	esac
done
[ "$epochs" -gt 3 ] || { echo "epochrss: --epochs must be at least 4" >&2; exit 2; }
for b in "$@"; do
	[ -x "$b/daemon/vitalsd" ] ||
		{ echo "epochrss: $b/daemon/vitalsd is not built" >&2; exit 2; }
done

tmp=$(mktemp -d /var/tmp/vitals-epochrss.XXXXXX) ||
	{ echo "epochrss: cannot make a directory under /var/tmp" >&2; exit 1; }
daemon=
cleanup() {
	[ -n "$daemon" ] && kill -INT "$daemon" 2>/dev/null && wait "$daemon"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The shipped file with a short epoch, a data dir of its own, and the
# synthetic probe instead of the probes section.
config() {
	awk -v epoch="$epoch" -v data="$1" -v rate="$rate" '
	/^epoch:/ { print "epoch: " epoch "s"; next }
	/^data_dir:/ { print "data_dir: " data; next }
	/^probes:/ {
		print "probes:"
		print "  synthetic:"
		print "    vitals: [cpu, sched, diskio, lock, socket, kmem]"
		print "    rate: " rate
		print "    labels: 5000"
		print "    exes: 200"
		print "    stack_depth: 16"
		skip = 1; next
	}
	skip && /^[^ #]/ { skip = 0 }
	!skip { print }
	' "$src/conf/vitals.yaml"
}

# run BUILD NAME: one daemon for $epochs epochs; the per-epoch peaks (kB)
# go to $tmp/NAME, one a line.
run() {
	data="$tmp/$2-data"
	config "$data" >"$tmp/$2.yaml"
	VITALS_PLUGIN_PATH="$1/probes:$1/filters:$1/outputs" \
	    "$1/daemon/vitalsd" -c "$tmp/$2.yaml" --epochs "$epochs" \
	    2>"$tmp/$2.log" &
	daemon=$!
	: >"$tmp/$2"
	seen=0
	while kill -0 "$daemon" 2>/dev/null; do
		n=$(find "$data" -name '*.json.gz' 2>/dev/null | wc -l)
		if [ "$n" -gt "$seen" ]; then
			hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$daemon/status" 2>/dev/null)
			echo 5 >"/proc/$daemon/clear_refs" 2>/dev/null
			[ -n "$hwm" ] && echo "$hwm" >>"$tmp/$2"
			seen=$n
		fi
		sleep 0.1
	done
	wait "$daemon"
	rc=$?
	daemon=
	[ "$rc" -eq 0 ] || { tail -20 "$tmp/$2.log" >&2; echo "epochrss: $1: vitalsd exited $rc" >&2; exit 1; }
	size=$(du -sk "$data" | cut -f1)
	echo "epochrss: $1: $seen epochs, store $size kB"
}

# summary NAME: "min median max" of the peaks after the first two epochs.
summary() {
	tail -n +3 "$tmp/$1" | sort -n | awk '
	{ v[NR] = $1 }
	END { if (NR == 0) { print "- - -"; exit }
	      printf "%d %d %d\n", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

echo "epochrss: $epochs epochs of ${epoch} s, synthetic probe at $rate events/s per vital (6 vitals), shipped filters"
names=
i=0
for b in "$@"; do
	i=$((i + 1))
	run "$b" "b$i"
	names="$names b$i"
done
printf '%-44s %10s %10s %10s\n' "build: peak resident kB per epoch" min median max
i=0
for b in "$@"; do
	i=$((i + 1))
	printf '%-44s %10s %10s %10s\n' "$b" $(summary "b$i")
done
if [ $# -eq 2 ]; then
	set -- $(summary b1) $(summary b2)
	printf '%-44s %10s %10s %10s\n' "ratio (second / first)" \
	    $(awk -v a="$1" -v b="$4" 'BEGIN { printf "%.2f", b / a }') \
	    $(awk -v a="$2" -v b="$5" 'BEGIN { printf "%.2f", b / a }') \
	    $(awk -v a="$3" -v b="$6" 'BEGIN { printf "%.2f", b / a }')
fi
