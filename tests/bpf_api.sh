#!/bin/sh
# SPDX-License-Identifier: MIT
# The probes' BPF programs use only the public BPF SDK: what
# <vitals/probe.bpf.h> lists (its opening comment), never the engine's
# vitals__* / VITALS__* internals, and include it, not the headers under it.
. "$top_srcdir/tests/lib.sh"

api="$top_srcdir/core/include/vitals/probe.bpf.h"
sed -n '1,/^ \*\//p' "$api" | grep -Eo '\b(vitals|VITALS)_[A-Za-z0-9_]+' |
	sort -u >"$TMP/public"
[ "$(wc -l <"$TMP/public")" -ge 20 ] || fail "no list of public names in $api"
for f in "$top_srcdir"/probes/*.bpf.c; do
	grep -Eq '^#include <vitals/probe\.bpf\.h>' "$f" ||
		fail "$f does not include <vitals/probe.bpf.h>"
	if grep -En '#include <vitals/(sketch|task)\.bpf\.h>|\b(vitals|VITALS)__' "$f"; then
		fail "$f names the engine's internals"
	fi
	# SDK names: vitals_bpf_*, vitals_hash_*, VITALS_BPF_*.
	grep -Eo '\b(vitals_bpf|vitals_hash|VITALS_BPF)_[A-Za-z0-9_]+' "$f" |
		sort -u >"$TMP/used"
	comm -23 "$TMP/used" "$TMP/public" >"$TMP/unlisted"
	[ -s "$TMP/unlisted" ] && { cat "$TMP/unlisted" >&2; fail "$f names SDK names <vitals/probe.bpf.h> does not list"; }
done
echo "PASS: the probes' programs name only the $(wc -l <"$TMP/public") public BPF SDK names"
