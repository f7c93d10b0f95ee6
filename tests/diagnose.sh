#!/bin/sh
# SPDX-License-Identifier: MIT
# The threshold, topk, affinity and rules filters in the real daemon: listed
# with their options, bad rule text refused at start naming the rule, and a
# 6-epoch synthetic run where topk ranks every epoch (min_timescale: 0),
# threshold reports each crossed bound once (one incident, from the first
# epoch; said again, at info, only when the value doubles), affinity flags only the epoch where a rogue exe takes over the
# cpu mix (info: seen once; its leaving is the end of that change, not a
# new one), and rules say once which vitals they lack.
. "$top_srcdir/tests/lib.sh"

"$VITALSD" --list-plugins -v >"$TMP/list.out" 2>&1 || { cat "$TMP/list.out"; fail "--list-plugins"; }
for p in threshold topk affinity rules; do assert_grep "^$p +filter" "$TMP/list.out"; done
assert_grep '^ +min_similarity +double +0.3' "$TMP/list.out"
assert_grep '^ +leak_epochs +int +5' "$TMP/list.out"

# Bad values stop the daemon before it starts, exit 2, naming the file, the
# filter's entry (line 6) and the rule; nothing is stored.  Not in a
# pipeline: its `fail` must end the test, not a subshell.
refused() { # NAME EXPECTED-REGEX FILTERS-SECTION (printf %b escapes)
	{ printf 'epoch: 1s\ndata_dir: %s\nprobes:\n  synthetic: {}\n' "$TMP/$1-data"; printf '%b' "$3"; } >"$TMP/$1.yaml"
	st=0
	"$VITALSD" -c "$TMP/$1.yaml" --epochs 1 >"$TMP/$1.out" 2>&1 || st=$?
	[ "$st" -eq 2 ] || { cat "$TMP/$1.out"; fail "$1: exit $st, expected 2"; }
	assert_grep "$1.yaml:6:3: plugin '[a-z]+': $2" "$TMP/$1.out"
	[ ! -d "$TMP/$1-data" ] || [ "$(count_epochs "$TMP/$1-data")" -eq 0 ] || fail "$1: epochs stored"
}
refused badop "rule 2 'sched.wsum >> 1': bad operator '>>'" \
	'filters:\n  threshold:\n    rules: ["cpu.wsum > 5", "sched.wsum >> 1"]\n'
refused badunit "rule 1 'diskio.wsum > 5ms': vital 'diskio' does not weigh time" \
	'filters:\n  threshold:\n    rules: ["diskio.wsum > 5ms"]\n'
refused norules "option 'rules' is empty" 'filters:\n  threshold: {}\n'
refused badrule "option 'rules': '12' is not a rule number" 'filters:\n  rules: { rules: [1, 12] }\n'
refused badby "option 'by': 'pid' is not exe or label" 'filters:\n  topk: { by: pid }\n'

cat >"$TMP/run.yaml" <<EOC
epoch: 1s
data_dir: $TMP/run
host: test-host
probes:
  synthetic: { vitals: [cpu, sched, diskio], rate: 4000, labels: 200, burst_epoch: 4, burst_vital: cpu, burst_label: 7, burst_factor: 50 }
filters:
  topk: { k: 3, min_timescale: 0 }
  threshold: { rules: ["cpu.events > 1", "sched.wsum@synth-1 > 1ns crit"] }
  affinity: { warmup: 2 }
  rules: {}
plugins:
  store: {}
EOC
"$VITALSD" -c "$TMP/run.yaml" --epochs 6 2>"$TMP/run.err" || { cat "$TMP/run.err"; fail "vitalsd --epochs 6"; }
[ "$(count_epochs "$TMP/run")" -eq 6 ] || fail "not 6 epochs"
[ "$(grep -c 'rule #1 (Busy loop) needs cache' "$TMP/run.err")" -eq 1 ] ||
	{ cat "$TMP/run.err"; fail "rule #1 did not say once that cache is absent"; }
for i in 0 1 2 3 4 5; do
	"$VITALS" --data-dir "$TMP/run" show $i --json >"$TMP/e$i.json" || fail "show $i"
done
python3 - "$TMP" <<'EOP' || fail "findings of the four filters are wrong"
import json, sys
for i in range(6):
    e = json.load(open("%s/e%d.json" % (sys.argv[1], i)))
    by = {}
    # Only the 1 s epoch's own: a run that crosses a 5-minute boundary
    # also closes a longer timescale's slot, whose findings come along.
    for f in e["findings"]:
        if f["timescale_s"] == 1:
            by.setdefault(f["filter"], []).append(f)
    for v in ("cpu", "sched", "diskio"):
        t = [f for f in by["topk"] if f["vital"] == v]
        assert len(t) == 3, (i, v, t)
        assert all(0 < f["score"] <= 1 and f["value"] <= f["expected"] for f in t), t
        assert sum(f["score"] for f in t) <= 1 + 1e-9, t
        assert [f["score"] for f in t] == sorted((f["score"] for f in t), reverse=True)
    th = by.get("threshold", [])
    if i == 0:
        assert [f["vital"] for f in th] == ["cpu", "sched"], th
        assert th[1]["label"] == "/usr/bin/synth-1" and th[1]["severity"] == 3, th
    else:
        assert all(f["severity"] == 1 and "crossed since" in f["text"]
                   for f in th), (i, th)
    aff = by.get("affinity", [])
    top = [f for f in by["topk"] if f["vital"] == "cpu"][0]["label"]
    if i == 4:
        assert top == "/usr/bin/synth-rogue", top
        assert len(aff) == 1 and aff[0]["label"] == "/usr/bin/synth-rogue", aff
        assert aff[0]["severity"] == 1 and "seen once" in aff[0]["text"], aff
    else:
        assert aff == [], (i, aff)
    assert "rules" not in by, by["rules"]
EOP
echo "PASS: threshold, topk, affinity and rules in the daemon"
