#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Tests the page the way a person uses it: a real headless Chromium driven over
# the DevTools protocol (standard library only), real drags and clicks, and a
# screenshot per step.  Usage: python3 tests/browser.py URL OUTDIR (exit 77: no chromium).
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


class CDPError(Exception):
    pass


class Browser:
    """One headless Chromium and one page, over --remote-debugging-pipe:
    commands go to the browser's fd 3, answers and events come from its fd 4,
    each a JSON message ended by a NUL byte."""

    def __init__(self, chromium=CHROMIUM, width=1400, height=1000):
        self.tmp = tempfile.mkdtemp(prefix="vitals-browser-")
        to_chrome = os.pipe()
        from_chrome = os.pipe()
        # The browser's ends, moved to 10 and above and handed over with
        # pass_fds; a small trampoline puts them at 3 and 4 and execs chromium.
        theirs = [fcntl.fcntl(to_chrome[0], fcntl.F_DUPFD_CLOEXEC, 10),
                  fcntl.fcntl(from_chrome[1], fcntl.F_DUPFD_CLOEXEC, 10)]
        os.close(to_chrome[0])
        os.close(from_chrome[1])
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--user-data-dir=" + self.tmp, "--window-size=%d,%d" % (width, height),
                "--no-first-run", "--no-default-browser-check", "--hide-scrollbars",
                "--disable-extensions", "--disable-background-networking", "about:blank"]
        trampoline = ("import os, sys\n"
                      "r, w = int(sys.argv[1]), int(sys.argv[2])\n"
                      "os.dup2(r, 3)\nos.dup2(w, 4)\nos.close(r)\nos.close(w)\n"
                      "os.execv(sys.argv[3], sys.argv[3:])\n")
        self.log = open(os.path.join(self.tmp, "chromium.log"), "wb")
        self.proc = subprocess.Popen([sys.executable, "-c", trampoline, str(theirs[0]), str(theirs[1]),
                                      chromium] + args, pass_fds=theirs,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        for fd in theirs:
            os.close(fd)
        self.out = os.fdopen(to_chrome[1], "wb", buffering=0)
        self.inp = os.fdopen(from_chrome[0], "rb", buffering=0)
        self.next_id = 0
        self.answers = {}
        self.cond = threading.Condition()
        self.dead = None
        self.events = []            # every event, (method, params)
        self.problems = []          # console errors, exceptions, error log entries
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        target = self.send("Target.createTarget", {"url": "about:blank"}, page=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 page=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(domain + ".enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def _read(self):
        buf = b""
        try:
            while True:
                chunk = self.inp.read(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\0" in buf:
                    msg, buf = buf.split(b"\0", 1)
                    self._dispatch(json.loads(msg))
        finally:
            with self.cond:
                self.dead = "chromium closed its pipe (exit %s)" % self.proc.poll()
                self.cond.notify_all()

    def _dispatch(self, m):
        if "id" in m:
            with self.cond:
                self.answers[m["id"]] = m
                self.cond.notify_all()
            return
        method, p = m.get("method"), m.get("params", {})
        self.events.append((method, p))
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            self.problems.append("console.%s: %s" % (p["type"], text))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            exc = d.get("exception", {}).get("description") or d.get("text", "")
            self.problems.append("exception: %s (%s:%s)" % (exc, d.get("url", ""), d.get("lineNumber", "")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.problems.append("log (%s): %s %s" % (e.get("source"), e.get("text"), e.get("url", "")))

    def send(self, method, params=None, page=True, timeout=120):
        """One command; its result, or CDPError.  The timeout only guards
        against a browser that hangs; it is never a test of speed."""
        with self.cond:
            self.next_id += 1
            mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if page:
            msg["sessionId"] = self.session
        self.out.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self.cond:
            while mid not in self.answers:
                if self.dead:
                    raise CDPError(self.dead)
                if not self.cond.wait(max(0.0, deadline - time.monotonic())) and \
                        time.monotonic() >= deadline:
                    raise CDPError("%s: no answer from chromium" % method)
            m = self.answers.pop(mid)
        if "error" in m:
            raise CDPError("%s: %s" % (method, m["error"].get("message")))
        return m.get("result", {})

    def eval(self, expr):
        """The value of a JavaScript expression (promises awaited)."""
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True, "userGesture": True})
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise CDPError("evaluate %r: %s" % (expr[:80], d.get("exception", {}).get("description")
                                                or d.get("text")))
        return r["result"].get("value")

    def wait(self, expr, what=None, polls=600, interval=0.1):
        """Poll expr until it is truthy and return its value; after polls
        tries raise AssertionError naming what was awaited."""
        for _ in range(polls):
            try:
                v = self.eval(expr)
            except CDPError:
                v = None
            if v:
                return v
            time.sleep(interval)
        bar = self.eval("(document.querySelector('#msg') || {}).innerText || ''")
        raise AssertionError("gave up waiting for %s%s" % (what or expr,
                                                           "; message bar: " + bar if bar else ""))

    def open(self, url):
        self.send("Page.navigate", {"url": url})
        self.wait("document.readyState === 'complete' && location.href !== 'about:blank' || "
                  "%s === 'about:blank'" % json.dumps(url), "page load of " + url)

    def mouse(self, kind, x, y, pressed=False, clicks=1):
        self.send("Input.dispatchMouseEvent", {
            "type": kind, "x": x, "y": y, "button": "left" if pressed or kind != "mouseMoved" else "none",
            "buttons": 1 if pressed else 0, "clickCount": clicks})

    def center(self, selector):
        r = self.eval("(() => { const e = document.querySelector(%s); if (!e) return null;"
                      " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                      " return [r.left + r.width / 2, r.top + r.height / 2, r.width, r.height]; })()"
                      % json.dumps(selector))
        if not r:
            raise AssertionError("no element " + selector)
        return r

    def click(self, selector):
        """Point at the element, aim again (hovering may move things), click."""
        x, y, _, _ = self.center(selector)
        self.mouse("mouseMoved", x, y)
        time.sleep(0.05)
        x, y, _, _ = self.center(selector)
        self.click_at(x, y)

    def click_at(self, x, y):
        self.mouse("mouseMoved", x, y)
        time.sleep(0.05)
        self.mouse("mousePressed", x, y, True)
        self.mouse("mouseReleased", x, y, False)

    def drag(self, x0, y0, x1, y1, steps=12):
        self.mouse("mouseMoved", x0, y0)
        time.sleep(0.05)
        self.mouse("mousePressed", x0, y0, True)
        for i in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps, True)
            time.sleep(0.02)
        self.mouse("mouseReleased", x1, y1, False)

    def type(self, text):
        self.send("Input.insertText", {"text": text})

    def key(self, name, code):
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", {"type": kind, "key": name, "code": name,
                                                 "windowsVirtualKeyCode": code,
                                                 "text": "\r" if name == "Enter" and kind == "keyDown" else ""})

    def screenshot(self, path):
        """The whole page (not only the viewport) as a PNG file."""
        w, h = self.eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        r = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                 "clip": {"x": 0, "y": 0, "width": w, "height": h,
                                                          "scale": 1}})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def close(self):
        try:
            self.send("Browser.close", page=False, timeout=10)
        except CDPError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


