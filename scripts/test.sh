#!/bin/sh
# SPDX-License-Identifier: MIT
# Install missing Debian packages, build, run the whole test suite, then
# the findings test alone on the quiet machine (make check-calm), the
# package under systemd in a container (make check-systemd), check
# that the distribution tarball builds out of tree and installs (make
# distcheck), run each fuzz target briefly, run the suite of that tarball
# built with ASan and UBSan, then run the suite once more while stress-ng
# loads every CPU: no test may depend on how fast the machine is.
#   scripts/test.sh            all of the above
#   scripts/test.sh --quick    build and make check only
set -eu
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
sh scripts/build.sh
# The sources as .clang-format lays them out (scripts/format.sh rewrites).
make check-format

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

# tests/package.sh leaves its packages here for tests/systemd.sh.
VITALS_DEB_DIR=$(mktemp -d)
export VITALS_DEB_DIR
check
# Show each test's own output (coverage figures, skips with their reasons).
for f in tests/*.log; do
	echo "==> $f"
	cat "$f"
done
[ "$quick" -eq 1 ] && exit 0
# Calm epochs and the fault workloads (doc/findings.md): alone, while
# nothing else runs, before anything loads the machine.
echo "==> make check-calm"
make check-calm
# The package under real systemd, in a Debian 12 container.
echo "==> make check-systemd"
make check-systemd
rm -rf "$VITALS_DEB_DIR"
unset VITALS_DEB_DIR
# The tarball builds out of tree, with its test programs, and installs;
# TESTS= leaves its suite run to the ASan build below, which runs every
# test from the same tarball (a fifth run of the suite took 6 minutes).
make -j"$(nproc)" distcheck TESTS=

# unpack: a fresh copy of the distributed tree in a new directory,
# printed.
unpack() {
	d=$(mktemp -d)
	tar -xzf "$(ls -t vitals-*.tar.gz | head -1)" -C "$d"
	echo "$d"
}

# The fuzz targets, a few seconds each (a smoke run), built with clang
# from the distributed tree: this tree's in-place build cannot take a
# second configuration.
if command -v clang >/dev/null 2>&1; then
	echo "==> make fuzz (10 s per target)"
	fz=$(unpack)
	(cd "$fz"/vitals-* && ./configure -q CC=clang --enable-fuzz \
		--prefix=/usr/local --sysconfdir=/etc --localstatedir=/var &&
		make -j"$(nproc)" fuzz FUZZ_SECONDS=10)
	rm -rf "$fz"
fi

# The suite built with AddressSanitizer and UBSan (doc/testing.md): a
# report fails the test it happens in.
echo "==> make check built with --enable-asan"
as=$(unpack)
(cd "$as"/vitals-* && ./configure -q --enable-asan \
	--prefix=/usr/local --sysconfdir=/etc --localstatedir=/var &&
	make -j"$(nproc)" && check)
rm -rf "$as"

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
