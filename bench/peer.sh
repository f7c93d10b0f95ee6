#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark of the peer filter's central analysis for 10, 100 and 1000
# simulated hosts: bench/mkstore --hosts N --proc writes 100 minutes of
# 60 s epochs per host (one host with a slow disk, one with a cut network
# from the middle on; kept in bench/store-peer-N for the next run), then
# bench/peer reads them slot by slot, once with the filter left out (the
# baseline: ingest alone) and once feeding the peer filter, and prints
# ingest (epochs/s), the filter's time per slot and the peak RSS of each.
# PEER_HOSTS="10 100" picks the sizes; PEER_OPTION=max_peers=64 passes one
# option to the filter.  Asserts nothing.
set -eu

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
MKSTORE="$top_builddir/bench/mkstore"
PEER="$top_builddir/bench/peer"
START=1794996000 # 2026-11-18T10:00:00Z
: "${VITALS_PLUGIN_PATH:=$top_builddir/filters}"
export VITALS_PLUGIN_PATH
say() { echo "bench/peer: $*"; }

for n in ${PEER_HOSTS:-10 100 1000}; do
	store="$top_builddir/bench/store-peer-$n"
	if ! grep -q "\"epochs\": 100," "$store/manifest.json" 2>/dev/null ||
		[ "$(grep -c '"node-' "$store/manifest.json")" -lt 3 ]; then
		rm -rf "$store"
		say "writing 100 epochs of $n hosts into $store ..."
		"$MKSTORE" --out "$store" --hosts "$n" --span 100m --start $START \
			--proc --clean --vitals cpu,sched --rate 2 --labels 16 \
			--max-samples 16 --disk-fault 2 --net-fault 3 --quiet
	fi
	say "$n hosts"
	# Both runs read from the page cache, not the first from the disk.
	find "$store" -type f -exec cat {} + >/dev/null
	"$PEER" "$store" off
	"$PEER" "$store" on ${PEER_OPTION:-}
done
