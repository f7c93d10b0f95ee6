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
