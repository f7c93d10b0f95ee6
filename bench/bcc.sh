#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/bcc.sh: what vitalsd adds to a null syscall, fork+exec, a pipe
# ping-pong and a write+fsync loop (bench/ops), against what the bcc tools
# a user would run for the same vitals add together, and against no
# monitor, in interleaved rounds.  Prints figures, asserts nothing.
#
# usage: bench/bcc.sh [-r ROUNDS] [-t MS] [-w LIST] [--tools LIST]
#                     [--headers DIR] [--floor]
#   -r ROUNDS     rounds of none, bcc and vitalsd, in turn (3)
#   -t MS         time per workload per monitor per round (2000)
#   -w LIST       workloads, comma separated: null,exec,pipe,fsync (all)
#   --tools LIST  bcc tools (default: profile,syscount,runqlat,bitesize,
#                 and offcputime,biolatency where the kernel has kprobes)
#   --headers DIR kernel headers for bcc (BCC_KERNEL_SOURCE), when the
#                 running kernel's are not installed
#   --floor       also the floor: bench/floor's empty programs on the
#                 tracepoints of vitalsd's probes here and cpu-clock at
#                 99 Hz, what any monitor of those events pays
# Environment: top_builddir, top_srcdir (set by make bench-bcc).  Needs root.
set -u

top=${top_builddir:-.}
src=${top_srcdir:-$top}
rounds=3 ms=2000 workloads=null,exec,pipe,fsync tools= headers= floor=

die() { echo "bcc.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	-r) rounds=$2; shift 2 ;;
	-t) ms=$2; shift 2 ;;
	-w) workloads=$2; shift 2 ;;
	--tools) tools=$2; shift 2 ;;
	--headers) headers=$2; shift 2 ;;
	--floor) floor=1; shift ;;
	-h|--help) sed -n '3,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) die "unknown argument $1 (--help)" ;;
	esac
done
[ -x "$top/bench/ops" ] || die "$top/bench/ops: not built (make bench-bcc)"
[ -x "$top/daemon/vitalsd" ] || die "$top/daemon/vitalsd: not built"
[ -z "$floor" ] || [ -x "$top/bench/floor" ] || die "$top/bench/floor: not built (make bench/floor)"
if [ "$(id -u)" -ne 0 ]; then
	echo "bcc.sh: skipped: the monitors need root"
	exit 0
fi

