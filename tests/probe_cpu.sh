#!/bin/sh
# SPDX-License-Identifier: MIT
# cpu probe on a real machine: a busy loop's samples must fall in its loop
# function (symbolized through the ELF symbol table), and their count must
# match the CPU time it got at the sampling frequency.  Nothing here may
# depend on how fast or how busy the machine is: busy runs for 2 s of its
# own CPU time (however long that takes), under a name of its own that the
# kernel's comm filter keeps every other process out by (other checkouts'
# tests run busy too), and the checks compare the vital with what busy
# itself did.
. "$top_srcdir/tests/lib.sh"
need_probe cpu
name="pbusy$$_"
workload_copy busy "$name"
busy="$TMP/$name"
conf=$(probe_config cpu 60s "frequency: 199, comm: $name")
daemon_start "$conf"
# Run it through python to learn the CPU time it really got, from exec to
# exit: the samples must match that.
python3 -c 'import resource, subprocess, sys
subprocess.run([sys.argv[1], "2", "cpu"], check=True, stdout=open(sys.argv[2], "w"))
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$busy" "$TMP/busy.json" > "$TMP/cpu_s" ||
	fail "busy workload failed"
daemon_stop
python3 "$top_srcdir/tests/vital_share.py" cpu "$name" $(epochs_json) > "$TMP/r.json"
cat "$TMP/busy.json" "$TMP/r.json" >&2
python3 - "$TMP/r.json" "$TMP/cpu_s" "$TMP/busy.json" "$name" <<'PY' || fail "cpu vital does not show the busy loop"
import json, sys
r = json.load(open(sys.argv[1]))
cpu_s = float(open(sys.argv[2]).read())
wl = json.load(open(sys.argv[3]))
name = sys.argv[4]
# The comm filter counts busy alone, and each sample is of its process
# (catches a filter that lets others in, or samples under another pid).
assert r["samples"], "no samples of busy"
others = set((s["comm"], s["pid"]) for s in r["samples"] if s["pid"] != wl["pid"])
assert not others and r["top_comm"] == name, "samples of others: %r" % others
# 199 samples per CPU second it ran, whatever share of the CPUs it got: the
# timer samples whatever runs at each tick, so busy's count is binomial
# around that (sd ~ sqrt(398) = 20 for its 2 s): 20% either way is 4 sd
# (catches a wrong frequency, a CPU not sampled, ticks counted twice or
# other tasks' ticks counted for it).
w = r["events"]
want = cpu_s * 199
assert 0.8 * want <= w <= 1.2 * want, "busy got %d samples for %.2f CPU s (want ~%d)" % (w, cpu_s, want)
user = [s for s in r["samples"] if s["op"] == 0]
assert user, "no user-mode samples"
# Samples are logarithmic per label (its first event in an epoch, then
# each power of two of its count), so the dynamic loader's few ticks at
# start take one sample per label against busy_loop's log2 of hundreds:
# each label weighs what its samples counted, the highest count of each
# epoch (the count restarts in each).  A share among busy's own labels,
# which other processes cannot dilute (catches wrong PCs or labels).
done, cur = {}, {}
for s in sorted(user, key=lambda s: s["ts_ns"]):
    l = s["label"]
    if s["count"] <= cur.get(l, 0):  # a new epoch
        done[l] = done.get(l, 0) + cur[l]
    cur[l] = s["count"]
events = dict((l, done.get(l, 0) + c) for l, c in cur.items())
inloop = set(s["label"] for s in user if s.get("usyms") and s["usyms"][0] == "busy_loop")
w_in = sum(events[l] for l in inloop)
w_all = sum(events.values())
print("user samples: %d, %d in busy_loop; their events %d of %d" % (len(user), sum(1 for s in user if s["label"] in inloop), w_in, w_all))
assert w_in * 10 >= w_all * 9, "busy_loop's labels counted %d of %d user events sampled" % (w_in, w_all)
# Late in exit (after exit_mmap() dropped the exe) a tick may find the
# exe unknown (id 0, see vitals_bpf_task_mm), never another program's.
late = [s for s in r["samples"] if s["exe_id"] == 0]
assert all(s["op"] == 1 and "do_exit" in s.get("ksyms", []) for s in late), \
    "exe unknown outside exit: %r" % late
assert all(s["exe"].endswith("/" + name) for s in r["samples"] if s["exe_id"] != 0), "exe not resolved"
print("%d samples for %.2f CPU s (%.0f expected)" % (w, cpu_s, want))
PY
# User frames are stored as (module, file offset): the busy loop's frames
# must name the busy binary's module, with the build-id readelf reads from
# it (none if it has none), at an offset that nm places in busy_loop.
readelf -nW "$busy" > "$TMP/busy.notes" && readelf -lW "$busy" > "$TMP/busy.phdrs" &&
	nm -S "$busy" > "$TMP/busy.nm" || fail "readelf/nm on $busy"
