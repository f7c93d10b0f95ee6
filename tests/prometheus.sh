#!/bin/sh
# SPDX-License-Identifier: MIT
# A real Prometheus scrapes vitalsd's /metrics: the text passes
# `promtool check metrics`, and a series the daemon exported is queried
# back over Prometheus' own HTTP API.
. "$top_srcdir/tests/lib.sh"
command -v curl >/dev/null 2>&1 || skip "curl missing (Debian curl)"
command -v prometheus >/dev/null 2>&1 || skip "prometheus missing (Debian prometheus)"
command -v promtool >/dev/null 2>&1 || skip "promtool missing (Debian prometheus)"

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
pport=$(free_port)
cat >"$TMP/vitals.yaml" <<EOF
epoch: 1s
data_dir: $TMP/data
probes:
  synthetic: {vitals: [cpu, sched], rate: 500}
  proc: {}
plugins:
  store: {}
  http: {listen: "127.0.0.1:$port", web_dir: "$top_srcdir/web"}
EOF
mkdir -p "$TMP/data" "$TMP/prom"
"$VITALSD" -c "$TMP/vitals.yaml" >"$TMP/vitalsd.log" 2>&1 &
vpid=$!
ppid=
cleanup() {
	kill "$vpid" 2>/dev/null
	[ -z "$ppid" ] || kill "$ppid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# wait_for CMD...: retry CMD every half second, at most 120 times (a hang
# guard, not a timing assertion).
wait_for() {
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -lt 120 ] || return 1
		kill -0 "$vpid" 2>/dev/null || { cat "$TMP/vitalsd.log" >&2; fail "vitalsd exited"; }
		sleep 0.5
	done
}
has_events() {
	curl -sf "http://127.0.0.1:$port/metrics" | grep -q '^vitals_events_total{'
}
wait_for has_events || { cat "$TMP/vitalsd.log" >&2; fail "no vitals_events_total on /metrics"; }

curl -sf "http://127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "GET /metrics"
promtool check metrics <"$TMP/metrics.txt" >"$TMP/lint.out" 2>&1 ||
	{ cat "$TMP/lint.out" >&2; fail "promtool check metrics failed"; }
[ ! -s "$TMP/lint.out" ] || { cat "$TMP/lint.out" >&2; fail "promtool check metrics complained"; }

cat >"$TMP/prom.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: vitals
    static_configs:
      - targets: ["127.0.0.1:$port"]
EOF
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address="127.0.0.1:$pport" >"$TMP/prom.log" 2>&1 &
ppid=$!

# Prometheus has scraped vitalsd and stored the series.
query() {
	curl -sf "http://127.0.0.1:$pport/api/v1/query" \
		--data-urlencode "query=$1" >"$TMP/q.json" &&
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "success" and d["data"]["result"], d' "$TMP/q.json"
}
wait_for query 'vitals_events_total{vital="cpu"}' ||
	{ cat "$TMP/prom.log" >&2; cat "$TMP/q.json" >&2 2>/dev/null; fail "Prometheus has no vitals_events_total"; }
query 'up{job="vitals"} == 1' || fail "the vitals target is not up in Prometheus"
python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["data"]["result"]
assert r[0]["metric"]["job"] == "vitals", r' "$TMP/q.json" || fail "unexpected query result"
echo "prometheus scraped vitalsd: $(grep -c '^vitals_' "$TMP/metrics.txt") samples"
