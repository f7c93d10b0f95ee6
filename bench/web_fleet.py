#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# How long the page's fleet view takes to show a range: opens
# URL#from=..&to=..&view=fleet in headless Chromium (tests/browser.py's
# DevTools client) ROUNDS times and prints, per round, the time from
# navigation to the heat map drawn and to its findings added (the page's
# own performance.now()), the time the view took to build and draw its
# rows once the answer was in, and the medians.  Measures; asserts nothing.
#   bench/web_fleet.py URL FROM TO [ROUNDS]
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from browser import Browser  # noqa: E402

FLEET = "document.querySelector('#fleet')"


def main():
    if len(sys.argv) < 4:
        print("usage: web_fleet.py URL FROM TO [ROUNDS]", file=sys.stderr)
        return 2
    url, frm, to = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    b = Browser()
    shown, found, draw = [], [], []
    try:
        for i in range(rounds):
            b.open("about:blank")
            b.open("%s#from=%s&to=%s&view=fleet" % (url, frm, to))
            b.wait("+(%s.dataset.loads || 0) >= 1" % FLEET, "the fleet view", polls=3000, interval=0.02)
            shown.append(b.eval("performance.now()"))
            b.wait("%s.dataset.findings != null" % FLEET, "its findings", polls=3000, interval=0.02)
            found.append(b.eval("performance.now()"))
            draw.append(float(b.eval("%s.dataset.drawMs" % FLEET)))
            size = b.eval("[+document.querySelector('#fleet-map').dataset.rows,"
                          " +document.querySelector('#fleet-map').dataset.cols]")
            print("round %d: %d hosts x %d slots drawn %.0f ms after navigation (rows built and "
                  "painted in %.0f ms), findings at %.0f ms" % (i + 1, size[0], size[1], shown[-1],
                                                                draw[-1], found[-1]))
    finally:
        b.close()
    print("median over %d rounds: drawn at %.0f ms, rows and canvas %.0f ms, findings at %.0f ms" %
          (rounds, statistics.median(shown), statistics.median(draw), statistics.median(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
