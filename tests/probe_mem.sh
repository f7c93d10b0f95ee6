#!/bin/sh
# SPDX-License-Identifier: MIT
# The umem and kmem probes for real (root): page_toucher faults in fresh
# anonymous pages, in two threads (the same labels counted on two CPUs, each
# holding some pending: see vitals_bpf_count()), while vitalsd runs both.  Its exe must top umem with as
# many faults as perf counts for it (and as pages it touched), be among the
# top kmem allocators with about as many pages as perf's mm_page_alloc
# count for it, and free about what it allocated (kmem_free).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/iomem.sh"

need_probe umem
need_probe kmem
WL=$(workload page_toucher) || fail "cannot build workload page_toucher"
command -v perf >/dev/null 2>&1 || skip "perf is not installed"

# page_toucher runs under a name of its own that the kernel's comm filter
# keeps every other process out by (other checkouts' tests run it too), so
# each HCA slot its samples name holds its own events only, however busy
# the machine is: the checks compare them with perf's counts of its own
# events, not with other processes.  It maps at least 16 chunks of 16 MiB
# per thread (131072 pages in all), however long that takes.
name="pmem$$_"
cp "$WL" "$TMP/$name" || fail "cannot copy page_toucher"
WL="$TMP/$name"
cat >"$TMP/mem.yaml" <<EOC
epoch: 60s
data_dir: $TMP/data
sketch:
  hca_size: 16384
  max_samples: 65536
probes:
  umem: {comm: $name}
  kmem: {comm: $name}
plugins:
  store: {}
EOC

iomem_start "$TMP/mem.yaml"
# perf counts the workload's own faults and allocations exactly.
perf stat -e exceptions:page_fault_user -e kmem:mm_page_alloc -x, \
	-o "$TMP/perf.csv" -- "$WL" 3 2 16 >"$TMP/wl.json" || fail "page_toucher failed"
iomem_stop
iomem_epochs "$TMP/data" "$TMP/epochs.jsonl"
THP=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo none)

python3 - "$TMP/epochs.jsonl" "$TMP/wl.json" "$TMP/perf.csv" "$(readlink -f "$WL")" "$THP" <<'EOF' || fail "umem/kmem checks failed"
import json, os, sys

epochs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
wl = json.loads(open(sys.argv[2]).read())
perf = {}
for l in open(sys.argv[3]):
    f = l.strip().split(",")
    if len(f) > 2 and f[0].isdigit():
        perf[f[2]] = int(f[0])
exe, thp = sys.argv[4], sys.argv[5]
memtotal = next(int(l.split()[1]) * 1024 for l in open("/proc/meminfo")
                if l.startswith("MemTotal:"))


def attribute(name):
    """Weight per exe (summing the slots its samples name), its samples,
    the vital's weighted sum over all epochs, and the samples of others."""
    by_exe, mine, others, wsum = {}, [], [], 0
    for e in epochs:
        v = next((v for v in e["vitals"] if v["name"] == name), None)
        if v is None:
            continue
        wsum += v["wsum"]
        hca = dict((s, c) for s, c in v["hca"]["nz"])
        owner = {}
        for s in v["samples"]:
            # The workload's last samples may be read after it exited,
            # without an exe path: its pid names it.
            who = exe if s["pid"] == wl["pid"] else s["exe"] or "(%s)" % s["comm"]
            owner.setdefault(s["slot"], set()).add(who)
            if s["pid"] == wl["pid"]:
                mine.append(s)
            else:
                others.append((s["comm"], s["pid"]))
        for slot, whos in owner.items():
            for who in whos:
                by_exe[who] = by_exe.get(who, 0) + hca.get(slot, 0)
    return by_exe, mine, wsum, others


ok = True
def check(cond, msg):
    global ok
    if not cond:
        print("FAIL: " + msg)
        ok = False

faults = perf["exceptions:page_fault_user"]
allocs = perf["kmem:mm_page_alloc"]
print("workload: %d pages touched; perf: %d user faults, %d page allocations"
      % (wl["pages"], faults, allocs))

u, usamples, uwsum, uothers = attribute("umem")
print("umem: %s %d faults, the vital %d" % (exe, u.get(exe, 0), uwsum))
# The comm filter counts the workload alone (catches one that lets others
# in, or the workload's events under another pid).
check(not uothers and uwsum - u.get(exe, 0) <= 0.01 * uwsum + 100,
      "umem counted others: %r; %d of %d faults in slots of the workload"
      % (sorted(set(uothers))[:5], u.get(exe, 0), uwsum))
# Each slot of the workload holds its faults exactly (perf counts the same
# tracepoint in its context), less start-up PCs whose samples were crowded
# out (1%).  (Catches faults lost or counted twice.)
check(faults * 0.99 - 100 <= u.get(exe, 0) <= faults * 1.02 + 100,
      "umem faults of the workload %d, perf counted %d" % (u.get(exe, 0), faults))
