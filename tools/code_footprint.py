#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench-footprint: how much distinct code a loop of tests/bench/instructions.c executes.

Reads a callgrind output written with --dump-instr=yes --compress-pos=no --compress-strings=no
and counts the distinct 64-byte lines (the instruction cache's unit) holding an executed
instruction, over every object (the program, libc, the loader). Usage:
    code_footprint.py CALLGRIND_OUT [LABEL]
"""
import sys


def lines_executed(path):
    seen, obj, skip = set(), "", False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("calls="):
                skip = True  # the next position line is the call's, not an executed instruction
            elif line.startswith("0x"):
                if skip:
                    skip = False
                    continue
                seen.add((obj, int(line.split()[0], 16) >> 6))
    return len(seen)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    n = lines_executed(argv[1])
    label = argv[2] if len(argv) > 2 else argv[1]
    print("%s: %d distinct 64-byte lines of code executed (%.0f KiB)" % (label, n, n * 64 / 1024))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
