#!/bin/sh
# SPDX-License-Identifier: MIT
# Signals on the real daemon: SIGTERM mid-epoch writes a complete partial
# epoch and exits 0; SIGHUP reloads the configuration (a probe re-optioned,
# a bad file and a refused plugin value refused) without losing the
# current epoch's data, and a new data_dir takes the next epochs (one that
# cannot be used is said, and the store stays where it was), unless the
# daemon was started with --data-dir, which a reload keeps.
. "$top_srcdir/tests/lib.sh"

write_conf() { # VITALS-LIST [EPOCH [DATA-DIR]]
	cat >"$TMP/vitals.yaml" <<EOC
epoch: ${2:-60s}
data_dir: ${3:-$TMP/data}
host: sig-host
probes:
  synthetic: { vitals: [$1], rate: 1000 }
plugins:
  store: {}
EOC
}

wait_log() { # REGEX: wait up to 10 s for the daemon's log to match
	i=0
	while ! grep -Eq "$1" "$TMP/err"; do
		i=$((i + 1))
		[ $i -le 100 ] || { cat "$TMP/err"; fail "no /$1/ in the daemon's log"; }
		sleep 0.1
	done
}

# SIGTERM mid-epoch.
write_conf cpu
"$VITALSD" -c "$TMP/vitals.yaml" --log-level debug 2>"$TMP/err" &
pid=$!
wait_log 'started'
sleep 1.5
kill -TERM $pid
st=0; wait $pid || st=$?
[ "$st" -eq 0 ] || { cat "$TMP/err"; fail "SIGTERM: exit $st, expected 0"; }
[ "$(count_epochs "$TMP/data")" -eq 1 ] || fail "SIGTERM: no partial epoch written"
"$VITALS" --data-dir "$TMP/data" show --last --json >"$TMP/term.json" || fail "partial epoch unreadable"
python3 - "$TMP/term.json" <<'EOP' || fail "partial epoch incomplete"
import json, sys
e = json.load(open(sys.argv[1]))
assert e["partial"], "not marked partial"
assert 1.0e9 <= e["length_ns"] < 30e9, e["length_ns"]
v = {x["name"]: x for x in e["vitals"]}
assert v["cpu"]["events"] >= 1000, v["cpu"]["events"]
EOP
ls -a "$(dirname "$(find "$TMP/data" -name '*.json.gz')")" | grep -q '\.tmp' && fail "temporary file left behind"

# SIGHUP: add a vital to the probe, then send a broken file.
rm -rf "$TMP/data"
write_conf cpu
"$VITALSD" -c "$TMP/vitals.yaml" 2>"$TMP/err" &
pid=$!
wait_log 'started'
sleep 1
write_conf "cpu, kmem"
kill -HUP $pid
wait_log 'configuration reloaded'
sleep 1
printf 'epoch: [\n' >"$TMP/vitals.yaml"
kill -HUP $pid
wait_log 'reload refused'
kill -0 $pid 2>/dev/null || fail "a bad reload killed the daemon"
# A value the plugin's check refuses: named at its entry, as --check-config does.
write_conf "cpu, cpu"
kill -HUP $pid
wait_log "reload refused.*vitals.yaml:5:3: plugin 'synthetic': option 'vitals'"
kill -0 $pid 2>/dev/null || fail "a refused plugin value killed the daemon"
sleep 0.5
kill -TERM $pid
st=0; wait $pid || st=$?
[ "$st" -eq 0 ] || { cat "$TMP/err"; fail "exit $st after reloads"; }
assert_grep 'reload refused.*vitals.yaml:[0-9]+:[0-9]+: ' "$TMP/err"
"$VITALS" --data-dir "$TMP/data" show --last --json >"$TMP/hup.json" || fail "epoch after reload unreadable"
python3 - "$TMP/hup.json" <<'EOP' || fail "the epoch lost data across the reload"
import json, sys
e = json.load(open(sys.argv[1]))
v = {x["name"]: x for x in e["vitals"]}
# cpu ran for ~2.5 s across both reloads at 1000/s; kmem only after the first.
assert v["cpu"]["events"] >= 2000, v["cpu"]["events"]
assert 500 <= v["kmem"]["events"] < v["cpu"]["events"], (v["kmem"]["events"], v["cpu"]["events"])
EOP

# SIGHUP with a new data_dir: the next epochs go there; an unusable one
# refuses the reload, as --check-config would refuse it, and the store
# stays in the last good one.
rm -rf "$TMP/data"
write_conf cpu 1s
"$VITALSD" -c "$TMP/vitals.yaml" 2>"$TMP/err" &
pid=$!
wait_log 'started'
sleep 2
write_conf cpu 1s "$TMP/data2"
kill -HUP $pid
wait_log "store: writing to $TMP/data2 \(was $TMP/data\)"
sleep 2
: >"$TMP/notadir"
write_conf cpu 1s "$TMP/notadir"
kill -HUP $pid
wait_log "reload refused, keeping the running configuration: $TMP/vitals.yaml:[0-9]+:[0-9]+: data_dir $TMP/notadir: not a directory"
n=$(count_epochs "$TMP/data2")
sleep 2.5
kill -TERM $pid
st=0; wait $pid || st=$?
[ "$st" -eq 0 ] || { cat "$TMP/err"; fail "exit $st after the data_dir reloads"; }
[ "$(count_epochs "$TMP/data")" -ge 1 ] || fail "no epoch in the first data_dir"
[ "$(count_epochs "$TMP/data2")" -gt "$n" ] || fail "no epoch in data2 after the unusable data_dir"
[ "$(grep -c "data_dir $TMP/notadir" "$TMP/err")" -eq 1 ] || { cat "$TMP/err"; fail "the unusable data_dir was said more than once"; }

# --data-dir outlives a reload: the file's data_dir is not taken.
rm -rf "$TMP/data" "$TMP/data2" "$TMP/dcli"
mkdir "$TMP/dcli" "$TMP/data"
write_conf cpu 1s
"$VITALSD" -c "$TMP/vitals.yaml" -D "$TMP/dcli" 2>"$TMP/err" &
pid=$!
wait_log 'started'
write_conf cpu,disk 1s
kill -HUP $pid
wait_log "data_dir stays $TMP/dcli \(--data-dir\), not the file's $TMP/data"
wait_log 'configuration reloaded'
n=$(count_epochs "$TMP/dcli")
until [ "$(count_epochs "$TMP/dcli")" -gt "$n" ]; do
	kill -0 $pid || { cat "$TMP/err"; fail "vitalsd died after the reload"; }
	sleep 0.2
done
kill -TERM $pid
st=0; wait $pid || st=$?
[ "$st" -eq 0 ] || { cat "$TMP/err"; fail "exit $st after a reload with --data-dir"; }
[ "$(count_epochs "$TMP/data")" -eq 0 ] || fail "a reload moved --data-dir's store to the file's data_dir"
grep -q 'store: writing to' "$TMP/err" && { cat "$TMP/err"; fail "the store moved on a reload with --data-dir"; }
echo "PASS: SIGTERM writes the partial epoch; SIGHUP reloads without loss"
