#!/bin/sh
# SPDX-License-Identifier: MIT
# Install missing Debian packages, then configure and build vitals in place.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup-debian.sh
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure --prefix=/usr/local --sysconfdir=/etc --localstatedir=/var
make -j"$(nproc)"
