#!/bin/sh
# SPDX-License-Identifier: MIT
# The socket probe on the real kernel: udp_sender sends datagrams to
# 127.0.0.1:47999 from an unconnected socket; its send label must carry
# 127.0.0.1, port 47999 and UDP in the sample args and bytes within 10%
# of what it reports, and only other processes' traffic may top it, and
# vitals show must read it as sent udp to 127.0.0.1:47999; and
# the vital's event count must be at least perf's system-wide count of
# sock_send_length + sock_recv_length (ret > 0) while it runs, less 5%
# (the daemon counts longer, other traffic included).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/probe_run.sh"

[ "$(id -u)" -eq 0 ] || skip "not root (BPF probes need root)"
command -v perf >/dev/null 2>&1 || skip "perf not installed (apt-get install linux-perf)"
need_probe socket
SENDER=$(workload udp_sender) || fail "cannot build workload udp_sender"

cat >"$TMP/conf.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
probes:
  socket: {}
plugins:
  store: {}
EOC
run_probe "-a -e sock:sock_send_length --filter ret>0 -e sock:sock_recv_length --filter ret>0" \
	"$SENDER" 1 512 47999
cat "$TMP/wl.json"

python3 - "$TMP" <<'EOF' || fail "socket vital does not match the workload or perf"
import glob, json, sys
tmp = sys.argv[1]
wl = json.load(open(tmp + "/wl.json"))
perf_count = sum(int(l.split(",")[0]) for l in open(tmp + "/perf.csv")
                 if "sock_send_length" in l or "sock_recv_length" in l)
hca, events, samples = {}, 0, []
for f in sorted(glob.glob(tmp + "/e*.json")):
    for v in json.load(open(f))["vitals"]:
        if v["name"] != "socket":
            continue
        events += v["events"]
        for slot, count in v["hca"]["nz"]:
            hca[slot] = hca.get(slot, 0) + count
        samples += v["samples"]
mine = [s for s in samples if s["pid"] == wl["pid"]]
sends = [s for s in mine if s["op"] == 0]
if not sends:
    sys.exit("no send sample of pid %d" % wl["pid"])
s = sends[-1]
print("sender: %d bytes reported, its send slot %d, events %d, perf %d"
      % (wl["bytes"], hca[s["slot"]], events, perf_count))
print("sample: comm %s exe %s label %#x args %s" % (s["comm"], s["exe"], s["label"], s["args"]))
if s["args"][:3] != [0x7f000001, wl["port"], 17]:
    sys.exit("args %s, expected [127.0.0.1, %d, UDP]" % (s["args"][:3], wl["port"]))
# A slot above the sender's must be another process's traffic (a sample
# of another pid says so), not the sender's bytes counted elsewhere: how
# much others send while it runs is not the test's to decide.
mine_slots = {x["slot"] for x in mine}
for slot, c in hca.items():
    if slot in mine_slots or c <= hca[s["slot"]]:
        continue
    who = {(x["pid"], x["comm"]) for x in samples if x["slot"] == slot}
    if not who or all(pid == wl["pid"] for pid, _ in who):
        sys.exit("slot %d (%d) tops the sender's (%d) with no sample of another process"
                 % (slot, c, hca[s["slot"]]))
    print("slot %d of %s tops the sender's: other traffic" % (slot, sorted(who)))
if abs(hca[s["slot"]] - wl["bytes"]) > 0.10 * wl["bytes"]:
    sys.exit("send slot %d not within 10%% of %d bytes sent" % (hca[s["slot"]], wl["bytes"]))
# The daemon counts before and after perf does, and other processes'
# traffic in between is not the test's to bound: no fewer than perf saw
# (double counting shows in the sender's bytes above).
if events < 0.95 * perf_count:
    sys.exit("vital events %d, fewer than perf's %d" % (events, perf_count))
EOF

# vitals show reads the sender's sample out: peer, port and protocol.
found=
for f in "$TMP"/e*.json; do
	i=${f##*/e}
	i=${i%.json}
	"$VITALS" --data-dir "$TMP/data" show "$i" --vital socket --samples 2048 >"$TMP/show.txt" ||
		fail "vitals show $i --vital socket"
	grep -Eq '^      sent udp to 127\.0\.0\.1:47999, from local port [0-9]+$' "$TMP/show.txt" && found=1
done
[ -n "$found" ] || { cat "$TMP/show.txt" >&2; fail "vitals show did not read the sender's sample as sent udp to 127.0.0.1:47999"; }