if "[always]" not in thp:
    # Without transparent huge pages every touched page faults once.
    check(abs(u.get(exe, 0) - wl["pages"]) <= 0.02 * wl["pages"] + 1000,
          "umem faults %d vs %d pages touched" % (u.get(exe, 0), wl["pages"]))
check(usamples, "no umem sample of the workload")
for s in usamples:
    check(s["op"] == 0 and s["weight"] == 1, "umem op/weight %d/%d" % (s["op"], s["weight"]))
    check(s["args"][0] != 0, "umem sample without a fault address")
    check(0 < s["args"][1] <= memtotal, "umem free memory %d" % s["args"][1])
check(any(s["ustack"] for s in usamples), "no umem sample with a user stack")

k, ksamples, ksum, kothers = attribute("kmem")
f, fsamples, fsum, fothers = attribute("kmem_free")
print("kmem: %s allocated %d pages, freed %d pages (the vitals: %d, %d)"
      % (exe, k.get(exe, 0), f.get(exe, 0), ksum, fsum))
check(not kothers and not fothers and ksum - k.get(exe, 0) <= 0.01 * ksum + 100,
      "kmem counted others: %r; %d of %d pages in slots of the workload"
      % (sorted(set(kothers + fothers))[:5], k.get(exe, 0), ksum))
# Pages are 2^order per allocation: about the allocations perf counted in
# its context (order 0 here), give or take crowded samples and the
# relaxed adds of two CPUs at once (see vitals_bpf_count_relaxed).
# (Catches allocations lost, counted twice, or a wrong weight.)
check(allocs * 0.99 - 100 <= k.get(exe, 0) <= allocs * 1.05 + 100,
      "kmem pages of the workload %d, perf counted %d allocations" % (k.get(exe, 0), allocs))
# It unmaps what it maps: its frees match its allocations within a chunk
# (catches frees charged to others or lost).
check(abs(k.get(exe, 0) - f.get(exe, 0)) <= 0.05 * k.get(exe, 0) + 8192,
      "workload allocated %d pages but freed %d" % (k.get(exe, 0), f.get(exe, 0)))
check(ksamples and fsamples, "no kmem/kmem_free sample of the workload")
for s in ksamples:
    check(s["weight"] == 1 << s["args"][0], "kmem weight %d, order %d" % (s["weight"], s["args"][0]))
    check(s["args"][1] != 0, "kmem sample without gfp flags")
    check(0 < s["args"][2] <= memtotal, "kmem free memory %d" % s["args"][2])
check(any(s["kstack"] for s in ksamples), "no kmem sample with a kernel stack")
# Stacks start where the kernel allocated or freed, not in the program
# (bpf_prog_*) or the tracepoint's glue that ran it.
glue = ("bpf_prog_", "__traceiter_", "__bpf_trace_", "bpf_trace_run")
for s in ksamples + fsamples:
    top = (s.get("ksyms") or [""])[0]
    check(not top.startswith(glue), "kmem stack starts in %s" % top)
sys.exit(0 if ok else 1)
EOF

# A process gone before its samples are read (every 100 ms) has no
# /proc/PID/maps left: its frames in its own executable are placed from
# the text range the kernel sent with each sample, and named.  20 runs of
# a fresh copy of page_toucher, one 16 MiB chunk each, fault mostly in
# page_toucher_touch; without the range those frames stay raw addresses.
# vitalsd is stopped (SIGSTOP) while they run, so it reads every sample
# after its process exited, however long the runs take on a busy machine.
# Only the copy is counted, and threshold_max 2 keeps t at 2 (the
# collector's CPU would otherwise raise it with the machine's load): its
# 20 x 4096 faults in page_toucher_touch take ~17 samples.
gname="ptshort$$_"
cp "$WL" "$TMP/$gname" || fail "cannot copy page_toucher"
printf 'epoch: 60s\ndata_dir: %s/gone\nsketch:\n  hca_size: 16384\n  max_samples: 65536\n  threshold_max: 2\nprobes:\n  umem: {comm: %s}\nplugins:\n  store: {}\n' \
	"$TMP" "$gname" >"$TMP/gone.yaml"
iomem_start "$TMP/gone.yaml"
kill -STOP "$DAEMON"
i=0
while [ "$i" -lt 20 ]; do
	"$TMP/$gname" 0.001 1 1 >/dev/null || fail "$gname failed"
	i=$((i + 1))
