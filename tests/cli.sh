#!/bin/sh
# SPDX-License-Identifier: MIT
# The vitals CLI on a real store: vitalsd runs two 1s epochs of the synthetic
# probe into a fresh data dir, then `vitals epochs` and `vitals show` are
# checked on it, on corrupt files, an empty or missing store and bad usage;
# a range command without a configuration file says that no filter runs.
: "${top_srcdir:?run through make check}"
. "$top_srcdir/tests/lib.sh"

: "${VITALS_PLUGIN_PATH:=$top_builddir/probes:$top_builddir/filters:$top_builddir/plugins}"
export VITALS_PLUGIN_PATH
HOST=vitals-cli-test
DATA="$TMP/data"

for f in "$VITALSD" "$VITALS"; do
	[ -x "$f" ] || skip "$f not built"
done
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"

# run ARGS...: vitals, stdout in $TMP/out, stderr in $TMP/err, status in $rc.
run() {
	rc=0
	"$VITALS" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
}

# what_ran: the last run's output, for a failure message.
what_ran() {
	echo "--- stdout:"
	head -n 40 "$TMP/out"
	echo "--- stderr:"
	head -n 20 "$TMP/err"
} >&2

# expect_rc N WHAT: the last run exited with N.
expect_rc() {
	[ "$rc" -eq "$1" ] || { what_ran; fail "$2: exit $rc, expected $1"; }
}

# expect_out/expect_err REGEX WHAT: the last run printed REGEX (grep -E).
expect_out() {
	grep -Eq -- "$1" "$TMP/out" || { what_ran; fail "$2: no /$1/ on stdout"; }
}
expect_err() {
	grep -Eq -- "$1" "$TMP/err" || { what_ran; fail "$2: no /$1/ on stderr"; }
}

# expect_lines N WHAT: the last run printed N lines on stdout.
expect_lines() {
	n=$(wc -l <"$TMP/out")
	[ "$n" -eq "$1" ] || { what_ran; fail "$2: $n lines, expected $1"; }
}

# expect_json PYTHON WHAT: PYTHON holds for j, the last stdout parsed.
expect_json() {
	python3 -c "import json, sys
j = json.load(sys.stdin)
$1" <"$TMP/out" || { what_ran; fail "$2"; }
}

# ---- the fixture: two epochs from the daemon ----
cat >"$TMP/vitals.yaml" <<EOC
epoch: 1s
data_dir: $DATA
host: $HOST
probes:
  synthetic: { rate: 5000 }
filters:
  ewma: {}
plugins:
  store: {}
EOC
"$VITALSD" -c "$TMP/vitals.yaml" --epochs 2 >"$TMP/vitalsd.log" 2>&1 ||
	{ cat "$TMP/vitalsd.log" >&2; fail "vitalsd --epochs 2"; }
[ "$(count_epochs "$DATA")" -eq 2 ] || fail "vitalsd did not store 2 epochs"

# ---- epochs ----
run --data-dir "$DATA" epochs
expect_rc 0 "epochs"
expect_lines 2 "epochs"
[ "$(grep -c -- "  $HOST  " "$TMP/out")" -eq 2 ] || { what_ran; fail "epochs: host"; }
expect_out '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}  ' "epochs: start"
expect_out ' cpu=[0-9.]+[kMG]? ' "epochs: cpu, a count, no unit"
# Times in ns, bytes in B, among the four with the most events.
grep -Eq ' (sched|blocking|lock)=[0-9.]+[kMGTPE]?ns |diskio=[0-9.]+[kMGTPE]?B ' "$TMP/out" ||
	{ what_ran; fail "epochs: no unit on a weighted sum of ns or bytes"; }
expect_out 'findings=[0-9]+$' "epochs: findings"

