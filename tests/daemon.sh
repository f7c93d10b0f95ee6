#!/bin/sh
# SPDX-License-Identifier: MIT
# The real daemon on real files: --list-plugins, --check-config (YAML
# errors, plugin value checks), refusals at start, a 3-epoch run with the
# synthetic probe, EWMA and the store (files, `vitals show`), EWMA
# flagging an injected burst but not a steady stream, and t resumed by a
# restart.
. "$top_srcdir/tests/lib.sh"

# --list-plugins names the three plugins with their options.
"$VITALSD" --list-plugins -v >"$TMP/list.out" 2>&1 || { cat "$TMP/list.out"; fail "--list-plugins"; }
for p in synthetic ewma store; do assert_grep "^$p " "$TMP/list.out"; done
assert_grep '^ +alpha +double' "$TMP/list.out"
assert_grep '^ +rate +int' "$TMP/list.out"
"$VITALSD" --list-plugins --json >"$TMP/list.json" || fail "--list-plugins --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert {"synthetic","ewma","store"} <= {p["name"] for p in d}' "$TMP/list.json" ||
	fail "--list-plugins --json is not the expected JSON"

# The shipped default configuration is valid.
"$VITALSD" -c "$top_srcdir/conf/vitals.yaml" --check-config >"$TMP/check.out" 2>&1 ||
	{ cat "$TMP/check.out"; fail "conf/vitals.yaml does not check"; }

# Configuration errors: file:line:column, the key, exit 2, nothing started.
# Not in a pipeline: its `fail` must end the test, not a subshell.
check_bad() { # NAME EXPECTED-REGEX YAML (printf %b escapes)
	printf '%b' "$3" >"$TMP/$1.yaml"
	st=0
	"$VITALSD" -c "$TMP/$1.yaml" --check-config >"$TMP/$1.out" 2>&1 || st=$?
	[ "$st" -eq 2 ] || { cat "$TMP/$1.out"; fail "$1: exit $st, expected 2"; }
	assert_grep "$2" "$TMP/$1.out"
}
check_bad malformed "malformed.yaml:[0-9]+:[0-9]+: " 'epoch: 1s\nprobes:\n  synthetic: {rate: [1\n'
check_bad unknownkey 'unknownkey.yaml:2:1: .*epoc' 'epoch: 1s\nepoc: 2s\n'
check_bad baddur 'baddur.yaml:1:8: .*epoch' 'epoch: soon\n'
check_bad unknownplugin 'unknownplugin.yaml:2:3: .*nosuch.*synthetic' 'probes:\n  nosuch: {}\n'
check_bad wrongkind 'wrongkind.yaml:2:3: .*ewma.*filter' 'probes:\n  ewma: {}\n'
check_bad badopt 'badopt.yaml:3:11: .*rate' 'probes:\n  synthetic:\n    rate: fast\n'
check_bad unknownopt 'unknownopt.yaml:4:5: .*beta.*alpha' 'filters:\n  ewma:\n    alpha: 0.3\n    beta: 2\n'
st=0; "$VITALSD" -c "$TMP/missing.yaml" --check-config >"$TMP/missing.out" 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "missing config: exit $st"
assert_grep 'missing.yaml' "$TMP/missing.out"

# Values the option table cannot bound: each plugin's check callback runs,
# for a disabled plugin too, and a refusal names the plugin's entry.
check_bad badvital \
	"badvital.yaml:2:3: plugin 'kmem': option 'vitals': 'pages' is not one of kmem, kmem_free" \
	'probes:\n  kmem: {vitals: [pages]}\n'
check_bad ringbuf \
	"ringbuf.yaml:3:3: plugin 'sched': ring buffer size 3145728: not a power of two" \
	'probes:\n  proc: {}\n  sched: {ringbuf: 3M}\n'
check_bad badby "badby.yaml:3:3: plugin 'topk': option 'by': 'bogus' is not exe or label" \
	'filters:\n  ewma: {}\n  topk:\n    k: 3\n    by: bogus\n'
check_bad offrule \
	"offrule.yaml:2:3: plugin 'threshold': rule 2 'cpu.bogus > 1': unknown field 'bogus'" \
	'filters:\n  threshold:\n    enable: false\n    rules: ["cpu.wsum > 1", "cpu.bogus > 1"]\n'
