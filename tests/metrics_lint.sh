#!/bin/sh
# SPDX-License-Identifier: MIT
# /metrics through promtool: the hand-made render of `check_metrics --dump`
# and the render of real epochs (vitalsd with the synthetic and proc probes,
# topk and ewma, three 1 s epochs, read back by tests/metrics_dump) must
# pass `promtool check metrics` with nothing printed, and have each part.
. "$top_srcdir/tests/lib.sh"

command -v promtool >/dev/null 2>&1 ||
	skip "promtool not found: install the Debian package prometheus"
[ -r /proc/stat ] || skip "no /proc/stat here (the proc probe reads it)"

# lint NAME FILE: promtool's parser and linter find nothing in FILE.
lint() {
	st=0
	promtool check metrics <"$2" >"$TMP/$1.lint" 2>&1 || st=$?
	if [ "$st" -ne 0 ] || [ -s "$TMP/$1.lint" ]; then
		cat "$2" >&2
		echo "--- promtool check metrics:" >&2
		cat "$TMP/$1.lint" >&2
		fail "$1: promtool check metrics exit $st, or it printed problems"
	fi
}

"$top_builddir/tests/check_metrics" --dump >"$TMP/handmade.prom" ||
	fail "check_metrics --dump"
lint handmade "$TMP/handmade.prom"

cat >"$TMP/run.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
host: metrics-test
probes:
  synthetic: { vitals: [cpu, sched, diskio, kmem], rate: 4000, labels: 200, burst_epoch: 2, burst_vital: cpu, burst_factor: 8 }
  proc: { interval: 250ms }
filters:
  topk: { k: 3, min_timescale: 0 }
  ewma: { warmup: 2, k: 3, top: 0 }
plugins:
  store: {}
EOC
"$VITALSD" -c "$TMP/run.yaml" --epochs 3 2>"$TMP/vitalsd.err" ||
	{ cat "$TMP/vitalsd.err"; fail "vitalsd --epochs 3 with synthetic and proc"; }
[ "$(count_epochs "$TMP/data")" -eq 3 ] || fail "3 epoch files expected"
# Files are named by their start time: sorted is the order they closed in.
files=$(find "$TMP/data" -name '*.json.gz' ! -name '.*' | sort)
# shellcheck disable=SC2086 # paths under $TMP have no spaces
"$top_builddir/tests/metrics_dump" -k 3 $files >"$TMP/real.prom" ||
	fail "metrics_dump of the stored epochs"
lint real "$TMP/real.prom"

R="$TMP/real.prom"
assert_grep '^vitals_build_info\{version="[^"]+"\} 1$' "$R"
assert_grep '^vitals_host_info\{host="metrics-test"\} 1$' "$R"
assert_grep '^vitals_epochs_total 3$' "$R"
assert_grep '^vitals_collector_cpu_seconds_total [0-9.e+-]+$' "$R"
assert_grep '^vitals_epoch_length_seconds (0\.9|1)' "$R"
for v in cpu sched diskio kmem; do
	assert_grep "^vitals_events_total\\{vital=\"$v\"\\} [1-9][0-9]*\$" "$R"
	assert_grep "^vitals_threshold\\{vital=\"$v\"\\} [1-9]" "$R"
	n=$(grep -c "^vitals_exe_weight_[a-z]*{vital=\"$v\"," "$R")
	[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "$n exes of $v exported, expected 1 to 3"
done
assert_grep '^vitals_weight_samples_total\{vital="cpu"\} [1-9]' "$R"
assert_grep '^vitals_weight_seconds_total\{vital="sched"\} [0-9]' "$R"
assert_grep '^vitals_weight_bytes_total\{vital="diskio"\} [1-9]' "$R"
assert_grep '^vitals_weight_pages_total\{vital="kmem"\} [1-9]' "$R"
assert_grep '^vitals_exe_weight_samples\{vital="cpu",exe="synth-[^"]*"\} [0-9]' "$R"
assert_grep '^vitals_findings_total\{filter="topk",severity="info"\} [1-9]' "$R"
assert_grep '^vitals_proc_cpu_idle_ratio (0|1|0\.[0-9]+|[0-9.]+e-[0-9]+)$' "$R"
assert_grep '^vitals_proc_mem_free_bytes [1-9]' "$R"
assert_grep '^vitals_proc_sys_cswch_per_second [0-9]' "$R"
# Every family once, with its HELP and TYPE.
dups=$(sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' "$R" | sort | uniq -d)
[ -z "$dups" ] || fail "families declared twice: $dups"
exit 0