run epochs --json --data-dir "$DATA"
expect_rc 0 "epochs --json"
expect_json "assert len(j) == 2, j
for e in j:
    assert e['host'] == '$HOST' and e['start_ns'] > 0, e
    assert {'cpu', 'sched', 'diskio'} <= set(e['vitals']), e['vitals']
    assert e['vitals']['cpu']['events'] > 0, e
    assert e['path'].endswith('.json.gz') and 'findings' in e, e
assert j[0]['start_ns'] < j[1]['start_ns'], 'not oldest first'" "epochs --json"

run --data-dir "$DATA" epochs --limit 1
expect_rc 0 "epochs --limit 1"
expect_lines 1 "epochs --limit 1"

# The data dir from a vitalsd config (-c) and from the environment.
run -c "$TMP/vitals.yaml" epochs
expect_rc 0 "epochs -c"
expect_lines 2 "epochs -c"
rc=0
VITALS_DATA_DIR="$DATA" "$VITALS" epochs >"$TMP/out" 2>"$TMP/err" || rc=$?
expect_rc 0 "epochs with VITALS_DATA_DIR"
expect_lines 2 "epochs with VITALS_DATA_DIR"

# ---- show ----
run --data-dir "$DATA" show --last
expect_rc 0 "show --last"
expect_out "host $HOST" "show --last"
for v in cpu sched diskio; do
	expect_out "^$v \(unit: " "show --last: $v"
done
expect_out '^  TOP LABELS' "show --last"
expect_out '%  /[^ ]*synth-[^ ]* \(' "show --last: an exe under TOP LABELS"
expect_out '^  SAMPLES' "show --last"
expect_out 'exe [^ ]*synth-' "show --last: a sample's exe"
expect_out '^        [ku] ' "show --last: stack frames"
expect_out '^FINDINGS' "show --last"

run --data-dir "$DATA" show --json
expect_rc 0 "show --json"
expect_json "v = j['vitals']
names = set(v) if isinstance(v, dict) else {x['name'] for x in v}
assert {'cpu', 'sched', 'diskio'} <= names, names
assert j['host'] == '$HOST', j['host']" "show --json"

run --data-dir "$DATA" show 0 --vital cpu --top 3 --samples 2
expect_rc 0 "show 0"
expect_out '^cpu ' "show 0 --vital cpu"
grep -q '^sched ' "$TMP/out" && { what_ran; fail "show --vital cpu printed sched"; }

run --data-dir "$DATA" show 0 --vital diskio --samples 1
expect_rc 0 "show 0 --vital diskio"
expect_out '^      [0-9]+ bytes, device [0-9]+:[0-9]+, sector [0-9]+, [0-9.]+ ms from dispatch to completion$' \
	"show --vital diskio: the arguments read out"

run --data-dir "$DATA" show -1
expect_rc 0 "show -1"
last=$(grep '^EPOCH' "$TMP/out")
run --data-dir "$DATA" show 0
first=$(grep '^EPOCH' "$TMP/out")
[ "$first" != "$last" ] || fail "show 0 and show -1 are the same epoch"

# A start time prefix picks the newest epoch starting with it.  Epochs may
# start within the same second, so use the milliseconds `show` prints.
prefix=$(echo "$first" | cut -d' ' -f2)
run --data-dir "$DATA" show "$prefix"
expect_rc 0 "show $prefix"
[ "$(grep '^EPOCH' "$TMP/out")" = "$first" ] || fail "show $prefix is not show 0"

file=$(find "$DATA" -name "*_$HOST.json.gz" | sort | tail -n 1)
run show "$file"
expect_rc 0 "show FILE"
[ "$(grep '^EPOCH' "$TMP/out")" = "$last" ] || fail "show FILE is not show -1"

run --data-dir "$DATA" show 5
expect_rc 1 "show 5 (out of range)"
expect_err 'no epoch' "show 5"
run --data-dir "$DATA" show --vital nosuchvital
expect_rc 1 "show --vital nosuchvital"

