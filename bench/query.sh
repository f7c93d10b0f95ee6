#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark of range queries: a 3-day store of 60 s epochs (4320 epochs) made
# by bench/mkstore, every installed filter configured, then `vitals query`
# over the 3 days with the cache cleared and again cached.  Prints the two
# times (wall clock, and the CPU time the query used on all its threads:
# steadier on a shared machine) and their ratio; asserts nothing.
set -eu

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
VITALS="$top_builddir/cli/vitals"
VITALSD="$top_builddir/daemon/vitalsd"
MKSTORE="$top_builddir/bench/mkstore"
STORE=${BENCH_STORE:-$top_builddir/bench/store-3d}
DAYS=${BENCH_DAYS:-3}
START=1794700800 # 2026-11-15T00:00:00Z
END=$((START + DAYS * 86400))
: "${VITALS_PLUGIN_PATH:=$top_builddir/filters:$top_builddir/probes:$top_builddir/plugins}"
export VITALS_PLUGIN_PATH

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# CPU seconds (user + system) of this shell's children in `times` output
# FILE (`times` must run in this shell, not in a $(...) subshell).
cpu() {
	awk 'NR == 2 {
		n = split($1 " " $2, t, " "); s = 0
		for (i = 1; i <= n; i++) { split(t[i], p, "m"); s += p[1] * 60 + p[2] }
		printf "%.3f", s }' "$1"
}
say() { echo "bench/query: $*"; }

# The store is reused while its manifest matches what is asked.
want="\"epochs\": $((DAYS * 1440)),"
if ! grep -q "$want" "$STORE/manifest.json" 2>/dev/null ||
	! grep -q "\"start_ns\": ${START}000000000" "$STORE/manifest.json"; then
	rm -rf "$STORE"
	say "writing $DAYS days of 60 s epochs into $STORE ..."
	t0=$(now)
	"$MKSTORE" --out "$STORE" --days "$DAYS" --start "$START" --quiet
	say "mkstore: $(elapsed "$t0" "$(now)") s"
fi

# Every installed filter, with its default options (callmodel first learns
# a model from the first day), kept only if the configuration checks.
filters=$("$VITALSD" --list-plugins 2>/dev/null | awk '$2 == "filter" { print $1 }')
conf="$STORE/bench.yaml"
kept="$STORE/filters.kept"
: >"$kept"
write_conf() { # [CANDIDATE-LINE]
	{
		echo "epoch: 60s"
		echo "data_dir: $STORE"
		echo "sketch: { max_samples: 128 }" # as mkstore wrote the store
		echo "filters:"
		sed 's/^/  /' "$kept"
		[ $# -eq 0 ] || echo "  $1"
	} >"$conf"
}
used=""
for f in $filters; do
	line="$f: {}"
	# threshold has no default rules: give it a bound a burst would cross.
	[ "$f" = threshold ] && line='threshold: { rules: ["cpu.wsum > 100000"] }'
	if [ "$f" = callmodel ]; then
		write_conf
		model="$STORE/callmodel.model"
		"$VITALS" -c "$conf" train callmodel --model "$model" \
			--normal "@$START..@$((START + 86400))" >/dev/null 2>&1 &&
			line="callmodel: { model: $model }"
	fi
	write_conf "$line"
	if "$VITALSD" -c "$conf" --check-config >/dev/null 2>&1; then
		echo "$line" >>"$kept"
		used="$used $f"
	else
		say "filter $f left out: its configuration does not check"
	fi
done
write_conf
say "filters:${used:- none}"

query() {
	"$VITALS" -c "$conf" query --from "@$START" --to "@$END" --json >"$STORE/out.json"
}
rm -rf "$STORE/cache"
times >"$STORE/times.0"
t0=$(now)
query
t1=$(now)
times >"$STORE/times.1"
query
t2=$(now)
times >"$STORE/times.2"
uncached=$(elapsed "$t0" "$t1")
cached=$(elapsed "$t1" "$t2")
c0=$(cpu "$STORE/times.0")
c1=$(cpu "$STORE/times.1")
c2=$(cpu "$STORE/times.2")
say "$((DAYS * 1440)) epochs, timescales base 5m 1h 1d, $(nproc 2>/dev/null || echo ?) CPUs"
say "uncached query: $uncached s, cpu $(elapsed "$c0" "$c1") s (target < 8 s)"
say "cached query:   $cached s, cpu $(elapsed "$c1" "$c2") s (target < 0.3 s)"
say "ratio:          $(awk -v a="$uncached" -v b="$cached" 'BEGIN { printf "%.0fx", a / b }')"