# Good values of the same plugins pass; a model file is init's business.
cat >"$TMP/values.yaml" <<'EOC'
probes:
  kmem: {vitals: [kmem]}
  sched: {vitals: [blocking], ringbuf: 2M}
  cpu: {event: cpu-clock}
  synthetic: {enable: false, vitals: [cpu, sched], burst_vital: sched}
filters:
  topk: {by: label}
  affinity: {by: exe}
  diff: {by: site}
  rules: {rules: [1, "#3"]}
  threshold: {rules: ["cpu.wsum > 5000", "sched.wsum@ssh > 50ms crit"]}
  callmodel: {model: /nonexistent/callmodel.json, mode: score}
EOC
"$VITALSD" -c "$TMP/values.yaml" --check-config >"$TMP/values.out" 2>&1 ||
	{ cat "$TMP/values.out"; fail "good plugin values refused by --check-config"; }
assert_grep 'values.yaml: configuration OK' "$TMP/values.out"
# The daemon refuses the same value at start as --check-config does, exit 2.
cat >"$TMP/initby.yaml" <<EOC
epoch: 1s
data_dir: $TMP/initby-data
probes:
  synthetic: { vitals: [cpu] }
filters:
  topk: { by: bogus }
EOC
st=0; "$VITALSD" -c "$TMP/initby.yaml" --epochs 1 >"$TMP/initby.out" 2>&1 || st=$?
[ "$st" -eq 2 ] || { cat "$TMP/initby.out"; fail "topk by: bogus: daemon exit $st, expected 2"; }
assert_grep "initby.yaml:6:3: plugin 'topk': option 'by': 'bogus' is not exe or label" "$TMP/initby.out"
[ ! -d "$TMP/initby-data" ] || [ "$(count_epochs "$TMP/initby-data")" -eq 0 ] ||
	fail "epochs written although the file was refused"

# A plugin whose init fails stops the daemon before anything starts.
if [ -n "${VITALS_TEST_PLUGINS:-}" ]; then
	cat >"$TMP/badinit.yaml" <<EOC
epoch: 1s
data_dir: $TMP/badinit-data
plugin_path: [$VITALS_TEST_PLUGINS]
filters:
  badinit: {}
plugins:
  store: {}
EOC
	st=0; "$VITALSD" -c "$TMP/badinit.yaml" --epochs 1 >"$TMP/badinit.out" 2>&1 || st=$?
	[ "$st" -ne 0 ] || fail "a failing init did not stop the daemon"
	assert_grep "badinit.*init failed" "$TMP/badinit.out"
	[ "$(count_epochs "$TMP/badinit-data" 2>/dev/null || echo 0)" -eq 0 ] 2>/dev/null ||
		fail "epochs written although init failed"
	# A probe that cannot run here is skipped with its reason.
	cat >"$TMP/unavail.yaml" <<EOC
epoch: 1s
data_dir: $TMP/unavail-data
plugin_path: [$VITALS_TEST_PLUGINS]
probes:
  unavail: {}
  synthetic: { vitals: [cpu] }
plugins:
  store: {}
EOC
	"$VITALSD" -c "$TMP/unavail.yaml" --epochs 1 >"$TMP/unavail.out" 2>&1 ||
		{ cat "$TMP/unavail.out"; fail "an unavailable probe stopped the daemon"; }
	assert_grep "unavail.*unavailable here: .*test probe never runs" "$TMP/unavail.out"
	[ "$(count_epochs "$TMP/unavail-data")" -eq 1 ] || fail "no epoch without the unavailable probe"
	# A check callback is called from ABI minor 3 on, never below: an
	# older descriptor ends before the member (oldcheck declares 1.2).
	check_bad badcheck "badcheck.yaml:3:3: plugin 'badcheck': check refuses on purpose" \
		"plugin_path: [$VITALS_TEST_PLUGINS]\nfilters:\n  badcheck: {}\n"
	printf 'plugin_path: [%s]\nfilters:\n  oldcheck: {}\n' "$VITALS_TEST_PLUGINS" >"$TMP/oldcheck.yaml"
	"$VITALSD" -c "$TMP/oldcheck.yaml" --check-config >"$TMP/oldcheck.out" 2>&1 ||
		{ cat "$TMP/oldcheck.out"; fail "the check of an ABI 1.2 plugin was called"; }
fi

