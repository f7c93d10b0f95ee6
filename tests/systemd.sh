#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian package under real systemd: a Debian 12 system made with
# debootstrap, the vitals package installed in it with apt, booted with
# systemd-nspawn (systemd as its PID 1, the host's kernel), then the
# unit used as an admin would.  It must be enabled and start with the
# system, restart (Type=notify: once READY), keep only its capabilities, collect every probe of the
# shipped configuration that this kernel has, keep the store readable by
# the vitals group and no other user, rate at most 4.5 in
# `systemd-analyze security`, reload on `systemctl reload` and stop
# cleanly.  The container gets the capabilities and system calls the unit
# asks for; the unit then narrows them as it would on a host.
#
# Needs root, systemd-nspawn (systemd-container), debootstrap, debhelper
# and Debian's archive (VITALS_DEBIAN_MIRROR, default deb.debian.org);
# scripts/test.sh runs it once as `make check-systemd`.  The packages are
# taken from VITALS_DEB_DIR when it holds them (tests/package.sh leaves
# its own there), else built.
. "$top_srcdir/tests/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, systemd-nspawn, BPF)"
for c in systemd-nspawn debootstrap nsenter dpkg-buildpackage; do
	command -v "$c" >/dev/null ||
		skip "$c not installed (scripts/setup-debian.sh installs systemd-container, debootstrap and debhelper)"
done
need_probe syscall
arch=$(dpkg --print-architecture)
ver=$(sed -n 's/^Version: //p' "$top_builddir/core/vitals.pc")
ROOT="$TMP/root"
BOOT=
# The container is powered off (or killed) before the temp dir goes.
trap '[ -z "$BOOT" ] || { kill "$BOOT"; wait "$BOOT"; } 2>/dev/null
	[ -z "$DAEMON" ] || kill "$DAEMON" 2>/dev/null; rm -rf "$TMP"' EXIT

# ---- the package ----
deb="${VITALS_DEB_DIR:-/nonexistent}/vitals_${ver}_$arch.deb"
if [ ! -f "$deb" ]; then
	src="$TMP/vitals-$ver"
	make -C "$top_builddir" distdir distdir="$src" >"$TMP/distdir.log" 2>&1 ||
		{ cat "$TMP/distdir.log"; fail "make distdir failed"; }
	(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
		dpkg-buildpackage -b -us -uc) >"$TMP/build.log" 2>&1 ||
		{ tail -40 "$TMP/build.log"; fail "dpkg-buildpackage failed"; }
	deb="$TMP/vitals_${ver}_$arch.deb"
fi

# ---- a Debian 12 system with it installed ----
mirror=${VITALS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,passwd \
	bookworm "$ROOT" "$mirror" >"$TMP/debootstrap.log" 2>&1 ||
	{ tail -20 "$TMP/debootstrap.log"; skip "debootstrap from $mirror failed (no network to the archive?)"; }
# nspawn: no machined, no scope of its own (the host may not run systemd).
NSPAWN="systemd-nspawn -q -D $ROOT --keep-unit --register=no"
cp "$deb" "$ROOT/root/vitals.deb"
$NSPAWN sh -c 'apt-get install -y -q /root/vitals.deb' >"$TMP/install.log" 2>&1 ||
	{ tail -30 "$TMP/install.log"; fail "apt-get install of the package in the container failed"; }
# Short epochs, so the test sees several (the timescales stay multiples).
sed -i -e 's/^epoch: .*/epoch: 2s/' "$ROOT/etc/vitals/vitals.yaml"
# A user in the vitals group, and one not in it.
$NSPAWN sh -c 'useradd -M -G vitals reader && useradd -M stranger' >"$TMP/users.log" 2>&1 ||
	{ cat "$TMP/users.log"; fail "useradd in the container"; }

# ---- booted ----
caps=CAP_BPF,CAP_PERFMON,CAP_SYS_ADMIN,CAP_SYS_PTRACE,CAP_DAC_READ_SEARCH,CAP_SYSLOG,CAP_SYS_RESOURCE
$NSPAWN --capability=$caps --system-call-filter='bpf perf_event_open' \
	--bind-ro=/sys/kernel/tracing -b >"$TMP/boot.log" 2>&1 &
BOOT=$!
# in CMD...: run a command in the booted container, as its root.
init=
ct() {
	nsenter -t "$init" -a "$@"
}
# The container's PID 1: systemd, a child (or grandchild) of nspawn.
pid1() {
	for c in $(pgrep -P "$BOOT"); do
		for p in "$c" $(pgrep -P "$c"); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] && { echo "$p"; return; }
		done
	done
}
i=0
while [ -z "$init" ]; do
	init=$(pid1)
	i=$((i + 1))
	[ "$i" -lt 300 ] || { cat "$TMP/boot.log"; fail "systemd did not start in the container"; }
	kill -0 "$BOOT" 2>/dev/null || { cat "$TMP/boot.log"; fail "systemd-nspawn ended"; }
	sleep 0.2
