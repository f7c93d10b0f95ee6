#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The plugin sections of vitals.yaml(5), from the plugins themselves.

Reads the JSON of `vitalsd --list-plugins -v --json` (run in the build
tree with VITALS_PLUGIN_PATH on the built plugins: see Makefile.am) and
writes TEMPLATE with each of its lines

    .\\" @PROBES@
    .\\" @FILTERS@
    .\\" @OUTPUTS@

replaced by one roff subsection per plugin of that kind (name, kind, the
section of the file it goes in, version, description, and each option
with its type, default and help), so the page cannot drift from the code.

    plugins2man.py --template man/vitals.yaml.5.in \\
        [--expect 'cpu ewma store ...'] [--builddir DIR] PLUGINS.json > OUT

--expect: the plugins the build made; each must be in the JSON (a plugin
the loader refused, e.g. for its file mode, would otherwise be left out
silently), and only those are written (a plugin installed on the machine
and found on the search path is not part of this build).  --builddir: a
listed plugin must have been loaded from under DIR.  Exit 0, or 1 with a
message.
"""

import argparse
import json
import os
import sys

# kind -> (placeholder, YAML section the plugins of that kind go in)
KINDS = {
    "probe": ("@PROBES@", "probes"),
    "filter": ("@FILTERS@", "filters"),
    "output": ("@OUTPUTS@", "plugins"),
}


def escape(s):
    """One line of roff text: backslashes escaped, no request at its start."""
    s = s.replace("\\", "\\e")
    return "\\&" + s if s.startswith((".", "'")) else s


def text(s):
    """Running text as roff lines of at most 78 characters (where words
    allow), one string; mandoc -Tlint asks for short input lines."""
    lines, cur = [], ""
    for w in str(s).split():
        if cur and len(cur) + 1 + len(w) > 78:
            lines.append(cur)
            cur = w
        else:
            cur = cur + " " + w if cur else w
    if cur:
        lines.append(cur)
    return "\n".join(escape(line) for line in lines)


def code(s):
    """A literal (key, default) on one line, every hyphen a minus."""
    return escape(" ".join(str(s).split())).replace("-", "\\-")


def option_lines(o):
    default = o.get("default")
    dflt = ("default \\fB%s\\fP" % code(default)) if default not in (None, "") \
        else "no default"
    lines = [".TP", ".B %s" % code(o["key"]),
             "\\fI%s\\fP, %s." % (text(o["type"]), dflt)]
    if o.get("help"):
        lines += [".br", text(o["help"])]
    return lines


def plugin_lines(p):
    section = KINDS[p["kind"]][1]
    lines = ['.SS "%s (%s)"' % (code(p["name"]), p["kind"]),
             "%s %s, configured under \\fB%s.%s\\fP; version %s."
             % ("An" if p["kind"][0] in "aeiou" else "A", p["kind"],
                section, code(p["name"]),
                code(p.get("version") or "unknown")),
             ".PP",
             text(p.get("description") or "")]
    opts = p.get("options") or []
    if not opts:
        lines += [".PP", "No options besides \\fBenable\\fP."]
        return lines
    lines += [".PP", "Options:"]
    for o in opts:
        lines += option_lines(o)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--template", required=True)
    ap.add_argument("--expect", default=None,
                    help="space-separated plugin names the build made")
    ap.add_argument("--builddir", default=None)
    ap.add_argument("json")
    a = ap.parse_args()

    with open(a.json) as f:
        plugins = json.load(f)
    byname = {p["name"]: p for p in plugins}
    if a.expect is not None:
        want = a.expect.split()
        missing = [n for n in want if n not in byname]
        if missing:
            sys.exit("plugins2man: not listed by vitalsd --list-plugins: %s "
                     "(refused by the loader? see its messages)"
                     % " ".join(missing))
        plugins = [byname[n] for n in want]
    if a.builddir is not None:
        top = os.path.realpath(a.builddir) + os.sep
        for p in plugins:
            if not os.path.realpath(p["path"]).startswith(top):
                sys.exit("plugins2man: plugin %s was loaded from %s, not "
                         "from the build tree %s" % (p["name"], p["path"], top))
    for p in plugins:
        if p.get("kind") not in KINDS:
            sys.exit("plugins2man: plugin %s: unknown kind %r"
                     % (p.get("name"), p.get("kind")))

    with open(a.template) as f:
        template = f.read().split("\n")
    out, seen = [], set()
    for line in template:
        kind = next((k for k, (mark, _) in KINDS.items()
                     if line.strip() == '.\\" ' + mark), None)
        if kind is None:
            out.append(line)
            continue
        seen.add(kind)
        some = sorted((p for p in plugins if p["kind"] == kind),
                      key=lambda p: p["name"])
        if not some:
            out += [".PP", "None were built."]
        for p in some:
            out += plugin_lines(p)
    if seen != set(KINDS):
        sys.exit("plugins2man: %s: no line for %s" % (
            a.template, ", ".join(KINDS[k][0] for k in KINDS if k not in seen)))
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
