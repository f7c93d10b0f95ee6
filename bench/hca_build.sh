#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/hca_build.sh: the adaptive HCA on a real busy workload.  A copy of
# the source is built with make -j in a loop while two vitalsd run side by
# side with the shipped configuration, one with a fixed 1024-counter HCA,
# one with the adaptive HCA; epochs are aligned to the clock, so each
# epoch's samples of each vital can be matched.  There are no exact
# counts of a build's labels: the reference is the labels (label, exe,
# uid) either daemon sampled, and each is given the share of them it has,
# with its HCA size and the counters it stores.  Needs root and a built
# tree; prints, asserts nothing.
#
#   bench/hca_build.sh [--seconds S] [--epoch S] [--jobs N]
#
# Defaults: 240 s, 20 s epochs, 2 jobs per CPU.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "${top_builddir:-$src}" && pwd)
secs=240 epoch=20 jobs=$(($(nproc) * 2))
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) secs=${2:?--seconds needs a value}; shift 2 ;;
	--epoch) epoch=${2:?--epoch needs a value}; shift 2 ;;
	--jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
	-h|--help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "hca_build: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$secs" "$epoch" "$jobs"; do
	case $v in
	''|*[!0-9]*|0) echo "hca_build: '$v' is not a positive integer" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "hca_build: needs root (the kernel probes)" >&2; exit 2; }
[ -x "$top/daemon/vitalsd" ] && [ -x "$top/cli/vitals" ] ||
	{ echo "hca_build: $top is not a built tree" >&2; exit 2; }

tmp=$(mktemp -d /var/tmp/vitals-hcabuild.XXXXXX) ||
	{ echo "hca_build: cannot make a directory under /var/tmp" >&2; exit 1; }
builder= daemons=
cleanup() {
	[ -z "$builder" ] || kill -- -"$builder" 2>/dev/null
	for d in $daemons; do kill "$d" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

echo "hca_build: configuring a copy of the source for the build loop" >&2
git -C "$src" archive --format=tar HEAD | tar -x -C "$tmp" ||
	{ echo "hca_build: cannot copy the source" >&2; exit 1; }
mkdir -p "$tmp/b"
(cd "$tmp" && autoreconf -fi >/dev/null 2>&1 && cd b && ../configure -q >/dev/null 2>&1) ||
	{ echo "hca_build: cannot configure the copy" >&2; exit 1; }
# A session of its own, so that the loop and its makes end together.
setsid sh -c 'cd "$1" && while :; do make -s clean >/dev/null 2>&1; make -s -j"$2" >/dev/null 2>&1; done' \
	sh "$tmp/b" "$jobs" &
builder=$!

# The shipped configuration, the epoch asked, room for every sample.
for n in fixed adaptive; do
	sed -e "s|^epoch: .*|epoch: ${epoch}s|" \
	    -e "s|^data_dir: .*|data_dir: $tmp/data-$n|" \
	    -e "s|^  max_samples: .*|  max_samples: 100000|" \
	    -e "s|^  sample_memory: .*|  sample_memory: 0|" \
	    "$src/conf/vitals.yaml" >"$tmp/$n.yaml"
done
sed -i -e 's|^  hca_size: .*|  hca_size: 1024|' -e 's|^  hca_max: .*|  hca_max: 1024|' "$tmp/fixed.yaml"
for n in fixed adaptive; do
	VITALS_PLUGIN_PATH="$top/probes:$top/filters:$top/outputs" \
	    "$top/daemon/vitalsd" -c "$tmp/$n.yaml" >"$tmp/$n.log" 2>&1 &
	daemons="$daemons $!"
done
echo "hca_build: two daemons over the build loop for $secs s" >&2
sleep "$secs"
for d in $daemons; do kill -INT "$d"; done
wait $daemons
daemons=
kill -- -"$builder" 2>/dev/null
builder=
for n in fixed adaptive; do
	for f in $(find "$tmp/data-$n" -name '*.json.gz' | sort); do
		"$top/cli/vitals" show "$f" --json | tr -d '\n'
		echo
	done >"$tmp/$n.jsonl"
done
python3 - "$tmp/fixed.jsonl" "$tmp/adaptive.jsonl" <<'PY'
import json, sys
runs = []
for f in sys.argv[1:]:
    eps = {}
    for l in open(f):
        if l.strip():
            e = json.loads(l)
            if not e.get("partial"):
                eps[e["start_ns"]] = {v["name"]: v for v in e["vitals"]}
    runs.append(eps)
common = sorted(set(runs[0]) & set(runs[1]))
print("%d whole epochs in common; per vital, summed over them: labels "
      "sampled by either, the share each sampled, its last HCA size and "
      "counters stored per epoch" % len(common))
print("%-10s %8s %17s %17s" % ("vital", "labels", "fixed 1024", "adaptive"))
names = sorted({n for t in common for n in runs[0][t]})
tot = [0, 0, 0, 0, 0]
for n in names:
    union = got0 = got1 = nz0 = nz1 = 0
    m1 = 0
    for t in common:
        a, b = runs[0][t].get(n), runs[1][t].get(n)
        if a is None or b is None:
            continue
        key = lambda v: {(s["label"], s["exe_id"], s["uid"]) for s in v["samples"]}
        s0, s1 = key(a), key(b)
        union += len(s0 | s1)
        got0 += len(s0)
        got1 += len(s1)
        nz0 += len(a["hca"]["nz"])
        nz1 += len(b["hca"]["nz"])
        m1 = b["hca_size"]
    if not union:
        continue
    k = len(common)
    print("%-10s %8d %7.2f%% %4d nz %7.2f%% %4d nz (%d)" % (n, union, 100.0 * got0 / union,
          nz0 / k, 100.0 * got1 / union, nz1 / k, m1))
    for i, x in enumerate((union, got0, got1, nz0, nz1)):
        tot[i] += x
if tot[0]:
    print("%-10s %8d %7.2f%% %4d nz %7.2f%% %4d nz" % ("all", tot[0], 100.0 * tot[1] / tot[0],
          tot[3] / len(common), 100.0 * tot[2] / tot[0], tot[4] / len(common)))
PY
