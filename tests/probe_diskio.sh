#!/bin/sh
# SPDX-License-Identifier: MIT
# The diskio probe for real (root): fsync_writer writes and fsyncs a file on
# a disk-backed directory while vitalsd runs diskio alone; its exe must top
# the written bytes with its own byte count, and the HCA's event total must
# match perf's exact count of block:block_rq_complete over the same run.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/iomem.sh"

need_probe diskio
WL=$(workload fsync_writer) || fail "cannot build workload fsync_writer"
DIR=/var/tmp
[ "$(stat -f -c %T "$DIR")" != tmpfs ] || skip "$DIR is tmpfs: no block I/O to see"
command -v perf >/dev/null 2>&1 || skip "perf is not installed"
perf stat -e block:block_rq_complete -a -x, -o "$TMP/probe.csv" true 2>"$TMP/perf.err" ||
	skip "perf cannot count block:block_rq_complete: $(cat "$TMP/perf.err")"

cat >"$TMP/diskio.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
probes:
  diskio: {}
plugins:
  store: {}
EOC

# perf counts every completion from before the probe attaches until after
# it detaches; the workload runs in between.
perf stat -e block:block_rq_complete -a -x, -o "$TMP/perf.csv" &
PERF=$!
iomem_bg "$PERF"
sleep 0.5
iomem_start "$TMP/diskio.yaml"
"$WL" 3 "$DIR" >"$TMP/wl.json" || fail "fsync_writer failed"
sleep 1
iomem_stop
kill -INT "$PERF"
wait "$PERF" || true
iomem_reaped "$PERF"
iomem_epochs "$TMP/data" "$TMP/epochs.jsonl"

python3 - "$TMP/epochs.jsonl" "$TMP/wl.json" "$TMP/perf.csv" "$(readlink -f "$WL")" <<'EOF' || fail "diskio checks failed"
import json, os, sys

epochs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
wl = json.loads(open(sys.argv[2]).read())
perf = next(int(l.split(",")[0]) for l in open(sys.argv[3])
            if "block_rq_complete" in l)
exe = sys.argv[4]

events = 0
by_exe = {}       # write bytes per exe, from the slots its samples name
wsamples = []     # the writer's write samples
for e in epochs:
    v = next((v for v in e["vitals"] if v["name"] == "diskio"), None)
    if v is None:
        continue
    events += v["events"]
    hca = dict((s, c) for s, c in v["hca"]["nz"])
    owner = {}
    for s in v["samples"]:
        if s["op"] & 0xff != 1:
            continue
        # The workload's last samples may be read after it exited,
        # without an exe path: its pid names it.
        who = exe if s["pid"] == wl["pid"] else s["exe"] or "(%s)" % s["comm"]
        owner.setdefault(s["slot"], set()).add(who)
        if s["pid"] == wl["pid"]:
            wsamples.append(s)
    for slot, whos in owner.items():
        for who in whos:
            by_exe[who] = by_exe.get(who, 0) + hca.get(slot, 0)

mine = by_exe.get(exe, 0)
top = max(by_exe.items(), key=lambda kv: kv[1]) if by_exe else (None, 0)
print("workload: %d bytes in %d fsyncs" % (wl["bytes"], wl["fsyncs"]))
print("diskio writes attributed to %s: %d bytes (%.1f%%)"
      % (exe, mine, 100.0 * mine / max(wl["bytes"], 1)))
print("top writer: %s with %d bytes" % top)
print("diskio events %d, perf block_rq_complete %d" % (events, perf))

ok = True
# Another copy of the workload (another test run) may write more.
if os.path.basename(top[0] or "") != os.path.basename(exe):
    print("FAIL: %s does not top the written bytes" % exe); ok = False
# Its data reaches the device in its own fsync (writeback in its context);
# journal and metadata writes go out from jbd2 and kworkers.  10% covers
# pages written back early by a flusher and HCA slot collisions.
if abs(mine - wl["bytes"]) > 0.10 * wl["bytes"]:
    print("FAIL: attributed bytes not within 10%% of %d" % wl["bytes"]); ok = False
# perf's window includes vitalsd's start and stop, when it does not count
# yet; on a quiet machine the two agree within 0.4% (23627 vs 23728), but
# other tests running in parallel (make -j) do I/O in that margin (seen:
# 18950 vs 22591).  The exact per-process counts are checked above.
if abs(events - perf) > 0.25 * perf + 50:
    print("FAIL: events not within 25%% (+50) of perf's count"); ok = False
if not wsamples:
    print("FAIL: no write sample of the workload"); ok = False
for s in wsamples:
    a = s["args"]
    if a[0] != s["weight"] or a[0] % 512 != 0 or a[0] == 0:
        print("FAIL: sample bytes %d vs weight %d" % (a[0], s["weight"])); ok = False
    if s["op"] & 0x100:
        print("FAIL: a write of the workload completed short: %s" % a); ok = False
    dev = "%d:%d" % (os.major(a[2]), os.minor(a[2]))
    if not os.path.exists("/sys/dev/block/" + dev):
        print("FAIL: sample device %s is no block device" % dev); ok = False
    if not s["kstack"]:
        print("FAIL: write sample without the submission's kernel stack"); ok = False
lat = sorted(s["args"][1] for s in wsamples)
if lat and lat[len(lat) // 2] == 0:
    print("FAIL: no latency in the samples"); ok = False
if lat:
    print("write samples %d, median latency %.3f ms, device %s"
          % (len(lat), lat[len(lat) // 2] / 1e6,
             "%d:%d" % (os.major(wsamples[0]["args"][2]), os.minor(wsamples[0]["args"][2]))))
sys.exit(0 if ok else 1)
EOF

# min_bytes: smaller completions are not counted at all.
printf 'epoch: 1s\ndata_dir: %s/min\nprobes:\n  diskio: {min_bytes: 64K}\nplugins:\n  store: {}\n' \
	"$TMP" >"$TMP/min.yaml"
iomem_start "$TMP/min.yaml"
"$WL" 1 "$DIR" >"$TMP/wl-min.json" || fail "fsync_writer failed"
iomem_stop
iomem_epochs "$TMP/min" "$TMP/min.jsonl"
python3 - "$TMP/min.jsonl" <<'EOF2' || fail "diskio min_bytes"
import json, sys
w = [s["weight"] for l in open(sys.argv[1]) if l.strip()
     for v in json.loads(l)["vitals"] for s in v["samples"]]
print("min_bytes 64K: %d samples, smallest %d bytes" % (len(w), min(w or [0])))
sys.exit(0 if w and min(w) >= 65536 else 1)
EOF2
