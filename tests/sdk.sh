#!/bin/sh
# SPDX-License-Identifier: MIT
# A third-party filter and probe (tests/sdk/myfilter.c, myprobe.c) built out
# of the tree against the installed SDK and `pkg-config vitals`, then
# loaded by the installed vitalsd, which runs them for one epoch.
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
