#!/bin/sh
# SPDX-License-Identifier: MIT
# Install missing Debian packages, build, run the whole test suite, and check
# that the distribution tarball builds and passes its tests (make distcheck).
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
if ! make -j"$(nproc)" check; then
	cat test-suite.log 2>/dev/null || true
	exit 1
fi
# Show each test's own output (coverage figures, skips with their reasons).
for f in tests/*.log; do
	echo "==> $f"
	cat "$f"
done
make -j"$(nproc)" distcheck
