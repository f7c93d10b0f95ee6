#!/bin/sh
# SPDX-License-Identifier: MIT
# The peer filter on generated multi-host stores: bench/mkstore --hosts 6
# --proc writes 4 hours of 60 s epochs of 6 hosts with the proc probe's
# metrics, one store with host 3's disk slowed (await x8, queue x6, %util
# x3) from the middle on, one with host 5's network cut (throughput x0.3,
# retransmits x30), and a clean twin.  `vitals query` runs peer (windows of
# 16 samples, shift 8, k 2) on each: the faulty host, and only it, is
# indicted with the right class within 2 windows of the fault, the clean
# store indicts nobody; then the same with thresholds trained on the clean
# store by `vitals train peer`.  No timing is asserted.
: "${top_srcdir:?run through make check}"
. "$top_srcdir/tests/lib.sh"

: "${VITALS_PLUGIN_PATH:=$top_builddir/probes:$top_builddir/filters:$top_builddir/plugins}"
export VITALS_PLUGIN_PATH
MKSTORE="$top_builddir/bench/mkstore"
for f in "$VITALS" "$MKSTORE"; do
	[ -x "$f" ] || skip "$f not built"
done
[ -e "$top_builddir/filters/peer.la" ] || skip "filter peer not built"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
START=1794996000 # 2026-11-18T10:00:00Z
END=$((START + 4 * 3600))
WIN=16

mk() { # mk NAME [FAULT OPTIONS]
	name=$1
	shift
	"$MKSTORE" --out "$TMP/$name" --hosts 6 --span 4h --start $START --proc \
		--clean --vitals cpu,sched --rate 5 --labels 16 --max-samples 16 \
		--quiet "$@" >"$TMP/mk-$name.log" 2>&1 ||
		{ cat "$TMP/mk-$name.log" >&2; fail "mkstore $name"; }
}
mk disk --disk-fault 3 &
mk net --net-fault 5 &
mk clean
wait
for s in disk net clean; do
	[ "$(count_epochs "$TMP/$s")" -eq 1440 ] || fail "mkstore did not write 6 x 240 epochs in $s"
done

# run STORE [MODEL]: peer's findings over the store, as JSON.
run() {
	{
		printf 'epoch: 60s\ndata_dir: %s\nfilters:\n' "$TMP/$1"
		printf '  peer: { win_size: %s, win_shift: %s, k: 2%s }\n' $WIN $((WIN / 2)) \
			"${2:+, model: $2}"
	} >"$TMP/$1.yaml"
	"$VITALS" -c "$TMP/$1.yaml" --data-dir "$TMP/$1" query --json --no-cache \
		--timescale base --filter peer --from @$START --to @$END \
		>"$TMP/$1${2:+-trained}.json" 2>"$TMP/$1.err" ||
		{ cat "$TMP/$1.err" >&2; fail "vitals query on $1"; }
	echo "$TMP/$1${2:+-trained}.json"
}

# check JSON MANIFEST|-: the manifest's faulty host (none: "-") indicted,
# with its class, within 2 windows of the fault, and no one else ever.
check() {
	python3 - "$1" "$2" $WIN <<'PY' || fail "peer on $1"
import json, sys
res = json.load(open(sys.argv[1]))
win = int(sys.argv[3])
f = [x for x in res["findings"] if x["filter"] == "peer"]
if sys.argv[2] == "-":
    if f:
        print("clean store: %d indictments, first %s" % (len(f), f[0]["text"]))
        sys.exit(1)
    print("clean store: no indictment")
    sys.exit(0)
fault = [a for a in json.load(open(sys.argv[2]))["anomalies"] if a["filter"] == "peer"][0]
wrong = [x for x in f if x["host"] != fault["host"]]
if wrong:
    print("indicted %s, not faulty: %s" % (wrong[0]["host"], wrong[0]["text"]))
    sys.exit(1)
if not f:
    print("%s (%s) never indicted" % (fault["host"], fault["class"]))
    sys.exit(1)
first = min(x["start_ns"] for x in f)
if first < fault["start_ns"]:
    print("indicted before its fault")
    sys.exit(1)
bad = [x for x in f if x["vital"] != fault["class"]]
if bad:
    print("class %s, not %s: %s" % (bad[0]["vital"], fault["class"], bad[0]["text"]))
    sys.exit(1)
# the slot that ends the window of the finding is [start, end)
windows = (f[0]["end_ns"] - fault["start_ns"]) / (win * 60e9)
print("%s: %s indicted (%s) %.2f windows after the fault, %d findings" %
      (fault["kind"], fault["host"], fault["class"], windows, len(f)))
sys.exit(0 if windows <= 2 else 1)
PY
}

for s in disk net; do
	check "$(run $s)" "$TMP/$s/manifest.json"
done
check "$(run clean)" -

# Thresholds trained on the clean store (the paper's least, doubled).
"$VITALS" -c "$TMP/clean.yaml" --data-dir "$TMP/clean" train peer \
	--normal "@$START..@$END" --model "$TMP/peer.model" >"$TMP/train.out" 2>&1 ||
	{ cat "$TMP/train.out" >&2; fail "vitals train peer"; }
assert_grep '^trained peer on 1440 epochs' "$TMP/train.out"
assert_grep '"disk.await"' "$TMP/peer.model"
for s in disk net; do
	check "$(run $s "$TMP/peer.model")" "$TMP/$s/manifest.json"
done
check "$(run clean "$TMP/peer.model")" -
echo "PASS: peer indicts the faulty host with its class, nobody on a clean store"
