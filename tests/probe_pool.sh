#!/bin/sh
# SPDX-License-Identifier: MIT
# The kernel vitals' HCAs share one pool under sketch.hca_memory: with the
# syscall and socket probes in one daemon (each filtered to a workload of
# this test's own), both objects hold the same two maps (counters and
# first-sighting bits), sized from hca_memory (256K: 48 units of 1024
# entries, 32 of them the slack for small HCAs), while udp_peers' 3000
# peers grow the socket HCA in it; and each vital still counts its own
# workload exactly: the loop's calls (with its start-up's and exit's),
# every datagram sent.  With hca_memory 0 each object has maps of its own,
# its vitals' regions at hca_max in both halves.
. "$top_srcdir/tests/lib.sh"

need_probe syscall
need_probe socket
sys="psys$$_"
udp="pudp$$_"
workload_copy syscall_loop "$sys"
workload_copy udp_peers "$udp"

# pool_conf MEMORY: both probes, 2 s epochs, sketch.hca_memory MEMORY.
pool_conf() {
	rm -rf "$TMP/data" && mkdir -p "$TMP/data"
	cat >"$TMP/pool.yaml" <<EOC
epoch: 2s
data_dir: $TMP/data
log_level: info
sketch:
  hca_size: 1024
  hca_max: 4096
  hca_memory: $1
probes:
  syscall: { comm: $sys }
  socket: { comm: $udp }
plugins:
  store: {}
EOC
	echo "$TMP/pool.yaml"
}

# maps: the daemon's array maps of u64 values (the sketch maps; the
# ring buffers and parameters are other types or sizes) as "ID ENTRIES"
# lines, one per descriptor.
maps() {
	for fd in /proc/"$DAEMON"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in *bpf-map*) ;; *) continue ;; esac
		awk '/^map_type:/ {t = $2} /^value_size:/ {v = $2}
		    /^max_entries:/ {n = $2} /^map_id:/ {id = $2}
		    END {if (t == 2 && v == 8 && n >= 1024) print id, n}' \
			/proc/"$DAEMON"/fdinfo/"${fd##*/}"
	done
}

daemon_start "$(pool_conf 256K)"
maps > "$TMP/maps.txt"
"$TMP/$udp" 6 3000 250 > "$TMP/udp.json" || fail "udp_peers failed"
"$TMP/$sys" 0.001 1048576 > "$TMP/loop.json" || fail "syscall_loop failed"
daemon_stop
python3 - "$TMP/maps.txt" <<'PY' || fail "the probes do not share one pool of 48 units"
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
ids = sorted(set(r[0] for r in rows))
sizes = set(r[1] for r in rows)
assert len(ids) == 2, "sketch maps %s (descriptors %d), want 2 shared" % (ids, len(rows))
assert sizes == {str(48 * 1024)}, "entries %s, want %d" % (sizes, 48 * 1024)
assert len(rows) >= 6, "%d descriptors of the 2 maps: 2 objects and the pool hold them" % len(rows)
print("shared pool: maps %s, %d entries each, %d descriptors" % (ids, 48 * 1024, len(rows)))
PY
files=$(epochs_json)
python3 "$top_srcdir/tests/vital_share.py" syscall "$sys" $files > "$TMP/sys.json"
python3 "$top_srcdir/tests/vital_share.py" socket "$udp" $files > "$TMP/udp_r.json"
python3 - "$TMP/sys.json" "$TMP/loop.json" "$TMP/udp_r.json" "$TMP/udp.json" $files <<'PY' || fail "a vital sharing the pool miscounted"
import json, sys
r, w, u, uw = (json.load(open(f)) for f in sys.argv[1:5])
sizes = [v["hca_size"] for f in sys.argv[5:] for v in json.load(open(f))["vitals"]
         if v["name"] == "socket"]
extra = r["events"] - w["calls"]
assert 0 <= extra <= 200, "syscall: %d events for %d calls" % (r["events"], w["calls"])
assert u["events"] == uw["datagrams"], "socket: %d events for %d datagrams" % (u["events"], uw["datagrams"])
assert max(sizes) == 4096, "socket HCA sizes %s: did not grow to hca_max in the pool" % sizes
print("syscall: %d calls, %d counted; socket: %d datagrams, all counted; "
      "socket HCA sizes %s" % (w["calls"], r["events"], uw["datagrams"], sizes))
PY

daemon_start "$(pool_conf 0)"
maps > "$TMP/maps0.txt"
daemon_stop
python3 - "$TMP/maps0.txt" <<'PY' || fail "with hca_memory 0 the objects do not have maps of their own"
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
ids = set(r[0] for r in rows)
# one vital each, 4096 counters in both halves: 2 x 4 units of 1024
assert len(ids) == 4, "sketch maps %s, want 2 per object" % sorted(ids)
assert set(r[1] for r in rows) == {"8192"}, "entries %s, want 8192" % set(r[1] for r in rows)
print("hca_memory 0: %d maps of 8192 entries" % len(ids))
PY
