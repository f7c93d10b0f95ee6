#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The fleet view the way a person uses it, in headless Chromium (the DevTools
# client of tests/browser.py): a row per host, the odd host first with its
# findings, a real click on its row opening its epoch, a screenshot per step.
# Usage: python3 tests/web_fleet.py URL OUTDIR ODD_HOST HOSTS (exit 77: no chromium).
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import CHROMIUM, HASH, Browser, Run, expect  # noqa: E402

# The rows as drawn: host, ratio text and findings count, in order.
ROWS = r"""[...document.querySelectorAll('#fleet-rows .frow')].map((e) => ({
  host: e.dataset.host, ratio: e.querySelector('.fratio').textContent,
  findings: e.querySelector('.ffind').dataset.count}))"""
# Per row of the canvas, the share of its pixels that are clearly red (above
# the fleet's median) and clearly blue (below), read back from the canvas.
SHADES = r"""(() => {
  const c = document.querySelector('#fleet-map'), ctx = c.getContext('2d');
  const px = ctx.getImageData(0, 0, c.width, c.height).data, k = c.height / c.clientHeight;
  const axis = +c.dataset.axis * k, rh = +c.dataset.rowHeight * k;
  return [...Array(+c.dataset.rows).keys()].map((r) => {
    let red = 0, blue = 0, n = 0;
    for (let y = Math.round(axis + r * rh + rh / 2), x = 0; x < c.width; x++, n++) {
      const i = (y * c.width + x) * 4, [R, G, B] = [px[i], px[i + 1], px[i + 2]];
      if (R - B > 40 && R - G > 40) red++;
      if (B - R > 40) blue++;
    }
    return {red: red / n, blue: blue / n};
  });
})()"""
FLEET = "document.querySelector('#fleet')"


def main():
    if len(sys.argv) != 5:
        print("usage: web_fleet.py URL OUTDIR ODD_HOST HOSTS", file=sys.stderr)
        return 2
    url, outdir, odd, nhosts = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        print("SKIP: no chromium at %s (apt-get install chromium)" % CHROMIUM)
        return 77
    os.makedirs(outdir, exist_ok=True)
    base = url.split("#")[0]
    b = Browser()
    r = Run(b, outdir)
    try:
        steps(b, r, base, odd, nhosts)
    except Exception as e:
        r.failed += 1
        print("FAIL - could not go on: %s: %s" % (type(e).__name__, e))
    finally:
        b.close()
    print("%d passed, %d failed" % (r.passed, r.failed))
    return 1 if r.failed else 0


def loads(b):
    return b.eval("+(%s.dataset.loads || 0)" % FLEET)


