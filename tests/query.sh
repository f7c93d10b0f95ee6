#!/bin/sh
# SPDX-License-Identifier: MIT
# The range commands on generated stores: bench/mkstore writes two hours of
# 60 s epochs with injected anomalies (and a clean twin), then `vitals
# query`, `findings`, `top`, `diff` and `train` are checked: time parsing,
# output, bad input, the cache (hits, invalidation by options, plugin file,
# epoch files, corrupt entries), the EWMA filter finding the injected cpu
# burst at its time and label and nothing in the clean store, topk's
# rankings (any range in `top`, hourly slots in a query), and the daemon's
# live rollups storing findings at a longer timescale.
: "${top_srcdir:?run through make check}"
. "$top_srcdir/tests/lib.sh"

: "${VITALS_PLUGIN_PATH:=$top_builddir/probes:$top_builddir/filters:$top_builddir/plugins}"
export VITALS_PLUGIN_PATH
MKSTORE="$top_builddir/bench/mkstore"
for f in "$VITALS" "$VITALSD" "$MKSTORE"; do
	[ -x "$f" ] || skip "$f not built"
done
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
# Times without a zone are local: make local UTC so they are known here.
TZ=UTC
export TZ
START=1794996000 # 2026-11-18T10:00:00Z
NS=000000000
DATA="$TMP/data"
CLEAN="$TMP/clean"

# run ARGS...: vitals, stdout in $TMP/out, stderr in $TMP/err, status in $rc.
run() {
	rc=0
	"$VITALS" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
}
what_ran() {
	echo "--- stdout:"
	head -n 40 "$TMP/out"
	echo "--- stderr:"
	head -n 20 "$TMP/err"
} >&2
expect_rc() {
	[ "$rc" -eq "$1" ] || { what_ran; fail "$2: exit $rc, expected $1"; }
}
expect_out() {
	grep -Eq -- "$1" "$TMP/out" || { what_ran; fail "$2: no /$1/ on stdout"; }
}
expect_err() {
	grep -Eq -- "$1" "$TMP/err" || { what_ran; fail "$2: no /$1/ on stderr"; }
}
expect_err_text() {
	grep -Fq -- "$1" "$TMP/err" || { what_ran; fail "$2: no '$1' on stderr"; }
}
# expect_json PYTHON WHAT: PYTHON holds for j (stdout parsed) and m (manifest).
expect_json() {
	python3 -c "import json, sys
j = json.load(sys.stdin)
m = json.load(open('$DATA/manifest.json'))
an = {a['kind']: a for a in m['anomalies']}
$1" <"$TMP/out" || { what_ran; fail "$2"; }
}

# ---- the fixture ----
"$MKSTORE" --out "$DATA" --span 2h --start $START --rate 500 --quiet ||
	fail "mkstore"
"$MKSTORE" --out "$CLEAN" --span 2h --start $START --rate 500 --clean --quiet ||
	fail "mkstore --clean"
[ "$(count_epochs "$DATA")" -eq 120 ] || fail "mkstore did not write 120 epochs"
# The simulated rates are far below a real machine's: ewma's floors (the
# least rise per second worth a warning) are off.
cat >"$TMP/ewma.yaml" <<EOC
epoch: 60s
data_dir: $DATA
sketch: { max_samples: 128 }
filters:
  ewma: { floor: ["*=0"] }
EOC
sed 's/ewma: { floor: \["\*=0"\] }/ewma: { floor: ["*=0"], k: 1000 }/' "$TMP/ewma.yaml" >"$TMP/ewma-k.yaml"
grep -q 'k: 1000' "$TMP/ewma-k.yaml" || fail "no ewma-k.yaml"
FROM=2026-11-18T10:00
TO=2026-11-18T12:00
Q="-c $TMP/ewma.yaml"

