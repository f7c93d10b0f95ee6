# SPDX-License-Identifier: MIT
# Helpers for the diskio/kmem/umem probe tests (sourced after lib.sh):
# a daemon run in the background (need_probe and workload are in lib.sh)
# and the stored epochs as JSON.

# Processes a test started in the background: ended on any exit, so a
# failing test leaves no daemon or perf behind.
IOMEM_PIDS=
trap 'for p in $IOMEM_PIDS; do kill -CONT "$p"; kill "$p"; done 2>/dev/null; wait; rm -rf "$TMP"' EXIT

# iomem_bg PID: end PID when the test exits.
iomem_bg() {
	IOMEM_PIDS="$IOMEM_PIDS $1"
}

# iomem_reaped PID: PID was waited for (its number may be reused): forget it.
iomem_reaped() {
	IOMEM_PIDS=$(for p in $IOMEM_PIDS; do [ "$p" = "$1" ] || echo "$p"; done)
}

# iomem_start CONF: start vitalsd on CONF in the background (pid in
# DAEMON) and return once its probes are attached.
iomem_start() {
	: >"$TMP/vitalsd.out"
	"$VITALSD" -c "$1" >>"$TMP/vitalsd.out" 2>&1 &
	DAEMON=$!
	iomem_bg "$DAEMON"
	i=0
	while ! grep -q 'started' "$TMP/vitalsd.out"; do
		kill -0 "$DAEMON" 2>/dev/null || { cat "$TMP/vitalsd.out" >&2; fail "vitalsd exited at start"; }
		i=$((i + 1))
		[ "$i" -lt 300 ] || { kill "$DAEMON"; fail "vitalsd did not start in 30 s"; }
		sleep 0.1
	done
}

# iomem_stop: SIGTERM (the partial epoch is written), wait, check exit 0.
iomem_stop() {
	kill -TERM "$DAEMON"
	st=0
	wait "$DAEMON" || st=$?
	iomem_reaped "$DAEMON"
	[ "$st" -eq 0 ] || { cat "$TMP/vitalsd.out" >&2; fail "vitalsd exited $st"; }
}

# iomem_epochs DIR OUT: every stored epoch of DIR, as `vitals show --json`
# prints it, one JSON document per line of OUT.
iomem_epochs() {
	n=$(count_epochs "$1")
	[ "$n" -gt 0 ] || fail "no epoch stored in $1"
	: >"$2"
	i=0
	while [ "$i" -lt "$n" ]; do
		"$VITALS" --data-dir "$1" show "$i" --json | tr -d '\n' >>"$2" ||
			fail "vitals show $i --json"
		echo >>"$2"
		i=$((i + 1))
	done
}