tmp=$(mktemp -d /var/tmp/vitals-bcc.XXXXXX) || exit 1
mon_pids=
cleanup() {
	for p in $mon_pids; do kill -TERM "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
workloads=$(echo "$workloads" | tr , ' ')

# ---- which bcc tools can run here, and why not the others ----
kver=$(uname -r)
has_kprobes=no
[ -e /sys/kernel/tracing/kprobe_events ] ||
	[ -e /sys/kernel/debug/tracing/kprobe_events ] && has_kprobes=yes
if [ -z "$tools" ]; then
	tools="profile syscount runqlat bitesize"
	if [ $has_kprobes = yes ]; then
		tools="$tools offcputime biolatency"
	else
		echo "bcc: offcputime (blocking), biolatency and biosnoop" \
		    "(diskio), cpudist: skipped, they attach kprobes and this" \
		    "kernel has none (CONFIG_KPROBES off)"
	fi
else
	tools=$(echo "$tools" | tr , ' ')
fi
bcc_why=
missing=
for t in $tools; do
	command -v "$t-bpfcc" >/dev/null 2>&1 || missing="$missing $t-bpfcc"
done
if [ -n "$missing" ]; then
	bcc_why="missing:$missing (Debian package bpfcc-tools)"
fi

# bcc compiles its programs at start against the running kernel's headers.
# Where those are absent (a VM's own kernel), Debian's headers of another
# kernel let the tools compile: the tracepoint and sampling programs are
# the same, but struct offsets may differ, so their output is not to be
# trusted; their cost per event is what is measured.
bcc_headers="the running kernel's"
if [ -z "$bcc_why" ] && [ -z "${BCC_KERNEL_SOURCE:-}" ] &&
    [ ! -e "/lib/modules/$kver/build" ] &&
    [ ! -e /sys/kernel/kheaders.tar.xz ]; then
	if [ -z "$headers" ]; then
		arch=$(ls -d /usr/src/linux-headers-*-amd64 /usr/src/linux-headers-*-arm64 2>/dev/null | sort -V | tail -n 1)
		if [ -n "$arch" ] && [ -d "${arch%-*}-common" ]; then
			headers=$tmp/kheaders
			cp -rs "${arch%-*}-common/." "$headers/" &&
			    cp -rs "$arch/." "$headers/" 2>/dev/null
		fi
	fi
	if [ -n "$headers" ]; then
		export BCC_KERNEL_SOURCE="$headers"
		bcc_headers="$(basename "${arch:-$headers}") (NOT the running $kver:"
		bcc_headers="$bcc_headers the tools' output may be wrong, their cost is what counts)"
	else
		bcc_why="no kernel headers for $kver (/lib/modules/$kver/build, CONFIG_IKHEADERS or --headers DIR); Debian's linux-headers-amd64 can stand in"
	fi
fi

# ---- vitalsd: the probes of the same vitals ----
cat >"$tmp/vitals.yaml" <<EOF
data_dir: $tmp/data
log: stderr
epoch: 60s
probes:
  cpu: { frequency: 99 }
  syscall: {}
  sched: { min_delay: 100us, min_block: 1ms }
  diskio: {}
plugins:
  store: {}
EOF
# The floor's programs: the tracepoints of those probes' programs.
floor_tps=sys_enter,sched_switch,block_io_start,block_rq_issue,block_rq_complete
export VITALS_PLUGIN_PATH="$top/probes:$top/filters:$top/outputs"

# Wait until every log in $2... says $1 (10 s per tool at most, 60 in all).
wait_ready() {
	needle=$1; shift
	i=0
	while [ $i -lt 600 ]; do
		ok=1
		for f in "$@"; do grep -q "$needle" "$f" 2>/dev/null || ok=0; done
		[ $ok = 1 ] && return 0
		for p in $mon_pids; do
			kill -0 "$p" 2>/dev/null || return 1
		done
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# start MON: start the monitor, set mon_pids; 1 if it did not come up.
start() {
	mon_pids=
	case $1 in
	none) return 0 ;;
	vitalsd)
		"$top/daemon/vitalsd" -c "$tmp/vitals.yaml" >"$tmp/vitalsd.log" 2>&1 &
		mon_pids=$!
		wait_ready "core: started" "$tmp/vitalsd.log" || return 1 ;;
	floor)
		# The tracepoints of vitalsd's probes, and its sampling.
		"$top/bench/floor" --sample 99 --only "$floor_tps" \
		    >"$tmp/floor.log" 2>&1 &
		mon_pids=$!
		wait_ready "floor: attached" "$tmp/floor.log" || return 1 ;;
	bcc)
		logs=
		for t in $tools; do
			args=
			case $t in profile) args="-F 99" ;; esac
			# shellcheck disable=SC2086
			PYTHONUNBUFFERED=1 "$t-bpfcc" $args >"$tmp/$t.log" 2>&1 &
			mon_pids="$mon_pids $!"
			logs="$logs $tmp/$t.log"
		done
		# shellcheck disable=SC2086
		wait_ready "Ctrl" $logs || return 1 ;;
	esac
	sleep 1 # let the tools' first map walks and allocations settle
}

# SIGTERM: a shell starts background jobs with SIGINT ignored.
stop() {
	for p in $mon_pids; do kill -TERM "$p" 2>/dev/null; done
	for p in $mon_pids; do wait "$p" 2>/dev/null; done
	mon_pids=
}

# CPU time (ns) the monitor processes used so far: utime + stime.
mon_cpu() {
	tot=0
	hz=$(getconf CLK_TCK)
	for p in $mon_pids; do
		t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null)
		tot=$((tot + ${t:-0}))
	done
	echo $((tot * 1000000000 / hz))
}

mons="none"
if [ -n "$bcc_why" ]; then
	echo "bcc: skipped: $bcc_why"
else
	mons="$mons bcc"
fi
mons="$mons vitalsd"
[ -z "$floor" ] || mons="$mons floor"

echo "bench/bcc.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, kernel $kver, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# By name (pgrep refuses a pattern longer than a comm's 15 characters).
others=$(ps -eo comm= | grep -cxE 'vitalsd|perf|bpftrace|floor' || :)
[ "$others" -gt 0 ] && echo "NOTE: $others other monitor processes (vitalsd, perf, bpftrace) run here: their probes are in every column, none's too"
echo "rounds $rounds, $ms ms per workload per monitor per round"
[ -n "$bcc_why" ] || echo "bcc tools: $(echo $tools | sed 's/\([a-z]*\)/\1-bpfcc/g'); headers: $bcc_headers"
echo "vitalsd probes: cpu (99 Hz), syscall, sched, diskio (epoch 60 s, store only)"
[ -z "$floor" ] || echo "floor: empty programs on $floor_tps; cpu-clock at 99 Hz"
echo

