#!/bin/sh
# SPDX-License-Identifier: MIT
# The page's fleet view over 100 hosts of two hours of 60 s epochs (120
# slots each; bench/mkstore --hosts 100, one of them odd, cpu only at a
# low rate so the store is quick to write), served by `vitals serve`: the
# size and time of the api/v1/fleet answer (and of series, for the same
# data), then the time the browser takes to draw the view
# (bench/web_fleet.py).  Prints; asserts nothing.  Needs chromium.
#   top_builddir=BUILD sh bench/web_fleet.sh [ROUNDS] [HOSTS]
set -eu
: "${top_builddir:=.}"
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-5}
hosts=${2:-100}
tmp=$(mktemp -d)
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; rm -rf "$tmp"' EXIT
spid=
now=$(date +%s)
start=$((now / 3600 * 3600 - 7200))
"$top_builddir/bench/mkstore" --out "$tmp/data" --span 2h --epoch 60s --hosts "$hosts" \
	--vitals cpu --rate 20 --odd node-7=1.5 --start "$start" --quiet
printf 'epoch: 60s\nfilters:\n  ewma: {}\n' >"$tmp/vitals.yaml"
: "${VITALS_PLUGIN_PATH:=$top_builddir/filters}"
export VITALS_PLUGIN_PATH
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$top_builddir/cli/vitals" -d "$tmp/data" -c "$tmp/vitals.yaml" serve --listen "127.0.0.1:$port" \
	--web-dir "$here/../web" >"$tmp/serve.log" 2>&1 &
spid=$!
until curl -s -o /dev/null "http://127.0.0.1:$port/api/v1/hosts"; do sleep 0.1; done
grep -m1 'model name' /proc/cpuinfo || true
u="http://127.0.0.1:$port/api/v1"
q="from=@$start&to=@$((start + 7200))&vital=cpu"
echo "== $hosts hosts x 120 slots: the answers (the first with the range query's cache cold)"
for p in "fleet?$q" "fleet?$q" "series?$q&top=0" "findings?from=@$start&to=@$((start + 7200))"; do
	curl -s -o /dev/null -w "${p%%\?*}: %{size_download} bytes in %{time_total} s\n" "$u/$p"
done
echo "== the fleet view in Chromium"
python3 "$here/web_fleet.py" "http://127.0.0.1:$port/" "@$start" "@$((start + 7200))" "$rounds"
