# SPDX-License-Identifier: MIT
# Shared helpers for the shell tests: paths, a temp dir, a config writer,
# and assertions that print what failed.  Sourced, not run.

: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
VITALSD="$top_builddir/daemon/vitalsd"
VITALS="$top_builddir/cli/vitals"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/vitals-test.XXXXXX")
# A daemon left by a failing test (daemon_start) is ended, stopped or not.
DAEMON=
trap '[ -z "$DAEMON" ] || { kill -CONT "$DAEMON"; kill "$DAEMON"; } 2>/dev/null; rm -rf "$TMP"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# assert_grep PATTERN FILE: FILE must contain PATTERN (extended regex).
assert_grep() {
	grep -Eq -- "$1" "$2" || { echo "--- $2:" >&2; cat "$2" >&2; fail "no /$1/ in $2"; }
}

# count_epochs DIR: number of epoch files stored under DIR.
count_epochs() {
	find "$1" -name '*.json.gz' ! -name '.*' | wc -l
}

# need_probe NAME: skip unless running as root and probe NAME can run here.
need_probe() {
	[ "$(id -u)" -eq 0 ] || skip "probe $1 needs root (BPF)"
	"$VITALSD" --list-plugins --json >"$TMP/plugins.json" 2>"$TMP/plugins.err" ||
		{ cat "$TMP/plugins.err" >&2; fail "--list-plugins --json"; }
	why=$(python3 -c 'import json, sys
p = [p for p in json.load(open(sys.argv[1])) if p["name"] == sys.argv[2]]
print("not built" if not p else "" if p[0]["available"] is True
      else p[0].get("why") or "unavailable")' "$TMP/plugins.json" "$1")
	[ "$why" != "not built" ] || fail "probe $1 not built"
	[ -z "$why" ] || skip "probe $1 unavailable here: $why"
}

# workload NAME: path of a built workload program: from $VITALS_WORKLOADS
# or the build tree, else compiled into $TMP from tests/workloads.  Returns
# 1 (with the compiler's messages) if it cannot be had.
workload() {
	for d in ${VITALS_WORKLOADS:-} "$top_builddir/tests/workloads"; do
		[ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	src="$top_srcdir/tests/workloads"
	${CC:-cc} -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -fno-inline \
		-pthread -I"$src" -o "$TMP/$1" "$src/$1.c" "$src/wl.c" -lm \
		>"$TMP/cc-$1.out" 2>&1 || { cat "$TMP/cc-$1.out" >&2; return 1; }
	echo "$TMP/$1"
}

# workload_copy NAME COPY: workload NAME copied to $TMP/COPY, a name of the
# test's own for a probe's comm filter.  End COPY in _ (after the pid): then
# no longer name, another test's pid, has it as prefix.
workload_copy() {
	w=$(workload "$1") && [ -x "$w" ] || fail "no $1 workload"
	cp "$w" "$TMP/$2" || fail "cannot copy $1"
}

# probe_config NAME EPOCH [YAML]: a config with only probe NAME and the store.
probe_config() {
	printf 'epoch: %s\ndata_dir: %s/data\nlog_level: info\nprobes:\n  %s: {%s}\nplugins:\n  store: {}\n' \
		"$2" "$TMP" "$1" "${3:-}" > "$TMP/$1.yaml"
	mkdir -p "$TMP/data"
	echo "$TMP/$1.yaml"
}

# epochs_json: every stored epoch as one JSON file each, printed paths.
epochs_json() {
	n=$(count_epochs "$TMP/data")
	i=0
	while [ "$i" -lt "$n" ]; do
		"$VITALS" --data-dir "$TMP/data" show "$i" --json > "$TMP/e$i.json" ||
			fail "cannot read epoch $i"
		echo "$TMP/e$i.json"
		i=$((i + 1))
	done
}

# daemon_start CONF: run vitalsd on CONF in the background (pid in DAEMON,
# log in $TMP/daemon.log) and return once its probes are attached, however
# long that takes on a busy machine (a fixed sleep may be too short).
daemon_start() {
	# Emptied here, not by the daemon's redirection, which may come after
	# the first grep below: that would find the last daemon's 'started'.
	: >"$TMP/daemon.log"
	"$VITALSD" -c "$1" >>"$TMP/daemon.log" 2>&1 &
	DAEMON=$!
	i=0
	until grep -q 'started' "$TMP/daemon.log"; do
		kill -0 "$DAEMON" 2>/dev/null || { cat "$TMP/daemon.log" >&2; fail "vitalsd did not start"; }
		i=$((i + 1))
		[ "$i" -lt 1200 ] || { kill "$DAEMON"; fail "vitalsd did not start in 120 s"; }
		sleep 0.1
	done
}

# daemon_stop: SIGTERM, which writes the open epoch (partial) and exits 0.
# The tests end a daemon so, after their workload, rather than by
# --epochs: a workload that runs long on a busy machine stays inside.
daemon_stop() {
	kill -TERM "$DAEMON"
	st=0
	wait "$DAEMON" || st=$?
	DAEMON=
	[ "$st" -eq 0 ] || { cat "$TMP/daemon.log" >&2; fail "vitalsd failed ($st)"; }
}

# daemon_cpu_ns: the CPU time vitalsd has used so far (all its threads,
# /proc/PID/stat), in ns; at most two clock ticks under the truth.
daemon_cpu_ns() {
	python3 -c 'import os, sys
f = open("/proc/%s/stat" % sys.argv[1]).read().rsplit(")", 1)[1].split()
print((int(f[11]) + int(f[12])) * 10**9 // os.sysconf("SC_CLK_TCK"))' "$DAEMON"
}