# ---- rounds: each monitor in turn, the order rotated every round ----
raw=$tmp/raw
: >"$raw"
r=1
while [ "$r" -le "$rounds" ]; do
	set -- $mons
	k=$(( (r - 1) % $# ))
	order=
	i=0
	for m in $mons; do
		[ $i -ge $k ] && order="$order $m"
		i=$((i + 1))
	done
	i=0
	for m in $mons; do
		[ $i -lt $k ] && order="$order $m"
		i=$((i + 1))
	done
	for m in $order; do
		t0=$(date +%s%N)
		if ! start "$m"; then
			echo "bcc.sh: $m did not start; its logs:" >&2
			tail -n 5 "$tmp"/*.log >&2
			stop
			exit 1
		fi
		echo "$r $m start $(( ($(date +%s%N) - t0) / 1000000 )) $(mon_cpu)" >>"$tmp/starts"
		for w in $workloads; do
			c0=$(mon_cpu)
			line=$("$top/bench/ops" "$w" "$ms" "$tmp") || exit 1
			c1=$(mon_cpu)
			echo "$r $m $line $((c1 - c0))" >>"$raw"
		done
		stop
	done
	echo "round $r of $rounds done (order:$order; load $(cut -d' ' -f1 /proc/loadavg))"
	r=$((r + 1))
done
echo

# ---- the table: medians over rounds ----
[ -s "$tmp/starts" ] && awk '$2 != "none" { n[$2]++; ms[$2] += $4; cpu[$2] += $5 / 1e6 }
END { for (m in n) printf "%s: start %.0f ms wall, %.0f ms CPU of its processes (mean of %d)\n", m, ms[m] / n[m], cpu[m] / n[m], n[m] }' "$tmp/starts"
echo
awk -v mons="$mons" -v wls="$workloads" '
function median(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function ratio(x, y) {
	return (y > 0 && x >= 0) ? sprintf("%.2f", x / y) : "-"
}
function range(s,   a, n, i, lo, hi) {
	n = split(s, a, " "); lo = hi = a[1]
	for (i = 2; i <= n; i++) {
		if (a[i] + 0 < lo + 0) lo = a[i]
		if (a[i] + 0 > hi + 0) hi = a[i]
	}
	return sprintf(fmt, lo) "-" sprintf(fmt, hi)
}
{
	# round mon mode ops wall cpu moncpu
	k = $2 SUBSEP $3
	ns[k] = ns[k] " " $5 / $4
	cpu[k] = cpu[k] " " $6 / $4
	# the monitor processes own CPU, % of one CPU over the run
	mc[k] = mc[k] " " 100 * $7 / $5
	rate[k] = rate[k] " " $4 / ($5 / 1e9)
}
END {
	nm = split(mons, m, " "); nw = split(wls, w, " ")
	printf "%-6s %10s %16s", "work", "none ns/op", "none spread"
	for (i = 2; i <= nm; i++)
		printf " %11s %16s %9s %6s", "+" m[i] " ns", m[i] " spread", "+cpu%", "own%"
	for (i = 1; i <= nm; i++) at[m[i]] = i
	ib = at["bcc"]; iv = at["vitalsd"]; iF = at["floor"]
	if (ib && iv) printf " %14s %14s", "ratio ns v/b", "ratio cpu v/b"
	if (ib && iF) printf " %14s %14s", "ratio ns f/b", "ratio cpu f/b"
	printf "\n"
	for (j = 1; j <= nw; j++) {
		b = m[1] SUBSEP w[j]
		base = median(ns[b]); basecpu = median(cpu[b])
		ops = median(rate[b])
		fmt = "%.0f"
		printf "%-6s %10.0f %16s", w[j], base, range(ns[b])
		for (i = 2; i <= nm; i++) {
			k = m[i] SUBSEP w[j]
			add[i] = median(ns[k]) - base
			# added CPU: the workload CPU per op over the baseline,
			# at the monitored rate, plus the monitor processes own
			addc[i] = 100 * (median(cpu[k]) - basecpu) * median(rate[k]) / 1e9 + median(mc[k])
			printf " %+11.0f %16s %+8.2f%% %5.2f%%", add[i], range(ns[k]), addc[i], median(mc[k])
		}
		# a ratio of a negative (noise) means nothing
		if (ib && iv)
			printf " %14s %14s", ratio(add[iv], add[ib]), ratio(addc[iv], addc[ib])
		if (ib && iF)
			printf " %14s %14s", ratio(add[iF], add[ib]), ratio(addc[iF], addc[ib])
		printf "\n"
	}
}' "$raw"
cat <<'EOF'

none ns/op: median wall time per operation unmonitored (spread: the
rounds' lowest-highest, ns/op, as for each monitor); +X ns: the
monitor's median less it; +cpu%: the
CPU the monitor adds while the workload runs, in % of one CPU: the
workload's own CPU per op (user + system, children included: BPF programs
run in the task that hit the event) over the unmonitored, at the monitored
rate, plus own%, the monitor processes' own CPU (their utime + stime, in
clock ticks); ratio v/b: vitalsd's added cost over bcc's (target <= 0.33);
f/b: the floor's over bcc's, the least any monitor of vitalsd's events
pays against bcc.
A negative or tiny figure is within the noise: read it against the spread.
EOF
