#!/bin/sh
# SPDX-License-Identifier: MIT
# The http output on the real daemon (synthetic probe, 1 s epochs, store):
# every endpoint of doc/api.md (flame, diff and pprof included) answers
# with its documented fields; bad parameters are 400 naming the parameter,
# unknown paths 404, other methods 405, ranges over max_range 413; the
# page's files are served and nothing outside web_dir is; bad requests
# never take the daemon down; a reload keeps the address; under a load of
# range queries and flame graphs every epoch is still written on its
# boundary.  Then `vitals serve` over the same store answers the same, the
# token is asked for and checked, and a non-loopback address without one
# is refused.
: "${top_srcdir:?run through make check}"
. "$top_srcdir/tests/lib.sh"

command -v curl >/dev/null ||
	skip "curl not installed (scripts/setup-debian.sh installs it)"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
for f in "$VITALS" "$VITALSD" "$top_builddir/outputs/http.la"; do
	[ -e "$f" ] || skip "$f not built"
done

# A port nobody listens on (the kernel's pick, released at once).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# get NAME URL [CURL ARGS]: body in $TMP/NAME.out, status in $code.
get() {
	_name=$1 _url=$2
	shift 2
	code=$(curl -s -o "$TMP/$_name.out" -w '%{http_code}' "$@" "$_url") || code=000
}
# expect STATUS NAME URL [CURL ARGS]
expect() {
	want=$1
	shift
	get "$@"
	[ "$code" = "$want" ] || { cat "$TMP/$1.out" >&2; echo >&2; fail "$2: HTTP $code, expected $want"; }
}
# check NAME PYTHON: PYTHON (an expression of d, the JSON) must be true.
check() {
	python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
assert $2, d" "$TMP/$1.out" 2>"$TMP/check.err" ||
		{ head -c 2000 "$TMP/$1.out" >&2; echo >&2; tail -3 "$TMP/check.err" >&2; fail "$1: JSON not as documented: $2"; }
}
# bad PARAM NAME URL: a 400 whose JSON names PARAM.
bad() {
	expect 400 "$2" "$3"
	check "$2" "d['param'] == '$1' and d['error']"
}
# wait_up URL: until something answers at URL (20 s at most).
wait_up() {
	i=0
	until curl -s -o /dev/null "$1"; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || fail "nothing answers at $1"
		sleep 0.1
	done
}

# ---- refusals before anything runs ----
PORT=$(free_port)
printf 'plugins:\n  http: {listen: "0.0.0.0:%s"}\n' "$PORT" >"$TMP/open.yaml"
st=0
"$VITALSD" -c "$TMP/open.yaml" --check-config >"$TMP/open.out" 2>&1 || st=$?
[ "$st" -eq 2 ] || { cat "$TMP/open.out"; fail "listen on 0.0.0.0 without a token: exit $st, expected 2"; }
assert_grep "open.yaml:2:3: plugin 'http': option 'listen': 0.0.0.0:$PORT is not a loopback address: set option 'token'" "$TMP/open.out"
printf 'plugins:\n  http: {listen: "0.0.0.0:%s", token: s3cret}\n' "$PORT" >"$TMP/tok.yaml"
"$VITALSD" -c "$TMP/tok.yaml" --check-config >"$TMP/tok.out" 2>&1 ||
	{ cat "$TMP/tok.out"; fail "listen on 0.0.0.0 with a token refused"; }
printf 'plugins:\n  http: {listen: "[::1]"}\n' >"$TMP/nop.yaml"
st=0
"$VITALSD" -c "$TMP/nop.yaml" --check-config >"$TMP/nop.out" 2>&1 || st=$?
[ "$st" -eq 2 ] || { cat "$TMP/nop.out"; fail "listen without a port: exit $st"; }
assert_grep "option 'listen': '\[::1\]' is not HOST:PORT" "$TMP/nop.out"

# ---- the daemon ----
# The page: a tiny fixture, with a way out of it that must stay shut.
mkdir -p "$TMP/web/js" "$TMP/outside"
echo '<!doctype html><title>vitals fixture</title>' >"$TMP/web/index.html"
echo 'export const x = 1;' >"$TMP/web/js/x.js"
echo 'secret' >"$TMP/outside/secret.txt"
ln -s "$TMP/outside/secret.txt" "$TMP/web/link.txt"
ln -s "$TMP/outside" "$TMP/web/out"
cat >"$TMP/http.yaml" <<EOF
epoch: 1s
data_dir: $TMP/data
log_level: info
probes:
  synthetic: {}
