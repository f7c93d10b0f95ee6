#!/bin/sh
# SPDX-License-Identifier: MIT
# The proc probe in the real daemon on this machine's /proc: two 1 s epochs
# stored, `vitals show` has a METRICS section, and the JSON's proc metrics
# are plausible (cpu shares add up to 100, memory sizes positive).  A root
# that is not a /proc stops the start with the file named.
. "$top_srcdir/tests/lib.sh"

[ -r /proc/stat ] || skip "no /proc/stat here"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"

"$VITALSD" --list-plugins -v >"$TMP/list.out" 2>&1 || { cat "$TMP/list.out"; fail "--list-plugins"; }
assert_grep '^proc +probe' "$TMP/list.out"
assert_grep '^ +interfaces +list' "$TMP/list.out"

cat >"$TMP/proc.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
host: proc-test
probes:
  proc: { interval: 250ms }
plugins:
  store: {}
EOC
"$VITALSD" -c "$TMP/proc.yaml" -n 2 2>"$TMP/vitalsd.err" ||
	{ cat "$TMP/vitalsd.err"; fail "vitalsd -n 2 with the proc probe"; }
[ "$(count_epochs "$TMP/data")" -eq 2 ] || fail "2 epochs expected"

"$VITALS" --data-dir "$TMP/data" show --last >"$TMP/show.out" || fail "vitals show --last"
assert_grep '^METRICS \([0-9]+\)' "$TMP/show.out"
assert_grep '^  proc\.cpu\.idle_pct +% ' "$TMP/show.out"
assert_grep '^  proc\.mem\.free_bytes +bytes ' "$TMP/show.out"

"$VITALS" --data-dir "$TMP/data" show --last --json >"$TMP/show.json" || fail "show --json"
python3 - "$TMP/show.json" <<'EOP' || { cat "$TMP/vitalsd.err"; fail "implausible proc metrics"; }
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
for k, v in m.items():
    # The probe's, the daemon's own CPU in parts and its memory.
    assert k.startswith(("proc.", "vitals.cpu.", "vitals.memory.")), k
    assert v["n"] >= 1 and v["min"] <= v["mean"] <= v["max"], (k, v)
    assert not k.startswith("vitals.") or v["min"] >= 0, (k, v)
cpu = ["user", "nice", "system", "iowait", "steal", "idle"]
for what in ("mean", "last"):
    total = sum(m["proc.cpu.%s_pct" % c][what] for c in cpu)
    assert abs(total - 100) < 0.01, (what, total)
for c in cpu:
    assert 0 <= m["proc.cpu.%s_pct" % c]["min"] <= 100, c
assert m["vitals.memory.resident"]["last"] >= m["vitals.memory.sketches"]["last"] >= 0
assert m["proc.mem.free_bytes"]["last"] > 0
assert m["proc.mem.available_bytes"]["last"] > 0
assert 0 < m["proc.mem.memused_pct"]["last"] < 100
assert m["proc.sys.runq_sz"]["max"] >= 1          # the reader itself runs
assert m["proc.sys.cswch_s"]["mean"] > 0
assert m["proc.sys.intr_s"]["mean"] >= 0
for k, v in m.items():
    if k.startswith("proc.disk.") and k.endswith("util_pct"):
        assert 0 <= v["max"] <= 100, (k, v)
    assert ".net.lo." not in k, k
EOP

# A root that is not a /proc: exit 1 before anything runs, the file named.
mkdir -p "$TMP/notproc"
cat >"$TMP/bad.yaml" <<EOC
epoch: 1s
data_dir: $TMP/bad-data
probes:
  proc: { root: $TMP/notproc }
EOC
st=0
"$VITALSD" -c "$TMP/bad.yaml" -n 1 >"$TMP/bad.out" 2>&1 || st=$?
[ "$st" -eq 1 ] || { cat "$TMP/bad.out"; fail "bad root: exit $st, expected 1"; }
assert_grep "proc.*init failed: .*notproc/stat" "$TMP/bad.out"
echo "PASS: the proc probe publishes plausible metrics from /proc"