# ---- time parsing ----
check_range() { # FROM TO WANT_FROM_NS WANT_TO_NS WHAT
	run $Q query --from "$1" --to "$2" --json
	expect_rc 0 "$5"
	expect_json "assert j['from_ns'] == $3 and j['to_ns'] == $4, (j['from_ns'], j['to_ns'])" "$5"
}
check_range $FROM $TO $START$NS $((START + 7200))$NS "local ISO times"
check_range 2026-11-18T11:00+01:00 2026-11-18T12:00:00Z $START$NS $((START + 7200))$NS "zones"
check_range "2026-11-18 10:30:00.25" 2026-11-18T11:00-00:00 $((START + 1800))250000000 $((START + 3600))$NS "a space, fractions"
check_range 2026-11-18 2026-11-19 $((START - 36000))$NS $((START + 50400))$NS "dates"
check_range @$START @$((START + 60)) $START$NS $((START + 60))$NS "@seconds"
run $Q query --from -2h --to now --json
expect_rc 1 "a relative range without epochs"
expect_err "no epochs from" "a relative range without epochs"
run $Q query --from -1d12h --to -30m --no-cache
expect_rc 1 "-1d12h..-30m"
for bad in yesterday 2026-13-01 2026-02-30 2026-11-18T25:00 -5x "2026-11-18T10:00+1"; do
	run $Q query --from "$bad" --to $TO
	expect_rc 2 "--from $bad"
	expect_err_text "bad time '$bad'" "--from $bad"
done
run $Q query --from $TO --to $FROM
expect_rc 2 "a reversed range"
expect_err "empty range" "a reversed range"
run $Q query --from $FROM --to $TO --timescale 7q
expect_rc 2 "a bad timescale"
expect_err "bad timescale '7q'" "a bad timescale"
run $Q query --frobnicate
expect_rc 2 "an unknown option"
expect_err "unknown option --frobnicate" "an unknown option"
run $Q findings --severity loud
expect_rc 2 "--severity loud"
run $Q diff "$FROM..$TO"
expect_rc 2 "diff with one range"
run $Q diff "$FROM" "$FROM..$TO"
expect_rc 2 "diff with a range without .."
expect_err "expected FROM..TO" "diff with a range without .."
run $Q diff "$TO..$FROM" "$FROM..$TO"
expect_rc 2 "diff with a reversed range"
run $Q train callmodel --normal "$FROM..$TO"
expect_rc 2 "train without --model"

# ---- query ----
run $Q query --from $FROM --to $TO
expect_rc 0 "query"
expect_out "^SERIES" "query"
expect_out "^FINDINGS" "query"
[ "$(grep -c '  base  node-1 ' "$TMP/out")" -eq 120 ] || { what_ran; fail "query: 120 base slots"; }
[ "$(grep -c '  5m    node-1 ' "$TMP/out")" -eq 24 ] || { what_ran; fail "query: 24 5m slots"; }
[ "$(grep -c '  1h    node-1 ' "$TMP/out")" -eq 2 ] || { what_ran; fail "query: 2 1h slots"; }
expect_out "^  2026-11-18T10:05:00  5m    node-1          5  cpu 150000/150000 " "query: a 5m slot"
[ -s "$TMP/err" ] && { what_ran; fail "query wrote to stderr (a progress bar off a terminal?)"; }
run $Q query --from $FROM --to $TO --vital cpu --timescale 5m
expect_rc 0 "query --vital cpu --timescale 5m"
grep -q ' sched ' "$TMP/out" && { what_ran; fail "--vital cpu printed sched"; }
grep -q '  base  ' "$TMP/out" && { what_ran; fail "--timescale 5m printed base slots"; }
run $Q query --from $FROM --to $TO --json
expect_rc 0 "query --json"
expect_json "
base = [s for s in j['slots'] if s['base']]
assert len(base) == 120 and j['timescales'] == ['base', '5m', '1h'], j['timescales']
five = [s for s in j['slots'] if s['timescale_s'] == 300]
assert len(five) == 24 and all(s['nepochs'] == 5 for s in five)
# Every 5m total is the sum of its base epochs.
for s in five:
    parts = [b for b in base if s['start_ns'] <= b['start_ns'] < s['start_ns'] + 300 * 10**9]
    for v in ('cpu', 'sched', 'diskio'):
        assert s['vitals'][v]['wsum'] == sum(b['vitals'][v]['wsum'] for b in parts), v
assert all(f['filter'] == 'ewma' for f in j['findings'])" "query --json"

