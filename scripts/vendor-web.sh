#!/bin/sh
# SPDX-License-Identifier: MIT
# Re-vendor the page's JavaScript libraries into web/vendor/ from the npm
# registry at pinned versions: each tarball is checked against its pinned
# sha512, then its dist files and LICENSE are copied; web/vendor/VERSIONS lists them.
set -eu
cd "$(dirname "$0")/.."
vendor=web/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# NAME VERSION INTEGRITY FILE... (FILE is a path inside the package)
vendor() {
	name=$1 version=$2 integrity=$3
	shift 3
	(cd "$tmp" && npm pack --silent "$name@$version" >/dev/null)
	tgz=$tmp/$name-$version.tgz
	got=sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)
	if [ "$got" != "$integrity" ]; then
		echo "vendor-web: $name@$version: integrity $got, expected $integrity" >&2
		exit 1
	fi
	rm -rf "${tmp:?}/package" "${vendor:?}/$name"
	tar -xzf "$tgz" -C "$tmp"
	mkdir -p "$vendor/$name"
	cp "$tmp/package/LICENSE" "$vendor/$name/LICENSE"
	for f in "$@"; do
		cp "$tmp/package/$f" "$vendor/$name/"
	done
	printf '%s\t%s\t%s\n' "$name" "$version" "$integrity" >>"$tmp/VERSIONS"
}

vendor uplot 1.6.32 \
    sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw== \
    dist/uPlot.iife.min.js dist/uPlot.min.css
vendor d3 7.9.2 \
    sha512-ZKb/mONPVKzaO5UlcWcwN8bS4ezvQaYu+bsou+XgNABdGC800kwH651ADTbbTxMPHW13UlvbQafdmJQDk1w7Mg== \
    dist/d3.min.js
# d3-flame-graph 5 is built against d3 v7 and reads the global d3 (load
# d3.min.js first); it exports flamegraph.default, .tooltip and .colorMapper.
vendor d3-flame-graph 5.0.0 \
    sha512-ALZQ4at8Dex8HCoj9D5p5TY6gLNEc2vAZAy+NKO/6GLEfhYJmGxYuRClO6RPoplndyOHxQTPipdlGeMggkjtnQ== \
    dist/d3-flamegraph.umd.min.js dist/d3-flamegraph.css

{
	echo "# name	version	integrity (sha512 of the npm tarball); written by scripts/vendor-web.sh"
	cat "$tmp/VERSIONS"
} >"$vendor/VERSIONS"
echo "vendor-web: $(grep -vc '^#' "$vendor/VERSIONS") libraries in $vendor"
