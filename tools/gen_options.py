#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes bindings/python/gpufit/_options.py and the OPTIONS section of docs/gpufit.1 from
cli/options.def, the option table of the C command, so that ``python3 -m gpufit`` and the
man page are built from the same table.

    python3 tools/gen_options.py           rewrite both
    python3 tools/gen_options.py --check   exit 1 when either is stale (make check)
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEF = os.path.join(ROOT, "cli", "options.def")
OUT = os.path.join(ROOT, "bindings", "python", "gpufit", "_options.py")
MAN = os.path.join(ROOT, "docs", "gpufit.1")
MAN_START = '.\\" generated from cli/options.def by tools/gen_options.py: edit the table, not this section\n'
MAN_END = '.\\" end of options\n'


def roff(text: str) -> str:
    return text.replace("\\", "\\e").replace("-", "\\-").replace('"', "\\(dq")


def render_man(old: str) -> str:
    a = old.index(MAN_START) + len(MAN_START)
    b = old.index(MAN_END)
    body = []
    for name, _dest, kind, cmds, metavar, default, help_ in rows():
        body.append(".TP")
        if metavar:
            body.append('.BI %s " %s"' % (roff(name), roff(metavar)))
        else:
            body.append(".B %s" % roff(name))
        extra = " (default %d)" % default if kind == "count" and default > 0 else ""
        body.append("%s%s; %s." % (roff(help_), extra, ", ".join(cmds)))
    return old[:a] + "\n".join(body) + "\n" + old[b:]

KINDS = {"OPT_FLAG": "flag", "OPT_STRING": "string", "OPT_SPEC": "spec", "OPT_COUNT": "count"}
CMDS = {"OPT_E": "estimate", "OPT_R": "recommend", "OPT_P": "plan"}
TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z_0-9]*(?:\s*\|\s*[A-Za-z_]+)*|-?\d+)\s*(,|$)')


def c_string(lit: str) -> str:
    body = lit[1:-1]
    if re.search(r"\\[^\"\\]", body):
        raise SystemExit("gen_options: only \\\" and \\\\ escapes are supported: %s" % lit)
    return body.replace('\\"', '"').replace("\\\\", "\\")


def rows():
    out = []
    with open(DEF, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line.startswith("OPT("):
                continue
            if not line.endswith(")"):
                raise SystemExit("%s:%d: one OPT(...) per line" % (DEF, n))
            args, rest = [], line[4:-1]
            while rest:
                m = TOKEN.match(rest)
                if m is None:
                    raise SystemExit("%s:%d: cannot read %r" % (DEF, n, rest))
                args.append(m.group(1))
                rest = rest[m.end():]
            if len(args) != 7:
                raise SystemExit("%s:%d: OPT takes 7 arguments, not %d" % (DEF, n, len(args)))
            name, field, kind, cmds, metavar, default, help_ = args
            out.append((c_string(name), field, KINDS[kind],
                        tuple(CMDS[c.strip()] for c in cmds.split("|")), c_string(metavar),
                        int(default), c_string(help_)))
    if not out:
        raise SystemExit("gen_options: no OPT rows in %s" % DEF)
    return out


def render() -> str:
    lines = [
        "# SPDX-License-Identifier: MIT",
        '"""The options of the scenario commands (estimate, recommend, plan), generated from',
        "cli/options.def by tools/gen_options.py: the table the C command is built from. Do not",
        'edit; ``make check`` fails when this file is stale."""',
        "",
        "from typing import Tuple",
        "",
        "# (name, dest, kind, commands, metavar, default, help); kind: flag, string, spec (repeated,",
        "# applied in order), count (an integer in [1, 4294967295]); default: a count's value when",
        "# the option is not given, 0 = not given",
        "Option = Tuple[str, str, str, Tuple[str, ...], str, int, str]",
        "OPTIONS: Tuple[Option, ...] = (",
    ]
    for r in rows():
        lines.append("    (%r, %r, %r, %r, %r, %d," % r[:6])
        lines.append("     %r)," % r[6])
    lines.append(")")
    return "\n".join(lines) + "\n"


def read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def main() -> int:
    man_old = read(MAN)
    want = {OUT: render(), MAN: render_man(man_old)}
    if sys.argv[1:] == ["--check"]:
        stale = [p for p, text in want.items() if read(p) != text]
        for p in stale:
            print("gen_options: %s is stale: run python3 tools/gen_options.py" % p,
                  file=sys.stderr)
        if stale:
            return 1
        print("    bindings/python/gpufit/_options.py and docs/gpufit.1 match cli/options.def")
        return 0
    if sys.argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    for p, text in want.items():
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