# --- the test: the page as a person would use it ---------------------------

# JavaScript helpers evaluated in the page.
HASH = "Object.fromEntries(new URLSearchParams(location.hash.slice(1)))"
# Per drawn chart: the vitals it should show, and how many canvas pixels have
# each one's colour (the line's stroke, read from the legend's marker).
LINES = r"""(() => [...document.querySelectorAll('#chart .plot')].map((p) => {
  const c = p.querySelector('canvas'), ctx = c.getContext('2d');
  const px = ctx.getImageData(0, 0, c.width, c.height).data;
  const series = [...p.querySelectorAll('.u-legend .u-series')].slice(1).map((s) => {
    const m = getComputedStyle(s.querySelector('.u-marker')).borderColor.match(/\d+/g).map(Number);
    let n = 0;
    for (let i = 0; i < px.length; i += 4)
      if (px[i + 3] > 200 && Math.abs(px[i] - m[0]) + Math.abs(px[i + 1] - m[1]) + Math.abs(px[i + 2] - m[2]) < 40)
        n++;
    return {name: s.querySelector('.u-label').textContent, pixels: n};
  });
  return {want: p.dataset.vitals.split(','), series};
}))()"""


class Run:
    def __init__(self, b, outdir):
        self.b, self.outdir = b, outdir
        self.passed, self.failed, self.n = 0, 0, 0

    def check(self, short, name, f):
        """Run f, print ok or FAIL with the reason, then a screenshot."""
        self.n += 1
        shot = os.path.join(self.outdir, "%02d-%s.png" % (self.n, short))
        try:
            detail = f()
            self.passed += 1
            print("ok %d - %s%s" % (self.n, name, " (%s)" % detail if detail else ""))
        except (AssertionError, CDPError) as e:
            self.failed += 1
            print("FAIL %d - %s: %s" % (self.n, name, e))
        except Exception as e:  # a surprise in the page's answers
            self.failed += 1
            print("FAIL %d - %s: %s: %s" % (self.n, name, type(e).__name__, e))
        try:
            self.b.screenshot(shot)
            print("   screenshot %s" % shot)
        except CDPError as e:
            print("   no screenshot: %s" % e)


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def over(b, frac_x, frac_y=0.5, plot=0):
    """A point of the plot area (uPlot's .u-over) of the plot-th chart."""
    x, y, w, h = b.center("#chart .plot:nth-child(%d) .u-over" % (plot + 1))
    return x - w / 2 + w * frac_x, y - h / 2 + h * frac_y


