#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages: built from the distributed files with
# dpkg-buildpackage (debian/), they hold the daemon, the CLI, every plugin
# built here, the systemd unit, the configuration (a conffile) and the
# manual pages (vitals.yaml(5) naming the packaged plugins); the SDK
# package holds the headers and pkg-config file.  Installed with dpkg,
# the daemon finds its plugins in the packaged directory, records an
# epoch with the packaged configuration, a filter and a probe built
# against the packaged SDK load, and purging removes it all.  Needs root (dpkg -i)
# and debhelper; skips on a machine where vitals is installed already.
. "$top_srcdir/tests/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "installing packages needs root"
for c in dpkg-buildpackage dh pkg-config; do
	command -v "$c" >/dev/null || skip "$c not installed (scripts/setup-debian.sh installs debhelper)"
done
[ -f "$top_srcdir/debian/control" ] || fail "debian/ is not in the tree"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
if installed vitals || installed vitals-dev; then
	skip "the vitals packages are installed on this machine: not replacing them"
fi

# ---- build, from the files `make dist` would ship ----
ver=$(sed -n 's/^Version: //p' "$top_builddir/core/vitals.pc")
src="$TMP/vitals-$ver"
make -C "$top_builddir" distdir distdir="$src" >"$TMP/distdir.log" 2>&1 ||
	{ cat "$TMP/distdir.log"; fail "make distdir failed"; }
[ -f "$src/debian/rules" ] || fail "debian/ is not in the distributed files"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
	dpkg-buildpackage -b -us -uc) >"$TMP/build.log" 2>&1 ||
	{ tail -40 "$TMP/build.log"; fail "dpkg-buildpackage failed"; }
deb="$TMP/vitals_${ver}_$(dpkg --print-architecture).deb"
dev="$TMP/vitals-dev_${ver}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] && [ -f "$dev" ] || { ls "$TMP" >&2; fail "no vitals and vitals-dev packages"; }
# Kept for tests/systemd.sh, which would build them again.
[ -z "${VITALS_DEB_DIR:-}" ] || cp "$deb" "$dev" "$VITALS_DEB_DIR/"

# ---- what they hold ----
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$TMP/files"
dpkg-deb -c "$dev" | awk '{ print $6 }' | sed 's|^\./|/|' >"$TMP/devfiles"
for f in /usr/sbin/vitalsd /usr/bin/vitals /etc/vitals/vitals.yaml \
    /lib/systemd/system/vitalsd.service /usr/share/vitals/web/index.html; do
	grep -qx "$f" "$TMP/files" || fail "$f not in the vitals package"
