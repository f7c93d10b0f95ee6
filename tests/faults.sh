#!/bin/sh
# SPDX-License-Identifier: MIT
# Every filter finds the fault meant for it, and a clean store gives none.
# bench/mkstore --faults writes 3 hours of 60 s epochs with one fault per
# filter (its manifest says kind, filter, vital, exe, label, epochs) and a
# clean twin (same seed, --clean); every filter then runs through the CLI
# (findings, train, diff, top) and tests/faults.py checks that the filter
# meant for each fault reports it at its time and exe, that the clean store
# gives nothing of severity warn or above, and prints the counts.  Last, a
# model that cannot be written at the end makes `vitals train` fail.
: "${top_srcdir:?run through make check}"
. "$top_srcdir/tests/lib.sh"

: "${VITALS_PLUGIN_PATH:=$top_builddir/probes:$top_builddir/filters:$top_builddir/plugins}"
export VITALS_PLUGIN_PATH
MKSTORE="$top_builddir/bench/mkstore"
for f in "$VITALS" "$MKSTORE"; do
	[ -x "$f" ] || skip "$f not built"
done
for f in ewma threshold topk affinity rules diff callmodel; do
	[ -e "$top_builddir/filters/$f.la" ] || skip "filter $f not built"
done
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
START=1794996000 # 2026-11-18T10:00:00Z
END=$((START + 3 * 3600))
MAX=512 # samples per vital and epoch: every label of the store gets some

# ---- the stores ----
"$MKSTORE" --out "$TMP/faults" --span 3h --start $START --faults \
	--max-samples $MAX --quiet >"$TMP/mk1.log" 2>&1 &
"$MKSTORE" --out "$TMP/clean" --span 3h --start $START --faults --clean \
	--max-samples $MAX --quiet >"$TMP/mk2.log" 2>&1 || { cat "$TMP/mk2.log" >&2; fail "mkstore --faults --clean"; }
wait $! || { cat "$TMP/mk1.log" >&2; fail "mkstore --faults"; }
[ "$(count_epochs "$TMP/faults")" -eq 180 ] || fail "mkstore did not write 180 epochs"
cp "$TMP/faults/manifest.json" "$TMP/manifest.json"
# field KIND KEY: a field of a fault in the manifest.
field() {
	python3 -c "import json, sys
a = [a for a in json.load(open(sys.argv[1]))['anomalies'] if a['kind'] == sys.argv[2]][0]
v = a
for k in sys.argv[3].split('.'):
    v = v[k]
print(v // 10**9 if k.endswith('_ns') else v)" "$TMP/manifest.json" "$1" "$2"
}
RULE=$(field bound threshold_rule)
TRAIN="@$(field new_path train.start_ns)..@$(field new_path train.end_ns)"
BASELINE="@$(field shift baseline.start_ns)..@$(field shift baseline.end_ns)"
SHIFT="@$(field shift start_ns)..@$(field shift end_ns)"

# conf STORE [FILTERS]: a configuration of the store with every filter (or
# only FILTERS' lines), callmodel scoring with the store's own model.  The
# simulated store's rates (200 events a second per vital) are far below a
# real machine's, so the floors the filters take for a warning (the least
# change per second worth one, set for real machines) are off.
conf() {
	{
		printf 'epoch: 60s\ndata_dir: %s\nsketch: { max_samples: %s }\nfilters:\n' "$TMP/$1" $MAX
		printf '  ewma: { floor: ["*=0"] }\n  threshold: { rules: ["%s"] }\n  topk: { by: label }\n' "$RULE"
		printf '  affinity: { floor: ["*=0"] }\n  rules: {}\n  diff: { floor: ["*=0"] }\n  callmodel: { model: %s }\n' "$TMP/$1.model"
	} | grep -E "^[a-z]|^  (${2:-[a-z]+}):" >"$TMP/$1${2:+-$2}.yaml"
	echo "$TMP/$1${2:+-$2}.yaml"
}

# ---- every filter on both stores ----
for s in faults clean; do
	all=$(conf $s)
	"$VITALS" -c "$all" train callmodel --normal "$TRAIN" --model "$TMP/$s.model" \
		>"$TMP/train.out" 2>&1 || { cat "$TMP/train.out" >&2; fail "$s: vitals train callmodel"; }
	# Info too: a warning grouped with another filter's is info, marked.
	"$VITALS" -c "$all" findings --from @$START --to @$END --severity info --json \
		>"$TMP/$s.json" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "$s: vitals findings"; }
	# callmodel's ranking needs its info findings too (from the cache).
	"$VITALS" -c "$(conf $s callmodel)" findings --from @$START --to @$END \
		--severity info --json >"$TMP/$s-cm.json" 2>"$TMP/err" ||
		{ cat "$TMP/err" >&2; fail "$s: vitals findings (callmodel)"; }
	"$VITALS" -c "$all" diff "$BASELINE" "$SHIFT" --json >"$TMP/$s-diff.json" 2>"$TMP/err" ||
		{ cat "$TMP/err" >&2; fail "$s: vitals diff"; }
done
# topk ranks the takeover's label first in each of its epochs.
first=$(field takeover first_epoch)
n=$(field takeover epochs)
e=$first
while [ "$e" -lt $((first + n)) ]; do
	t=$((START + e * 60))
	"$VITALS" -c "$(conf faults topk)" top --from @$t --to @$((t + 60)) --vital blocking \
		-k 3 --json >"$TMP/top-$e.json" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "vitals top, epoch $e"; }
	e=$((e + 1))
done
python3 "$top_srcdir/tests/faults.py" "$TMP" || fail "a fault was missed or the clean store flagged"

# ---- a model that cannot be written at the end fails vitals train ----
rc=0
(
	trap '' XFSZ
	ulimit -f 8 # 8 KiB: the model is larger, so writing it fails
	"$VITALS" -c "$(conf faults)" train callmodel --normal "$TRAIN" --model "$TMP/big.model"
) >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" -eq 1 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "train with an unwritable model: exit $rc, expected 1"; }
assert_grep "model $TMP/big.model not written: .*File too large" "$TMP/err"
! grep -q '^trained' "$TMP/out" || fail "train said it trained although the model was not written"
[ ! -e "$TMP/big.model" ] || fail "a model that could not be written was left"

echo "PASS: each filter finds its fault, none on the clean store"
