#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that the library's layers call only downward (docs/architecture.md): every function a
file in lib/LAYER/ calls that is defined in another file must be defined in the same or a
lower layer. Exit status 1 with the offending calls listed.

Usage: python3 tools/check_layers.py"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(os.path.dirname(HERE), "lib")
# lowest first; the Makefile's LIB_LAYERS lists the same folders
LAYERS = ["core", "table", "model", "plan", "memory", "eval", "io", "advise", "api"]
CALL = re.compile(r"\b(gpufit_{1,2}[a-z0-9_]+)\s*\(")
DEF = re.compile(r"^[a-z][^\n;(=]*?\b(gpufit_{1,2}[a-z0-9_]+)\(", re.M)
DATA = re.compile(r"^(?:const )?gpufit__[a-z_]+ (gpufit__[a-z_0-9]+)\[", re.M)


def code_of(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)  # comments
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)  # strings


def main():
    files = {}
    for layer in LAYERS:
        for path in sorted(glob.glob(os.path.join(LIB, layer, "*.c"))):
            files[path] = (LAYERS.index(layer), code_of(path))
    stray = [p for p in glob.glob(os.path.join(LIB, "*.c")) + glob.glob(os.path.join(LIB, "*", "*.c"))
             if p not in files]
    defined = {}
    for path, (_, code) in files.items():
        for name in DEF.findall(code) + DATA.findall(code):
            defined.setdefault(name, path)
    bad = []
    for path, (level, code) in files.items():
        for name in sorted(set(CALL.findall(code))):
            where = defined.get(name)
            if where is not None and where != path and files[where][0] > level:
                bad.append("%s calls %s (%s, a higher layer)" % (
                    os.path.relpath(path, LIB), name, os.path.relpath(where, LIB)))
    for p in stray:
        bad.append("%s is in no layer folder (%s)" % (os.path.relpath(p, LIB), ", ".join(LAYERS)))
    for line in bad:
        print("check_layers: " + line)
    if not bad:
        print("    %d files in %d layers, every call downward or within its layer"
              % (len(files), len(LAYERS)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
