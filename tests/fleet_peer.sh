#!/bin/sh
# SPDX-License-Identifier: MIT
# The peer filter on a real fleet: five nodes, each a vitalsd in a network
# namespace of its own (tests/netns.sh) with the proc probe, all doing the
# same job (tests/fleet_load.py: the same UDP stream to a sink on the
# bridge, the same disk I/O fed to each one's proc root), and a central
# pulling them all with `remote`.  After a clean stretch, node2's
# datagrams are cut to half their rate (tc htb on its veth, netem loss
# where the kernel has it) and node4's
# disk slows (await x8, %util x3, avgqu-sz x6 in its diskstats).  `vitals
# query --filter peer` over the central store (windows of 16 epochs of
# 1 s, shift 8, k 2): the clean stretch indicts nobody; then node2 is
# indicted as `network` and node4 as `storage`, each within 2 windows of
# its fault, and no other host ever.  The central, once caught up, opens a
# few connections an epoch to a node.  Windows are counted in epochs, and
# every wait is a bounded poll: no timing is asserted (about 100 s).
. "$top_srcdir/tests/lib.sh"
command -v tc >/dev/null 2>&1 || skip "tc missing (Debian iproute2)"
RUN_PREFIX=vp
. "$top_srcdir/tests/netns.sh"
WAIT_LOG="$TMP/central.log"
: "${VITALS_PLUGIN_PATH:=$top_builddir/probes:$top_builddir/filters:$top_builddir/plugins}"
export VITALS_PLUGIN_PATH
[ -e "$top_builddir/filters/peer.la" ] || skip "filter peer not built"

NODES="1 2 3 4 5"
NETNODE=2  # its datagrams are cut to half
DISKNODE=4 # its disk slows
WIN=16     # epochs per window (1 s epochs)
CLEAN=48   # epochs before the faults: 6 windows
AFTER=40   # epochs after the faults: 2.5 windows
PORT=9988
TOKEN="fleetpeer-$RUN"
LOAD="$top_srcdir/tests/fleet_load.py"
t_begin=$(date +%s)

for i in $NODES; do netns_add "$i"; done
# Each node's proc root: this namespace's /proc but for diskstats, which
# is the machine's (not per namespace) and is fed by the disk load.
for i in $NODES; do
	r="$TMP/roots/node$i"
	mkdir -p "$r"
	for f in stat meminfo net; do ln -s "/proc/$f" "$r/$f"; done
done
python3 "$LOAD" disk "$TMP"/roots/node* >"$TMP/disk.log" 2>&1 &
PIDS="$PIDS $!"
python3 "$LOAD" sink "$NET.1" $PORT >"$TMP/sink.log" 2>&1 &
PIDS="$PIDS $!"
wait_until "disk load ready" grep -q ready "$TMP/disk.log"
wait_until "sink ready" grep -q ready "$TMP/sink.log"
for i in $NODES; do
	ip netns exec "${RUN}n$i" python3 "$LOAD" send "$NET.1" $PORT \
		>"$TMP/send$i.log" 2>&1 &
	PIDS="$PIDS $!"
done

for i in $NODES; do
	cat >"$TMP/node$i.yaml" <<EOF2
epoch: 1s
host: node$i
data_dir: $TMP/node$i
log_level: info
probes:
  synthetic: {vitals: [cpu], rate: 100}
  proc: {root: "$TMP/roots/node$i", interval: 250ms}
plugins:
  store: {}
  http: {listen: "$NET.$((10 + i)):9977", token: "$TOKEN", web_dir: "$top_srcdir/web"}
EOF2
	ip netns exec "${RUN}n$i" "$VITALSD" -c "$TMP/node$i.yaml" \
		>>"$TMP/node$i.log" 2>&1 &
	PIDS="$PIDS $!"
done
urls=""
for i in $NODES; do urls="$urls${urls:+, }\"node$i=http://$NET.$((10 + i)):9977\""; done
cat >"$TMP/central.yaml" <<EOF2
epoch: 1s
host: central
data_dir: $TMP/central
log_level: info
probes:
  synthetic: {vitals: [cpu], rate: 100}
plugins:
  store: {}
  remote: {nodes: [$urls], token: "$TOKEN", interval: 500ms, timeout: 2s, backoff_max: 2s, batch: 16}
EOF2
"$VITALSD" -c "$TMP/central.yaml" >>"$TMP/central.log" 2>&1 &
PIDS="$PIDS $!"

# The analysis: peer over the nodes only (the central's own host has no
# proc metrics and another job), small windows for a short run.
cat >"$TMP/peer.yaml" <<EOF2
epoch: 1s
data_dir: $TMP/central
filters:
  peer: {win_size: $WIN, win_shift: $((WIN / 2)), k: 2, groups: ["nodes=node*"]}
EOF2

# name_at T: the epoch file name prefix of a start at T (s), which sorts
# with the names of the files.
name_at() {
	date -u -d "@$1" +%Y%m%dT%H%M%S
}
# stored_from DIR HOST T: HOST has an epoch starting at T or later in DIR.
stored_from() {
	last=$(files "$1" "$2" | tail -1)
	[ -n "$last" ] && [ ! "$last" \< "$(name_at "$3")" ]
}
# all_from WHERE T: every node has an epoch from T on, in its own store
# (WHERE "nodes") or in the central's.
all_from() {
	for i in $NODES; do
		d="$TMP/central"
		[ "$1" = central ] || d="$TMP/node$i"
		stored_from "$d" "node$i" "$2" || return 1
	done
}