done
kill -CONT "$DAEMON"
iomem_stop
iomem_epochs "$TMP/gone" "$TMP/gone.jsonl"
python3 - "$TMP/gone.jsonl" "$(readlink -f "$TMP/$gname")" "$gname" <<'EOP' || fail "frames of a gone process in its executable"
import json, sys
placed = named = total = 0
for l in open(sys.argv[1]):
    if not l.strip():
        continue
    e = json.loads(l)
    mods = dict((m["id"], m["path"]) for m in e.get("modules", []))
    for v in e["vitals"]:
        if v["name"] != "umem":
            continue
        for s in v["samples"]:
            if s["comm"] != sys.argv[3] or not s["ustack"]:
                continue
            total += 1
            f = s["ustack"][0]
            if (f >> 48) and mods.get((f >> 48) - 1) == sys.argv[2]:
                placed += 1
                named += (s.get("usyms") or [""])[0] == "page_toucher_touch"
print("umem: 20 short runs of page_toucher: %d samples, %d with the PC placed in "
      "the executable, %d of them named page_toucher_touch" % (total, placed, named))
# (Catches frames of a gone process left raw, or placed but not named.)
sys.exit(0 if placed >= 5 and named >= 1 else 1)
EOP

# Option vitals: one vital of the pair, and a clear refusal of others.
printf 'epoch: 1s\ndata_dir: %s/one\nprobes:\n  kmem: {vitals: [kmem_free]}\nplugins:\n  store: {}\n' \
	"$TMP" >"$TMP/one.yaml"
"$VITALSD" -c "$TMP/one.yaml" --epochs 1 >"$TMP/one.out" 2>&1 ||
	{ cat "$TMP/one.out" >&2; fail "kmem with vitals: [kmem_free]"; }
"$VITALS" --data-dir "$TMP/one" show --last --json >"$TMP/one.json" || fail "vitals show"
python3 -c 'import json, sys
names = [v["name"] for v in json.load(open(sys.argv[1]))["vitals"]]
sys.exit(0 if names == ["kmem_free"] else "vitals %s, want [kmem_free]" % names)' "$TMP/one.json" ||
	fail "option vitals: [kmem_free]"
printf 'epoch: 1s\ndata_dir: %s/bad\nprobes:\n  kmem: {vitals: [kmem, pages]}\n' "$TMP" >"$TMP/bad.yaml"
st=0
"$VITALSD" -c "$TMP/bad.yaml" --epochs 1 >"$TMP/bad.out" 2>&1 || st=$?
[ "$st" -ne 0 ] || fail "kmem accepted vitals: [kmem, pages]"
assert_grep "kmem.*'pages' is not one of kmem, kmem_free" "$TMP/bad.out"

# umem labels are code offsets, the same in every process of a program:
# 200 runs of true (each at its own randomised addresses) make a few dozen
# labels, not several new ones per run.  Each run is gone long before its
# samples are read, so only the kernel's table of programs exec'd names
# them: a copy under a name no process had before must name them (all but
# a few whose table slot another exec took first: without the table only
# a third are).  It is run by its absolute path: the table keeps no other.
# umem counts only this copy (a name of its own: other checkouts' tests
# run theirs): whatever else runs meanwhile (the other tests of make -j)
# would take the epoch's samples and the CPUs' frame lookups.  kmem counts
# all, as it did when its check below was set, with room for every
# process's samples (max_samples, and no sample_memory bound: under make
# -j the other tests' processes filled its 768K, and kmem_free kept 3
# samples of short-true, none in exit_mmap) and t kept at 2 (threshold_max) however
# much the machine's load makes the collector's CPU raise it; the runs
# take one epoch, however long they take.
ATMP=$(cd "$TMP" && pwd -P) || fail "cannot resolve $TMP"
tname="strue$$_"
cp /bin/true "$ATMP/$tname" || fail "cannot copy /bin/true"
printf 'epoch: 60s\ndata_dir: %s/aslr\nsketch:\n  max_samples: 65536\n  sample_memory: 0\n  threshold_max: 2\nprobes:\n  umem: {comm: %s}\n  kmem: {}\nplugins:\n  store: {}\n' \
	"$TMP" "$tname" >"$TMP/aslr.yaml"
# The kmem_free samples of short-true are the crossings of powers of 2 of
# one counter (its exe's order-0 frees), about ten, each in exit_mmap()
# with the chance of a free being there: a third here, so none of them is
# (0.7^10 is 3%; once, none of 7 was).  A batch whose only fault is that
# is run again, twice at most (all three: under 0.01%).
batch=0
while :; do
	batch=$((batch + 1))
	rm -rf "$TMP/aslr"
	iomem_start "$TMP/aslr.yaml"
	i=0
	while [ "$i" -lt 200 ]; do "$ATMP/$tname"; sleep 0.005; i=$((i + 1)); done
	iomem_stop
	"$VITALS" --data-dir "$TMP/aslr" show --last --json >"$TMP/aslr.json" || fail "vitals show"
	st=0
	python3 - "$TMP/aslr.json" "$ATMP/$tname" <<'EOP' || st=$?
