#!/bin/sh
# SPDX-License-Identifier: MIT
# The default configuration as an unprivileged user: vitalsd starts, says
# once per kernel probe why it is skipped, and stores epochs from the rest.
. "$top_srcdir/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to switch to an unprivileged user"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) missing"
mkdir -p "$TMP/data"
chmod 755 "$TMP"
chown nobody "$TMP/data"
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	env VITALS_PLUGIN_PATH="$VITALS_PLUGIN_PATH" "$VITALSD" --list-plugins \
	>/dev/null 2>&1 || skip "the build tree is not readable by user nobody"
sed -e 's/^epoch: .*/epoch: 1s/' "$top_srcdir/conf/vitals.yaml" > "$TMP/conf.yaml"
chmod 644 "$TMP/conf.yaml"
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	env VITALS_PLUGIN_PATH="$VITALS_PLUGIN_PATH" \
	"$VITALSD" -c "$TMP/conf.yaml" --data-dir "$TMP/data" -n 4 \
	> "$TMP/out" 2> "$TMP/log" || { cat "$TMP/log" >&2; fail "vitalsd failed as nobody"; }
cat "$TMP/log" >&2
for p in cpu syscall; do
	n=$(grep -c "probe '$p' unavailable here: not root" "$TMP/log")
	[ "$n" -eq 1 ] || fail "probe $p: $n warnings, want exactly one"
done
[ "$(count_epochs "$TMP/data")" -ge 2 ] || fail "no epochs stored as nobody"
# The first epoch starts mid-second, and a rate needs two reads of /proc, so
# the rates show in a later epoch, not necessarily the second, nor (on a
# busy machine, where a read may fall after a boundary) the last: any.
python3 -c 'import json, sys
m = [json.load(open(f)).get("metrics", {}) for f in sys.argv[1:]]
assert any("proc.cpu.user_pct" in x for x in m), "no proc metrics"' $(epochs_json) ||
	fail "proc metrics missing from the unprivileged run"
