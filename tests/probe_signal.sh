#!/bin/sh
# SPDX-License-Identifier: MIT
# The signal probe on the real kernel: signal_storm sends itself SIGUSR1;
# its label (SIGUSR1, its exe) must top the signal vital, counted within 5%
# of the deliveries it reports, with the sender and target in the sample
# args; and the vital's total must hold perf's system-wide count of
# signal:signal_deliver less at most 5%.  perf counts while the storm
# runs, the daemon a little longer, so the vital has besides the machine's
# signals in between: a few, or tens of thousands on a machine starting
# and reaping processes by the hundred (a count above perf's is not
# checked; the storm's own count is, against what it handled).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/probe_run.sh"

[ "$(id -u)" -eq 0 ] || skip "not root (BPF probes need root)"
command -v perf >/dev/null 2>&1 || skip "perf not installed (apt-get install linux-perf)"

need_probe signal
STORM=$(workload signal_storm) || fail "cannot build workload signal_storm"

cat >"$TMP/conf.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
probes:
  signal: {}
plugins:
  store: {}
EOC
run_probe "-a -e signal:signal_deliver" "$STORM" 1
cat "$TMP/wl.json"

python3 - "$TMP" <<'EOF' || fail "signal vital does not match the workload or perf"
import glob, json, sys
tmp = sys.argv[1]
wl = json.load(open(tmp + "/wl.json"))
perf = [l.split(",") for l in open(tmp + "/perf.csv") if "signal_deliver" in l]
perf_count = int(perf[0][0])
hca, total, samples = {}, 0, []
for f in sorted(glob.glob(tmp + "/e*.json")):
    for v in json.load(open(f))["vitals"]:
        if v["name"] != "signal":
            continue
        total += v["wsum"]
        for slot, count in v["hca"]["nz"]:
            hca[slot] = hca.get(slot, 0) + count
        samples += v["samples"]
mine = [s for s in samples if s["pid"] == wl["pid"] and s["op"] == wl["signal"]]
if not mine:
    sys.exit("no sample of pid %d with op %d" % (wl["pid"], wl["signal"]))
s = mine[-1]
slot = s["slot"]
print("storm: handled %d, its HCA slot %d, vital total %d, perf %d"
      % (wl["handled"], hca[slot], total, perf_count))
print("sample: comm %s exe %s label %#x args %s" % (s["comm"], s["exe"], s["label"], s["args"]))
top = max(hca.items(), key=lambda kv: kv[1])
if top[0] != slot:
    sys.exit("top slot %d (%d) is not the storm's %d (%d)" % (top[0], top[1], slot, hca[slot]))
if s["label"] != wl["signal"]:
    sys.exit("label %#x is not the signal number" % s["label"])
if s["args"][1] != wl["pid"] or s["args"][2] != wl["pid"]:
    sys.exit("sender/target %s, expected %d (the storm signals itself)" % (s["args"][1:3], wl["pid"]))
if abs(hca[slot] - wl["handled"]) > 0.05 * wl["handled"]:
    sys.exit("slot count %d not within 5%% of %d handled" % (hca[slot], wl["handled"]))
if total < 0.95 * perf_count:
    sys.exit("vital total %d is under perf's %d by more than 5%%" % (total, perf_count))
EOF