# ---- the cache ----
run $Q query --from $FROM --to $TO --json
expect_json "c = j['cache']
assert c['hits'] == 6 and c['misses'] == 0 and j['epochs_read'] == 0, (c, j['epochs_read'])" "a second query is served from the cache"
cp "$TMP/out" "$TMP/cached.json"
run $Q query --from $FROM --to $TO --json --no-cache
expect_json "assert j['epochs_read'] == 120 and j['cache']['dir'] is None, j['cache']" "--no-cache"
run -c "$TMP/ewma-k.yaml" query --from $FROM --to $TO --json
expect_json "c = j['cache']
assert c['hits'] == 3 and c['misses'] == 3, c
assert c['rollup_hits'] == 26 and c['rollup_misses'] == 0, c
assert j['findings'] == [], 'k: 1000 still finds'" "a changed option recomputes that filter only"
# A changed plugin file invalidates its results.
mkdir "$TMP/plugins"
cp "$top_builddir/filters/.libs/ewma.so" "$TMP/plugins/ewma.so"
chmod 755 "$TMP/plugins/ewma.so"
saved_path=$VITALS_PLUGIN_PATH
VITALS_PLUGIN_PATH="$TMP/plugins:$VITALS_PLUGIN_PATH"
run $Q query --from $FROM --to $TO --json
expect_json "assert j['cache']['misses'] == 3, j['cache']" "another ewma.so"
run $Q query --from $FROM --to $TO --json
expect_json "assert j['cache']['misses'] == 0, j['cache']" "the same ewma.so"
touch -d '2001-01-01' "$TMP/plugins/ewma.so"
run $Q query --from $FROM --to $TO --json
expect_json "assert j['cache']['misses'] == 3, j['cache']" "a touched ewma.so"
VITALS_PLUGIN_PATH=$saved_path
# Corrupt entries are ignored and rebuilt, with the same results.
for f in $(find "$DATA/cache" -name '*.json.gz'); do echo garbage >"$f"; done
run $Q query --from $FROM --to $TO --json
expect_json "
assert j['cache']['hits'] == 0 and j['epochs_read'] == 120, j['cache']
c = json.load(open('$TMP/cached.json'))
assert j['findings'] == c['findings'] and j['slots'] == c['slots']" "corrupt cache entries"
# A rewritten epoch file invalidates the slots and ranges holding it.
file=$(find "$DATA" -name '20261118T110700*.json.gz' ! -path '*cache*')
touch "$file"
run $Q query --from $FROM --to $TO --json
expect_json "c = j['cache']
assert c['misses'] == 6 and c['rollup_misses'] == 2 and c['rollup_hits'] == 24, c" "a touched epoch file"

# ---- findings: the injected anomalies, and none in the clean store ----
run $Q findings --from $FROM --to $TO --json
expect_rc 0 "findings --json"
expect_json "
b = an['cpu_burst']
cpu = [f for f in j if f['vital'] == 'cpu' and f['base']]
# The burst is found when it starts ...
assert any(b['start_ns'] <= f['start_ns'] < b['end_ns'] and f['value'] > f['expected'] for f in cpu), cpu
# ... and nothing is found before it.
assert not [f for f in j if f['start_ns'] < b['start_ns']], j
# Each anomaly is found in its window (the vanishing exe: when it goes).
for k, a in an.items():
    assert any(a['start_ns'] <= f['start_ns'] < a['start_ns'] + 3 * 60 * 10**9 for f in j), k
# The rate x8 of every exe is spread over many sites: it names nobody.
r = an['rate_x8']
assert any(not f['label'] and 'spread over many sites' in f['text'] and f['start_ns'] == r['start_ns'] for f in j if f['vital'] == 'diskio')
# The warnings are the burst's and the new sched label's, one each (one
# exe, lasting epochs: an incident); the rest is info; ewma says no crit.
loud = [f for f in j if f['severity'] != 'info']
assert sorted(f['label'] for f in loud) == sorted([b['exe'], an['new_label']['exe']]), loud
assert all(f['severity'] == 'warn' for f in loud), loud" "the injected anomalies"
run $Q findings --from $FROM --to $TO --severity warn --json
expect_json "assert j and all(f['severity'] in ('warn', 'crit') for f in j)" "--severity warn"
run $Q findings --from $FROM --to $TO
expect_out "\[warn\] ewma  host node-1  vital cpu" "findings text"
run -c "$TMP/ewma.yaml" -d "$CLEAN" findings --from $FROM --to $TO --json
expect_rc 0 "findings on the clean store"
expect_json "assert j == [], j" "the clean store has no findings"