def settled(b, box):
    """Wait until d3-flame-graph's opening transition has run: the root's
    rect as wide as the graph."""
    b.wait("(() => { const s = document.querySelector('%s svg'), r = s && s.querySelector('g rect');"
           " return !!r && Math.abs(+r.getAttribute('width') - +s.getAttribute('width')) < 1; })()" % box,
           "the graph in %s to settle" % box)


def at_ns(s):
    return int(s[1:]) * 10**9 if s.startswith("@") else int(s)


def main():
    if len(sys.argv) != 3:
        print("usage: browser.py URL OUTDIR", file=sys.stderr)
        return 2
    url, outdir = sys.argv[1], sys.argv[2]
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        print("SKIP: no chromium at %s (apt-get install chromium)" % CHROMIUM)
        return 77
    os.makedirs(outdir, exist_ok=True)
    base = url.split("#")[0]
    b = Browser()
    r = Run(b, outdir)
    try:
        steps(b, r, base)
    except Exception as e:
        r.failed += 1
        print("FAIL - could not go on: %s: %s" % (type(e).__name__, e))
    finally:
        b.close()
    print("%d passed, %d failed" % (r.passed, r.failed))
    return 1 if r.failed else 0


def steps(b, r, base):
    # Open the page on the last two hours of the newest host's data, the way
    # a link would: every view keeps its state in the URL's hash.
    b.open(base)
    hosts = b.eval("fetch('api/v1/hosts').then((r) => r.json())")
    last = max(h["last_ns"] for h in hosts["hosts"]) // 10**9 + 60
    start = "#from=@%d&to=@%d" % (last - 7200, last)
    b.open("about:blank")
    b.open(base + start)
    loaded = "+(document.querySelector('#chart').dataset.loads || 0)"

    def lines():
        b.wait("%s >= 1 && !!document.querySelector('#chart canvas')" % loaded, "the chart")
        want = b.eval("[...document.querySelectorAll('#vital-list input:checked')].map((i) => i.value)")
        plots = b.eval(LINES)
        expect(len(want) >= 2, "fewer than two vitals to show: %s" % want)
        expect(len(plots) == 1, "overlay mode drew %d charts" % len(plots))
        drawn = [s["name"] for s in plots[0]["series"]]
        expect(drawn == want, "legend has %s, check boxes say %s" % (drawn, want))
        blank = [s["name"] for s in plots[0]["series"] if s["pixels"] < 20]
        expect(not blank, "no line drawn for %s" % blank)
        # one vital off: one line fewer
        b.click("#vital-list input[value=%s]" % want[-1])
        b.wait("document.querySelector('#chart').dataset.lines === %s" % json.dumps(",".join(want[:-1])),
               "the chart without " + want[-1])
        expect(len(b.eval(LINES)[0]["series"]) == len(want) - 1, "unchecking a vital left its line")
        b.click("#vital-list input[value=%s]" % want[-1])
        b.wait("document.querySelector('#chart').dataset.lines.split(',').length === %d" % len(want))
        # stacked: one chart per vital, each with its line
        b.click("[data-mode=stacked]")
        b.wait("document.querySelectorAll('#chart .plot').length === %d" % len(want), "stacked charts")
        st = b.eval(LINES)
        bad = [p["want"] for p in st if len(p["series"]) != 1 or p["series"][0]["pixels"] < 20]
        expect(not bad, "stacked charts without their line: %s" % bad)
        b.screenshot(os.path.join(r.outdir, "01b-chart-stacked.png"))
        b.click("[data-mode=overlay]")
        b.wait("document.querySelectorAll('#chart .plot').length === 1")
        return "%d lines: %s" % (len(want), ",".join(want))
    r.check("chart", "chart draws one line per vital shown", lines)

    def zoom():
        before = b.eval(HASH)
        n = b.eval(loaded)
        x0, y = over(b, 0.30)
        x1, _ = over(b, 0.65)
        b.drag(x0, y, x1, y)
        b.wait("%s > %d && !!document.querySelector('#chart canvas')" % (loaded, n), "the chart to reload")
        after = b.eval(HASH)
        f0, t0, f1, t1 = at_ns(before["from"]), at_ns(before["to"]), at_ns(after["from"]), at_ns(after["to"])
        expect(f0 < f1 < t1 < t0, "range %s..%s is not inside %s..%s" % (
            after["from"], after["to"], before["from"], before["to"]))
        got = b.eval("[+document.querySelector('#chart').dataset.fromNs, +document.querySelector('#chart').dataset.toNs]")
        expect(abs(got[0] - f1) < 2e9 and abs(got[1] - t1) < 2e9, "chart shows %s, not the new range" % got)
        expect(all(s["pixels"] >= 20 for s in b.eval(LINES)[0]["series"]), "zoomed chart lost a line")
        b.screenshot(os.path.join(r.outdir, "02b-zoom-zoomed.png"))
        # and back, as the browser's history remembers it
        b.click("#zoom-back")
        b.wait("%s.from === %s" % (HASH, json.dumps(before["from"])), "back to the range")
        b.wait("%s > %d" % (loaded, n + 1), "the chart to reload after back")
        b.eval("history.forward()")
        b.wait("%s.from === %s" % (HASH, json.dumps(after["from"])), "forward to the zoom")
        b.wait("+document.querySelector('#chart').dataset.fromNs === %d" % f1, "the zoomed chart again")
        return "%s..%s" % (after["from"], after["to"])
    r.check("zoom", "dragging across the chart zooms", zoom)

    def epoch():
        b.wait("!!document.querySelector('#chart canvas')", "the chart")
        x, y = over(b, 0.5)
        b.click_at(x, y)
        b.wait("!document.querySelector('#epoch-detail').hidden", "the epoch detail")
        frames = b.wait("(() => { const f = [...document.querySelectorAll('#epoch-detail .frame')]"
                        ".map((e) => e.textContent.trim()).filter(Boolean); return f.length && f; })()",
                        "stack frames in the epoch detail")
        h = b.eval(HASH)
        expect(h.get("view") == "epoch" and ".." in h.get("sel", ""), "hash %s does not name the epoch" % h)
        rows = b.eval("document.querySelectorAll('#epoch-detail .toptable tr').length")
        expect(rows >= 1, "no top exes")
        samples = b.eval("document.querySelectorAll('#epoch-detail .sample').length")
        return "%d samples, %d frames, e.g. %s" % (samples, len(frames), frames[0])
    r.check("epoch", "clicking an epoch shows its samples with stacks", epoch)

    def flame():
        b.click("#views [data-view=flame]")
        names = b.wait("!document.querySelector('#flame').hidden && "
                       "(() => { const n = [...document.querySelectorAll('#flame svg g[name]')]"
                       ".map((g) => g.getAttribute('name')).filter(Boolean); return n.length > 2 && n; })()",
                       "flame graph nodes")
        settled(b, "#flame")
        rects = b.eval("document.querySelectorAll('#flame svg rect').length")
        expect(rects >= len(names), "%d rects for %d nodes" % (rects, len(names)))
        exe = b.wait("(document.querySelector('#flame-exes option') || {}).value", "the exe list")
        b.click("#flame-exe")
        b.type(exe)
        b.key("Enter", 13)
        b.wait("location.hash.includes('exe=')", "exe in the URL")
        b.wait("(() => { const n = [...document.querySelectorAll('#flame svg g[name]')]"
               ".map((g) => g.getAttribute('name')); return n.includes(%s) && n.length > 2; })()"
               % json.dumps(exe), "the graph of " + exe)
        others = b.eval("[...document.querySelectorAll('#flame-exes option')].map((o) => o.value)"
                        ".filter((x) => x !== %s && [...document.querySelectorAll('#flame svg g[name]')]"
                        ".some((g) => g.getAttribute('name') === x))" % json.dumps(exe))
        expect(not others, "filtered by %s but still shows %s" % (exe, others))
        settled(b, "#flame")
        return "%d nodes, filtered to %s" % (len(names), exe)
    r.check("flame", "flame graph has named nodes", flame)

    def compare():
        b.click("#views [data-view=compare]")
        b.wait("!document.querySelector('#compare').hidden && !!document.querySelector('#pick-ab')",
               "the compare view")
        b.click("#pick-ab")
        x0, y = over(b, 0.05)
        x1, _ = over(b, 0.40)
        b.drag(x0, y, x1, y)
        b.wait("!document.querySelector('#pick-hint').hidden && "
               "document.querySelector('#pick-hint').textContent.includes('B')", "the prompt for B")
        x2, _ = over(b, 0.55)
        x3, _ = over(b, 0.95)
        b.drag(x2, y, x3, y)
        h = b.wait("(() => { const h = %s; return h.a && h.b && h; })()" % HASH, "A and B in the URL")
        nodes = b.wait("document.querySelectorAll('#diff-flame svg g[name]').length > 2 && "
                       "document.querySelectorAll('#diff-flame svg g[name]').length", "the differential graph")
        settled(b, "#diff-flame")
        fills = b.eval("[...new Set([...document.querySelectorAll('#diff-flame svg rect')]"
                       ".map((r) => r.getAttribute('fill')))]")
        expect(any(f and f != "rgb(220,220,220)" for f in fills), "no node coloured by its delta: %s" % fills[:5])
        want = b.eval("fetch('api/v1/diff?' + new URLSearchParams({a: %s, b: %s, vital: %s}))"
                      ".then((r) => r.json()).then((j) => j.findings.length)"
                      % (json.dumps(h["a"]), json.dumps(h["b"]), json.dumps(h.get("cv", "cpu"))))
        b.wait("!!document.querySelector('#diff-findings ul, #diff-findings p')", "the findings list")
        got = b.eval("document.querySelectorAll('#diff-findings li').length")
        expect(got == want, "%d findings listed, the API has %d" % (got, want))
        return "A %s, B %s, %d nodes, %d findings" % (h["a"], h["b"], nodes, got)
    r.check("compare", "comparing two ranges shows the differential graph and findings", compare)

    def timebox():
        t = b.eval("(() => { const d = new Date((%d - 2400) * 1000), p = (n) => String(n).padStart(2, '0');"
                   " return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:"
                   "${p(d.getMinutes())}`; })()" % last)
        b.eval("document.querySelector('#timebox-t').value = ''")
        b.click("#timebox-t")
        b.type(t)
        b.click("#timebox-go")
        ns = b.eval("fetch('api/v1/time?t=' + encodeURIComponent(%s)).then((r) => r.json()).then((j) => j.ns)"
                    % json.dumps(t))
        T, m = ns // 10**9, 60
        want = {"from": "@%d" % (T - 30 * m), "to": "@%d" % (T + 30 * m), "view": "compare",
                "a": "@%d..@%d" % (T - 90 * m, T - 30 * m), "b": "@%d..@%d" % (T - 30 * m, T + 30 * m)}
        h = b.wait("(() => { const h = %s; return h.at && h; })()" % HASH, "the time in the URL")
        bad = {k: h.get(k) for k in want if h.get(k) != want[k]}
        expect(not bad, "for %s the URL has %s, expected %s" % (t, bad, {k: want[k] for k in bad}))
        b.wait("+document.querySelector('#chart').dataset.fromNs === %d" % ((T - 30 * m) * 10**9),
               "the chart around T")
        b.wait("document.querySelectorAll('#diff-flame svg g[name]').length > 2", "the comparison")
        settled(b, "#diff-flame")
        b.wait("document.querySelector('.compare-sum').textContent.includes('A ')", "the compared ranges")
        n = b.eval("fetch('api/v1/diff?' + new URLSearchParams({a: %s, b: %s, vital: %s}))"
                   ".then((r) => r.json()).then((j) => j.findings.length)"
                   % (json.dumps(want["a"]), json.dumps(want["b"]), json.dumps(h.get("cv", "cpu"))))
        got = b.eval("document.querySelectorAll('#diff-findings li').length")
        expect(got == n, "%d findings listed, the API has %d" % (got, n))
        return "%s: %s..%s against the hour before, %d findings" % (t, want["from"], want["to"], n)
    r.check("timebox", "the time box opens the range around T and compares it", timebox)

    def clean():
        expect(not b.problems, "; ".join(b.problems[:5]))
        return "%d events seen" % len(b.events)
    r.check("console", "no console errors or exceptions", clean)

    def errors():
        b.open("about:blank")
        b.open(base + "#from=yesterday-ish")
        text = b.wait("!document.querySelector('#msg').hidden && document.querySelector('#msg').innerText",
                      "the message bar")
        expect("from" in text, "the message does not name the parameter: %r" % text)
        return text.replace("\n", " | ")
    r.check("errors", "an API error shows in the message bar", errors)


if __name__ == "__main__":
    sys.exit(main())
