#!/bin/sh
# SPDX-License-Identifier: MIT
# The page in a real browser: headless Chromium (tests/browser.py, over the
# DevTools protocol) opens the page a running vitalsd serves (synthetic
# probe, store, http), over two hours of history written by bench/mkstore
# for the same host (with its injected anomalies) and the epochs the daemon
# adds: the chart, zoom, an epoch's stacks, the flame graph, the two-range
# comparison, the time box, and no console error.  Screenshots are kept in
# tests/web-shots/ of the build tree.
. "$top_srcdir/tests/lib.sh"
command -v curl >/dev/null 2>&1 || skip "curl missing (Debian curl)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip "chromium missing (Debian chromium)"
[ -e "$top_builddir/outputs/http.la" ] || skip "the http output is not built"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
now=$(date +%s)
"$top_builddir/bench/mkstore" --out "$TMP/data" --span 2h --epoch 60s \
	--host webtest --start $((now - 7200)) --quiet >"$TMP/mkstore.out" 2>&1 ||
	{ cat "$TMP/mkstore.out" >&2; fail "bench/mkstore"; }
cat >"$TMP/vitals.yaml" <<EOF
epoch: 2s
host: webtest
data_dir: $TMP/data
probes:
  synthetic: {vitals: [cpu, sched, diskio], rate: 500}
filters:
  ewma: {}
  diff: {}
plugins:
  store: {}
  http: {listen: "127.0.0.1:$port", web_dir: "$top_srcdir/web"}
EOF
"$VITALSD" -c "$TMP/vitals.yaml" >"$TMP/vitalsd.log" 2>&1 &
vpid=$!
trap 'kill $vpid 2>/dev/null; wait $vpid 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/v1/hosts")" = 200 ]; do
	i=$((i + 1))
	[ "$i" -lt 200 ] || { cat "$TMP/vitalsd.log" >&2; fail "the http output does not answer"; }
	kill -0 "$vpid" 2>/dev/null || { cat "$TMP/vitalsd.log" >&2; fail "vitalsd exited"; }
	sleep 0.1
done
# Two of the daemon's own epochs, so the newest data is live.
i=0
while [ "$(count_epochs "$TMP/data")" -lt 123 ]; do
	i=$((i + 1))
	[ "$i" -lt 600 ] || fail "vitalsd stored no epochs"
	sleep 0.1
done

shots="$top_builddir/tests/web-shots"
rm -rf "$shots"
mkdir -p "$shots"
st=0
python3 "$top_srcdir/tests/browser.py" "http://127.0.0.1:$port/" "$shots" || st=$?
[ "$st" -eq 77 ] && skip "chromium cannot run here"
[ "$st" -eq 0 ] || { tail -20 "$TMP/vitalsd.log" >&2; fail "the page failed in the browser (screenshots in $shots)"; }
kill -0 "$vpid" 2>/dev/null || fail "vitalsd died while the page was used"
echo "screenshots: $shots"