done
ct systemctl is-system-running --wait >"$TMP/state" 2>&1 || true
grep -Eq '^(running|degraded)$' "$TMP/state" ||
	{ cat "$TMP/state" "$TMP/boot.log"; fail "the container did not boot: $(cat "$TMP/state")"; }

[ "$(ct systemctl is-enabled vitalsd 2>&1)" = enabled ] ||
	fail "vitalsd.service is not enabled after install: $(ct systemctl is-enabled vitalsd 2>&1)"
# Enabled, it started with the system (as after the next reboot).
[ "$(ct systemctl is-active vitalsd 2>&1)" = active ] ||
	{ ct journalctl -u vitalsd --no-pager; fail "vitalsd did not start at boot: $(ct systemctl is-active vitalsd 2>&1)"; }
boot_pid=$(ct systemctl show -p MainPID --value vitalsd)
# Type=notify: restart returns once the new vitalsd said READY=1.
ct systemctl restart vitalsd >"$TMP/start.log" 2>&1 ||
	{ cat "$TMP/start.log"; ct journalctl -u vitalsd --no-pager; fail "systemctl restart vitalsd failed"; }
pid=$(ct systemctl show -p MainPID --value vitalsd)
[ "${pid:-0}" -gt 0 ] && [ "$pid" != "$boot_pid" ] || fail "no new main pid for vitalsd after restart"

# ---- its capabilities: no more than the unit's bounding set ----
ct grep '^Cap' "/proc/$pid/status" >"$TMP/caps"
cat "$TMP/caps"
bnd=$(ct sh -c 'grep "^CapabilityBoundingSet=" /lib/systemd/system/vitalsd.service')
python3 - "$TMP/caps" "$bnd" <<'EOF' || fail "vitalsd holds capabilities outside the unit's bounding set"
import sys
names = {"CAP_DAC_READ_SEARCH": 2, "CAP_SYS_PTRACE": 19, "CAP_SYS_ADMIN": 21,
         "CAP_SYS_RESOURCE": 24, "CAP_SYSLOG": 34, "CAP_PERFMON": 38, "CAP_BPF": 39}
allowed = 0
for n in sys.argv[2].split("=", 1)[1].split():
    allowed |= 1 << names[n]
caps = dict(l.split(":") for l in open(sys.argv[1]))
for k in ("CapEff", "CapPrm", "CapBnd"):
    v = int(caps[k], 16)
    if v & ~allowed:
        sys.exit("%s %x has %x outside the unit's set" % (k, v, v & ~allowed))
if int(caps["CapEff"], 16) & (1 << 39) == 0:
    sys.exit("CAP_BPF is not effective")
EOF

# ---- every shipped probe this kernel has, collecting ----
ct vitalsd --list-plugins --json >"$TMP/plugins-in.json" 2>/dev/null ||
	fail "vitalsd --list-plugins in the container"
i=0
while [ "$(ct sh -c 'ls /var/lib/vitals/*/*.json.gz 2>/dev/null | wc -l')" -lt 4 ]; do
	i=$((i + 1))
	[ "$i" -lt 150 ] || { ct journalctl -u vitalsd --no-pager; fail "fewer than 4 epochs stored in 30 s"; }
	[ "$(ct systemctl is-active vitalsd)" = active ] ||
		{ ct journalctl -u vitalsd --no-pager; fail "vitalsd stopped"; }
	sleep 0.2
