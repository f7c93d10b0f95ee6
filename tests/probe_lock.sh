#!/bin/sh
# SPDX-License-Identifier: MIT
# The lock probe on the real kernel: lock_contention's threads mmap and
# munmap in a loop and so wait for their process's mmap_lock (an
# rw-semaphore); those waits must be in the lock vital, attributed to its
# exe with the lock address, rw-semaphore flags, owner and a kernel stack.
# The probe counts only threads named lock_contention (comm) and every
# wait (min_wait 0), so its event count must match perf's count of
# lock:contention_end in the workload's threads within 5%: a system-wide
# count would mix in the machine's own contention, as large as the
# workload's.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/probe_run.sh"

[ "$(id -u)" -eq 0 ] || skip "not root (BPF probes need root)"
command -v perf >/dev/null 2>&1 || skip "perf not installed (apt-get install linux-perf)"
need_probe lock
LOCKER=$(workload lock_contention) || fail "cannot build workload lock_contention"

cat >"$TMP/conf.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
probes:
  lock: {min_wait: 0, comm: lock_contention}
plugins:
  store: {}
EOC
run_probe "-e lock:contention_end" "$LOCKER" 1 4
cat "$TMP/wl.json"

python3 - "$TMP" <<'EOF' || fail "lock vital does not match the workload or perf"
import glob, json, sys
tmp = sys.argv[1]
wl = json.load(open(tmp + "/wl.json"))
perf_count = sum(int(l.split(",")[0]) for l in open(tmp + "/perf.csv")
                 if "contention_end" in l)
RWSEM = 0x02 | 0x04  # LCB_F_READ | LCB_F_WRITE, without SPIN/MUTEX
hca, events, total, samples = {}, 0, 0, []
for f in sorted(glob.glob(tmp + "/e*.json")):
    for v in json.load(open(f))["vitals"]:
        if v["name"] != "lock":
            continue
        events += v["events"]
        total += v["wsum"]
        for slot, count in v["hca"]["nz"]:
            hca[slot] = hca.get(slot, 0) + count
        samples += v["samples"]
mine = [s for s in samples if s["pid"] == wl["pid"]]
waits = [s for s in mine if s["args"][1] & RWSEM and not s["args"][1] & 0x21]
print("lock_contention: %d samples (%d rwsem waits), its slots %d ns of %d; "
      "events %d, perf %d" % (len(mine), len(waits),
      sum(hca[s] for s in {x["slot"] for x in mine}), total, events, perf_count))
if not waits:
    sys.exit("no rw-semaphore wait sampled for pid %d" % wl["pid"])
s = max(waits, key=lambda x: x["weight"])
print("sample: comm %s exe %s tid %d weight %d args %s kstack %d frames"
      % (s["comm"], s["exe"], s["tid"], s["weight"], s["args"], len(s["kstack"])))
if not s["exe"].endswith("/lock_contention") or not s["kstack"] or s["args"][0] == 0:
    sys.exit("sample lacks the exe, the lock address or the kernel stack")
if not any(x["args"][2] != 0 for x in waits):
    sys.exit("no rw-semaphore wait names the lock's owner")
strangers = [x["comm"] for x in samples if not x["comm"].startswith("lock_contention")]
if strangers:
    sys.exit("comm filter let through %s" % sorted(set(strangers)))
if abs(events - perf_count) > 0.05 * perf_count:
    sys.exit("vital events %d not within 5%% of perf's %d" % (events, perf_count))
EOF
