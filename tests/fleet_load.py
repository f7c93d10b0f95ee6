# SPDX-License-Identifier: MIT
# The load of tests/fleet_peer.sh: every host of the fleet does the same
# job.  `send ADDR PORT` sends UDP datagrams at a fixed rate (the same on
# every node, each in its own namespace; with priority 1:10, which a
# node's htb qdisc can single out), `sink ADDR PORT` reads and drops
# them, and `disk ROOT... ` feeds each host's proc root with a diskstats
# file advancing at one fixed I/O rate (from this machine's diskstats as
# recorded at start), the host named in ROOT/../diskfault with its
# latencies raised (await x8, %util x3, avgqu-sz x6) from when that file
# appears.  Runs until killed.
import os
import random
import socket
import sys
import time

RATE = 200  # datagrams per second
SIZE = 1000  # bytes of payload
TICK = 0.05  # s
PRIORITY = 0x10010  # skb priority: class 1:10 of an htb qdisc with handle 1:


def send(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, PRIORITY)
    payload = b"v" * SIZE
    per_tick = int(RATE * TICK)
    t = time.monotonic()
    while True:
        for _ in range(per_tick):
            try:
                s.sendto(payload, (addr, port))
            except OSError:
                pass
        t += TICK
        time.sleep(max(0.0, t - time.monotonic()))


def sink(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    print("ready", flush=True)
    while True:
        s.recv(65536)


# Per second of a disk: (counter index after the name, amount) when
# healthy; a fault multiplies the ticks (await), busy time (%util) and
# weighted time (avgqu-sz).  rd_ios, rd_sec, rd_ticks, wr_ios, wr_sec,
# wr_ticks, io_ticks (busy ms), rq_ticks (weighted ms).
HEALTHY = {0: 40, 2: 640, 3: 40 * 2, 4: 80, 6: 1280, 7: 80 * 3, 9: 250, 10: 400}
RAISE = {3: 8, 7: 8, 9: 3, 10: 6}


def disk(roots):
    with open("/proc/diskstats") as f:
        recorded = [line.split() for line in f if len(line.split()) >= 14]
    hosts = []
    for r in roots:
        rows = [[x[0], x[1], x[2]] + [float(v) for v in x[3:]] for x in recorded]
        hosts.append({"root": r, "rows": rows, "rnd": random.Random(r)})
    fault = os.path.join(os.path.dirname(os.path.abspath(roots[0])), "diskfault")
    last = time.monotonic()
    ready = False
    while True:
        now = time.monotonic()
        dt, last = now - last, now
        bad = open(fault).read().strip() if os.path.exists(fault) else ""
        for h in hosts:
            raised = os.path.basename(h["root"]) == bad
            for row in h["rows"]:
                jitter = 1 + 0.05 * (h["rnd"].random() - 0.5)
                for i, v in HEALTHY.items():
                    m = RAISE.get(i, 1) if raised else 1
                    row[3 + i] += v * m * dt * jitter
            tmp = os.path.join(h["root"], ".diskstats.tmp")
            with open(tmp, "w") as f:
                for row in h["rows"]:
                    f.write("%4s %7s %s %s\n" % (row[0], row[1], row[2],
                            " ".join(str(int(v)) for v in row[3:])))
            os.rename(tmp, os.path.join(h["root"], "diskstats"))
        if not ready:
            print("ready", flush=True)
            ready = True
        time.sleep(0.1)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "sink":
        sink(sys.argv[2], int(sys.argv[3]))
    else:
        disk(sys.argv[2:])
