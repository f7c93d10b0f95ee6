#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/soak.sh: vitalsd with the default configuration (every probe this
# machine supports, every filter, the store) for a long run under churn,
# printing the daemon's memory, descriptors, CPU and store once a minute,
# and at the end how its resident memory moved.  A daemon meant to run all
# year must not grow with the processes it has seen: here thousands of
# processes of hundreds of distinct executables come and go, alongside the
# probe tests' workloads, so its caches (exe ids, symbols, ELF files, build
# ids, BPF maps) fill and turn over many times.  Prints; asserts nothing.
#
#   bench/soak.sh [--minutes M] [--epoch SECONDS] [--exes N] [--fill]
#                 [--rollups A,B,C] [--budget SIZE] [--ringbuf SIZE]
#                 [--build DIR] [--base DIR]
#
# Defaults: 30 minutes, 10 s epochs (so the run closes as many epochs as
# 3 hours of the default 60 s ones would, with their 5-minute and hourly
# rollups), 400 distinct executables.  --fill replaces the timescales
# with 2, 4 and 8 epochs, so that every filter queue (base, and three
# rollups like 5m, 1h and 1d) is full after 128 epochs and the steady
# state is measured, not estimated; without --minutes it then runs until
# two minutes past that.  But rollups of 2 to 8 epochs hold fewer samples
# than an hour's or a day's (60 and 1440 epochs; a rollup keeps at most
# sketch.max_samples a vital): --rollups A,B,C (implies --fill) makes the
# timescales A, B and C epochs, e.g. 5,60,120 (where the day's bound is
# reached), for the steady state of the shipped timescales at the cost of
# a longer run (16 * C epochs).  --build is the built tree to run
# (default: the one this script is in); --base an older build run beside
# it, under the same churn, for before/after columns.  At the end it says
# where each daemon's resident memory is (heap, BPF maps, files).
# --budget SIZE sets sketch.disk_budget in both daemons' files (0: none,
# so under the churn every epoch, rollup and queued copy is at its sample
# bound: the worst case of the queues).  --ringbuf SIZE sets every BPF
# probe's ringbuf in the file of the daemon under test only (with --base
# the same build, the two columns compare ring sizes: the last lines say
# how many samples each daemon's rings lost that its stores had room
# for).  Needs root and a built tree.
set -u
cd "$(dirname "$0")/.."
src=$PWD
build=$PWD base= minutes= epoch=10 exes=400 fill=0 budget= ringbuf=
r1=2 r2=4 r3=8
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=${2:?--minutes needs a value}; shift 2 ;;
	--epoch) epoch=${2:?--epoch needs a value}; shift 2 ;;
	--exes) exes=${2:?--exes needs a value}; shift 2 ;;
	--fill) fill=1; shift ;;
	--rollups)
		r=${2:?--rollups needs A,B,C} fill=1
		case $r in
		*,*,*,*) r= ;;
		*,*,*) ;;
		*) r= ;;
		esac
		[ -n "$r" ] || { echo "soak: --rollups needs three counts, A,B,C" >&2; exit 2; }
		r1=${r%%,*} r=${r#*,} r2=${r%%,*} r3=${r#*,}
		shift 2 ;;
	--budget) budget=${2:?--budget needs a size}; shift 2 ;;
	--ringbuf) ringbuf=${2:?--ringbuf needs a size}; shift 2 ;;
	--build) build=${2:?--build needs a directory}; shift 2 ;;
	--base) base=${2:?--base needs a directory}; shift 2 ;;
	-h|--help) sed -n '3,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "soak: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$epoch" "$r1" "$r2" "$r3" "$exes" ${minutes:+"$minutes"}; do
	case $v in
	''|*[!0-9]*|0) echo "soak: '$v' is not a positive integer" >&2; exit 2 ;;
	esac
