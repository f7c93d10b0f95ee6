#!/bin/sh
# SPDX-License-Identifier: MIT
# Central collection on one machine: four nodes, each a vitalsd in a
# network namespace of its own (veth pairs into a bridge, a private
# subnet), and a central vitalsd whose remote output pulls from all of
# them.  The central is killed and restarted, one node is stopped and
# started again, another is cut off the network for a while, a fourth is
# only added later (nodes_file, SIGHUP): afterwards the central store
# holds every epoch of every node exactly once, byte for byte.  Fake nodes
# (tests/fleet_fake.py) send an epoch of another host, a corrupt file, an
# oversized one, or never answer: each is refused and logged while the
# others go on.  No timing is asserted: every wait is a bounded poll.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/netns.sh"
WAIT_LOG="$TMP/central.log"

TOKEN="fleet-$RUN"
# node_start I: vitalsd of host nodeI in its namespace (pid in NODEPID_I).
node_start() {
	cat >"$TMP/node$1.yaml" <<EOF2
epoch: 1s
host: node$1
data_dir: $TMP/node$1
log_level: info
probes:
  synthetic: {vitals: [cpu, sched], rate: 300}
  proc: {}
plugins:
  store: {}
  http: {listen: "$NET.$((10 + $1)):9977", token: "$TOKEN", web_dir: "$top_srcdir/web"}
EOF2
	ip netns exec "${RUN}n$1" "$VITALSD" -c "$TMP/node$1.yaml" \
		>>"$TMP/node$1.log" 2>&1 &
	eval "NODEPID_$1=$!"
	PIDS="$PIDS $!"
}

node_stop() {
	eval "p=\$NODEPID_$1"
	kill -TERM "$p"
	wait "$p" || fail "node$1 exited with $?"
}

cport=$(free_port)
# The central: nodes 1-3 in its options, node 4 and the fakes in nodes_file.
cat >"$TMP/nodes.txt" <<EOF2
# fakes: another host's epoch, corrupt, oversized, hanging
http://$NET.50:8001
http://$NET.50:8002
http://$NET.50:8003
faked=http://$NET.50:8004
# listed twice (in the options as node2=...): pulled once
http://$NET.12:9977
EOF2
cat >"$TMP/central.yaml" <<EOF2
epoch: 1s
host: central
data_dir: $TMP/central
log_level: info
probes:
  synthetic: {vitals: [cpu], rate: 100}
plugins:
  store: {}
  http: {listen: "127.0.0.1:$cport", token: "$TOKEN", web_dir: "$top_srcdir/web"}
  remote:
    nodes: ["http://$NET.11:9977", "node2=http://$NET.12:9977", "http://$NET.13:9977"]
    nodes_file: $TMP/nodes.txt
    token: "$TOKEN"
    interval: 500ms
    timeout: 2s
    backoff_max: 2s
    batch: 4
    max_file: 1M
EOF2
central_start() {
	"$VITALSD" -c "$TMP/central.yaml" >>"$TMP/central.log" 2>&1 &
	CENTRAL=$!
	PIDS="$PIDS $!"
}

# snapshot I: the files node I has stored so far (a node always has a
# newest one the central cannot have yet), into want$I.
snapshot() {
	files "$TMP/node$1" "node$1" >"$TMP/want$1"
}
# covers I: the central holds every file of node I's snapshot.
covers() {
	files "$TMP/central" "node$1" >"$TMP/got$1"
	[ -z "$(comm -23 "$TMP/want$1" "$TMP/got$1")" ]
}
# catch_up I WHAT: wait until the central has what node I has now.
catch_up() {
	snapshot "$1"
	wait_until "central catches up node$1 $2" covers "$1"
}
api() {
	curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$cport$1"
}

for i in 1 2 3 4 5; do netns_add "$i"; done
ip -n "${RUN}n5" addr add "$NET.50/24" dev "${RUN}b5"
for i in 1 2 3 4; do node_start "$i"; done
for i in 1 2 3 4; do wait_until "node$i stores epochs" has_at_least "$TMP/node$i" "node$i" 2; done
sample=$(find "$TMP/node1" -name '*.json.gz' ! -name '.*' | head -1)
ip netns exec "${RUN}n5" python3 "$top_srcdir/tests/fleet_fake.py" "$NET.50" "$sample" \
	>"$TMP/fake.log" 2>&1 &
PIDS="$PIDS $!"
wait_until "fake nodes ready" grep -q ready "$TMP/fake.log"

# 1. The central pulls from nodes 1-3.
central_start
for i in 1 2 3; do wait_until "central has node$i" has_at_least "$TMP/central" "node$i" 3; done

# 2. Killed without warning and restarted: it resumes from its cursors.
kill -KILL "$CENTRAL"
wait "$CENTRAL" 2>/dev/null
sleep 2
central_start
for i in 1 2 3; do catch_up "$i" "after its restart"; done