filters:
  ewma: {}
  diff: {}
plugins:
  store: {}
  http: {listen: "127.0.0.1:$PORT", web_dir: "$TMP/web", max_range: 2d}
EOF
"$VITALSD" -c "$TMP/http.yaml" >"$TMP/daemon.log" 2>&1 &
DPID=$!
trap 'kill "$DPID" 2>/dev/null && wait "$DPID"; [ -z "${SPID:-}" ] || kill "$SPID" 2>/dev/null; rm -rf "$TMP"' EXIT
H="http://127.0.0.1:$PORT"
U="$H/api/v1"
wait_up "$U/time?t=now"
i=0
while [ "$(count_epochs "$TMP/data")" -lt 5 ]; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || { cat "$TMP/daemon.log"; fail "no 5 epochs stored in 30 s"; }
	sleep 0.1
done

# ---- every endpoint, its fields ----
expect 200 hosts "$U/hosts"
check hosts "d['local'] and d['hosts'][0]['host'] == d['local'] and d['hosts'][0]['epochs'] >= 4 and d['hosts'][0]['first_ns'] < d['hosts'][0]['last_ns']"
HOST=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["local"])' "$TMP/hosts.out")
expect 200 vitals "$U/vitals"
check vitals "{'name': 'cpu', 'unit': 'samples'} in d['vitals'] and {'name': 'sched', 'unit': 'ns'} in d['vitals']"
expect 200 epochs "$U/epochs?from=-1h&host=$HOST"
check epochs "len(d['epochs']) >= 4 and all(set(e) == {'id', 'host', 'start_ns', 'length_ns', 'partial', 'findings', 'vitals'} and e['id'] == str(e['start_ns']) for e in d['epochs']) and d['epochs'][1]['vitals']['cpu']['events'] > 0 and d['from_ns'] < d['to_ns']"
expect 200 epochs2 "$U/epochs?limit=2"
check epochs2 "len(d['epochs']) == 2"
# A fixed past range of 3 whole epochs, for the comparisons with `vitals
# serve` below.  (The first epoch starts when the daemon did: its file
# name holds that start to the millisecond, and a range query asked to
# start at the very nanosecond passes it over.)
eval "$(python3 -c 'import json,sys; e = json.load(open(sys.argv[1]))["epochs"]
print("ID=%s FROM=%d MID=%d TO=%d" % (e[1]["id"], e[1]["start_ns"],
    e[2]["start_ns"], e[4]["start_ns"]))' "$TMP/epochs.out")"
# What the daemon answers over it, for `vitals serve` to answer the same.
FIXED="epochs?from=$FROM&to=$TO series?from=$FROM&to=$TO&top=2 epoch/$ID
samples?epoch=$ID&limit=5 findings?from=$FROM&to=$TO vitals?from=$FROM&to=$TO
top?from=$FROM&to=$TO&k=3 flame?from=$FROM&to=$TO
fleet?from=$FROM&to=$TO&vital=sched"
n=0
for q in $FIXED; do
	n=$((n + 1))
	expect 200 "fixed$n" "$U/$q"
done
expect 200 epoch "$U/epoch/$ID"
check epoch "d['start_ns'] == $ID and d['host'] == '$HOST' and 'hca' in d['vitals'][0] and 'samples' in d['vitals'][0] and 'modules' in d and 'findings' in d"
"$VITALS" --data-dir "$TMP/data" show "1" --json >"$TMP/show.out" || fail "vitals show"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' \
	"$TMP/epoch.out" "$TMP/show.out" || fail "epoch/ID is not what vitals show --json prints"
