#!/bin/sh
# SPDX-License-Identifier: MIT
# A third-party filter and probe (tests/sdk/myfilter.c, myprobe.c) built out
# of the tree against the installed SDK and `pkg-config vitals`, then
# loaded by the installed vitalsd, which runs them for one epoch; and a BPF
# probe (tests/sdk/mybpfprobe*.c: a descriptor and a program) built the
# same way, which must load and, as root, count; built against an SDK
# whose struct vitals_bpf_cfg is laid out otherwise, it must be refused.
. "$top_srcdir/tests/lib.sh"

command -v pkg-config >/dev/null || skip "pkg-config not installed"
make -C "$top_builddir" install DESTDIR="$TMP/inst" >"$TMP/install.log" 2>&1 ||
	{ cat "$TMP/install.log"; fail "make install DESTDIR failed"; }
prefix=$(sed -n 's/^prefix=//p' "$top_builddir/core/vitals.pc")
root="$TMP/inst$prefix"
export PKG_CONFIG_PATH="$root/lib/pkgconfig"
pc="pkg-config --define-variable=prefix=$root"
$pc --exists vitals || fail "vitals.pc not installed under $root/lib/pkgconfig"
[ -f "$root/include/vitals/vitals.h" ] || fail "SDK header not installed"

mkdir "$TMP/sdk"
cp "$top_srcdir/tests/sdk/myfilter.c" "$top_srcdir/tests/sdk/myprobe.c" \
	"$top_srcdir/tests/sdk/mybpfprobe.c" "$top_srcdir/tests/sdk/mybpfprobe.bpf.c" \
	"$top_srcdir/tests/sdk/Makefile" "$TMP/sdk/"
make -C "$TMP/sdk" PKG_CONFIG="$pc" >"$TMP/sdk.log" 2>&1 ||
	{ cat "$TMP/sdk.log"; fail "building the out-of-tree filter and probe failed"; }

cat >"$TMP/vitals.yaml" <<EOC
epoch: 1s
data_dir: $TMP/data
plugin_path: [$TMP/sdk, $root/lib/vitals]
probes:
  synthetic: { vitals: [cpu], rate: 3000 }
  myprobe: { interval: 100ms }
filters:
  myfilter: { limit: 100 }
plugins:
  store: {}
EOC
unset VITALS_PLUGIN_PATH
export LD_LIBRARY_PATH="$root/lib"
"$root/sbin/vitalsd" -c "$TMP/vitals.yaml" --list-plugins >"$TMP/list.out" 2>&1 ||
	{ cat "$TMP/list.out"; fail "--list-plugins failed"; }
assert_grep '^myfilter +filter' "$TMP/list.out"
assert_grep '^myprobe +probe +0\.1 +yes ' "$TMP/list.out"
# The filter's check callback runs in --check-config, reported at its
# entry (line 8); the probe's option table bounds its values.
sed 's/limit: 100/limit: 0/' "$TMP/vitals.yaml" >"$TMP/bad.yaml"
st=0
"$root/sbin/vitalsd" -c "$TMP/bad.yaml" --check-config >"$TMP/bad.out" 2>&1 || st=$?
[ "$st" -eq 2 ] || { cat "$TMP/bad.out"; fail "limit: 0: --check-config exit $st, expected 2"; }
assert_grep "bad.yaml:8:3: plugin 'myfilter': option 'limit' must be at least 1, not 0" "$TMP/bad.out"
sed 's/interval: 100ms/interval: 0/' "$TMP/vitals.yaml" >"$TMP/bad2.yaml"
st=0
"$root/sbin/vitalsd" -c "$TMP/bad2.yaml" --check-config >"$TMP/bad2.out" 2>&1 || st=$?
[ "$st" -eq 2 ] || { cat "$TMP/bad2.out"; fail "interval: 0: --check-config exit $st, expected 2"; }
assert_grep "bad2.yaml:6:[0-9]+: option 'interval': 0 is out of range" "$TMP/bad2.out"
# Two epochs: the first is cut short by the start, the second is whole.
"$root/sbin/vitalsd" -c "$TMP/vitals.yaml" --epochs 2 2>"$TMP/run.err" ||
	{ cat "$TMP/run.err"; fail "installed vitalsd failed to run the filter and probe"; }
"$root/bin/vitals" --data-dir "$TMP/data" show --last >"$TMP/show.out" 2>&1 ||
	{ cat "$TMP/show.out"; fail "vitals show failed"; }
assert_grep 'myfilter' "$TMP/show.out"
assert_grep 'cpu: [0-9]+ events over the limit 100' "$TMP/show.out"
# The probe's vital, counted, and its named metric.
assert_grep '^  myprobe\.loadavg1 +tasks ' "$TMP/show.out"
"$root/bin/vitals" --data-dir "$TMP/data" show --last --vital runnable >"$TMP/probe.out" 2>&1 ||
	{ cat "$TMP/probe.out"; fail "vitals show --vital runnable failed"; }
assert_grep '^runnable \(unit: tasks\)' "$TMP/probe.out"
assert_grep '^  events [1-9][0-9]* ' "$TMP/probe.out"
echo "PASS: out-of-tree filter and probe built with pkg-config, loaded and run for an epoch"