python3 - "$busy" "$TMP" $(ls "$TMP"/e*.json) <<'PY' || fail "user frames do not decode to busy_loop in the busy module"
import json, os, re, sys
busy, tmp, files = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3:]
m = re.search(r"Build ID: ([0-9a-f]+)", open(tmp + "/busy.notes").read())
want_id = m.group(1) if m else ""
# File offset -> address: the executable PT_LOAD's VirtAddr - Offset.
for line in open(tmp + "/busy.phdrs"):
    f = line.split()
    if f and f[0] == "LOAD" and "E" in f[6:-1]:
        bias = int(f[2], 16) - int(f[1], 16)
        break
else:
    raise SystemExit("no executable LOAD in busy")
lo, size = [(int(f[0], 16), int(f[1], 16)) for f in
            (l.split() for l in open(tmp + "/busy.nm")) if f[-1] == "busy_loop"][0]
named = decoded = 0
for fn in files:
    e = json.load(open(fn))
    mods = dict((m["id"], m) for m in e.get("modules", []))
    for v in e["vitals"]:
        for s in v["samples"]:
            if s["comm"] != os.path.basename(busy):
                continue
            # The exe is a module of the epoch too.  A sample taken as the
            # process exits, after its memory (and with it its exe) was
            # released, has none, and no user frames either.
            if s["exe"] == "":
                assert not s["ustack"], "a sample with no exe has user frames"
                continue
            assert any(m["path"] == s["exe"] for m in mods.values()), "exe %s not in modules" % s["exe"]
            if s["op"] != 0 or not s.get("usyms") or s["usyms"][0] != "busy_loop":
                continue
            named += 1
            u = s["ustack"][0] & (2**64 - 1)
            mid, off = (u >> 48) - 1, u & (2**48 - 1)
            assert mid >= 0, "busy_loop frame %#x stored raw" % u
            mod = mods[mid]
            assert mod["path"] == busy, "module %r, want %r" % (mod["path"], busy)
            assert mod["build_id"] == want_id, "build-id %r, want %r" % (mod["build_id"], want_id)
            assert lo <= off + bias < lo + size, "offset %#x (+%#x) not in busy_loop [%#x, %#x)" % (off, bias, lo, lo + size)
            decoded += 1
assert named > 0, "no busy_loop samples"
print("%d busy_loop frames as (%s, offset in busy_loop), build-id %s" % (decoded, os.path.basename(busy), want_id or "none"))
PY
# The text form names the module and offset of each user frame.
n=$(count_epochs "$TMP/data")
i=0
while [ "$i" -lt "$n" ]; do
	"$VITALS" --data-dir "$TMP/data" show "$i" --vital cpu --samples 1000 ||
		fail "vitals show $i"
	i=$((i + 1))
done > "$TMP/show.txt"
assert_grep "u busy_loop \($name\+0x[0-9a-f]+\)" "$TMP/show.txt"

# files: true: the library frames of a process gone before its samples
# were read stay placed, as the kernel looked up their files.  Ten runs
# of 40 ms of CPU in libc's memchr, while vitalsd is stopped (SIGSTOP):
# it reads every sample after its process exited, however long the runs
# take on a busy machine (the kernel counts and samples meanwhile into the
# ring buffer).  With files: false every frame of them stays raw.
lname="plib$$_"
workload_copy lib_loop "$lname"
rm -rf "$TMP/data" && mkdir -p "$TMP/data"
conf=$(probe_config cpu 60s "frequency: 499, comm: $lname, files: true")
daemon_start "$conf"
kill -STOP "$DAEMON"
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$TMP/$lname" 0.04 cpu > /dev/null || { kill -CONT "$DAEMON"; fail "lib_loop failed"; }
done
kill -CONT "$DAEMON"
daemon_stop
"$VITALS" --data-dir "$TMP/data" show --last --json > "$TMP/files.json" ||
	fail "cannot read the files epoch"
python3 - "$TMP/files.json" "$lname" <<'PY' || fail "library frames of a process gone are not placed"
import json, sys
e = json.load(open(sys.argv[1]))
mods = dict((m["id"], m["path"]) for m in e.get("modules", []))
by, top = {}, {}
for v in e["vitals"]:
    for s in v["samples"]:
        if s["comm"] == sys.argv[2] and s["op"] == 0 and s["ustack"]:
            by.setdefault(s["label"], []).append(s["ustack"][0] & (2**64 - 1))
            top[s["label"]] = max(top.get(s["label"], 0), s["count"])
# The loop's label is the one sampled most, at every power of 2 of its
# count (the same label in every process: a library PC is labelled by its
# offset from the mmap base); each of its samples must be placed in libc.
# 0.4 CPU s at 499 Hz is ~200 ticks: ~8 samples of it (catches frames
# stored raw, i.e. the kernel's file lookups missing or not used).
hot = by[max(by, key=lambda l: (len(by[l]), top[l]))] if by else []
inlib = [u for u in hot if u >> 48 and "libc.so" in mods[(u >> 48) - 1]]
print("lib_loop: %d labels sampled; the loop's %d samples, %d placed in libc" % (len(by), len(hot), len(inlib)))
assert len(hot) >= 2, "too few samples of the loop"
assert len(inlib) == len(hot), "frames stored raw: %s" % ["%#x" % u for u in hot if u >> 48 == 0]
PY