expect 200 series "$U/series?from=$FROM&to=$TO&top=2"
check series "d['timescale_s'] == 1 and len(d['slots']) == 3 and d['slots'][0]['start_ns'] == $ID and d['slots'][1]['epochs'] == 1 and d['slots'][1]['length_ns'] == 10**9 and d['slots'][1]['vitals']['cpu']['events'] > 0 and len(d['slots'][1]['vitals']['cpu']['top']) == 2 and 0 < d['slots'][1]['vitals']['cpu']['top'][0]['share'] <= 1 and d['slots'][1]['vitals']['cpu']['top'][0]['exe'].startswith('/usr/bin/synth-')"
# The fleet: per host, the starts of its slots and one vital's sums, the
# same as series has them.
expect 200 fleet "$U/fleet?from=$FROM&to=$TO&vital=cpu"
python3 -c 'import json, sys
f, s = (json.load(open(p)) for p in sys.argv[1:3])
assert (f["vital"], f["unit"], f["timescale_s"], f["from_ns"]) == ("cpu", "samples", 1, s["from_ns"]), f
assert [h["host"] for h in f["hosts"]] == [sys.argv[3]], f
assert f["hosts"][0]["start_ns"] == [x["start_ns"] for x in s["slots"]], f
assert f["hosts"][0]["wsum"] == [x["vitals"]["cpu"]["wsum"] for x in s["slots"]], f' \
	"$TMP/fleet.out" "$TMP/series.out" "$HOST" || fail "fleet is not series per host"
expect 200 fleet5m "$U/fleet?timescale=5m"
check fleet5m "d['timescale_s'] == 300 and d['vital'] == 'cpu' and len(d['hosts']) == 1 and len(d['hosts'][0]['start_ns']) == len(d['hosts'][0]['wsum']) >= 1"
expect 200 series5m "$U/series?vital=cpu,sched&timescale=5m"
check series5m "d['timescale_s'] == 300 and [v['name'] for v in d['vitals']] == ['cpu', 'sched'] and set(d['slots'][0]['vitals']) == {'cpu', 'sched'} and sum(s['epochs'] for s in d['slots']) >= 4"
expect 200 top "$U/top?vital=cpu&k=3"
check top "[v['name'] for v in d['vitals']] == ['cpu'] and d['vitals'][0]['unit'] == 'samples' and len(d['vitals'][0]['exes']) == 3 and set(d['vitals'][0]['exes'][0]) == {'exe', 'comm', 'weight', 'share'} and len(d['vitals'][0]['sites']) == 3 and d['vitals'][0]['wsum'] > 0"
expect 200 samples "$U/samples?epoch=$ID&vital=cpu&limit=3"
check samples "d['epoch'] == '$ID' and d['host'] == '$HOST' and len(d['samples']) == 3 and set(d['samples'][0]) >= {'vital', 'ts_ns', 'exe', 'comm', 'pid', 'tid', 'uid', 'label', 'slot', 'count', 'weight', 'op', 'kstack', 'ustack'} and d['samples'][0]['label'].startswith('0x')"
SLOT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"][0]["slot"])' "$TMP/samples.out")
expect 200 slot "$U/samples?epoch=$ID&host=$HOST&slot=$SLOT"
check slot "d['samples'] and all(s['slot'] == $SLOT for s in d['samples'])"
expect 200 findings "$U/findings?severity=info"
check findings "isinstance(d['findings'], list) and all(set(f) >= {'filter', 'severity', 'host', 'start_ns', 'end_ns', 'timescale_s', 'score', 'text'} for f in d['findings'])"
expect 200 flame "$U/flame?vital=cpu&from=$FROM&to=$TO"
check flame "d['vital'] == 'cpu' and d['unit'] == 'samples' and d['from_ns'] == $FROM and d['tree']['name'] == 'all' and d['tree']['value'] > 0 and d['tree']['children'][0]['name'].startswith('/usr/bin/synth-') and d['tree']['children'][0]['value'] > 0"
EXE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tree"]["children"][0]["name"])' "$TMP/flame.out")
expect 200 flameexe "$U/flame?from=$FROM&to=$TO&exe=$(basename "$EXE")"
check flameexe "[x['name'] for x in d['tree']['children']] == ['$EXE']"
expect 200 diff "$U/diff?a=$FROM..$MID&b=$MID..$TO&vital=cpu"
check diff "d['a']['from_ns'] == $FROM and d['b']['to_ns'] == $TO and d['vital'] == 'cpu' and isinstance(d['findings'], list) and 'delta' in d['tree'] and d['tree']['name'] == 'all'"
get pprof "$U/pprof?vital=cpu&from=$FROM&to=$TO"
[ "$code" = 200 ] || fail "pprof: HTTP $code"
python3 -c 'import gzip,sys; b = gzip.open(sys.argv[1]).read(); assert len(b) > 100 and b"samples" in b' \
	"$TMP/pprof.out" || fail "pprof: not a gzip'd profile"
