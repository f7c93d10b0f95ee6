#!/bin/sh
# SPDX-License-Identifier: MIT
# `vitals pprof` on a real store: vitalsd runs two 1s epochs of the
# synthetic probe, then the folded stacks are checked (format, totals, the
# exe filter), bad arguments and empty ranges exit 2 and 1 with a message,
# and `go tool pprof -top` reads the profile and lists the probe's frames
# with the same total (skipped without go).
: "${top_srcdir:?run through make check}"
. "$top_srcdir/tests/lib.sh"

: "${VITALS_PLUGIN_PATH:=$top_builddir/probes:$top_builddir/filters:$top_builddir/outputs}"
export VITALS_PLUGIN_PATH
HOST=vitals-pprof-test
DATA="$TMP/data"
# Times without a zone are local, and messages say UTC: make them one.
TZ=UTC
export TZ

for f in "$VITALSD" "$VITALS"; do
	[ -x "$f" ] || skip "$f not built"
done

# run ARGS...: vitals, stdout in $TMP/out, stderr in $TMP/err, status in $rc.
run() {
	rc=0
	"$VITALS" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
}
what_ran() {
	echo "--- stdout:"
	head -c 2000 "$TMP/out"
	echo "--- stderr:"
	head -n 20 "$TMP/err"
} >&2
expect_rc() {
	[ "$rc" -eq "$1" ] || { what_ran; fail "$2: exit $rc, expected $1"; }
}
expect_err() {
	grep -Eq -- "$1" "$TMP/err" || { what_ran; fail "$2: no /$1/ on stderr"; }
}
# folded_ok FILE WHAT: every line is "EXE;FRAMES... N"; prints the sum.
folded_ok() {
	awk -v what="$2" '
	!/^[^; ][^;]*(;[^;]+)* [0-9]+$/ { print what ": bad line " NR ": " $0 > "/dev/stderr"; bad = 1 }
	{ sum += $NF }
	END { if (bad || NR == 0) exit 1; print sum }' "$1" ||
		fail "$2: not folded stacks"
}

# ---- the fixture: two epochs from the daemon ----
cat >"$TMP/vitals.yaml" <<EOC
epoch: 1s
data_dir: $DATA
host: $HOST
probes:
  synthetic: { rate: 5000 }
plugins:
  store: {}
EOC
"$VITALSD" -c "$TMP/vitals.yaml" --epochs 2 >"$TMP/vitalsd.log" 2>&1 ||
	{ cat "$TMP/vitalsd.log" >&2; fail "vitalsd --epochs 2"; }
[ "$(count_epochs "$DATA")" -eq 2 ] || fail "vitalsd did not store 2 epochs"

# ---- folded stacks ----
run -d "$DATA" pprof --folded
expect_rc 0 "pprof --folded"
cp "$TMP/out" "$TMP/folded"
total=$(folded_ok "$TMP/folded" "pprof --folded")
[ "$total" -gt 0 ] || fail "pprof --folded: total $total"
grep -Eq '^/usr/bin/synth-[0-9]+;0x[0-9a-f]+;.*;0xffffffff8[0-9a-f]+ [0-9]+$' \
	"$TMP/folded" || { what_ran; fail "pprof --folded: no synthetic stack"; }
# Each distinct stack once.
[ "$(sed 's/ [0-9]*$//' "$TMP/folded" | sort | uniq -d | wc -l)" -eq 0 ] ||
	fail "pprof --folded: a stack on two lines"

run -d "$DATA" pprof --folded --exe synth-1 --host "$HOST" --from -1h --to now
expect_rc 0 "pprof --folded --exe synth-1"
folded_ok "$TMP/out" "pprof --exe" >/dev/null
grep -v '^/usr/bin/synth-1;' "$TMP/out" | grep -q . &&
	{ what_ran; fail "pprof --exe synth-1: other exes"; }
run -d "$DATA" pprof --folded --vital sched -o "$TMP/sched.folded"
expect_rc 0 "pprof --vital sched -o"
folded_ok "$TMP/sched.folded" "pprof --vital sched" >/dev/null
expect_err "sched\.folded: [0-9]+ samples of sched" "pprof -o: summary"

# ---- the binary profile ----
run -d "$DATA" pprof -o "$TMP/p.pb.gz"
expect_rc 0 "pprof -o"
[ "$(head -c 2 "$TMP/p.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] ||
	fail "pprof -o: not gzip"