done
[ -n "$minutes" ] || { [ $fill -eq 1 ] && minutes=$((16 * r3 * epoch / 60 + 2)) || minutes=30; }
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (the kernel probes)" >&2; exit 2; }
for b in "$build" $base; do
	for f in daemon/vitalsd tests/workloads/busy; do
		[ -x "$b/$f" ] || { echo "soak: $b/$f is not built: run scripts/build.sh and make check" >&2; exit 2; }
	done
done
build=$(cd "$build" && pwd)
. "$src/bench/churn.sh"
[ -z "$base" ] || base=$(cd "$base" && pwd)

tmp=$(mktemp -d /var/tmp/vitals-soak.XXXXXX) ||
	{ echo "soak: cannot make a directory under /var/tmp" >&2; exit 1; }
daemon= based= churner=
cleanup() {
	[ -z "$churner" ] || kill "$churner" 2>/dev/null
	for p in $daemon $based; do kill -INT "$p" 2>/dev/null && wait "$p"; done
	jobs -p | xargs -r kill 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# with_ringbuf FILE: ringbuf $ringbuf on every probe of FILE's probes:
# section but proc and synthetic (not BPF), as "  NAME: {}" or a block.
with_ringbuf() {
	awk -v rb="$ringbuf" '
	/^probes:/ { p = 1; print; next }
	p && /^[^ #]/ { p = 0 }
	p && /^  (proc|synthetic):/ { print; next }
	p && /^  [a-z_]+: \{\}$/ { sub(/\{\}$/, "{ ringbuf: " rb " }"); print; next }
	p && /^  [a-z_]+:$/ { print; print "    ringbuf: " rb; next }
	{ print }' "$1" >"$1.rb" && mv "$1.rb" "$1"
}

# start NAME BUILD: BUILD's shipped file with a short epoch (and with
# --fill short timescales) and a data dir of its own, run by BUILD's
# vitalsd; its pid in $started.
start() {
	sed -e "s|^epoch: .*|epoch: ${epoch}s|" -e "s|^data_dir: .*|data_dir: $tmp/$1|" \
	    ${budget:+-e "s|^  disk_budget: .*|  disk_budget: $budget|"} \
	    "$(churn_conf "$2")" >"$tmp/$1.yaml"
	[ $fill -eq 0 ] || sed -i "s|^timescales: .*|timescales: [$((r1 * epoch))s, $((r2 * epoch))s, $((r3 * epoch))s]|" \
	    "$tmp/$1.yaml"
	[ -z "$ringbuf" ] || [ "$1" != data ] || with_ringbuf "$tmp/$1.yaml"
	VITALS_PLUGIN_PATH="$2/probes:$2/filters:$2/outputs" \
	    "$2/daemon/vitalsd" -c "$tmp/$1.yaml" 2>"$tmp/$1.log" &
	started=$!
}
start data "$build"
daemon=$started
if [ -n "$base" ]; then
	start base "$base"
	based=$started
fi
cd "$build"

# The churn (bench/churn.sh): distinct executables, and the workloads.
churn_prepare "$tmp" "$exes"
churn "$tmp" "$exes" &
churner=$!

# status PID FIELD: a field of a daemon's /proc status, in kB.
status() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
# cpu_ticks PID: a daemon's user + system CPU so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# maps_kb PID: the kernel memory of a daemon's BPF maps (memlock of each
# map: sketches, sample ring buffers, the probes' own tables), each map
# once however many descriptors hold it (the probes share their sketches').
maps_kb() {
	for f in /proc/$1/fdinfo/*; do
		grep -q '^map_type' "$f" 2>/dev/null &&
		    awk '$1 == "memlock:" { m = $2 } $1 == "map_id:" { id = $2 }
			END { print id, m }' "$f"
	done | awk '!seen[$1]++ { s += $2 } END { printf "%d", s / 1024 }'
}
hz=$(getconf CLK_TCK)
# breakdown PID: where a daemon's resident memory is, in kB, from its
# smaps: the malloc heap (the brk heap and anonymous maps: glibc maps
# blocks of 128 kB and more on their own), the BPF maps mapped in (ring
# buffers, twice each), files (the daemon, libraries, plugins) and the
# rest (stack, vdso).
breakdown() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / {
		if ($6 == "" || $6 == "[heap]") k = "heap"
		else if ($6 ~ /bpf-map/) k = "bpf"
		else if ($6 ~ /^\//) k = "files"
		else k = "other"
	}
	/^Rss:/ { r[k] += $2; t += $2 }
	END { printf "%d kB: heap %d, BPF maps %d, files %d, other %d\n",
	    t, r["heap"], r["bpf"], r["files"], r["other"] }' "/proc/$1/smaps"
}

echo "soak: vitalsd (pid $daemon${base:+, and pid $based of $base}), ${epoch} s epochs, $exes executables, $minutes minutes"
# Memory grows by design until every filter queue is full: filter_queue
# epochs per timescale, the base one first, each longer one a rollup at a time.
q=$(awk '/^filter_queue:/ { print $2 }' "$tmp/data.yaml")
if [ $fill -eq 1 ]; then
	echo "soak: timescales $((r1 * epoch)) s, $((r2 * epoch)) s, $((r3 * epoch)) s: the filter queues ($q epochs each) fill at $((q * epoch)) s, $((q * r1 * epoch)) s, $((q * r2 * epoch)) s and $((q * r3 * epoch)) s"
else
	echo "soak: the filter queues ($q epochs each) fill at $((q * epoch / 60)) min (base), $((q * 5)) min (5m), ${q} h (1h), ${q} d (1d)"
fi
if [ -n "$base" ]; then
	printf '%4s %8s %8s %7s | %8s %8s %7s   (base: %s)\n' min rss_kb hwm_kb maps_kb rss_kb hwm_kb maps_kb "$base"
else
	printf '%4s %8s %8s %7s %5s %7s %7s %9s %8s\n' min rss_kb hwm_kb maps_kb fds threads epochs store_kb cpu_%
fi
sleep 5
for p in $daemon $based; do
	kill -0 "$p" 2>/dev/null || { cat "$tmp"/*.log >&2; echo "soak: vitalsd did not start" >&2; exit 1; }
done
t0=$(cpu_ticks "$daemon")
[ -z "$base" ] || b0=$(cpu_ticks "$based")
m=0
: >"$tmp/rss"
while [ $m -lt "$minutes" ]; do
	c0=$(cpu_ticks "$daemon")
	sleep 60
	m=$((m + 1))
	for p in $daemon $based; do
		kill -0 "$p" 2>/dev/null || { echo "soak: vitalsd $p died at minute $m" >&2; tail -20 "$tmp"/*.log >&2; exit 1; }
	done
	rss=$(status "$daemon" VmRSS)
	brss=
	[ -z "$base" ] || brss=$(status "$based" VmRSS)
	echo "$m $rss $brss" >>"$tmp/rss"
	if [ -n "$base" ]; then
		printf '%4d %8s %8s %7s | %8s %8s %7s\n' "$m" "$rss" "$(status "$daemon" VmHWM)" \
		    "$(maps_kb "$daemon")" "$brss" "$(status "$based" VmHWM)" "$(maps_kb "$based")"
		continue
	fi
	printf '%4d %8s %8s %7s %5s %7s %7s %9s %8.2f\n' "$m" "$rss" "$(status "$daemon" VmHWM)" \
	    "$(maps_kb "$daemon")" "$(ls "/proc/$daemon/fd" | wc -l)" "$(status "$daemon" Threads)" \
	    "$(find "$tmp/data" -name '*.json.gz' | wc -l)" \
	    "$(du -sk "$tmp/data" | cut -f1)" \
	    "$(echo "$(cpu_ticks "$daemon") $c0 $hz" | awk '{ print ($1 - $2) / $3 / 60 * 100 }')"
done
t1=$(cpu_ticks "$daemon")
[ -z "$base" ] || b1=$(cpu_ticks "$based")
echo "soak: resident at the end: $(breakdown "$daemon")"
[ -z "$base" ] || echo "soak: the base's: $(breakdown "$based")"
rc=0
for p in $daemon $based; do
	kill -INT "$p"
	wait "$p" || rc=$?
done
daemon= based=
kill "$churner" 2>/dev/null
churner=
jobs -p | xargs -r kill 2>/dev/null
wait 2>/dev/null

# Resident memory's trend over the second half of the run (least squares),
# and the mean of the last quarter against the first quarter after warm-up.
awk -v n="$minutes" -v base="$base" '
{ t[NR] = $1; r[NR] = $2; o[NR] = $3 }
END {
	h = int(NR / 2) + 1
	for (i = h; i <= NR; i++) { sx += t[i]; sy += r[i]; k++ }
	mx = sx / k; my = sy / k
	for (i = h; i <= NR; i++) { sxy += (t[i] - mx) * (r[i] - my); sxx += (t[i] - mx) ^ 2 }
	q = int(NR / 4); if (q < 1) q = 1
	for (i = 1; i <= q; i++) a += r[i]
	for (i = NR - q + 1; i <= NR; i++) { b += r[i]; ob += o[i] }
	printf "soak: resident memory: first quarter %.0f kB, last quarter %.0f kB (%+.1f%%)\n", a / q, b / q, (b - a) / a * 100
	if (sxx > 0)
		printf "soak: trend over the second half: %+.1f kB per hour\n", sxy / sxx * 60
	if (base != "" && ob > 0)
		printf "soak: last quarter against the base: %.0f kB / %.0f kB = %.2f\n", b / q, ob / q, b / ob
}' "$tmp/rss"
[ $fill -eq 1 ] || [ "$minutes" -ge $((q * 5)) ] ||
	echo "soak: the 5-minute filter queue was still filling (full at $((q * 5)) min): growth is expected until then"
[ $fill -eq 0 ] || [ $((minutes * 60)) -ge $((q * r3 * epoch)) ] ||
	echo "soak: the longest filter queue was still filling (full at $((q * r3 * epoch)) s)"
echo "$t0 $t1 $hz $minutes" | awk '{ printf "soak: vitalsd CPU: %.2f%% of one CPU on average\n", ($2 - $1) / $3 / ($4 * 60) * 100 }'
[ -z "$base" ] ||
	echo "$b0 $b1 $hz $minutes" | awk '{ printf "soak: the base'"'"'s CPU: %.2f%% of one CPU on average\n", ($2 - $1) / $3 / ($4 * 60) * 100 }'
# ring_lost DIR: samples the rings lost in DIR's stored epochs (their
# metric vitals.rings.lost), whether or not the store had room, and in
# how many epochs: the log's count leaves out those where it had none,
# and the last minute's.
ring_lost() {
	find "$1" -name '*.json.gz' | python3 -c '
import gzip, json, sys
n = k = m = 0
for f in sys.stdin.read().split():
    x = json.load(gzip.open(f)).get("metrics", {}).get("vitals.rings.lost")
    d = round(x["mean"] * x["n"]) if x else 0
    n += d; k += d > 0; m += 1
print("%d in %d of %d epochs" % (n, k, m))'
}
for l in "$tmp"/*.log; do
	echo "soak: $(basename "$l" .log): log lines: $(wc -l <"$l"), of which errors: $(grep -c 'error' "$l"), warnings: $(grep -c 'warn' "$l"); samples a full ring lost that the store had room for: $(sed -n 's/.*: \([0-9]*\) sample(s) lost to a full ring.*/\1/p' "$l" | awk '{ n += $1 } END { print n + 0 }'); lost to a full ring in all, from the store: $(ring_lost "$tmp/$(basename "$l" .log)")"
	grep -i 'error' "$l" | sort | uniq -c | sort -rn | head -5
done
echo "soak: vitalsd exited $rc"