def steps(b, r, base, odd, nhosts):
    # The two hours stored, opened on the chart, then the Fleet tab clicked.
    b.open(base)
    hosts = b.eval("fetch('api/v1/hosts').then((r) => r.json())")
    last = max(h["last_ns"] for h in hosts["hosts"]) // 10**9 + 60
    frm, to = last - 7200, last
    b.open("about:blank")
    b.open(base + "#from=@%d&to=@%d" % (frm, to))
    b.wait("+(document.querySelector('#chart').dataset.loads || 0) >= 1", "the chart")

    def rows():
        b.click("#views [data-view=fleet]")
        b.wait("!%s.hidden && %s.dataset.findings != null" % (FLEET, FLEET), "the fleet view and its findings")
        got = b.eval(ROWS)
        expect(len(got) == nhosts, "%d rows for %d hosts: %s" % (len(got), nhosts, [x["host"] for x in got]))
        expect(sorted(x["host"] for x in got) == sorted(h["host"] for h in hosts["hosts"]),
               "rows %s, hosts %s" % ([x["host"] for x in got], [h["host"] for h in hosts["hosts"]]))
        cols = b.eval("+document.querySelector('#fleet-map').dataset.cols")
        expect(cols >= 100, "%d columns for two hours of 60 s epochs" % cols)
        expect(b.eval(HASH).get("view") == "fleet", "the URL does not say view=fleet")
        return "%d rows x %d slots, drawn in %s ms" % (len(got), cols, b.eval("%s.dataset.drawMs" % FLEET))
    r.check("fleet", "the fleet view has one row per host", rows)

    def first():
        got = b.eval(ROWS)
        expect(got[0]["host"] == odd, "the first row is %s, not the odd host %s" % (got[0]["host"], odd))
        ratio = float(got[0]["ratio"].lstrip("×"))
        expect(ratio > 1.3, "the odd host's ratio to the median is %s" % got[0]["ratio"])
        others = [x for x in got[1:] if not 0.8 < float(x["ratio"].lstrip("×")) < 1.25]
        expect(not others, "peers far from the median: %s" % others)
        shades = b.eval(SHADES)
        expect(shades[0]["red"] > 0.5, "the odd host's row is not red: %s" % shades[0])
        pale = [round(s["red"] + s["blue"], 2) for s in shades[1:]]
        expect(max(pale) < 0.2, "peers' rows coloured: %s" % pale)
        # its findings of the vital shown, as many as the API has for it in
        # the answer for all hosts (the one call the view makes)
        want = b.eval("fetch('api/v1/findings?' + new URLSearchParams({from: '@%d', to: '@%d'}))"
                      ".then((r) => r.json()).then((j) => j.findings.filter((f) => f.vital === 'cpu' &&"
                      " f.host === %s).length)" % (frm, to, json.dumps(odd)))
        expect(want > 0, "the API has no cpu finding on %s" % odd)
        expect(got[0]["findings"] == str(want), "%s findings on its row, the API has %d" % (got[0]["findings"], want))
        return "%s first at %s, %s of its row red, %d findings" % (odd, got[0]["ratio"],
                                                                    "%.0f%%" % (shades[0]["red"] * 100), want)
    r.check("odd-first", "the odd host is the first row, red, with its findings", first)

    def vital():
        n = loads(b)
        b.eval("(() => { const s = document.querySelector('#fleet-vital'); s.value = 'sched';"
               " s.dispatchEvent(new Event('change')); })()")
        b.wait("%s > %d && %s.dataset.findings != null" % ("+(%s.dataset.loads || 0)" % FLEET, n, FLEET),
               "the fleet view of sched")
        expect(b.eval(HASH).get("hv") == "sched", "the URL does not say hv=sched")
        got = b.eval(ROWS)
        expect(len(got) == nhosts and got[0]["host"] == odd,
               "sched: rows %s" % [(x["host"], x["ratio"]) for x in got])
        return "sched: %s first at %s" % (odd, got[0]["ratio"])
    r.check("vital", "another vital keeps the odd host first", vital)

    def click():
        got = b.eval(ROWS)
        _, y, _, _ = b.center('#fleet-rows .frow[data-row="0"]')
        left, width, cols = b.eval("(() => { const c = document.querySelector('#fleet-map'),"
                                   " r = c.getBoundingClientRect(); return [r.left, r.width, +c.dataset.cols]; })()")
        col = cols // 2
        b.click_at(left + width * (col + 0.5) / cols, y)
        h = b.wait("(() => { const h = %s; return h.view === 'epoch' && h; })()" % HASH, "the epoch view")
        expect(h.get("host") == odd and h.get("ehost") == odd, "clicked %s's row, the URL has %s" % (odd, h))
        # the slot of the column clicked: the col-th slot of the odd host
        slots = b.eval("fetch('api/v1/series?' + new URLSearchParams({from: '@%d', to: '@%d', host: %s,"
                       " vital: 'cpu', top: 0})).then((r) => r.json()).then((j) => j.slots.map((s) => s.start_ns))"
                       % (frm, to, json.dumps(got[0]["host"])))
        want = "@%d" % (sorted(slots)[col] // 10**9)
        expect(h.get("sel", "").split("..")[0] == want, "clicked column %d (%s), sel is %s" % (col, want, h.get("sel")))
        head = b.wait("(() => { const e = document.querySelector('#epoch-detail .samples h3');"
                      " return !document.querySelector('#epoch-detail').hidden && e && e.innerText; })()",
                      "the epoch's samples")
        expect(("on %s" % odd) in head, "the epoch shown is not %s's: %r" % (odd, head))
        b.wait("document.querySelectorAll('#epoch-detail .frame').length > 0", "stack frames")
        b.wait("document.querySelector('#host').value === %s" % json.dumps(odd), "the host selector set")
        return "column %d: %s, %s" % (col, h["sel"], head)
    r.check("click", "clicking a cell of the odd host opens its epoch", click)

    def back():
        b.eval("history.back()")
        b.wait("!%s.hidden && %s.dataset.findings != null && "
               "document.querySelectorAll('#fleet-rows .frow').length === %d" % (FLEET, FLEET, nhosts),
               "the fleet view again")
        on = b.eval("[...document.querySelectorAll('#fleet-rows .frow.on')].map((e) => e.dataset.host)")
        expect(on == [], "rows highlighted with no host chosen: %s" % on)
        return "%d rows" % nhosts
    r.check("back", "back returns to the fleet view", back)

    def clean():
        expect(not b.problems, "; ".join(b.problems[:5]))
        return "%d events seen" % len(b.events)
    r.check("console", "no console errors or exceptions", clean)


if __name__ == "__main__":
    sys.exit(main())
