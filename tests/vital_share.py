#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Reads stored epochs (vitals show --json, one JSON object per file given)
# and prints what the probe tests check about one vital: its totals and, for
# the processes matching a comm, their share of the vital's weight (summing
# the HCA slots their samples landed in) and their samples.  Output: one JSON
# object.  Usage: vital_share.py VITAL COMM EPOCH.json...
import json
import sys


def main():
    vital, comm, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    out = {"vital": vital, "comm": comm, "events": 0, "wsum": 0,
           "share": 0.0, "top_comm": None, "samples": [], "epochs": 0}
    mine = 0
    by_comm = {}
    for fn in files:
        with open(fn) as f:
            e = json.load(f)
        for v in e.get("vitals", []):
            if v["name"] != vital:
                continue
            out["epochs"] += 1
            out["events"] += v["events"]
            out["wsum"] += v["wsum"]
            hca = dict((s, c) for s, c in v["hca"]["nz"])
            slots = {}
            for s in v.get("samples", []):
                slots.setdefault(s["slot"], set()).add(s["comm"])
                if s["comm"].startswith(comm):
                    out["samples"].append(s)
            for slot, comms in slots.items():
                # A slot shared by several processes counts for none of them.
                if len(comms) != 1:
                    continue
                c = next(iter(comms))
                by_comm[c] = by_comm.get(c, 0) + hca.get(slot, 0)
                if c.startswith(comm):
                    mine += hca.get(slot, 0)
    if out["wsum"]:
        out["share"] = mine / out["wsum"]
    out["weight"] = mine
    if by_comm:
        out["top_comm"] = max(by_comm, key=by_comm.get)
    json.dump(out, sys.stdout)
    print()


main()
