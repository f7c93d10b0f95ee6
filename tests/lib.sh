# SPDX-License-Identifier: MIT
# Shared helpers for the shell tests: paths, a temp dir, a config writer,
# and assertions that print what failed.  Sourced, not run.

: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"
VITALSD="$top_builddir/core/vitalsd"
VITALS="$top_builddir/core/vitals"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/vitals-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

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
	line=$("$VITALSD" --list-plugins 2>/dev/null | awk -v n="$1" '$1 == n')
	[ -n "$line" ] || fail "probe $1 not built"
	echo "$line" | awk '{ exit $4 == "yes" ? 0 : 1 }' ||
		skip "probe $1 unavailable here: $(echo "$line" | cut -c 34-)"
}

# workload NAME: path of a built workload program (compiled into $TMP
# from tests/workloads when the build tree has none).
workload() {
	w="$top_builddir/tests/workloads/$1"
	if [ ! -x "$w" ]; then
		w="$TMP/$1"
		${CC:-cc} -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -fno-inline -pthread \
			-I"$top_srcdir/tests/workloads" -o "$w" \
			"$top_srcdir/tests/workloads/$1.c" \
			"$top_srcdir/tests/workloads/wl.c" || fail "cannot build workload $1"
	fi
	echo "$w"
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