# ---- top: the burst's exe and label lead cpu in its window ----
window() { # KIND: --from/--to of an anomaly
	python3 -c "import json; a = [a for a in json.load(open('$DATA/manifest.json'))['anomalies'] if a['kind'] == '$1'][0]
print('--from @%d --to @%d' % (a['start_ns'] // 10**9, a['end_ns'] // 10**9))"
}
# shellcheck disable=SC2046
run $Q top $(window cpu_burst) --vital cpu --no-filter --json
expect_rc 0 "top of the burst"
expect_json "c = j['vitals']['cpu']
b = an['cpu_burst']
assert c['exes'][0]['exe'] == b['exe'], c['exes'][0]
assert c['labels'][0]['label'] == b['label'] and c['labels'][0]['exe'] == b['exe'], c['labels'][0]
assert list(j['vitals']) == ['cpu']" "top names the rogue exe"
# shellcheck disable=SC2046
run $Q top $(window new_label) --vital sched -k 2 --no-filter
expect_rc 0 "top of the new label"
label=$(python3 -c "import json; print([a for a in json.load(open('$DATA/manifest.json'))['anomalies'] if a['kind'] == 'new_label'][0]['label'])")
expect_out "^      1 .*synth-2 \(synth-2\) label $label\$" "top names the new label"
[ "$(grep -c '^      [0-9] ' "$TMP/out")" -eq 4 ] || { what_ran; fail "top -k 2: 2 labels and 2 exes"; }
run $Q top --from $FROM --to $TO
expect_rc 0 "top (filter if installed)"
# topk ranks any range `top` rolls up, and in a query only the hourly
# slots (its min_timescale, 1h by default).
if [ -e "$top_builddir/filters/topk.la" ]; then
	sed 's/ewma: {.*/topk: { k: 2 }/' "$TMP/ewma.yaml" >"$TMP/topk.yaml"
	# shellcheck disable=SC2046
	run -c "$TMP/topk.yaml" top $(window cpu_burst) -k 2 --json
	expect_rc 0 "top through topk"
	expect_json "f = [x for x in j['findings'] if x['vital'] == 'cpu']
assert len(f) == 2 and f[0]['label'] == an['cpu_burst']['exe'], f" "top through topk names the rogue exe"
	run -c "$TMP/topk.yaml" query --from $FROM --to $TO --json --no-cache
	expect_rc 0 "query with topk"
	expect_json "t = [f for f in j['findings'] if f['filter'] == 'topk']
assert {f['timescale_s'] for f in t} == {3600}, sorted({f['timescale_s'] for f in t})
assert len(t) == 2 * 3 * 2, len(t)" "topk ranks the hourly slots only"
fi
run $Q top --from $FROM --to $TO --vital nosuch --no-filter
expect_rc 1 "top --vital nosuch"

# ---- diff and train: through their filters when installed ----
run $Q diff "$FROM..2026-11-18T10:30" "2026-11-18T10:30..2026-11-18T10:33"
if [ -e "$top_builddir/filters/diff.la" ]; then
	expect_rc 0 "diff"
else
	expect_rc 1 "diff without the diff filter"
	expect_err "filter 'diff' is not installed" "diff without the diff filter"
fi
run $Q train callmodel --normal "$FROM..2026-11-18T10:30" --model "$TMP/cm.model"
if [ -e "$top_builddir/filters/callmodel.la" ]; then
	expect_rc 0 "train callmodel"
	expect_out "trained callmodel on 30 epochs" "train callmodel"
else
	expect_rc 1 "train without the callmodel filter"
	expect_err "filter 'callmodel' is not installed" "train without callmodel"
fi

# ---- several hosts: a queue each, totals per host ----
"$MKSTORE" --out "$TMP/multi" --span 20m --start $START --hosts 3 --rate 100 --quiet ||
	fail "mkstore --hosts 3"
run $Q -d "$TMP/multi" query --from $FROM --to 2026-11-18T10:20 --json
expect_rc 0 "query of 3 hosts"
expect_json "
hosts = sorted({s['host'] for s in j['slots']})
assert hosts == ['node-1', 'node-2', 'node-3'], hosts
for h in hosts:
    assert len([s for s in j['slots'] if s['host'] == h and s['base']]) == 20, h
    assert len([s for s in j['slots'] if s['host'] == h and s['timescale_s'] == 300]) == 4, h" "query of 3 hosts"
run $Q -d "$TMP/multi" query --from $FROM --to 2026-11-18T10:20 --host node-2 --json
expect_json "assert {s['host'] for s in j['slots']} == {'node-2'}" "query --host node-2"

# ---- the daemon: rollups at a longer timescale, findings stored ----
cat >"$TMP/live.yaml" <<EOC
epoch: 1s
timescales: [2s]
data_dir: $TMP/live
host: live
probes:
  synthetic: { rate: 3000 }
filters:
  ewma: { warmup: 0, k: 0, floor: ["*=0"] }
plugins:
  store: {}
EOC
"$VITALSD" -c "$TMP/live.yaml" --epochs 8 >"$TMP/live.log" 2>&1 ||
	{ cat "$TMP/live.log" >&2; fail "vitalsd with timescales: [2s]"; }
run -c "$TMP/live.yaml" findings --stored --from -1h --json
expect_rc 0 "findings --stored"
expect_json "
ts = {f['timescale_s'] for f in j}
assert 1 in ts and 2 in ts, ts
two = [f for f in j if f['timescale_s'] == 2]
# On 2 s slots; all but a first one started mid-slot cover it whole.
assert all(f['start_ns'] % (2 * 10**9) == 0 and not f['base'] for f in two), two
assert any(f['end_ns'] - f['start_ns'] == 2 * 10**9 for f in two), two" "rollup findings stored by vitalsd"

# ---- several hosts: each host's filters see that host's history only ----
# A filter keeps state from epoch to epoch (ewma's averages): over a store
# of four hosts, a host's findings must be the same whether the query
# asks for every host or for that one alone (one instance per host; only
# a filter that compares hosts, such as peer, sees them all at once).
"$MKSTORE" --out "$TMP/multi" --span 2h --epoch 60s --hosts 4 \
	--odd node-3=1.6 --start 1700000000 --quiet >"$TMP/mk4.out" 2>&1 ||
	{ cat "$TMP/mk4.out" >&2; fail "mkstore --hosts 4"; }
cat >"$TMP/multi.yaml" <<EOC
epoch: 60s
data_dir: $TMP/multi
filters:
  ewma: {}
  diff: {}
EOC
R="--from @1700000000 --to @1700007200 --no-cache --json"
# shellcheck disable=SC2086
"$VITALS" -c "$TMP/multi.yaml" findings $R >"$TMP/multi-all.json" ||
	fail "findings over four hosts"
for h in node-1 node-3; do
	# shellcheck disable=SC2086
	"$VITALS" -c "$TMP/multi.yaml" findings $R --host "$h" >"$TMP/multi-$h.json" ||
		fail "findings --host $h"
done
python3 - "$TMP" <<'PY' || fail "a host's findings depend on the other hosts in the query"
import json, sys
d = sys.argv[1]
every = json.load(open(d + "/multi-all.json"))
key = lambda f: (f["filter"], f["vital"], f["start_ns"], f["timescale_s"], f["text"])
for h in ("node-1", "node-3"):
    alone = sorted(map(key, json.load(open("%s/multi-%s.json" % (d, h)))))
    among = sorted(key(f) for f in every if f["host"] == h)
    assert alone == among, "%s: %d findings alone, %d among four hosts" % (h, len(alone), len(among))
    print("%s: %d findings, alone or among four hosts" % (h, len(alone)))
PY

echo "PASS: vitals query, findings, top, diff, train, several hosts"