run -d "$DATA" pprof
expect_rc 0 "pprof to a pipe"
cmp -s "$TMP/out" "$TMP/p.pb.gz" || fail "pprof to stdout differs from -o"

# ---- errors ----
run -d "$DATA" pprof --from yesterday
expect_rc 2 "pprof --from yesterday"
expect_err "^vitals: pprof: --from: bad time 'yesterday'" "pprof --from yesterday"
run -d "$DATA" pprof --to 2026-13-01
expect_rc 2 "pprof --to 2026-13-01"
expect_err "--to: bad time" "pprof --to 2026-13-01"
run -d "$DATA" pprof --from -1h --to -2h
expect_rc 2 "pprof with --to before --from"
expect_err "empty range" "pprof with --to before --from"
run -d "$DATA" pprof --frobnicate
expect_rc 2 "pprof --frobnicate"
expect_err "unknown option --frobnicate" "pprof --frobnicate"
run -d "$DATA" pprof --json
expect_rc 2 "pprof --json"
run -d "$DATA" pprof extra
expect_rc 2 "pprof extra"
expect_err "unexpected argument 'extra'" "pprof extra"
run -d "$DATA" pprof -o
expect_rc 2 "pprof -o without a file"
expect_err "needs a value" "pprof -o without a file"
run -d "$DATA" pprof --from 2001-01-01 --to 2001-01-02 --folded
expect_rc 1 "pprof over a range without epochs"
expect_err "no epoch from 2001-01-01" "pprof over a range without epochs"
run -d "$TMP/missing" pprof --folded
expect_rc 1 "pprof on a missing store"
expect_err "$TMP/missing: no such data directory" "pprof on a missing store"
run -d "$DATA" pprof --vital nosuch --folded
expect_rc 1 "pprof --vital nosuch"
expect_err "no vital nosuch" "pprof --vital nosuch"
run -d "$DATA" pprof --exe nosuch --folded
expect_rc 1 "pprof --exe nosuch"
expect_err "no samples of cpu of exe nosuch" "pprof --exe nosuch"
run -d "$DATA" pprof -o "$TMP/nodir/p.pb.gz"
expect_rc 1 "pprof -o into a missing directory"
expect_err "nodir/p.pb.gz: " "pprof -o into a missing directory"
if command -v script >/dev/null 2>&1; then
	rc=0
	script -qec "'$VITALS' -d '$DATA' pprof" /dev/null >"$TMP/err" 2>&1 ||
		rc=$?
	expect_rc 2 "pprof to a terminal"
	expect_err "not writing a binary profile to a terminal" "pprof to a terminal"
fi
run --help
expect_rc 0 "vitals --help"
grep -q '^  pprof \[--vital V\]' "$TMP/out" || { what_ran; fail "--help: no pprof"; }

# A corrupt epoch file is skipped and said.
file=$(find "$DATA" -name "*_$HOST.json.gz" | sort | tail -n 1)
stamp=$(basename "$file" | sed 's/_.*//')
echo "not an epoch" >"$(dirname "$file")/${stamp}_garbage.json.gz"
run -d "$DATA" pprof --folded
expect_rc 0 "pprof with a corrupt file"
expect_err "skipped 1 unreadable epoch files .*garbage" "pprof with a corrupt file"

# ---- go tool pprof reads it ----
command -v go >/dev/null 2>&1 ||
	skip "go not installed (Debian golang-go): go tool pprof not run"
PPROF_TMPDIR="$TMP" go tool pprof -top "$TMP/p.pb.gz" >"$TMP/top" 2>"$TMP/top.err" ||
	{ cat "$TMP/top.err" >&2; fail "go tool pprof -top failed"; }
assert_grep '^Type: cpu$' "$TMP/top"
assert_grep "Total samples = $total( |$)" "$TMP/top"
assert_grep '^ +[0-9]+ +[0-9.]+% .* 0xffffffff8[0-9a-f]+$' "$TMP/top"
# The frame with the most weight of its own in the folded stacks leads.
lead=$(awk '{ n = split($1, f, ";"); w[f[n]] += $NF }
	END { for (k in w) if (w[k] > best) { best = w[k]; name = k }; print name }' \
	"$TMP/folded")
awk '/^ +flat/ { getline; print $NF; exit }' "$TMP/top" | grep -qx -- "$lead" ||
	{ cat "$TMP/top" >&2; fail "go tool pprof -top: $lead does not lead"; }
exit 0
