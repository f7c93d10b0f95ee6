# SPDX-License-Identifier: MIT
"""The socket vital's HCA against udp_peers (tests/probe_hca.sh, bench/hca_kernel.sh).

Reads $TMP/wl.json and the stored epochs $TMP/e*.json; prints, for each
epoch the workload sent in, the HCA size and the share of its peers with
at least one sample of their label.  An epoch that holds none of the
workload's rounds whole (each sends to every peer) may lack peers: it is
marked and left out of the summary line, a JSON object of the full
epochs: sizes and coverages, and the sizes of the epochs after the
workload's.
"""
import glob
import json
import re
import sys

tmp = sys.argv[1]
wl = json.load(open(tmp + "/wl.json"))
peers = {wl["base"] + i | wl["port"] << 32 | 17 << 48 for i in range(wl["peers"])}
rows, after = [], []
for f in sorted(glob.glob(tmp + "/e*.json"), key=lambda f: int(re.findall(r"\d+", f)[-1])):
    e = json.load(open(f))
    whole = any(e["start_ns"] <= a and b <= e["start_ns"] + e["length_ns"]
                for a, b in wl["rounds_ns"])
    for v in e["vitals"]:
        if v["name"] != "socket":
            continue
        got = {s["label"] for s in v["samples"] if s["pid"] == wl["pid"] and s["op"] == 0}
        if got:
            rows.append((v["hca_size"], len(got & peers), v.get("samples_dropped", 0),
                         v.get("dropped", 0), len(v["hca"]["nz"]), whole))
            after = []
        elif rows:
            after.append(v["hca_size"])
full = [r for r in rows if r[5]]
for i, (m, n, sd, d, nz, w) in enumerate(rows):
    print("epoch %d: hca %5d, %5d of %d peers sampled (%.3f%%), %d counters in use, "
          "samples dropped %d, events dropped %d%s"
          % (i, m, n, wl["peers"], 100.0 * n / wl["peers"], nz, sd, d,
             "" if w else " (no whole round)"))
print("after: hca %s" % after)
print(json.dumps({"sizes": [r[0] for r in full], "after": after,
                  "coverage": [r[1] / wl["peers"] for r in full],
                  "samples_dropped": sum(r[2] for r in full)}))