# The clean stretch starts once every node's proc probe has its rates
# (from its second epoch on); the central catches up as it goes.
for i in $NODES; do wait_until "node$i stores epochs" has_at_least "$TMP/node$i" "node$i" 3; done
t0=$(($(date +%s) + 1))
# passive_opens I: TCP connections node I accepted so far (the central's
# requests, one connection each).
passive_opens() {
	ip netns exec "${RUN}n$1" awk '/^Tcp:/ && n++ { print $7 }' /proc/net/snmp
}
opens0=$(passive_opens 1)
tf=$((t0 + CLEAN))
wait_until "every node reaches the faults' start" all_from nodes "$tf"

# The faults, at once.  node2's datagrams, and only they (the central's
# pulls go on), are held to half their rate on its veth: an htb class that
# the senders' socket priority (1:10) selects, whose queue drops the rest,
# with netem's loss and delay on top where the kernel has netem.  node4's
# disk slows.
ns="${RUN}n$NETNODE"
dev="${RUN}b$NETNODE"
tcn() {
	ip netns exec "$ns" tc "$@"
}
tcn qdisc add dev "$dev" root handle 1: htb default 20 ||
	skip "tc htb qdisc unavailable (kernel module sch_htb)"
tcn class add dev "$dev" parent 1: classid 1:20 htb rate 1gbit quantum 1514 &&
	tcn class add dev "$dev" parent 1: classid 1:10 htb rate 800kbit ceil 800kbit ||
	fail "tc htb classes"
if tcn qdisc add dev "$dev" parent 1:10 handle 10: netem loss 10% delay 10ms limit 50 2>/dev/null; then
	echo "network fault: rate 800 kbit/s, netem loss 10%, delay 10 ms"
else
	tcn qdisc add dev "$dev" parent 1:10 handle 10: pfifo limit 50 || fail "tc pfifo"
	echo "network fault: rate 800 kbit/s (no netem in this kernel)"
fi
echo "node$DISKNODE" >"$TMP/roots/diskfault"
fault_ns=$(date +%s%N)
tend=$((tf + AFTER))
wait_until "every node reaches the run's end" all_from nodes "$tend"
wait_until "the central pulls every node to the end" all_from central "$tend"
# A caught-up central asks a node for its listing every `interval` (two
# rounds an epoch here) and for each new file: a few connections an
# epoch, not one per answer while the newest epoch settles.
opens=$(($(passive_opens 1) - opens0))
epochs=$(($(files "$TMP/node1" node1 | wc -l) - 3))
echo "node1 accepted $opens connections in about $epochs epochs"
[ "$opens" -le $((10 * epochs)) ] || fail "the central polls node1 in a loop"

# peer NAME FROM TO: peer's findings over the central store, as JSON.
peer() {
	"$VITALS" -c "$TMP/peer.yaml" --data-dir "$TMP/central" query --json \
		--no-cache --timescale base --filter peer --from "@$2" --to "@$3" \
		>"$TMP/$1.json" 2>"$TMP/$1.err" ||
		{ cat "$TMP/$1.err" >&2; fail "vitals query ($1)"; }
}
peer clean "$t0" "$tf"
peer faults "$t0" "$tend"

python3 - "$TMP/clean.json" "$TMP/faults.json" "$fault_ns" $WIN \
	"node$NETNODE=network" "node$DISKNODE=storage" <<'PY' || fail "peer on the fleet"
import json, sys
clean, faults, fault_ns, win = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
want = dict(a.split("=") for a in sys.argv[5:])
ok = True
f = [x for x in json.load(open(clean))["findings"] if x["filter"] == "peer"]
print("clean stretch: %d false indictments%s" % (len(f), ": " + f[0]["text"] if f else ""))
ok &= not f
f = [x for x in json.load(open(faults))["findings"] if x["filter"] == "peer"]
wrong = [x for x in f if x["host"] not in want or x["start_ns"] < fault_ns - 1e9]
print("with faults: %d false indictments%s" % (len(wrong), ": " + wrong[0]["text"] if wrong else ""))
ok &= not wrong
for host, cls in sorted(want.items()):
    mine = sorted((x for x in f if x["host"] == host), key=lambda x: x["end_ns"])
    if not mine:
        print("%s (%s) never indicted" % (host, cls))
        ok = False
        continue
    # epochs of 1 s from the fault to the end of the indicting slot
    windows = (mine[0]["end_ns"] - fault_ns) / (win * 1e9)
    bad = [x for x in mine if x["vital"] != cls]
    print("%s: indicted as %s %.2f windows after its fault (%d findings): %s" %
          (host, mine[0]["vital"], windows, len(mine), mine[0]["text"]))
    ok &= not bad and windows <= 2
sys.exit(0 if ok else 1)
PY
echo "wall time: $(($(date +%s) - t_begin)) s"
