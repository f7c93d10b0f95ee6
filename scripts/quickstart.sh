#!/bin/sh
# SPDX-License-Identifier: MIT
# Build vitals and run vitalsd in the foreground from the build tree with the
# default configuration (conf/vitals.yaml).  Extra arguments go to vitalsd,
# e.g. `scripts/quickstart.sh --epochs 2`.  Stop it with Ctrl-C.
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh
export VITALS_PLUGIN_PATH="$PWD/probes:$PWD/filters:$PWD/outputs"
# The http output, if enabled, serves this tree's page.
export VITALS_WEB_DIR="$PWD/web"
data=/var/lib/vitals
if ! mkdir -p "$data" 2>/dev/null || [ ! -w "$data" ]; then
	data="$PWD/data"
	echo "quickstart: /var/lib/vitals is not writable; storing epochs in $data"
fi
echo "quickstart: vitalsd -c conf/vitals.yaml --data-dir $data $*"
echo "quickstart: then, in another shell: cli/vitals --data-dir $data show --last"
exec daemon/vitalsd -c conf/vitals.yaml --data-dir "$data" "$@"
