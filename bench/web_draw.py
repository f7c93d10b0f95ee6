#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# How long the page takes to show a range: opens URL#from=..&to=.. in
# headless Chromium (tests/browser.py's DevTools client) ROUNDS times and
# prints, per round, the time from navigation to the chart drawn (the
# chart's loads counter set and its canvas present), as the page's own
# performance.now() says, and the median.  Measures; asserts nothing.
#   bench/web_draw.py URL FROM TO [ROUNDS]
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from browser import Browser  # noqa: E402


def main():
    if len(sys.argv) < 4:
        print("usage: web_draw.py URL FROM TO [ROUNDS]", file=sys.stderr)
        return 2
    url, frm, to = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    b = Browser()
    times = []
    try:
        for i in range(rounds):
            b.open("about:blank")
            b.open("%s#from=%s&to=%s&timescale=base" % (url, frm, to))
            b.wait("+(document.querySelector('#chart').dataset.loads || 0) >= 1 && "
                   "!!document.querySelector('#chart canvas')", "the chart", polls=3000, interval=0.02)
            ms = b.eval("performance.now()")
            slots = b.eval("document.querySelectorAll('#chart canvas').length")
            times.append(ms)
            print("round %d: chart drawn %.0f ms after navigation (%d canvas)" % (i + 1, ms, slots))
    finally:
        b.close()
    print("median %.0f ms over %d rounds (min %.0f, max %.0f)" %
          (statistics.median(times), len(times), min(times), max(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
