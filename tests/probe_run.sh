# SPDX-License-Identifier: MIT
# Helper for the BPF probe tests (sourced after lib.sh, whose need_probe
# and workload they use): run vitalsd while `perf stat` counts the same
# tracepoints over a workload.

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
