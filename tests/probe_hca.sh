#!/bin/sh
# SPDX-License-Identifier: MIT
# The kernel sketch's HCA follows the labels: udp_peers sends to 5000
# peers (socket labels) in every quarter second for 7 s under 1 s epochs;
# the socket vital's HCA starts at 128 counters, is larger in the epochs
# after the first full one and never above hca_max, in the epochs at the
# larger size nearly every peer has a sample (a first sighting each), and
# once the peers are quiet it shrinks after 4 idle epochs, not before.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/probe_run.sh"

command -v perf >/dev/null 2>&1 || skip "perf not installed (apt-get install linux-perf)"
need_probe socket
PEERS=$(workload udp_peers) || fail "cannot build workload udp_peers"

cat >"$TMP/conf.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
sketch:
  hca_size: 128
  max_samples: 100000
  sample_memory: 0
probes:
  socket: { ringbuf: 8M }
plugins:
  store: {}
EOC
run_probe "-e sock:sock_send_length" sh -c "'$PEERS' 7 5000 250 && sleep 6"
cat "$TMP/wl.json"
python3 "$top_srcdir/tests/hca_cover.py" "$TMP" >"$TMP/cover.txt" ||
	fail "cannot read the epochs"
cat "$TMP/cover.txt"
python3 - "$TMP/cover.txt" <<'PY' || fail "the socket vital's HCA did not follow the labels"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sizes, cov = r["sizes"], r["coverage"]
if len(sizes) < 4:
    sys.exit("only %d full epochs" % len(sizes))
if max(sizes) > 16384:
    sys.exit("HCA of %d counters, above hca_max" % max(sizes))
if sizes[-1] < 8192:
    sys.exit("HCA of %d counters for 5000 labels" % sizes[-1])
grown = [c for m, c in zip(sizes, cov) if m >= 8192]
if min(grown) < 0.99:
    sys.exit("coverage %.4f in an epoch at 8192 counters or more" % min(grown))
after = r["after"]
if len(after) < 5 or after[:3] != [sizes[-1]] * 3 or min(after) >= sizes[-1]:
    sys.exit("after the workload: HCA sizes %s (held 3 epochs, then smaller?)" % after)
PY
