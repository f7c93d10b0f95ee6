#!/bin/sh
# SPDX-License-Identifier: MIT
# The workload programs the probe tests drive: each runs for 1 s, exits 0
# and prints one line of JSON whose counts are plausible for what it does;
# busy_loop is a symbol nm finds; bad arguments exit 2.  Needs no root.
. "$top_srcdir/tests/lib.sh"
W="$top_builddir/tests/workloads"

run() { # NAME ARGS...: run NAME for 1 s, its JSON in $TMP/NAME.json
	name=$1
	shift
	st=0
	timeout 60 "$W/$name" 1 "$@" >"$TMP/$name.json" 2>"$TMP/$name.err" || st=$?
	[ "$st" -eq 0 ] || { cat "$TMP/$name.err" >&2; fail "$name $*: exit $st"; }
}

run busy
run pipe_sleeper
run runq
run fsync_writer "$TMP"
run page_toucher
cp "$TMP/page_toucher.json" "$TMP/page_toucher1.json"
run page_toucher 2
run syscall_loop
run signal_storm
run udp_sender 1000 0
run lock_contention 3
run lib_loop
run mem_leak 64
# Default directory: a temporary one under /var/tmp, removed at exit.
cp "$TMP/fsync_writer.json" "$TMP/fsync_dir.json"
run fsync_writer

python3 - "$TMP" "$(nproc)" <<'EOP' || fail "a workload's JSON is wrong"
import json, os, sys
tmp, nproc = sys.argv[1], int(sys.argv[2])

def load(name):
    lines = open(os.path.join(tmp, name + ".json")).read().splitlines()
    assert len(lines) == 1, (name, lines)
    d = json.loads(lines[0])
    assert d["workload"] == name, (name, d)
    assert isinstance(d["pid"], int) and d["pid"] > 1, d
    assert d["seconds"] == 1, d
    return d

blocks = [4096 << (2 * i) for i in range(5)]      # 4 KiB .. 1 MiB in turn
def fsync_ok(d):
    n = d["fsyncs"]
    want = sum(blocks) * (n // 5) + sum(blocks[:n % 5])
    return n >= 1 and d["bytes"] == want

checks = {
    "busy": lambda d: d["loops"] > 1000000 and int(d["busy_loop"], 16) > 0,
    # one byte per 100 ms: about 10, never a spin
    "pipe_sleeper": lambda d: 2 <= d["reads"] <= 12 and d["interval_ms"] == 100,
    "runq": lambda d: d["threads"] == 4 * d["cpus"] and d["cpus"] == nproc
        and d["loops"] > d["threads"],
    "fsync_writer": fsync_ok,
    "page_toucher": lambda d: d["maps"] >= 1 and d["threads"] == 2
        and d["pages"] == d["maps"] * (16 << 20) // d["page_size"],
    "syscall_loop": lambda d: d["calls"] >= 4096 and d["calls"] % 4096 == 0
        and d["nr"] > 0,
    "signal_storm": lambda d: d["sent"] >= 1024 and d["handled"] == d["sent"]
        and d["signal"] == 10,
    "udp_sender": lambda d: d["datagrams"] > 10 and d["size"] == 1000
        and d["bytes"] == 1000 * d["datagrams"] and 0 < d["port"] < 65536
        and 0 < d["received"] <= d["datagrams"],
    "lock_contention": lambda d: d["threads"] == 3 and d["ops"] >= 3 * 64
        and d["ops"] % 64 == 0,
    # 64 MiB/s for 1 s, kept: pages touched == bytes held, held grows
    "mem_leak": lambda d: d["rate_mib"] == 64 and d["held"] >= 32 << 20
        and d["pages"] * d["page_size"] == d["held"],
    "lib_loop": lambda d: d["scans"] >= 1024 and d["scans"] % 1024 == 0
        and d["found"] == 0,
}
for name, ok in checks.items():
    d = load(name)
    assert ok(d), d
one = json.loads(open(os.path.join(tmp, "page_toucher1.json")).read())
assert one["threads"] == 1 and one["maps"] >= 1, one
given = json.loads(open(os.path.join(tmp, "fsync_dir.json")).read())
assert given["dir"] == tmp, given
assert not [f for f in os.listdir(tmp) if f.startswith("vitals-fsync")], "file left"
d = load("fsync_writer")
assert d["dir"].startswith("/var/tmp/vitals-fsync."), d
assert not os.path.exists(d["dir"]), "temporary directory left: " + d["dir"]
EOP

# busy_loop is a text symbol with a size: nm -S gives its PC range.
nm -S "$W/busy" >"$TMP/busy.nm" 2>&1 || fail "nm busy"
assert_grep '^[0-9a-f]+ [0-9a-f]+ T busy_loop$' "$TMP/busy.nm"

# Bad arguments: a message and exit 2.
bad() { # EXPECTED-REGEX PROGRAM ARGS...
	re=$1
	shift
	st=0
	"$W/$@" >"$TMP/bad.out" 2>&1 || st=$?
	[ "$st" -eq 2 ] || { cat "$TMP/bad.out"; fail "$*: exit $st, expected 2"; }
	assert_grep "$re" "$TMP/bad.out"
}
bad "bad duration 'soon'" busy soon
bad "bad duration '-1'" syscall_loop -1
bad "bad SIZE '0'" udp_sender 1 0
bad "bad PORT '70000'" udp_sender 1 100 70000
bad "bad THREADS 'x'" lock_contention 1 x
bad "bad THREADS '0'" page_toucher 1 0
bad "bad MAPS '0'" page_toucher 1 1 0
bad "bad clock 'wall'" busy 1 wall
bad "bad CALLS '-5'" syscall_loop 1 -5
bad "bad SWITCHES 'x'" runq 1 x
bad "bad RATE_MIB '0'" mem_leak 1 0
"$W/page_toucher" --help | grep -q '^usage: .*page_toucher \[SECONDS \[THREADS \[MAPS\]\]\]' || fail "--help"
echo "PASS: 11 workloads run 1 s each and report plausible counts"
