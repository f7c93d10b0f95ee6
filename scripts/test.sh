#!/bin/sh
# SPDX-License-Identifier: MIT
# Install missing Debian packages, build, run the whole test suite, check
# that the distribution tarball builds and passes its tests (make
# distcheck), then run the suite once more while stress-ng loads every CPU:
# no test may depend on how fast the machine is.
#   scripts/test.sh            all of the above
#   scripts/test.sh --quick    build and make check only
set -eu
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
sh scripts/build.sh

# check [MAKE-ARGS]: make check, with the failing tests' logs on failure.
check() {
	if ! make -j"$(nproc)" check "$@"; then
		for f in $(grep -l '^:test-result: \(FAIL\|ERROR\)' tests/*.trs 2>/dev/null); do
			echo "==> ${f%.trs}.log"
			cat "${f%.trs}.log"
		done
		return 1
	fi
}

check
# Show each test's own output (coverage figures, skips with their reasons).
for f in tests/*.log; do
	echo "==> $f"
	cat "$f"
done
[ "$quick" -eq 1 ] && exit 0
make -j"$(nproc)" distcheck

# The suite again under load, one CPU hog per CPU (a busy laptop);
# stress-ng also stops by itself after 30 minutes.
echo "==> make check while stress-ng --cpu $(nproc) loads the machine"
stress-ng --cpu "$(nproc)" --timeout 1800 --quiet &
hog=$!
rc=0
check || rc=$?
kill "$hog" 2>/dev/null || true
wait "$hog" 2>/dev/null || true
exit "$rc"