expect 200 time "$U/time?t=-1h"
check time "d['t'] == '-1h' and d['ns'] > 0"
expect 200 timens "$U/time?t=$ID"
check timens "d['ns'] == $ID"
# HEAD: the headers alone; answers are never cached.
curl -s -I "$U/hosts" >"$TMP/head.out" || fail "HEAD"
assert_grep '^HTTP/1.1 200' "$TMP/head.out"
assert_grep '^Cache-Control: no-store' "$TMP/head.out"
assert_grep '^Content-Type: application/json' "$TMP/head.out"
# /metrics: the Prometheus text of the epochs closed so far.
expect 200 metrics "$H/metrics"
assert_grep "^vitals_host_info\{host=\"$HOST\"\} 1" "$TMP/metrics.out"
assert_grep '^vitals_epochs_total [1-9]' "$TMP/metrics.out"
ctype=$(curl -s -o /dev/null -w '%{content_type}' "$H/metrics")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "/metrics served as '$ctype'"

# ---- errors ----
bad from badtime "$U/series?from=yesterday"
bad to badto "$U/epochs?to=2026-13-45"
bad to backwards "$U/series?from=-1m&to=-2m"
bad vital badvital "$U/series?vital=nosuch"
bad vital fleetvital "$U/fleet?vital=nosuch"
bad vital fleetvitals "$U/fleet?vital=cpu,sched"
bad vital badvital2 "$U/top?vital=cpu,nosuch"
bad timescale ts7m "$U/series?timescale=7m"
bad a diffa "$U/diff?a=-1h&b=-2h..-1h"
bad b diffb "$U/diff?a=-2h..-1h"
bad vital flamevital "$U/flame?vital=cpu,sched"
bad timescale tsjunk "$U/findings?timescale=soon"
bad limit limit "$U/epochs?limit=-1"
bad limit limit0 "$U/samples?epoch=$ID&limit=0"
bad top top "$U/series?top=1e3"
bad k k "$U/top?k=x"
bad severity severity "$U/findings?severity=loud"
bad bogus unknown "$U/series?bogus=1"
bad path unknown2 "$U/epoch/$ID?path=/etc/passwd"
bad from twice "$U/series?from=-1h&from=-2h"
bad from escape "$U/series?from=%zz"
bad from nul "$U/series?from=%00"
bad from notutf8 "$U/series?from=%ff%fe"
bad t notime "$U/time"
bad id epochid "$U/epoch/12ab"
bad epoch noepoch "$U/samples"
bad slot slot "$U/samples?epoch=$ID&slot=-3"
expect 404 noepoch404 "$U/epoch/1000000000000000000"
check noepoch404 "d['error'] and 'param' not in d"
expect 404 nopath "$U/nosuch"
expect 404 nopath2 "$H/api/v2/hosts"
expect 413 toolong "$U/series?from=-3d"
check toolong "d['limit'] == 2 * 86400 * 10**9 and d['param'] == 'from'"
expect 405 post "$U/hosts" -X POST -d x=1
assert_grep 'read-only' "$TMP/post.out"
expect 405 delete "$H/" -X DELETE
# Requests no client should send: the daemon says no and goes on.
long=$(python3 -c 'print("x" * 20000)')
get huge "$U/series?from=$long"
[ "$code" -ge 400 ] && [ "$code" -lt 500 ] || fail "a 20 kB URL: HTTP $code"
many=$(python3 -c 'print("&".join("p%d=1" % i for i in range(500)))')
get many "$U/hosts?$many"
[ "$code" = 400 ] || fail "500 parameters: HTTP $code"
printf 'GET /api/v1/hosts HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n' >"$TMP/raw.req"
python3 - "$PORT" "$TMP/raw.req" <<'EOP' || fail "raw requests"
import socket, sys
for req in [open(sys.argv[2], "rb").read(), b"GARBAGE\r\n\r\n", b"GET /\x00 HTTP/1.1\r\n\r\n",
            b"GET /api/v1/hosts HTTP/1.1\r\nHost: x\r\n"]:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    s.sendall(req)
    s.shutdown(socket.SHUT_WR)
    s.recv(4096)
    s.close()
