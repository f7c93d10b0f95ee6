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
#   bench/soak.sh [--minutes M] [--epoch SECONDS] [--exes N]
#
# Defaults: 30 minutes, 10 s epochs (so the run closes as many epochs as
# 3 hours of the default 60 s ones would, with their 5-minute and hourly
# rollups), 400 distinct executables.  Needs root and a built tree.
set -u
cd "$(dirname "$0")/.."
top=$PWD
minutes=30 epoch=10 exes=400
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=${2:?--minutes needs a value}; shift 2 ;;
	--epoch) epoch=${2:?--epoch needs a value}; shift 2 ;;
	--exes) exes=${2:?--exes needs a value}; shift 2 ;;
	-h|--help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "soak: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$minutes" "$epoch" "$exes"; do
	case $v in
	''|*[!0-9]*|0) echo "soak: '$v' is not a positive integer" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (the kernel probes)" >&2; exit 2; }
for f in daemon/vitalsd tests/workloads/busy; do
	[ -x "$f" ] || { echo "soak: $f is not built: run scripts/build.sh and make check" >&2; exit 2; }
done

. bench/churn.sh
churn_tmp soak

# The shipped file, with a short epoch and a data dir of its own.
sed -e "s|^epoch: .*|epoch: ${epoch}s|" -e "s|^data_dir: .*|data_dir: $tmp/data|" \
    conf/vitals.yaml >"$tmp/vitals.yaml"
export VITALS_PLUGIN_PATH="$top/probes:$top/filters:$top/outputs"
daemon/vitalsd -c "$tmp/vitals.yaml" 2>"$tmp/vitalsd.log" &
daemon=$!

churn_prepare "$tmp" "$exes"
churn "$tmp" "$exes" &

# status FIELD: a field of the daemon's /proc status, in kB.
status() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$daemon/status"; }
# cpu_ticks: the daemon's user + system CPU so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$daemon/stat"; }
hz=$(getconf CLK_TCK)

echo "soak: vitalsd (pid $daemon), ${epoch} s epochs, $exes executables, $minutes minutes"
# Memory grows by design until every filter queue is full: filter_queue
# epochs per timescale, the base one first, each longer one a rollup at a time.
q=$(awk '/^filter_queue:/ { print $2 }' "$tmp/vitals.yaml")
echo "soak: the filter queues ($q epochs each) fill at $((q * epoch / 60)) min (base), $((q * 5)) min (5m), ${q} h (1h), ${q} d (1d)"
printf '%4s %8s %8s %5s %7s %7s %9s %8s\n' min rss_kb hwm_kb fds threads epochs store_kb cpu_%
sleep 5
kill -0 "$daemon" 2>/dev/null || { cat "$tmp/vitalsd.log" >&2; echo "soak: vitalsd did not start" >&2; exit 1; }
t0=$(cpu_ticks)
m=0
: >"$tmp/rss"
while [ $m -lt "$minutes" ]; do
	c0=$(cpu_ticks)
	sleep 60
	m=$((m + 1))
	kill -0 "$daemon" 2>/dev/null || { echo "soak: vitalsd died at minute $m" >&2; tail -20 "$tmp/vitalsd.log" >&2; exit 1; }
	rss=$(status VmRSS)
	echo "$m $rss" >>"$tmp/rss"
	printf '%4d %8s %8s %5s %7s %7s %9s %8.2f\n' "$m" "$rss" "$(status VmHWM)" \
	    "$(ls "/proc/$daemon/fd" | wc -l)" "$(status Threads)" \
	    "$(find "$tmp/data" -name '*.json.gz' | wc -l)" \
	    "$(du -sk "$tmp/data" | cut -f1)" \
	    "$(echo "$(cpu_ticks) $c0 $hz" | awk '{ print ($1 - $2) / $3 / 60 * 100 }')"
done
t1=$(cpu_ticks)
kill -INT "$daemon"
wait "$daemon"
rc=$?
daemon=
jobs -p | xargs -r kill 2>/dev/null
wait 2>/dev/null

# Resident memory's trend over the second half of the run (least squares),
# and the mean of the last quarter against the first quarter after warm-up.
awk -v n="$minutes" '
{ t[NR] = $1; r[NR] = $2 }
END {
	h = int(NR / 2) + 1
	for (i = h; i <= NR; i++) { sx += t[i]; sy += r[i]; k++ }
	mx = sx / k; my = sy / k
	for (i = h; i <= NR; i++) { sxy += (t[i] - mx) * (r[i] - my); sxx += (t[i] - mx) ^ 2 }
	q = int(NR / 4); if (q < 1) q = 1
	for (i = 1; i <= q; i++) a += r[i]
	for (i = NR - q + 1; i <= NR; i++) b += r[i]
	printf "soak: resident memory: first quarter %.0f kB, last quarter %.0f kB (%+.1f%%)\n", a / q, b / q, (b - a) / a * 100
	if (sxx > 0)
		printf "soak: trend over the second half: %+.1f kB per hour\n", sxy / sxx * 60
}' "$tmp/rss"
[ "$minutes" -ge $((q * 5)) ] ||
	echo "soak: the 5-minute filter queue was still filling (full at $((q * 5)) min): growth is expected until then"
echo "$t0 $t1 $hz $minutes" | awk '{ printf "soak: vitalsd CPU: %.2f%% of one CPU on average\n", ($2 - $1) / $3 / ($4 * 60) * 100 }'
echo "soak: log lines: $(wc -l <"$tmp/vitalsd.log"), of which errors: $(grep -c 'error' "$tmp/vitalsd.log"), warnings: $(grep -c 'warn' "$tmp/vitalsd.log")"
grep -i 'error' "$tmp/vitalsd.log" | sort | uniq -c | sort -rn | head -5
echo "soak: vitalsd exited $rc"
