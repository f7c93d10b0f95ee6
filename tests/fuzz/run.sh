#!/bin/sh
# SPDX-License-Identifier: MIT
# Run each libFuzzer target for SECONDS (make fuzz FUZZ_SECONDS=N), from
# its seed corpus in tests/fuzz/corpus/NAME/ (copied: the tree is never
# written), and print per target its executions, their rate, the
# coverage reached and whether it crashed.  A crash leaves its input in
# fuzz-out/NAME/ of the build tree and fails the run.  With RUNS (make
# fuzz FUZZ_RUNS=N) each target runs N executions instead, however long
# they take (a campaign: 10000000 is the figure doc/testing.md records).
#   run.sh SECONDS SRCDIR TARGET...
set -u
secs=$1
src=$2
shift 2
case ${RUNS:-} in
'') limit="-max_total_time=$secs" ;;
*[!0-9]*) echo "run.sh: FUZZ_RUNS '$RUNS' is not a number" >&2; exit 2 ;;
*) limit="-runs=$RUNS" ;;
esac
out=fuzz-out
rm -rf "$out"
mkdir -p "$out"
# The API target reads a store: five one-minute epochs, ending at the
# "now" it answers at (1700001200), so its ranges of the last minutes and
# its five-minute rollup find epochs.  Every request decodes what it
# covers; the decoder has a target of its own (fuzz_epoch), so a small
# store spends the executions on the request handling.
if [ -x bench/mkstore ]; then
	bench/mkstore --out "$out/store" --span 5m --epoch 60s --host fuzz \
		--start 1700000900 --max-samples 16 --quiet >"$out/mkstore.log" 2>&1 ||
		{ cat "$out/mkstore.log"; exit 1; }
	FUZZ_API_STORE=$(pwd)/$out/store
	export FUZZ_API_STORE
fi
rc=0
printf '%-14s %12s %10s %8s %8s  %s\n' target execs exec/s cov ft result
for t in "$@"; do
	name=$(basename "$t")
	work="$out/$name"
	mkdir -p "$work/corpus" "$work/crash"
	cp "$src/tests/fuzz/corpus/$name/"* "$work/corpus/" 2>/dev/null || :
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$t" "$limit" -rss_limit_mb=2048 -timeout=20 \
		-max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$work/crash/" "$work/corpus" \
		>"$work/log" 2>&1
	st=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")
	cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$work/log" | tail -1 | cut -d' ' -f2)
	if [ "$st" -eq 0 ]; then
		res=ok
	else
		res="CRASH (exit $st; $work/log, input in $work/crash/)"
		rc=1
		tail -40 "$work/log"
	fi
	printf '%-14s %12s %10s %8s %8s  %s\n' "$name" "${execs:-?}" \
		"${rate:-?}" "${cov:-?}" "${ft:-?}" "$res"
done
exit "$rc"
