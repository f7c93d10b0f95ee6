#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks what tests/faults.sh collected from a store made by bench/mkstore
# --faults and its clean twin: every injected fault is reported by the
# filter meant for it, at its time (base timescale) and exe or label, and
# the clean store gives nothing of severity warn or above.  Prints a table
# per filter (injected, found, false positives, clean-store findings) and
# one line per fault; exits 1 if a fault is missed or a filter flags the
# clean store.  Usage: faults.py DIR, with in DIR: manifest.json (the fault
# store's), {faults,clean}.json (findings --severity info of every filter),
# {faults,clean}-cm.json (callmodel's findings, info included),
# {faults,clean}-diff.json (vitals diff on the shift's ranges) and
# top-N.json (vitals top on epoch N of the takeover, topk by label).
import json
import os
import sys

SEV = {"info": 1, "warn": 2, "crit": 3}
# Epochs after a fault in which a filter that compares with the recent past
# may still see it leave: the longest memory among the filters' defaults
# (diff's baseline).  A finding there is a false positive, but a late one.
TAIL = 12
FILTERS = ["ewma", "threshold", "rules", "affinity", "diff", "callmodel"]


def load(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def overlaps(f, start, end):
    return f["start_ns"] < end and f["end_ns"] > start


def loud(fs):
    """Warnings and worse, and those grouped with another filter's warning
    about the same exe (lowered to info, marked "[grouped with ...]")."""
    return [f for f in fs if SEV[f["severity"]] >= SEV["warn"]
            or "[grouped with " in f["text"]]


def names(f, a):
    """Whether finding f names the fault's exe (or label) as it should."""
    label = f.get("label") or ""
    if a["filter"] == "ewma":  # the vital's, naming the slot that moved
        return f["vital"] == a["vital"] and \
            "most of the change in %s (" % a["exe"] in f["text"]
    if a["filter"] == "rules":
        return label == a["exe"] and "(rule #%d)" % a["rule"] in f["text"]
    if a["filter"] in ("threshold", "affinity", "diff"):
        return label == a["exe"] and f["vital"] == a["vital"]
    return label == a["exe"]


# What the sentence must also say, per kind of fault.
DETAIL = {
    "io_error": "dev 8:16 sector 4711",
    "syscall_loop": "system call 44 from one site",
    "crash": "it crashed (SIGSEGV",
    "leak": "net of frees",
}


def epoch_of(m, ns):
    return (ns - m["start_ns"]) // m["epoch_ns"]


def ranks_top(m, a, cm):
    """callmodel: in every epoch of the fault, its exe scores highest (the
    findings made at an epoch end with it; an incident's start earlier)."""
    for e in range(a["first_epoch"], a["first_epoch"] + a["epochs"]):
        end = m["start_ns"] + (e + 1) * m["epoch_ns"]
        here = [f for f in cm if f["base"] and f["end_ns"] == end]
        if not here or max(here, key=lambda f: f["score"])["label"] != a["exe"]:
            return False
    return True


def found(m, a, d):
    """The first finding of the meant filter for fault a, or None."""
    if a["filter"] == "diff":
        fs = loud(load(d, "faults-diff.json")["findings"])
        fs = [f for f in fs if f["vital"] == a["vital"]]
        best = max(fs, key=lambda f: f["score"]) if fs else None
        return best if best and names(best, a) else None
    fs = load(d, "faults-cm.json") if a["filter"] == "callmodel" \
        else load(d, "faults.json")
    fs = [f for f in loud(fs) if f["filter"] == a["filter"] and f["base"]
          and overlaps(f, a["start_ns"], a["end_ns"]) and names(f, a)
          and DETAIL.get(a["kind"], "") in f["text"]]
    if a["filter"] == "callmodel" and not ranks_top(m, a, load(d, "faults-cm.json")):
        return None
    return fs[0] if fs else None


def topk_first(m, a, d):
    """topk (info only): the takeover's label is first in each epoch."""
    for e in range(a["first_epoch"], a["first_epoch"] + a["epochs"]):
        fs = [f for f in load(d, "top-%d.json" % e)["findings"]
              if f["vital"] == a["vital"]]
        if not fs or fs[0]["label"] != a["label"] or fs[0]["score"] < 0.5:
            return False
    return True


def false_positives(m, fs, name, tail):
    """Loud findings of filter name overlapping no fault nor `tail` epochs
    after it, or the slot after it at the finding's timescale (where a
    filter sees the fault end)."""
    def after(f):
        return max(tail * m["epoch_ns"], f["timescale_s"] * 10**9)
    return [f for f in loud(fs) if f["filter"] == name and not any(
        overlaps(f, a["start_ns"], a["end_ns"] + after(f))
        for a in m["anomalies"])]


def diff_extra(m, d, clean):
    """vitals diff's loud findings but the one explaining the shift."""
    a = [a for a in m["anomalies"] if a["filter"] == "diff"][0]
    fs = loud(load(d, ("clean" if clean else "faults") + "-diff.json")["findings"])
    return [f for f in fs if clean or not names(f, a)]


def main():
    d = sys.argv[1]
    m = load(d, "manifest.json")
    faults, clean = load(d, "faults.json"), load(d, "clean.json")
    cm, cm_clean = load(d, "faults-cm.json"), load(d, "clean-cm.json")
    bad = []
    rows = {n: [0, 0, 0, 0, 0] for n in FILTERS}
    print("fault          filter     epochs   found  finding")
    for a in m["anomalies"]:
        f = found(m, a, d)
        rows[a["filter"]][0] += 1
        rows[a["filter"]][1] += f is not None
        span = "%d-%d" % (a["first_epoch"], a["first_epoch"] + a["epochs"] - 1)
        print("%-14s %-10s %-8s %-6s %s" % (
            a["kind"], a["filter"], span,
            "at %d" % epoch_of(m, f["start_ns"]) if f else "MISSED",
            (f["text"][:90] if f else "")))
        if f is None:
            bad.append("%s not found by %s" % (a["kind"], a["filter"]))
    for n in FILTERS:
        src = cm if n == "callmodel" else faults
        rows[n][2] = len(false_positives(m, src, n, 1))
        rows[n][3] = len(false_positives(m, src, n, TAIL))
        rows[n][4] = len(loud([f for f in (cm_clean if n == "callmodel" else clean)
                               if f["filter"] == n]))
    rows["diff"][2] += len(diff_extra(m, d, False))
    rows["diff"][3] += len(diff_extra(m, d, False))
    rows["diff"][4] += len(diff_extra(m, d, True))
    take = [a for a in m["anomalies"] if a["kind"] == "takeover"][0]
    topk_ok = topk_first(m, take, d)
    topk_clean = len(loud([f for f in clean if f["filter"] == "topk"]))
    print()
    print("filter       injected  found  false+  (late)  clean")
    for n in FILTERS:
        r = rows[n]
        print("%-12s %8d %6d %7d %7d %6d" % (n, r[0], r[1], r[2],
                                            r[2] - r[3], r[4]))
        if r[3]:
            bad.append("%s: %d findings unrelated to any fault" % (n, r[3]))
        if r[4]:
            bad.append("%s: %d findings on the clean store" % (n, r[4]))
    print("%-12s %8d %6d %7s %7s %6d" % ("topk (info)", 1, int(topk_ok), "-",
                                          "-", topk_clean))
    print("false+: findings (warn, crit) on the fault store outside every "
          "fault and the slot after it (at the finding's timescale); "
          "(late): of those, in the %d epochs after a fault, where a filter "
          "still compares with it" % TAIL)
    if not topk_ok:
        bad.append("topk does not rank %s first in its epochs" % take["label"])
    if topk_clean:
        bad.append("topk: %d loud findings on the clean store" % topk_clean)
    kinds = {a["filter"] for a in m["anomalies"]}
    if kinds != set(FILTERS):
        bad.append("the manifest has faults for %s" % sorted(kinds))
    for b in bad:
        print("FAIL: " + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
