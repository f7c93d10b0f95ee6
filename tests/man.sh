#!/bin/sh
# SPDX-License-Identifier: MIT
# The manual pages: each renders with `man -l` without a warning from
# groff (nor from `mandoc -Tlint`, where mandoc is installed); vitals.yaml(5),
# made at build time from the plugins, has a section for every plugin this
# tree built with each of its option keys; vitals(1) has a section for
# every command `vitals --help` lists and names each of its options, and
# vitalsd(8) names every option of `vitalsd --help`.
. "$top_srcdir/tests/lib.sh"

command -v man >/dev/null || skip "man not installed (scripts/setup-debian.sh installs man-db)"
command -v python3 >/dev/null || fail "python3 not installed"
yaml5="$top_builddir/man/vitals.yaml.5"
[ -f "$yaml5" ] || fail "$yaml5 not built (make builds it)"

for page in "$top_srcdir/man/vitalsd.8" "$top_srcdir/man/vitals.1" "$yaml5"; do
	name=$(basename "$page")
	LC_ALL=C MANWIDTH=80 man --warnings -l "$page" >"$TMP/$name.80" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "man -l $name failed"; }
	[ -s "$TMP/$name.80" ] || fail "man -l $name printed nothing"
	[ ! -s "$TMP/$name.err" ] || { cat "$TMP/$name.err"; fail "man -l $name: groff warnings"; }
	if command -v mandoc >/dev/null; then
		mandoc -Tlint -W warning "$page" >"$TMP/$name.lint" 2>&1 || true
		[ ! -s "$TMP/$name.lint" ] || { cat "$TMP/$name.lint"; fail "mandoc -Tlint $name: warnings"; }
	fi
	# Wide and unhyphenated, for the searches below.
	LC_ALL=C MANWIDTH=250 MANROFFOPT='-rHY=0' man -l "$page" >"$TMP/$name.txt" 2>/dev/null ||
		fail "man -l $name failed (wide)"
done

: >"$TMP/empty.yaml"
"$VITALSD" -c "$TMP/empty.yaml" --list-plugins --json >"$TMP/plugins.json" 2>"$TMP/plugins.err" ||
	{ cat "$TMP/plugins.err"; fail "vitalsd --list-plugins --json"; }
"$VITALS" --help >"$TMP/vitals.help" || fail "vitals --help"
"$VITALSD" --help >"$TMP/vitalsd.help" || fail "vitalsd --help"

python3 - "$TMP" "$top_builddir" <<'EOF'
import json, os, re, sys

tmp, builddir = sys.argv[1], os.path.realpath(sys.argv[2]) + os.sep
bad = []

def page(name):
    with open(os.path.join(tmp, name + ".txt")) as f:
        return re.sub(r".\x08", "", f.read())  # overstrike, if any

def named(text, word):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(word), text) is not None

# vitals.yaml(5): "   NAME (KIND)" subsections, ended by the next heading.
yaml5 = page("vitals.yaml.5")
sections, cur = {}, None
for line in yaml5.splitlines():
    m = re.match(r"^ {3}(\S+) \((probe|filter|output)\)$", line)
    if m:
        cur = sections.setdefault(m.group(1), {"kind": m.group(2), "text": []})
        continue
    if re.match(r"^\S", line) or re.match(r"^ {3}\S", line):
        cur = None
    elif cur is not None:
        cur["text"].append(line)
with open(os.path.join(tmp, "plugins.json")) as f:
    plugins = [p for p in json.load(f)
               if os.path.realpath(p["path"]).startswith(builddir)]
if not plugins:
    bad.append("vitalsd --list-plugins lists no plugin of the build tree")
for p in plugins:
    s = sections.get(p["name"])
    if s is None:
        bad.append("vitals.yaml.5: no section for plugin %s" % p["name"])
        continue
    if s["kind"] != p["kind"]:
        bad.append("vitals.yaml.5: %s is a %s, the page says %s"
                   % (p["name"], p["kind"], s["kind"]))
    body = "\n".join(s["text"])
    for o in p["options"]:
        if not re.search(r"^ {7}%s(\s|$)" % re.escape(o["key"]), body, re.M):
            bad.append("vitals.yaml.5: plugin %s: no option %s"
                       % (p["name"], o["key"]))
print("vitals.yaml.5: %d plugins, %d options" % (
    len(plugins), sum(len(p["options"]) for p in plugins)))

# vitals(1): every command of --help is a subsection; every option is named.
with open(os.path.join(tmp, "vitals.help")) as f:
    help1 = f.read()
vitals1 = page("vitals.1")
cmds = re.findall(r"^  ([a-z]+)(?: |$)", help1, re.M)
if len(cmds) < 2:
    bad.append("vitals --help: commands not found")
for c in cmds:
    if not re.search(r"^ {3}%s$" % re.escape(c), vitals1, re.M):
        bad.append("vitals.1: no section for command %s" % c)
for name, helptext, text in (("vitals.1", help1, vitals1),
                             ("vitalsd.8", open(os.path.join(tmp, "vitalsd.help")).read(),
                              page("vitalsd.8"))):
    opts = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", helptext))
    for o in sorted(opts):
        if not named(text, o):
            bad.append("%s: option %s of --help not named" % (name, o))
print("vitals.1: %d commands; options of vitals and vitalsd --help named"
      % len(cmds))

for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
[ $? -eq 0 ] || fail "the manual pages do not match the programs"
echo "PASS: man pages render, and name every plugin option, command and option"