done
ct vitals show --last --json >"$TMP/last.json" || fail "vitals show --last in the container"
python3 - "$ROOT/etc/vitals/vitals.yaml" "$TMP/plugins-in.json" "$TMP/last.json" <<'EOF' ||
import json, re, sys
conf = open(sys.argv[1]).read()
section = re.search(r"^probes:\n((?:[ #].*\n|\n)*)", conf, re.M).group(1)
plugins = {p["name"]: p for p in json.load(open(sys.argv[2]))}
epoch = json.load(open(sys.argv[3]))
have = {v["name"] for v in epoch.get("vitals", [])}
# proc publishes metrics (proc.*), not vitals.
if any(k.startswith("proc.") for k in epoch.get("metrics", {})):
    have.add("proc")
missing = []
# Each probe's block: its namesake vital and those of a `vitals:` list.
for name, block in re.findall(r"^  ([a-z_]+):(.*\n(?:(?:    |\s*#).*\n|\n)*)", section, re.M):
    if re.search(r"^\s*enable:\s*false", block, re.M):
        continue
    if not plugins.get(name, {}).get("available"):
        print("probe %s unavailable here: %s" % (name, plugins.get(name, {}).get("why")))
        continue
    listed = re.search(r"vitals:\s*\[([^]]*)\]", block)
    want = [name] + ([v.strip() for v in listed.group(1).split(",")] if listed else [])
    missing += [v for v in want if v not in have]
print("vitals in the last epoch:", " ".join(sorted(have)))
if missing:
    sys.exit("vitals of shipped probes missing under the unit: %s" % " ".join(sorted(set(missing))))
EOF
	fail "not every shipped probe collects under the unit"

# ---- the store: the vitals group reads it, other users do not ----
f=$(ct sh -c 'ls /var/lib/vitals/*/*.json.gz | head -1')
[ "$(ct stat -c %a:%U:%G /var/lib/vitals)" = 2750:root:vitals ] ||
	fail "/var/lib/vitals is $(ct stat -c %a:%U:%G /var/lib/vitals) under the unit, expected 2750:root:vitals"
[ "$(ct stat -c %a:%G "$f")" = 640:vitals ] ||
	fail "$f is $(ct stat -c %a:%G "$f"), expected 640:vitals"
ct setpriv --reuid=reader --regid=reader --init-groups vitals show --last >/dev/null 2>"$TMP/reader.err" ||
	{ cat "$TMP/reader.err"; fail "a user in the vitals group cannot read the store"; }
! ct setpriv --reuid=stranger --regid=stranger --init-groups cat "$f" >/dev/null 2>&1 ||
	fail "a user outside the vitals group reads $f"

# ---- systemd's own review of the unit, from the running manager ----
ct systemd-analyze security vitalsd.service --no-pager >"$TMP/security" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for vitalsd.service: \([0-9.]*\).*/\1/p' "$TMP/security")
[ -n "$score" ] || { cat "$TMP/security"; fail "no exposure level from systemd-analyze security"; }
echo "systemd-analyze security vitalsd.service: $score"
awk -v s="$score" 'BEGIN { exit !(s <= 4.5) }' ||
	{ cat "$TMP/security"; fail "exposure level $score, more than 4.5"; }

# ---- reload and stop, as an admin would ----
ct systemctl reload vitalsd >"$TMP/reload.log" 2>&1 ||
	{ cat "$TMP/reload.log"; ct journalctl -u vitalsd --no-pager; fail "systemctl reload vitalsd failed"; }
[ "$(ct systemctl is-active vitalsd)" = active ] || fail "vitalsd not active after reload"
[ "$(ct systemctl show -p MainPID --value vitalsd)" = "$pid" ] || fail "reload restarted vitalsd"
ct systemctl stop vitalsd || fail "systemctl stop vitalsd failed"
res=$(ct systemctl show -p Result --value vitalsd)
[ "$res" = success ] || { ct journalctl -u vitalsd --no-pager; fail "vitalsd stopped with result $res"; }
ct journalctl -u vitalsd --no-pager >"$TMP/journal" 2>&1
! grep -Eq 'vitalsd.*(error|crit):' "$TMP/journal" ||
	{ cat "$TMP/journal"; fail "vitalsd logged errors under the unit"; }
ct systemctl poweroff >/dev/null 2>&1 || true
i=0
while kill -0 "$BOOT" 2>/dev/null && [ "$i" -lt 100 ]; do
	i=$((i + 1))
	sleep 0.2
done
echo "PASS: the package runs under systemd: enabled, notify, capabilities $(sed -n 's/^CapEff:\t*//p' "$TMP/caps"), every shipped probe, store 2750 root:vitals, exposure $score"