# A disabled plugin need not be installed: a warning, and the daemon runs.
printf 'epoch: 1s\ndata_dir: %s/gone-data\nprobes:\n  synthetic: {vitals: [cpu]}\nfilters:\n  nosuch: {enable: false, k: 3}\nplugins:\n  store: {}\n' \
	"$TMP" >"$TMP/gone.yaml"
"$VITALSD" -c "$TMP/gone.yaml" --check-config >"$TMP/gonecheck.out" 2>&1 ||
	{ cat "$TMP/gonecheck.out"; fail "--check-config refused a disabled plugin that is not installed"; }
assert_grep "gone.yaml:6:3: filter 'nosuch': .*disabled: its options are not checked" "$TMP/gonecheck.out"
"$VITALSD" -c "$TMP/gone.yaml" --epochs 1 >"$TMP/gone.out" 2>&1 ||
	{ cat "$TMP/gone.out"; fail "a disabled plugin that is not installed stopped the daemon"; }
[ "$(count_epochs "$TMP/gone-data")" -eq 1 ] || fail "no epoch beside a disabled missing plugin"

# A file that runs no probe and no output says so, and still runs.
printf 'epoch: 1s\ndata_dir: %s/idle-data\n' "$TMP" >"$TMP/idle.yaml"
"$VITALSD" -c "$TMP/idle.yaml" --epochs 1 >"$TMP/idle.out" 2>&1 ||
	{ cat "$TMP/idle.out"; fail "a file with no plugins stopped the daemon"; }
assert_grep "idle.yaml: no probe runs" "$TMP/idle.out"
assert_grep "idle.yaml: no output runs: epochs are not stored" "$TMP/idle.out"
[ ! -d "$TMP/idle-data" ] || [ "$(count_epochs "$TMP/idle-data")" -eq 0 ] ||
	fail "epochs stored with no output"
"$VITALSD" -c "$TMP/idle.yaml" --check-config >"$TMP/idlecheck.out" 2>&1 ||
	{ cat "$TMP/idlecheck.out"; fail "--check-config refused a file with no plugins"; }
assert_grep "idle.yaml: no output runs" "$TMP/idlecheck.out"
# The shipped file runs probes and stores epochs: no such warning.
! grep -Eq "no (probe|output) runs" "$TMP/check.out" ||
	{ cat "$TMP/check.out"; fail "conf/vitals.yaml warned that nothing runs"; }

# A run: 3 one-second epochs, steady synthetic stream.
run_daemon() { # NAME EPOCHS EXTRA-SYNTHETIC-OPTIONS
	cat >"$TMP/$1.yaml" <<EOC
epoch: 1s
data_dir: $TMP/$1
host: test-host
probes:
  synthetic: { vitals: [cpu, sched, diskio], rate: 4000, labels: 200 $3 }
filters:
  ewma: { warmup: 2, k: 3, top: 0 }
plugins:
  store: {}
EOC
	"$VITALSD" -c "$TMP/$1.yaml" --epochs "$2" 2>"$TMP/$1.err" ||
		{ cat "$TMP/$1.err"; fail "$1: vitalsd --epochs $2 failed"; }
	n=$(count_epochs "$TMP/$1")
	[ "$n" -eq "$2" ] || fail "$1: $n epoch files, expected $2"
}

run_daemon steady 5 ""
"$VITALS" --data-dir "$TMP/steady" epochs >"$TMP/epochs.out" || fail "vitals epochs"
[ "$(grep -c test-host "$TMP/epochs.out")" -eq 5 ] || { cat "$TMP/epochs.out"; fail "vitals epochs lists 5"; }
"$VITALS" --data-dir "$TMP/steady" show --last >"$TMP/show.out" || fail "vitals show --last"
for v in cpu sched diskio; do assert_grep "^$v" "$TMP/show.out"; done
assert_grep 'synth-' "$TMP/show.out"
"$VITALS" --data-dir "$TMP/steady" show --last --json >"$TMP/show.json" || fail "show --json"
python3 - "$TMP/show.json" <<'EOP' || fail "steady stream: events or findings wrong"
import json, sys
e = json.load(open(sys.argv[1]))
v = {x["name"]: x for x in e["vitals"]}
assert set(v) == {"cpu", "sched", "diskio"}, v.keys()
# 4000 events/s for a 1 s epoch, within timer jitter
assert 3000 <= v["cpu"]["events"] <= 5000, v["cpu"]["events"]
assert v["cpu"]["samples"], "no samples"
assert e["findings"] == [], e["findings"]
EOP
# No epoch of the steady run has a finding.
zcat $(find "$TMP/steady" -name '*.json.gz') | grep -q '"text"' && fail "EWMA flagged a steady stream"

