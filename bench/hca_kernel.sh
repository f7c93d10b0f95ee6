#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/hca_kernel.sh: the kernel sketch's coverage against a known label
# set.  tests/workloads/udp_peers sends to PEERS peers (socket labels,
# every one in every round of ROUND ms) while vitalsd counts them with
# the socket probe, with a fixed 1024-counter HCA, the adaptive one (the
# defaults) and one that may grow to 65536, for each PEERS; prints per
# epoch the HCA size and the share of peers with a sample
# (tests/hca_cover.py).  Needs root and a built tree; prints, asserts
# nothing.
#
#   bench/hca_kernel.sh [--seconds S] [--epoch S] [PEERS[:ROUND_MS]]...
#
# Defaults: 10 s runs, 2 s epochs, peers 1000:250 10000:500 100000:1000.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
top=${top_builddir:-$src}
cd "$top" || exit 1
secs=10 epoch=2 sets=
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) secs=${2:?--seconds needs a value}; shift 2 ;;
	--epoch) epoch=${2:?--epoch needs a value}; shift 2 ;;
	-h|--help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	[0-9]*) sets="$sets $1"; shift ;;
	*) echo "hca_kernel: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
sets=${sets:-1000:250 10000:500 100000:1000}
[ "$(id -u)" -eq 0 ] || { echo "hca_kernel: needs root (BPF)" >&2; exit 2; }
for p in daemon/vitalsd cli/vitals tests/workloads/udp_peers; do
	[ -x "$p" ] || { echo "hca_kernel: $p is not built (make)" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vitals-hca.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export VITALS_PLUGIN_PATH="$top/probes:$top/filters:$top/outputs"
. "$src/bench/churn.sh" # churn_started

# run NAME PEERS ROUND SKETCH-YAML: one daemon over one workload run.
run() {
	rm -rf "$tmp/data" "$tmp"/e*.json
	cat >"$tmp/conf.yaml" <<EOC
epoch: ${epoch}s
data_dir: $tmp/data
sketch:
  max_samples: 1000000
  sample_memory: 0
$4
probes:
  socket: { ringbuf: 32M }
plugins:
  store: {}
EOC
	daemon/vitalsd -c "$tmp/conf.yaml" >"$tmp/vitalsd.log" 2>&1 &
	vpid=$!
	churn_started hca_kernel "$tmp/vitalsd.log" "$vpid"
	tests/workloads/udp_peers "$secs" "$2" "$3" >"$tmp/wl.json" ||
		{ kill -TERM "$vpid"; echo "hca_kernel: udp_peers failed" >&2; exit 1; }
	kill -TERM "$vpid"
	wait "$vpid"
	n=$(find "$tmp/data" -name '*.json.gz' ! -name '.*' | wc -l)
	i=0
	while [ "$i" -lt "$n" ]; do
		cli/vitals --data-dir "$tmp/data" show "$i" --json >"$tmp/e$i.json"
		i=$((i + 1))
	done
	echo "== $2 peers, rounds of $3 ms, $1"
	python3 "$src/tests/hca_cover.py" "$tmp" | grep -v '^[{a]'
}

for s in $sets; do
	peers=${s%%:*}
	round=250
	[ "$s" = "$peers" ] || round=${s#*:}
	run "fixed 1024" "$peers" "$round" "  hca_size: 1024
  hca_max: 1024"
	run "adaptive (defaults)" "$peers" "$round" ""
	run "adaptive, hca_max 65536" "$peers" "$round" "  hca_max: 65536
  hca_memory: 0"
done
