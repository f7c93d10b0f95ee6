#!/bin/sh
# SPDX-License-Identifier: MIT
# No raw kernel address in what the vitals group reads (doc/design.md,
# "Kernel addresses"): the probes that see kernel stacks, PCs and locks
# run on the real kernel under workloads; no value stored (frames, args,
# labels, slots, the modules table; in `vitals show --json`, `vitals show`,
# `vitals pprof --folded`, the HTTP API (samples, flame graphs, /metrics)
# and the raw files) may lie in the kernel's
# address range or equal an address of /proc/kallsyms, while the kernel
# frames keep their names and are placed in "[kernel]".  The lock the
# workload's threads wait for (their process's mmap_lock) is one keyed
# value in every epoch.  The host key is root's alone and survives a
# restart.  (The syscall probe is not run: its arguments are the
# process's own values, stored as they are.)
. "$top_srcdir/tests/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "not root (BPF probes need root)"
need_probe cpu
need_probe lock
need_probe sched
[ "$(cat /proc/sys/kernel/kptr_restrict 2>/dev/null || echo 0)" -lt 2 ] ||
	skip "kptr_restrict is 2: kallsyms hides the addresses to compare with"
LOCKER=$(workload lock_contention) || fail "cannot build workload lock_contention"
SLEEPER=$(workload pipe_sleeper) || fail "cannot build workload pipe_sleeper"

cat >"$TMP/conf.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
probes:
  cpu: {frequency: 999}
  lock: {min_wait: 0}
  sched: {vitals: [sched, blocking, wait]}
plugins:
  store: {}
EOC
mkdir -p "$TMP/data"
daemon_start "$TMP/conf.yaml"
"$LOCKER" 2 4 >"$TMP/wl.json" || fail "lock_contention failed"
"$SLEEPER" 1 >/dev/null || fail "pipe_sleeper failed"
daemon_stop

key="$TMP/data/host.key"
[ -f "$key" ] || fail "no host key $key"
[ "$(stat -c '%a %u %s' "$key")" = "600 0 16" ] ||
	fail "host key: mode, owner, size $(stat -c '%a %u %s' "$key"), not 600 0 16"
cp "$key" "$TMP/key.before"

epochs=$(epochs_json)
n=0
for e in $epochs; do
	i=$(basename "$e" .json | tr -d e)
	"$VITALS" --data-dir "$TMP/data" show "$i" >"$TMP/show$i.txt" ||
		fail "vitals show $i"
	n=$((n + 1))
done
"$VITALS" --data-dir "$TMP/data" pprof --folded --vital cpu --from -1h \
	--to now >"$TMP/cpu.folded" 2>"$TMP/pprof.err" ||
	{ cat "$TMP/pprof.err" >&2; fail "vitals pprof --folded"; }
# The HTTP API over the same store: samples, flame graphs, /metrics.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$VITALS" --data-dir "$TMP/data" serve --listen "127.0.0.1:$PORT" \
	>"$TMP/serve.log" 2>&1 &
SPID=$!
trap '[ -z "$DAEMON" ] || kill "$DAEMON" 2>/dev/null; kill "$SPID" 2>/dev/null; rm -rf "$TMP"' EXIT
python3 - "http://127.0.0.1:$PORT" "$TMP/api" <<'PY' || { cat "$TMP/serve.log" >&2; fail "the HTTP API over the store"; }
import json, os, sys, time, urllib.request
base, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
for i in range(200):
    try:
        urllib.request.urlopen(base + "/api/v1/time?t=now").read()
        break
    except OSError:
        time.sleep(0.1)
get = lambda q: urllib.request.urlopen(base + q).read().decode()
epochs = json.loads(get("/api/v1/epochs?from=-1h&to=now"))["epochs"]
assert epochs, "the API lists no epoch"
n = 0
for e in epochs:
    for v in ("cpu", "lock", "blocking", "wait"):
        open("%s/samples%d.json" % (out, n), "w").write(
            get("/api/v1/samples?epoch=%s&vital=%s&limit=1000" % (e["id"], v)))
        n += 1
for v in ("cpu", "lock", "blocking"):
    open("%s/flame-%s.json" % (out, v), "w").write(
        get("/api/v1/flame?vital=%s&from=-1h&to=now" % v))
open(out + "/metrics.txt", "w").write(get("/metrics"))
PY
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null || true

python3 - "$TMP" "$(cat "$TMP/wl.json")" $epochs <<'PY' || fail "a kernel address is stored"
import glob, json, re, sys, zlib

