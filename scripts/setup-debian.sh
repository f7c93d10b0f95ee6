#!/bin/sh
# SPDX-License-Identifier: MIT
# Install what vitals needs to build and test on Debian 12, if missing.
set -eu

# prometheus is for tests only: its promtool lints /metrics
# (tests/metrics_lint.sh); where systemd runs, the package also starts a
# Prometheus server on :9090 (systemctl disable --now prometheus).
PKGS="build-essential autoconf automake libtool libtool-bin pkg-config \
libltdl-dev libevent-dev libjansson-dev zlib1g-dev libyaml-dev check \
libsubunit-dev python3 procps linux-perf curl man-db \
clang libbpf-dev bpftool linux-libc-dev libelf-dev debhelper \
protobuf-c-compiler libprotobuf-c-dev golang-github-google-pprof-dev \
prometheus golang-go chromium fonts-dejavu-core stress-ng clang-format \
systemd-container debootstrap"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "setup-debian: missing packages:$missing" >&2
	echo "setup-debian: run as root: apt-get install$missing" >&2
	exit 1
fi
echo "setup-debian: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
