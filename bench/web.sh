#!/bin/sh
# SPDX-License-Identifier: MIT
# The page on a day of 60 s epochs (1440, bench/mkstore) served by
# `vitals serve`: the time the browser takes to draw the day's chart
# (bench/web_draw.py), and, as the baseline in the same run, an hour of
# the same store.  Prints; asserts nothing.  Needs chromium.
#   top_builddir=BUILD sh bench/web.sh [ROUNDS]
set -eu
: "${top_builddir:=.}"
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-5}
tmp=$(mktemp -d)
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; rm -rf "$tmp"' EXIT
spid=
now=$(date +%s)
start=$((now / 86400 * 86400 - 86400))
"$top_builddir/bench/mkstore" --out "$tmp/data" --days 1 --epoch 60s \
	--host bench --start "$start" --quiet
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$top_builddir/cli/vitals" -d "$tmp/data" serve --listen "127.0.0.1:$port" \
	--web-dir "$here/../web" >"$tmp/serve.log" 2>&1 &
spid=$!
until curl -s -o /dev/null "http://127.0.0.1:$port/api/v1/hosts"; do sleep 0.1; done
grep -m1 'model name' /proc/cpuinfo || true
echo "== an hour of 60 s epochs (60 slots)"
python3 "$here/web_draw.py" "http://127.0.0.1:$port/" "@$((start + 43200))" "@$((start + 46800))" "$rounds"
echo "== a day of 60 s epochs (1440 slots)"
python3 "$here/web_draw.py" "http://127.0.0.1:$port/" "@$start" "@$((start + 86400))" "$rounds"
