# SPDX-License-Identifier: MIT
# Helpers for the BPF probe tests (sourced after lib.sh): skip when a probe
# cannot run here, find or build a workload program, and run vitalsd while
# `perf stat` counts the same tracepoints over a workload.

# probe_available NAME: skip unless the probe can run here.
probe_available() {
	"$VITALSD" --list-plugins --json >"$TMP/plugins.json" 2>"$TMP/plugins.err" ||
		{ cat "$TMP/plugins.err"; fail "--list-plugins"; }
	why=$(python3 -c 'import json,sys
p=[p for p in json.load(open(sys.argv[1])) if p["name"]==sys.argv[2]]
print("not built" if not p else "" if p[0]["available"] else p[0].get("why") or "unavailable")' \
		"$TMP/plugins.json" "$1")
	[ -z "$why" ] || skip "probe $1: $why"
}

# workload NAME: path of workload NAME, compiled from tests/workloads if need be.
workload() {
	if [ -x "$top_builddir/tests/workloads/$1" ]; then
		echo "$top_builddir/tests/workloads/$1"
		return 0
	fi
	src="$top_srcdir/tests/workloads"
	[ -f "$src/$1.c" ] && [ -f "$src/wl.c" ] || return 1
	mkdir -p "$TMP/wl"
	[ -f "$top_builddir/config.h" ] || : >"$TMP/wl/config.h"
	${CC:-cc} -O2 -D_GNU_SOURCE -I"$top_builddir" -I"$TMP/wl" -o "$TMP/wl/$1" \
		"$src/$1.c" "$src/wl.c" -lpthread -lm >"$TMP/wl/$1.log" 2>&1 ||
		{ cat "$TMP/wl/$1.log" >&2; return 1; }
	echo "$TMP/wl/$1"
}

# run_probe 'PERF-ARGS' WORKLOAD ARGS...: start vitalsd (config
# $TMP/conf.yaml); once it counts, run the workload under
# `perf stat PERF-ARGS` (e.g. -a -e EVENT --filter F, split on blanks);
# then stop vitalsd with SIGTERM, which writes the partial epoch.  The
# workload's JSON line is in $TMP/wl.json, perf's CSV in $TMP/perf.csv,
# each stored epoch as JSON in $TMP/eN.json.
run_probe() {
	perf_args=$1
	shift
	"$VITALSD" -c "$TMP/conf.yaml" >"$TMP/vitalsd.log" 2>&1 &
	vpid=$!
	i=0
	until grep -q 'started' "$TMP/vitalsd.log" 2>/dev/null; do
		kill -0 "$vpid" 2>/dev/null || { cat "$TMP/vitalsd.log"; fail "vitalsd did not start"; }
		i=$((i + 1))
		[ "$i" -lt 300 ] || { kill "$vpid"; fail "vitalsd did not start in 30 s"; }
		sleep 0.1
	done
	# shellcheck disable=SC2086 # PERF-ARGS are several words
	perf stat -x, -o "$TMP/perf.csv" $perf_args -- "$@" >"$TMP/wl.json" ||
		{ kill "$vpid"; fail "workload $* (under perf) failed"; }
	kill -TERM "$vpid"
	wait "$vpid" || { cat "$TMP/vitalsd.log"; fail "vitalsd failed"; }
	n=$(count_epochs "$TMP/data")
	[ "$n" -ge 1 ] || fail "no epoch stored"
	i=0
	while [ "$i" -lt "$n" ]; do
		"$VITALS" --data-dir "$TMP/data" show "$i" --json >"$TMP/e$i.json" ||
			fail "vitals show $i"
		i=$((i + 1))
	done
}
