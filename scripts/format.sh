#!/bin/sh
# SPDX-License-Identifier: MIT
# Format every tracked C source and header with clang-format and the
# committed .clang-format (OpenBSD style(9) as tmux uses it).
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  list the files that differ; exit 1 if any
# Tables laid out by hand stay so between /* clang-format off */ and
# /* clang-format on */.
set -eu
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*)
	echo "usage: scripts/format.sh [--check]" >&2
	exit 2
	;;
esac
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
	echo "format.sh: $CLANG_FORMAT not found (Debian package clang-format)" >&2
	exit 2
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "format.sh: not a git checkout: the files to format are git's" >&2
	exit 2
fi

if [ "$check" -eq 0 ]; then
	git ls-files -z '*.c' '*.h' | xargs -0 -r "$CLANG_FORMAT" -i
	exit 0
fi
bad=0
for f in $(git ls-files '*.c' '*.h'); do
	if ! "$CLANG_FORMAT" --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "$f"
		bad=1
	fi
done
if [ "$bad" -ne 0 ]; then
	echo "format.sh: the files above differ from .clang-format" \
	    "(scripts/format.sh rewrites them)" >&2
fi
exit "$bad"