EOP
# Clients that leave before their answers: their requests run to their
# end in the workers (503 meanwhile), then the daemon answers again.
for i in 1 2 3 4 5 6; do
	curl -s -o /dev/null --max-time 0.02 "$U/series?from=-1h&top=5" || :
done
i=0
while get after "$U/hosts" && [ "$code" = 503 ] && [ "$i" -lt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
[ "$code" = 200 ] || fail "after clients left: HTTP $code"

# ---- the page ----
expect 200 index "$H/"
assert_grep 'vitals fixture' "$TMP/index.out"
ctype=$(curl -s -o /dev/null -w '%{content_type}' "$H/js/x.js")
[ "$ctype" = "text/javascript; charset=utf-8" ] || fail "js/x.js served as '$ctype'"
for p in '/../etc/passwd' '/%2e%2e/%2e%2e/etc/passwd' '/js/..%2f..%2fhttp.yaml' \
    '/link.txt' '/out/secret.txt' '/.%2e/outside/secret.txt' '//etc/passwd' \
    '/js/%00' '/nosuch.html'; do
	code=$(curl -s --path-as-is -o "$TMP/esc.out" -w '%{http_code}' "$H$p") || code=000
	case "$code" in 400|404) ;; *) fail "$p: HTTP $code, expected 400 or 404" ;; esac
	! grep -q 'root:\|secret\|epoch:' "$TMP/esc.out" || fail "$p was served"
done

# ---- a burst: what a page asks at once waits for a worker, never a 503 ----
# (four workers answer; twelve requests at once queue behind them)
: >"$TMP/burst.codes"
burst=
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	case $((i % 3)) in
	0) p="series?from=-1h&top=5" ;;
	1) p="findings?from=-1h" ;;
	*) p="flame?from=-1h" ;;
	esac
	curl -s -o /dev/null -w '%{http_code}\n' "$U/$p" >>"$TMP/burst.codes" &
	burst="$burst $!"
done
# shellcheck disable=SC2086
wait $burst
[ "$(grep -c '^200$' "$TMP/burst.codes")" = 12 ] ||
	{ sort "$TMP/burst.codes" | uniq -c >&2; fail "a burst of 12 requests was not all answered 200"; }

# ---- load: range queries never hold an epoch back ----
loop() { # 2000 requests or 9 s, whichever comes first
	end=$(($(date +%s) + 9))
	n=0
	while [ "$n" -lt 2000 ] && [ "$(date +%s)" -lt "$end" ]; do
		curl -s -o /dev/null -w '%{http_code}\n' "$U/$1" >>"$TMP/load.codes" || :
		n=$((n + 1))
	done
}
loop "series?from=-1h&top=5" &
L1=$!
loop "findings?from=-1h" &
L2=$!
loop "flame?from=-1h" &
L3=$!
wait "$L1" "$L2" "$L3"
! grep -qv '^200$\|^503$' "$TMP/load.codes" ||
	{ sort "$TMP/load.codes" | uniq -c >&2; fail "an answer under load was neither 200 nor 503"; }
grep -q '^200$' "$TMP/load.codes" || fail "no request was answered under load"
echo "load: $(grep -c '^200$' "$TMP/load.codes") answered, $(grep -c '^503$' "$TMP/load.codes") busy (503)"

# A reload that changes the plugin's options restarts it on the same
# address: the new instance takes the old one's socket.
sed 's/max_range: 2d/max_range: 2d, max_requests: 3/' "$TMP/http.yaml" >"$TMP/http2.yaml"
mv "$TMP/http2.yaml" "$TMP/http.yaml"
kill -HUP "$DPID"
i=0
until grep -q 'configuration reloaded\|reload refused' "$TMP/daemon.log"; do
	i=$((i + 1))
	[ "$i" -lt 300 ] || fail "no reload in 30 s"
	sleep 0.1
done
assert_grep 'configuration reloaded' "$TMP/daemon.log"
expect 200 reloaded "$U/hosts"

