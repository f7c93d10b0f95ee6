#!/bin/sh
# SPDX-License-Identifier: MIT
# The page's fleet view in a real browser: `vitals serve` over two hours of
# eight hosts written by bench/mkstore, one of them odd (--odd: its rates
# 1.6 times the others' and the injected anomalies); headless Chromium
# (tests/web_fleet.py over tests/browser.py) checks one row per host, the odd
# one first with its findings, and that a click on its row opens its epoch.
# Screenshots are kept in tests/web-fleet-shots/ of the build tree.
. "$top_srcdir/tests/lib.sh"
command -v curl >/dev/null 2>&1 || skip "curl missing (Debian curl)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip "chromium missing (Debian chromium)"
[ -e "$top_builddir/outputs/http.la" ] || skip "the http output is not built"

odd=node-5
hosts=8
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
now=$(date +%s)
"$top_builddir/bench/mkstore" --out "$TMP/data" --span 2h --epoch 60s --hosts $hosts \
	--rate 40 --odd "$odd=1.6" --start $((now - 7200)) --quiet >"$TMP/mkstore.out" 2>&1 ||
	{ cat "$TMP/mkstore.out" >&2; fail "bench/mkstore"; }
cat >"$TMP/vitals.yaml" <<EOF
epoch: 60s
data_dir: $TMP/data
filters:
  ewma: {}
EOF
"$VITALS" -c "$TMP/vitals.yaml" serve --listen "127.0.0.1:$port" --web-dir "$top_srcdir/web" \
	>"$TMP/serve.log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/v1/hosts")" = 200 ]; do
	i=$((i + 1))
	[ "$i" -lt 200 ] || { cat "$TMP/serve.log" >&2; fail "vitals serve does not answer"; }
	kill -0 "$spid" 2>/dev/null || { cat "$TMP/serve.log" >&2; fail "vitals serve exited"; }
	sleep 0.1
done

shots="$top_builddir/tests/web-fleet-shots"
rm -rf "$shots"
mkdir -p "$shots"
st=0
python3 "$top_srcdir/tests/web_fleet.py" "http://127.0.0.1:$port/" "$shots" "$odd" "$hosts" || st=$?
[ "$st" -eq 77 ] && skip "chromium cannot run here"
[ "$st" -eq 0 ] || { tail -20 "$TMP/serve.log" >&2; fail "the fleet view failed in the browser (screenshots in $shots)"; }
kill -0 "$spid" 2>/dev/null || fail "vitals serve died while the page was used"
echo "screenshots: $shots"