# An injected rate burst in epoch 4 (0-based 3) of the cpu vital is flagged.
run_daemon burst 5 ", burst_epoch: 3, burst_vital: cpu, burst_factor: 8"
"$VITALS" --data-dir "$TMP/burst" show 3 --json >"$TMP/burst.json" || fail "show 3"
python3 - "$TMP/burst.json" <<'EOP' || fail "the burst was not flagged by EWMA"
import json, sys
e = json.load(open(sys.argv[1]))
f = [x for x in e["findings"] if x["filter"] == "ewma" and x["vital"] == "cpu"]
assert f, e["findings"]
assert f[0]["score"] > 3, f
EOP
for i in 0 1 2; do
	"$VITALS" --data-dir "$TMP/burst" show $i --json | grep -q '"text"' &&
		fail "EWMA flagged epoch $i before the burst"
done
# A restart starts each vital at the t the host's last stored epoch ended
# with: a stream that fills a 64-sample store raises t in the first run.
run_resume() { # NAME HOST SECONDS
	cat >"$TMP/$1.yaml" <<EOC
epoch: 1h
data_dir: $TMP/resume
host: $2
timescales: []
sketch: { max_samples: 64 }
probes:
  synthetic: { vitals: [cpu, sched], rate: 20000, labels: 2000 }
plugins:
  store: {}
EOC
	"$VITALSD" -c "$TMP/$1.yaml" 2>"$TMP/$1.err" &
	pid=$!
	sleep "$3"
	kill -TERM $pid
	wait $pid || { cat "$TMP/$1.err"; fail "$1: vitalsd failed"; }
}
t_of() { # HOST: the cpu vital's t in the host's newest epoch
	"$VITALS" --data-dir "$TMP/resume" show --last --host "$1" --json |
		python3 -c 'import json,sys; print([v["threshold"] for v in json.load(sys.stdin)["vitals"] if v["name"] == "cpu"][0])'
}
run_resume first h1 2
t1=$(t_of h1)
[ "$t1" -gt 2 ] || fail "resume: the first run did not raise t ($t1)"
grep -q "t resumed" "$TMP/first.err" && fail "resume: a first start resumed t"
run_resume second h1 1
assert_grep "t resumed from the last stored epoch: cpu $t1, sched [0-9]+" "$TMP/second.err"
t2=$(t_of h1)
[ "$t2" -ge "$t1" ] || fail "resume: t went from $t1 to $t2 over a restart"
# Another host's epochs are not its own: it starts at the configured t.
run_resume other h2 1
grep -q "t resumed" "$TMP/other.err" && { cat "$TMP/other.err"; fail "resume: h2 took h1's t"; }

# ---- the service manager's readiness protocol ----
# With $NOTIFY_SOCKET, vitalsd says READY=1 once it runs, RELOADING=1 then
# READY=1 around a SIGHUP, and STOPPING=1 at SIGTERM (Type=notify).
cat >"$TMP/notify.yaml" <<EOC
epoch: 1s
data_dir: $TMP/notify-data
probes:
  synthetic: { vitals: [cpu], rate: 100 }
plugins:
  store: {}
EOC
python3 - "$VITALSD" "$TMP/notify.yaml" "$TMP/notify.sock" <<'PY' || fail "readiness notifications"
import os, signal, socket, subprocess, sys
vitalsd, conf, path = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(60)
env = dict(os.environ, NOTIFY_SOCKET=path)
p = subprocess.Popen([vitalsd, "-c", conf], env=env, stderr=subprocess.DEVNULL)
def expect(want):
    got = s.recv(4096).decode()
    assert got == want, "got %r, expected %r" % (got, want)
try:
    expect("READY=1")
    p.send_signal(signal.SIGHUP)
    expect("RELOADING=1")
    expect("READY=1")
    p.send_signal(signal.SIGTERM)
    expect("STOPPING=1")
    assert p.wait(60) == 0, "vitalsd exited %d" % p.returncode
finally:
    if p.poll() is None:
        p.kill()
print("notify: READY=1, RELOADING=1, READY=1, STOPPING=1")
PY

echo "PASS: daemon runs, stores, shows, EWMA flags only the burst, t resumes, notifies"
