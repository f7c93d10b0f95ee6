#!/bin/sh
# SPDX-License-Identifier: MIT
# The data dir's file system fills up under a running daemon (a real
# tmpfs of 1 MiB, filled by a file): the epochs the store cannot write are
# held in memory and written as soon as there is room again, so the store
# has every epoch, one per second without a gap; an epoch larger than the
# backlog, or still held when the daemon stops, is lost with an error
# that says so, and vitalsd exits 1.  Needs root to mount the file system.
: "${top_srcdir:?run through make check}"
. "$top_srcdir/tests/lib.sh"

: "${VITALS_PLUGIN_PATH:=$top_builddir/probes:$top_builddir/plugins}"
export VITALS_PLUGIN_PATH
[ "$(id -u)" -eq 0 ] || skip "mounting a small file system needs root"
command -v python3 >/dev/null || skip "python3 is needed to check the names"
FS="$TMP/fs"
mkdir -p "$FS"
mount -t tmpfs -o size=1m vitals-test "$FS" 2>"$TMP/mount.err" ||
	skip "cannot mount a tmpfs: $(cat "$TMP/mount.err")"
DAEMON=
trap '[ -n "$DAEMON" ] && kill -9 "$DAEMON" 2>/dev/null; umount "$FS"; rm -rf "$TMP"' EXIT

# conf NAME STORE-OPTIONS: a 1 s epoch config storing on the small fs.
conf() {
	cat >"$TMP/$1.yaml" <<EOC
epoch: 1s
data_dir: $FS/$1
host: full
probes:
  synthetic: { vitals: [cpu], rate: 200, labels: 20 }
plugins:
  store: { $2 }
EOC
}

# wait_for FILE PATTERN SECONDS: until FILE has PATTERN, or fail.
wait_for() {
	i=0
	while ! grep -Eq -- "$2" "$1"; do
		i=$((i + 1))
		[ "$i" -le $(($3 * 10)) ] || { cat "$1" >&2; fail "no /$2/ in $1 after $3 s"; }
		sleep 0.1
	done
}

# wait_epochs DIR N SECONDS: until DIR holds at least N epochs, or fail.
wait_epochs() {
	i=0
	while [ ! -d "$1" ] || [ "$(count_epochs "$1")" -lt "$2" ]; do
		i=$((i + 1))
		[ "$i" -le $(($3 * 10)) ] || fail "fewer than $2 epochs in $1 after $3 s"
		sleep 0.1
	done
}

# fill: take every free byte of the file system.
fill() {
	dd if=/dev/zero of="$FS/fill" bs=4k 2>/dev/null
	[ "$(df --output=avail -k "$FS" | tail -1)" -eq 0 ] || fail "the file system is not full"
}

# contiguous DIR: the epoch files' starts step by one second, no gap
# (after the first, which starts with the daemon).
contiguous() {
	python3 - "$1" <<'EOP' || fail "epochs missing in $1"
import datetime, os, sys
starts = []
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        if f.endswith(".json.gz") and not f.startswith("."):
            starts.append(datetime.datetime.strptime(f.split("_")[0], "%Y%m%dT%H%M%S.%fZ"))
starts.sort()
starts = starts[1:]  # the first epoch starts with the daemon
gaps = [str(b) for a, b in zip(starts, starts[1:]) if (b - a).total_seconds() != 1]
assert len(starts) >= 6, starts
assert not gaps, "gap before " + ", ".join(gaps)
print(len(starts), "epochs, one per second")
EOP
}

# run_full NAME STORE-OPTIONS EPOCHS: start the daemon with conf NAME,
# wait for EPOCHS stored, then fill the file system.
run_full() {
	conf "$1" "$2"
	"$VITALSD" -c "$TMP/$1.yaml" 2>"$TMP/$1.err" &
	DAEMON=$!
	wait_epochs "$FS/$1" "$3" 10
	fill
}

# stop_daemon: SIGINT, and its exit status.
stop_daemon() {
	kill -INT "$DAEMON"
	wait "$DAEMON"
	rc=$?
	DAEMON=
	return $rc
}

# ---- full, then room again: nothing lost ----
run_full held "" 2
wait_for "$TMP/held.err" "epoch not saved: .*No space left on device; holding epochs in memory" 5
before=$(count_epochs "$FS/held")
sleep 3
[ "$(count_epochs "$FS/held")" -eq "$before" ] || fail "epochs were written to a full file system"
rm -f "$FS/fill"
wait_for "$TMP/held.err" "wrote [0-9]+ epochs held in memory since" 5
stop_daemon || { cat "$TMP/held.err"; fail "vitalsd did not exit 0"; }
! grep -q "lost" "$TMP/held.err" || { cat "$TMP/held.err"; fail "an epoch was lost"; }
contiguous "$FS/held"
"$VITALS" --data-dir "$FS/held" show --last >"$TMP/show.out" || fail "vitals show --last"
assert_grep '^cpu' "$TMP/show.out"
rm -rf "$FS/held"

# ---- still full at the stop: the held epochs are lost, and it says so ----
run_full stop "" 1
wait_for "$TMP/stop.err" "holding epochs in memory" 5
sleep 1
stop_daemon && fail "vitalsd exited 0 after losing epochs"
assert_grep "[0-9]+ epochs? from [0-9T:-]+Z on lost: they could not be written before the store stopped: .*No space left on device" "$TMP/stop.err"
rm -f "$FS/fill"
rm -rf "$FS/stop"

# ---- a backlog too small for one epoch: each lost, each said, exit 1 ----
run_full small "backlog: 16" 1
wait_for "$TMP/small.err" "epoch of [0-9T:-]+Z lost: its [0-9]+ bytes exceed the backlog \(16\)" 5
stop_daemon && { cat "$TMP/small.err"; fail "vitalsd exited 0 after losing epochs"; }
assert_grep "epoch writes? failed: epochs were lost" "$TMP/small.err"
rm -f "$FS/fill"

# The option is checked like any other.
conf bad "backlog: lots"
"$VITALSD" -c "$TMP/bad.yaml" --check-config >"$TMP/bad.out" 2>&1 && fail "backlog: lots accepted"
assert_grep "bad.yaml:7:[0-9]+: option .backlog.: expected a size" "$TMP/bad.out"
echo "PASS: epochs held while the disk is full are written once it is not"