tmp, wl, files = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
KMIN = 0xffff800000000000
# Negative error codes (the kernel's MAX_ERRNO): a lock wait's result.
ERR = 2**64 - 4095
ksyms = set()
for line in open("/proc/kallsyms"):
    a = int(line.split()[0], 16)
    if a:
        ksyms.add(a)
assert ksyms, "kallsyms lists no address"


def bad(v):
    u = v % 2**64
    return u in ksyms or KMIN <= u < ERR


def walk(x, path, out):
    if isinstance(x, dict):
        for k, v in x.items():
            walk(v, path + "." + k, out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            walk(v, "%s[%d]" % (path, i), out)
    elif isinstance(x, bool):
        pass
    elif isinstance(x, int):
        if bad(x):
            out.append((path, hex(x % 2**64)))
    elif isinstance(x, str):
        for h in re.findall(r"0x[0-9a-fA-F]+", x):
            if bad(int(h, 16)):
                out.append((path, h))


found, names, kframes, placed, locks = [], set(), 0, 0, {}
for f in files:
    e = json.load(open(f))
    walk(e, f, found)
    images = {m["id"]: m["path"] for m in e.get("modules", [])}
    for v in e["vitals"]:
        for s in v["samples"]:
            for i, pc in enumerate(s.get("kstack", [])):
                kframes += 1
                img = images.get((pc >> 48) - 1, "")
                # In no image (a BPF program, a trampoline): keyed, < 2^48.
                if img.startswith("[kernel"):
                    placed += 1
                elif img or pc >= 1 << 48:
                    found.append((f + " " + v["name"], "frame %#x in %r" % (pc, img)))
                if s.get("ksyms") and s["ksyms"][i]:
                    names.add(s["ksyms"][i])
            if v["name"] == "lock" and s["pid"] == wl["pid"] and s["args"][1] & 6:
                locks.setdefault(s["args"][0], 0)
                locks[s["args"][0]] += 1
# The API's answers (JSON: labels as hex strings, frames as names).
api = 0
for f in glob.glob(tmp + "/api/*.json"):
    walk(json.load(open(f)), f, found)
    api += 1
# The text outputs too: show, the folded stacks, /metrics.
for t in (glob.glob(tmp + "/show*.txt") + [tmp + "/cpu.folded"] +
          glob.glob(tmp + "/api/metrics.txt")):
    for h in re.findall(r"0x[0-9a-fA-F]+", open(t).read()):
        if bad(int(h, 16)):
            found.append((t, h))
# The raw files: their stacks are delta-coded, so only exact addresses.
for f in glob.glob(tmp + "/data/*/*.json.gz"):
    text = zlib.decompress(open(f, "rb").read(), 47).decode()
    for m in re.findall(r"-?\d+", text):
        if int(m) % 2**64 in ksyms:
            found.append((f, m))
print("%d epochs, %d kernel frames (%d in kernel images), %d kernel names, "
      "%d API answers; lock_contention's rw-semaphore waits by lock: %s"
      % (len(files), kframes, placed, len(names), api,
         sorted(locks.values(), reverse=True)[:4]))
if api == 0:
    sys.exit("no API answer to check")
if found:
    sys.exit("kernel addresses stored: %s" % found[:10])
if placed < 0.9 * kframes:
    sys.exit("%d of %d kernel frames placed in kernel images" % (placed, kframes))
if not names & {"do_syscall_64", "entry_SYSCALL_64_after_hwframe",
                                "schedule", "__schedule", "rwsem_down_write_slowpath",
                                "down_write_killable", "vm_mmap_pgoff"}:
    sys.exit("kernel frames lost their names: %s" % sorted(names)[:20])
# One mmap_lock, one keyed value in every epoch (the most waits: others
# may be locks the same calls take, e.g. of the page tables).
if not locks:
    sys.exit("no rw-semaphore wait of lock_contention sampled")
top = max(locks, key=locks.get)
if locks[top] * 2 < sum(locks.values()):
    sys.exit("the process's waits are not on one lock: %s" % locks)
PY

# A restart keeps the key: keyed values name the same objects.
"$VITALSD" -c "$TMP/conf.yaml" --epochs 1 >"$TMP/again.log" 2>&1 ||
	{ cat "$TMP/again.log" >&2; fail "vitalsd --epochs 1"; }
cmp -s "$key" "$TMP/key.before" || fail "the host key changed at a restart"
[ "$(stat -c '%a' "$key")" = 600 ] || fail "host key mode changed"