kill -TERM "$DPID"
st=0
wait "$DPID" || st=$?
[ "$st" -eq 0 ] || { cat "$TMP/daemon.log"; fail "vitalsd exited $st after SIGTERM"; }
assert_grep "http: serving on http://127.0.0.1:$PORT/" "$TMP/daemon.log"
# Every epoch on its boundary: consecutive starts 1 s apart (the first
# epoch starts when the daemon did, the last is cut short by SIGTERM).
"$VITALS" --data-dir "$TMP/data" epochs --json >"$TMP/all.json" || fail "vitals epochs"
python3 - "$TMP/all.json" <<'EOP' || fail "an epoch boundary was missed"
import json, sys
e = sorted(json.load(open(sys.argv[1])), key=lambda x: x["start_ns"])
assert len(e) >= 12, len(e)
for a, b in zip(e, e[1:]):
    assert b["start_ns"] == a["start_ns"] + a["length_ns"], (a, b)
for x in e[1:-1]:
    assert x["length_ns"] == 10**9 and x["start_ns"] % 10**9 == 0, x
print("%d epochs stored, each on its boundary" % len(e))
EOP

# ---- vitals serve: the same answers over the same store ----
SPORT=$(free_port)
"$VITALS" -c "$TMP/http.yaml" serve --listen "127.0.0.1:$SPORT" --web-dir "$TMP/web" \
	>"$TMP/serve.log" 2>&1 &
SPID=$!
S="http://127.0.0.1:$SPORT/api/v1"
wait_up "$S/time?t=now"
assert_grep "serving $TMP/data on http://127.0.0.1:$SPORT/" "$TMP/serve.log"
n=0
for q in $FIXED; do
	n=$((n + 1))
	expect 200 "serve$n" "$S/$q"
	python3 -c 'import json, sys
assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' \
		"$TMP/fixed$n.out" "$TMP/serve$n.out" ||
		fail "vitals serve answers $q otherwise than the daemon did"
done
expect 200 shosts "$S/hosts"
check shosts "'local' not in d and d['hosts'][0]['host'] == '$HOST'"
expect 200 smetrics "http://127.0.0.1:$SPORT/metrics"
assert_grep "^vitals_host_info\{host=\"$HOST\"\} 1" "$TMP/smetrics.out"
expect 200 sindex "http://127.0.0.1:$SPORT/"
kill -INT "$SPID"
st=0
wait "$SPID" || st=$?
SPID=
[ "$st" -eq 0 ] || { cat "$TMP/serve.log"; fail "vitals serve exited $st after SIGINT"; }

# ---- the token ----
st=0
"$VITALS" serve --data-dir "$TMP/data" --listen "0.0.0.0:$SPORT" >"$TMP/open2.out" 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "vitals serve on 0.0.0.0 without a token: exit $st, expected 2"
assert_grep 'listen 0.0.0.0:[0-9]+ is not a loopback address: give --token' "$TMP/open2.out"
# No --web-dir: $VITALS_WEB_DIR stands in for the installed page.
VITALS_WEB_DIR="$TMP/web" "$VITALS" serve --data-dir "$TMP/data" \
	--listen "127.0.0.1:$SPORT" --token 's3cret' >"$TMP/serve2.log" 2>&1 &
SPID=$!
wait_up "$S/time"
expect 401 notoken "$S/hosts"
check notoken "d['error']"
expect 401 wrongtoken "$S/hosts" -H 'Authorization: Bearer s3crex'
expect 401 shorttoken "$S/hosts" -H 'Authorization: Bearer s3cre'
expect 401 basic "$S/hosts" -H 'Authorization: Basic czNjcmV0'
expect 200 token "$S/hosts" -H 'Authorization: Bearer s3cret'
expect 401 metricsnotoken "http://127.0.0.1:$SPORT/metrics"
# The page itself is served without it (it asks for ?token=).
expect 200 tokenindex "http://127.0.0.1:$SPORT/"
cmp -s "$TMP/tokenindex.out" "$TMP/web/index.html" ||
	fail "VITALS_WEB_DIR's page not served in place of the installed one"
kill -TERM "$SPID"
wait "$SPID" || fail "vitals serve exited non-zero after SIGTERM"
SPID=
exit 0