import json, os, sys
name = os.path.basename(sys.argv[2])
v = [v for v in json.load(open(sys.argv[1]))["vitals"] if v["name"] == "umem"][0]
t = [s for s in v["samples"] if s["comm"] == name]
labels = len(set(s["label"] for s in t))
named = sum(1 for s in t if s["exe"] == sys.argv[2])
print("umem: 200 runs of %s, %d samples, %d distinct labels, %d named %s"
      % (name, len(t), labels, named, sys.argv[2]))
# (Catches new labels per run, i.e. raw addresses, and gone runs unnamed:
# without the table about a third are named, those read while alive.  A
# table slot that another program exec'd meanwhile takes, in others'
# builds, costs some runs their names: 0.8 of them, not all.)
ok = t and labels < 200 and named >= 0.8 * len(t)
# Most of its faults are in the dynamic loader and libc, which no /proc
# maps name once it is gone: the kernel sends each sample's files (device
# and inode), so those frames are placed by module and offset too (none
# are without it).  The runs are paced (about 100 a second): a CPU makes
# at most 32 lookups per 100 ms, and a page fault one per sample; the raw
# frames left are mostly past the last real frame, where no lookup was
# left to tell.  Here (only short-true counted, two busy compile loops
# beside it) 80-94% were placed.
d = json.load(open(sys.argv[1]))
mods = dict((m["id"], m["path"]) for m in d.get("modules", []))
frames = [f for s in t for f in s["ustack"]]
raw = sum(1 for f in frames if not f >> 48)
lib = sum(1 for f in frames if f >> 48 and
          ("/ld-linux" in mods.get((f >> 48) - 1, "") or
           "/libc.so" in mods.get((f >> 48) - 1, "")))
print("umem: %s's %d user frames: %d in ld.so or libc, %d raw"
      % (name, len(frames), lib, raw))
# (Catches library frames of gone processes left raw.)
ok = ok and lib >= 0.5 * len(frames)
# Instruction fetch faults (x86 error code bit 4: the loader and libc
# paging their code in) count under one label, 1 << 61; data faults
# under their PC's code offset >> 8, never that.
fetch = [s for s in t if s["args"][3] & 0x10]
data = [s for s in t if not s["args"][3] & 0x10]
print("umem: %s's %d instruction fetch samples under labels %s, "
      "%d data fault samples" % (name, len(fetch),
      sorted("%#x" % l for l in set(s["label"] for s in fetch)), len(data)))
# (Catches fetch faults labelled by their PC, or data faults as fetches.)
ok = ok and fetch and data and all(s["label"] == 1 << 61 for s in fetch) and \
    not any(s["label"] == 1 << 61 for s in data)
# Most of its pages are freed at exit, in exit_mmap(), after exit dropped
# the task's mm: they are still its exe's (the mm it runs on lazily), so
# each carries short-true's exe id.  Its path is then a matter of the
# exec table checked above: a run whose slot another exec took (the other
# tests of make -j exec a lot) has no path, and with a dozen samples one
# such run is a sixth of them (seen: 2 of 15, both of one pid).  One
# switched out and back in during exit_mmap() runs on the mm of the task
# before it (often a shell of the other tests): its exe is the one kept
# at its exit, or none (id 0) if it had no event before, never that
# task's (seen under make -j before they were told apart: dash's).
# (Catches exit frees charged to another process's exe.)
xid = set(s["exe_id"] for s in t if s["exe"] == sys.argv[2])
v = [v for v in json.load(open(sys.argv[1]))["vitals"] if v["name"] == "kmem_free"][0]
f = [s for s in v["samples"] if s["comm"] == name]
fx = [s for s in f if "exit_mmap" in (s.get("ksyms") or [])]
fmine = sum(1 for s in f if s["exe_id"] in xid)
fnamed = sum(1 for s in f if s["exe"] == sys.argv[2])
fwrong = [(s["exe"], s["exe_id"], s["pid"]) for s in f
          if s["exe"] not in ("", sys.argv[2]) or
          s["exe_id"] not in xid | set([0])]
print("kmem_free: %d samples of %s, %d in exit_mmap, %d of its exe id, %d named; others: %s"
      % (len(f), name, len(fx), fmine, fnamed, fwrong))
ok = ok and len(xid) == 1 and not fwrong and fnamed >= 0.5 * len(f)
sys.exit(1 if not ok else 0 if fx else 3)
EOP
	[ "$st" -eq 3 ] && [ "$batch" -lt 3 ] && continue
	[ "$st" -eq 0 ] || fail "umem samples of short-lived true"
	break
done