# ---- corrupt files are reported and skipped ----
datedir=$(dirname "$file")
stamp=$(basename "$file" | sed 's/_.*//')
echo "not an epoch" >"$datedir/${stamp}_garbage1.json.gz"
echo '{"format": 1}' | gzip >"$datedir/${stamp}_garbage2.json.gz"
run --data-dir "$DATA" epochs
expect_rc 0 "epochs with corrupt files"
expect_lines 2 "epochs with corrupt files"
expect_err '^vitals: skipping .*garbage1\.json\.gz: ' "corrupt file"
expect_err '^vitals: skipping .*garbage2\.json\.gz: ' "corrupt file"
run --data-dir "$DATA" show --last
expect_rc 0 "show --last with corrupt files"
run show "$datedir/${stamp}_garbage1.json.gz"
expect_rc 1 "show a corrupt file"
expect_err 'garbage1' "show a corrupt file"

# ---- no data ----
mkdir "$TMP/empty"
run --data-dir "$TMP/empty" epochs
expect_rc 1 "epochs on an empty dir"
expect_err "no epochs under $TMP/empty" "epochs on an empty dir"
run --data-dir "$TMP/empty" show
expect_rc 1 "show on an empty dir"
expect_err "no epochs under $TMP/empty" "show on an empty dir"
run --data-dir "$TMP/missing" epochs
expect_rc 1 "epochs on a missing dir"
expect_err "$TMP/missing" "epochs on a missing dir"

# ---- usage ----
run bogus
expect_rc 2 "vitals bogus"
expect_err '^usage: vitals' "vitals bogus"
run
expect_rc 2 "vitals without a command"
run --data-dir "$DATA" show --top many
expect_rc 2 "show --top many"
run --data-dir "$DATA" epochs --frobnicate
expect_rc 2 "epochs --frobnicate"
run --data-dir "$DATA" show 0 1
expect_rc 2 "show with two epochs"
# One option table serves every command: values inline or attached, and
# an option of another command refused by name.
run --data-dir="$DATA" show --top=1 --samples 0 -1
expect_rc 0 "show --top=1 -1"
run -d"$DATA" epochs -n1
expect_rc 0 "epochs -n1"
expect_lines 1 "epochs -n1"
run --data-dir "$DATA" epochs --last
expect_rc 2 "epochs --last"
expect_err '^vitals: epochs: unknown option --last' "epochs --last"
run --data-dir "$DATA" show --json=yes
expect_rc 2 "show --json=yes"
expect_err 'option --json takes no value' "show --json=yes"
run --data-dir "$DATA" show --vital
expect_rc 2 "show --vital (no value)"
expect_err 'option --vital needs a value' "show --vital"
run --data-dir "$DATA" show -V
expect_rc 2 "show -V"
run --data-dir "$DATA" query -k 3
expect_rc 2 "query -k"
expect_err 'query: unknown option -k' "query -k"
run --help
expect_rc 0 "--help"
expect_out '^usage: vitals' "--help"
run --version
expect_rc 0 "--version"
expect_out '^vitals [0-9]' "--version"

# ---- a range command without a configuration file says no filter runs ----
# (unless one is installed: a package test may install one meanwhile)
installed() { ls /etc/vitals/vitals.yaml /usr/local/etc/vitals/vitals.yaml 2>/dev/null; }
before=$(installed)
run --data-dir "$DATA" findings --from 2000-01-01
after=$(installed)
expect_rc 0 "findings without a configuration"
if [ -z "$before$after" ]; then
	expect_err "no configuration file \(-c FILE, or .*/vitals/vitals.yaml\), so no filter runs over the range \('vitals findings --stored' shows what vitalsd found\)" \
		"findings without a configuration"
fi
run --data-dir "$DATA" findings --stored --from 2000-01-01
expect_rc 0 "findings --stored"
grep -q 'no configuration file' "$TMP/err" && { what_ran; fail "findings --stored: the note of no filters"; }

echo "PASS: vitals epochs and show"