# 3. Node 2 is stopped for a while, node 3 cut off the network.
node_stop 2
ip link set "${RUN}a3" down
n3=$(files "$TMP/node3" node3 | wc -l)
wait_until "node3 stores epochs while cut off" has_at_least "$TMP/node3" node3 $((n3 + 8))
backlog=$(($(files "$TMP/node3" node3 | wc -l) - $(files "$TMP/central" node3 | wc -l)))
node_errors() {
	grep -l "\"url\":\"http://$NET.$1:9977\"" "$TMP"/central/nodes/*.json |
		xargs grep -Eq '"errors":[1-9]'
}
wait_until "the central sees node2 fail" node_errors 12
node_start 2
ip link set "${RUN}a3" up
t0=$(date +%s.%N)
catch_up 3 "after its outage"
t1=$(date +%s.%N)
echo "node3: a backlog of $backlog epochs caught up in $(echo "$t1 - $t0" | bc 2>/dev/null || echo "?") s (batch 4)"
catch_up 2 "after its restart"

# 4. Node 4 joins through nodes_file and SIGHUP: pulled from its start.
echo "http://$NET.14:9977" >>"$TMP/nodes.txt"
kill -HUP "$CENTRAL"
catch_up 4 "after SIGHUP"

# 5. Bad nodes were refused and logged, and none of theirs stored.
# (The core keeps a plugin to 5 warnings a minute: what each node did
# is in its state, which the log's first lines must agree with.)
for f in "8001: refused: .*not of 'fakea'" "8002: refused: .*fakeb.json.gz: does not decode" \
	"8003: refused: answer larger than max_file" "8004: (no answer within|timed out)"; do
	grep -Eq "node http://$NET.50:$f" "$TMP/central.log" ||
		{ tail -40 "$TMP/central.log" >&2; fail "central did not log: $f"; }
done
[ "$(find "$TMP/central" -name '*fake*' | wc -l)" -eq 0 ] || fail "a fake node's file was stored"
assert_grep "node http://$NET.12:9977 listed twice" "$TMP/central.log"

# 6. Every epoch of every node exactly once, byte for byte; no stray files.
for i in 1 2 3 4; do
	catch_up "$i" "in the end"
	files "$TMP/node$i" "node$i" >"$TMP/now$i"
	[ -z "$(comm -13 "$TMP/now$i" "$TMP/got$i")" ] || fail "central has node$i files the node has not"
	[ "$(wc -l <"$TMP/got$i")" -eq "$(cut -c1-20 "$TMP/got$i" | sort -u | wc -l)" ] ||
		fail "node$i: two files for one epoch start"
	while read -r f; do
		a=$(find "$TMP/node$i" -name "$f")
		b=$(find "$TMP/central" -name "$f")
		cmp -s "$a" "$b" || fail "$f differs between node$i and the central"
	done <"$TMP/got$i"
	echo "node$i: $(wc -l <"$TMP/got$i") epochs, each once"
done

# 7. The nodes' state in the API, /metrics and `vitals hosts`; range
# commands over the central store per host.
api /api/v1/nodes >"$TMP/nodes.json" || fail "GET /api/v1/nodes"
python3 - "$TMP/nodes.json" "$NET" <<'EOF2' || fail "/api/v1/nodes"
import json, sys
n = {x["url"]: x for x in json.load(open(sys.argv[1]))["nodes"]}
net = sys.argv[2]
for i in (1, 2, 3, 4):
    x = n["http://%s.%d:9977" % (net, 10 + i)]
    assert x["host"] == "node%d" % i and x["pulled"] > 0, x
assert n["http://%s.50:8001" % net]["refused"] > 0
assert n["http://%s.50:8004" % net]["errors"] > 0
assert n["http://%s.12:9977" % net]["errors"] > 0
EOF2
api /metrics >"$TMP/metrics.txt" || fail "GET /metrics"
assert_grep "^vitals_remote_epochs_pulled_total\\{node=\"http://$NET.11:9977\"\\} [1-9]" "$TMP/metrics.txt"
assert_grep "^vitals_remote_refused_total\\{node=\"http://$NET.50:8002\"\\} [1-9]" "$TMP/metrics.txt"
assert_grep "^vitals_remote_lag_seconds\\{node=" "$TMP/metrics.txt"
"$VITALS" -d "$TMP/central" hosts >"$TMP/hosts.txt" || fail "vitals hosts"
for i in 1 2 3 4; do assert_grep "^node$i .* from http://$NET.$((10 + i)):9977" "$TMP/hosts.txt"; done
assert_grep "^central " "$TMP/hosts.txt"
"$VITALS" -d "$TMP/central" epochs --host node3 >"$TMP/epochs3.txt" || fail "vitals epochs --host node3"
assert_grep "node3" "$TMP/epochs3.txt"
"$VITALS" -c "$TMP/central.yaml" -d "$TMP/central" query --host node2 --from -1h --json >"$TMP/q2.json" ||
	fail "vitals query --host node2 over the central store"
api "/api/v1/epochs?host=node4&from=-1h" | grep -q '"host":"node4"' || fail "API epochs of node4"
kill -0 "$CENTRAL" || fail "the central died"
kill -TERM "$CENTRAL"
wait "$CENTRAL" || fail "the central exited with $?"
left=$(find "$TMP/central" -name '.*tmp*')
[ -z "$left" ] || fail "temporary files left in the central store: $left"
echo "ok: $(grep -c . "$TMP/central.log") log lines, $(grep -c 'refused' "$TMP/central.log") refusals logged"