done
# Every plugin this tree built, in the plugin directory.
for la in "$top_builddir"/probes/*.la "$top_builddir"/filters/*.la \
    "$top_builddir"/outputs/*.la; do
	p=$(basename "$la" .la)
	grep -Eq "^/usr/lib/[^/]+/vitals/$p\.so$" "$TMP/files" ||
		fail "plugin $p not in the vitals package"
done
for m in man1/vitals.1 man5/vitals.yaml.5 man8/vitalsd.8; do
	grep -qx "/usr/share/man/$m.gz" "$TMP/files" || fail "manual page $m not in the vitals package"
done
dpkg-deb -f "$deb" Depends | grep -q libbpf || fail "vitals does not depend on libbpf"
# The unit's ExecReload runs /bin/kill, which is procps'.
dpkg-deb -f "$deb" Depends | grep -q procps || fail "vitals does not depend on procps (/bin/kill)"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/vitals/vitals.yaml ||
	fail "/etc/vitals/vitals.yaml is not a conffile"
grep -qx /usr/include/vitals/vitals.h "$TMP/devfiles" || fail "vitals.h not in vitals-dev"
grep -Eq "^/usr/lib/[^/]+/pkgconfig/vitals.pc$" "$TMP/devfiles" || fail "vitals.pc not in vitals-dev"

# ---- installed ----
trap 'dpkg --purge vitals-dev vitals >/dev/null 2>&1; rm -rf "$TMP"' EXIT
dpkg -i "$deb" "$dev" >"$TMP/install.log" 2>&1 ||
	{ cat "$TMP/install.log"; fail "dpkg -i failed"; }
unset VITALS_PLUGIN_PATH
# The store is root's and the vitals group's, and the unit is hardened.
getent group vitals >/dev/null || fail "no vitals group after install"
[ "$(stat -c %a:%U:%G /var/lib/vitals)" = "2750:root:vitals" ] ||
	fail "/var/lib/vitals is $(stat -c %a:%U:%G /var/lib/vitals), expected 2750:root:vitals"
assert_grep '^CapabilityBoundingSet=' /lib/systemd/system/vitalsd.service
# Enabled (not started): the postinst has debhelper's unit snippet.
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postinst | grep -q 'deb-systemd-helper.*enable' ||
	fail "the postinst does not enable vitalsd.service"
/usr/sbin/vitalsd --list-plugins >"$TMP/list.out" 2>&1 || { cat "$TMP/list.out"; fail "--list-plugins"; }
for p in syscall sched kmem proc ewma rules callmodel store; do
	assert_grep "^$p +(probe|filter|output) " "$TMP/list.out"
done
/usr/sbin/vitalsd -c /etc/vitals/vitals.yaml --check-config >"$TMP/check.out" 2>&1 ||
	{ cat "$TMP/check.out"; fail "the packaged configuration does not check"; }
# One short epoch with the packaged configuration, read back with the CLI.
sed -e 's/^epoch: .*/epoch: 2s/' /etc/vitals/vitals.yaml >"$TMP/short.yaml"
/usr/sbin/vitalsd -c "$TMP/short.yaml" --data-dir "$TMP/data" --epochs 1 2>"$TMP/run.err" ||
	{ cat "$TMP/run.err"; fail "the packaged vitalsd did not record an epoch"; }
/usr/bin/vitals --data-dir "$TMP/data" show --last >"$TMP/show.out" || fail "vitals show --last"
assert_grep '^syscall ' "$TMP/show.out"
# A filter built against the packaged SDK, loaded by the packaged daemon.
mkdir "$TMP/sdk"
cp "$top_srcdir/tests/sdk/myfilter.c" "$top_srcdir/tests/sdk/myprobe.c" \
	"$top_srcdir/tests/sdk/Makefile" "$TMP/sdk/"
make -C "$TMP/sdk" >"$TMP/sdk.log" 2>&1 || { cat "$TMP/sdk.log"; fail "building against vitals-dev failed"; }
printf 'epoch: 1s\ndata_dir: %s/data2\nplugin_path: [%s/sdk]\nfilters:\n  myfilter: { limit: 100 }\n' \
	"$TMP" "$TMP" >"$TMP/sdk.yaml"
/usr/sbin/vitalsd -c "$TMP/sdk.yaml" --list-plugins >"$TMP/sdklist.out" 2>&1 ||
	{ cat "$TMP/sdklist.out"; fail "--list-plugins with the SDK filter"; }
assert_grep '^myfilter +filter' "$TMP/sdklist.out"
assert_grep '^myprobe +probe' "$TMP/sdklist.out"
# The packaged vitals.yaml(5) has the packaged plugins' options (unless
# dpkg is told to leave manual pages out, as in minimal images).
page=/usr/share/man/man5/vitals.yaml.5.gz
if command -v man >/dev/null && [ -f "$page" ]; then
	LC_ALL=C MANWIDTH=200 man -l "$page" >"$TMP/man.out" 2>&1 || { cat "$TMP/man.out"; fail "man -l $page"; }
	assert_grep '^ +store \(output\)$' "$TMP/man.out"
	assert_grep '^ +backlog$' "$TMP/man.out"
fi

# ---- purged ----
dpkg --purge vitals-dev vitals >"$TMP/purge.log" 2>&1 || { cat "$TMP/purge.log"; fail "dpkg --purge failed"; }
for f in /usr/sbin/vitalsd /etc/vitals/vitals.yaml /usr/include/vitals/vitals.h \
    /var/lib/vitals; do
	[ ! -e "$f" ] || fail "$f left after purge"
done
echo "PASS: the packages build, install, run and purge"