# The BPF probe: the installed BPF headers must be enough to build it.
for t in clang bpftool; do
	command -v "$t" >/dev/null || { echo "SKIP: no $t: the out-of-tree BPF probe is not built"; exit 0; }
done
pkg-config --exists libbpf || { echo "SKIP: no libbpf-dev: the out-of-tree BPF probe is not built"; exit 0; }
make -C "$TMP/sdk" bpfprobe PKG_CONFIG="$pc" >"$TMP/probe.log" 2>&1 ||
	{ cat "$TMP/probe.log"; fail "building the out-of-tree BPF probe failed"; }
grep -E '\.[ch]:[0-9]+:[0-9]+: warning' "$TMP/probe.log" && fail "the out-of-tree BPF probe builds with warnings"
"$root/sbin/vitalsd" -c "$TMP/vitals.yaml" --list-plugins >"$TMP/list.out" 2>&1 ||
	{ cat "$TMP/list.out"; fail "--list-plugins failed"; }
assert_grep '^mybpfprobe +probe +1\.0' "$TMP/list.out"
if [ "$(id -u)" -ne 0 ]; then
	echo "PASS: out-of-tree BPF probe built and listed (not root: not run)"
	exit 0
fi
rm -rf "$TMP/data"
cat >"$TMP/probe.yaml" <<EOC
epoch: 2s
data_dir: $TMP/data
plugin_path: [$TMP/sdk, $root/lib/vitals]
probes:
  mybpfprobe: {}
plugins:
  store: {}
EOC
"$root/sbin/vitalsd" -c "$TMP/probe.yaml" -n 1 2>"$TMP/probe.err" &
daemon=$!
i=0
until grep -q 'started' "$TMP/probe.err"; do
	kill -0 "$daemon" 2>/dev/null || { cat "$TMP/probe.err"; fail "vitalsd with the probe did not start"; }
	i=$((i + 1))
	[ "$i" -lt 300 ] || fail "vitalsd with the probe did not start in 30 s"
	sleep 0.1
done
for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done
wait "$daemon" || { cat "$TMP/probe.err"; fail "vitalsd with the probe failed"; }
"$root/bin/vitals" --data-dir "$TMP/data" show --last --json >"$TMP/probe.json" 2>&1 ||
	{ cat "$TMP/probe.json"; fail "vitals show failed"; }
python3 - "$TMP/probe.json" <<'PY' || fail "the out-of-tree BPF probe counted no forks"
import json, sys
e = json.load(open(sys.argv[1]))
v = [v for v in e["vitals"] if v["name"] == "forks"]
assert v and v[0]["events"] >= 10, "forks: %r" % v
print("forks: %d events" % v[0]["events"])
PY
echo "PASS: out-of-tree BPF probe built against the installed SDK, loaded and counting"

# A BPF probe built against another SDK's struct vitals_bpf_cfg would
# count in the wrong places: vitalsd must refuse it, naming what differs.
# Two such SDKs: one whose struct is larger, one whose members are
# reordered within the same size.  Its only probe refused, vitalsd
# exits non-zero.
other_sdk() { # NAME SED: the installed SDK with bpf_shared.h edited by SED
	cp -r "$root" "$TMP/$1"
	sed -i "$2" "$TMP/$1/include/vitals/bpf_shared.h"
	cmp -s "$root/include/vitals/bpf_shared.h" "$TMP/$1/include/vitals/bpf_shared.h" &&
		fail "$1: the edit did not change struct vitals_bpf_cfg"
	mkdir "$TMP/$1-probe"
	cp "$TMP/sdk/mybpfprobe.c" "$TMP/sdk/mybpfprobe.bpf.c" "$TMP/sdk/Makefile" "$TMP/$1-probe/"
	make -C "$TMP/$1-probe" bpfprobe \
		PKG_CONFIG="pkg-config --define-variable=prefix=$TMP/$1" >"$TMP/$1.log" 2>&1 ||
		{ cat "$TMP/$1.log"; fail "$1: building the BPF probe failed"; }
	rm -rf "$TMP/data"
	sed "s|$TMP/sdk,|$TMP/$1-probe,|" "$TMP/probe.yaml" >"$TMP/$1.yaml"
	st=0
	"$root/sbin/vitalsd" -c "$TMP/$1.yaml" -n 1 >"$TMP/$1.err" 2>&1 || st=$?
	[ "$st" -ne 0 ] || { cat "$TMP/$1.err"; fail "$1: vitalsd ran the probe (exit 0)"; }
}
other_sdk larger 's/^\t__u64 ktext_lo, ktext_hi;$/&\n\t__u64 added;/'
assert_grep "built against another vitals SDK \(struct vitals_bpf_cfg of [0-9]+ bytes, not [0-9]+\): rebuild it" "$TMP/larger.err"
other_sdk reordered '/^\t__u32 self_tgid;/{h;d};/^\t__u32 tgid; \/\* count only/{G}'
assert_grep "built against another vitals SDK \(struct vitals_bpf_cfg's self_tgid at another offset\): rebuild it" "$TMP/reordered.err"
echo "PASS: BPF probes built against another layout of struct vitals_bpf_cfg are refused"
