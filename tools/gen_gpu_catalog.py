#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate lib/core/gpu_catalog.inc (the GPU catalogue rows) from gpus.csv.

Usage (from the repository root; this is what `make regen` runs):
    python3 tools/gen_gpu_catalog.py [CSV] [-o lib/core/gpu_catalog.inc] [--check]

CSV defaults to data/gpus.csv in the repository (a copy of shared/reference/gpus.csv). --check writes
nothing and exits 1 when the committed file differs from what would be generated.

Sources: shared/reference/gpus.csv (every row becomes one catalogue row) and
shared/reference/memory-model.md §8.5 (nvidia-smi totals) and §10 (column meanings).
Python 3 standard library only; the output is deterministic (no dates, no absolute paths).
"""

import argparse
import csv
import hashlib
import io
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CSV = os.path.join(REPO, "data", "gpus.csv")
DEFAULT_OUT = os.path.join(REPO, "lib", "core", "gpu_catalog.inc")

GIB = 1 << 30
MIB = 1 << 20

# Stable ids: id = position in this list + 1. The list is APPEND-ONLY: ids are stored in user
# scenarios (GPUFIT_JOB_GPU), so a row is never removed, renamed here or reordered. New CSV rows
# must be appended at the end of the CSV and then appended here.
ID_ORDER = [
    "GeForce RTX 3060 12GB",     # 1
    "GeForce RTX 3070",          # 2
    "GeForce RTX 3080 10GB",     # 3
    "GeForce RTX 3090",          # 4
    "GeForce RTX 4090",          # 5
    "GeForce RTX 5090",          # 6
    "RTX A6000",                 # 7
    "RTX 6000 Ada Generation",   # 8
    "L4",                        # 9
    "L40S",                      # 10
    "T4",                        # 11
    "Tesla V100 SXM2 16GB",      # 12
    "Tesla V100 SXM2 32GB",      # 13
    "A10",                       # 14
    "A100 40GB PCIe",            # 15
    "A100 80GB PCIe",            # 16
    "A100 40GB SXM4",            # 17
    "A100 80GB SXM4",            # 18
    "H100 PCIe",                 # 19
    "H100 SXM5",                 # 20
    "H100 NVL",                  # 21
    "H200 SXM",                  # 22
    "B200 (HGX)",                # 23
    "GB200 (per B200 GPU)",      # 24
    "Instinct MI250X",           # 25
    "Instinct MI300X",           # 26
    "Instinct MI325X",           # 27
    "Gaudi 2",                   # 28
    "Gaudi 3",                   # 29
    "GeForce RTX 4080",          # 30
    "GeForce RTX 4080 SUPER",    # 31
    "GeForce RTX 4070 Ti",       # 32
    "GeForce RTX 4070 Ti SUPER", # 33
    "GeForce RTX 4070",          # 34
    "GeForce RTX 4060 Ti 16GB",  # 35
    "GeForce RTX 4060 Ti 8GB",   # 36
    "GeForce RTX 5080",          # 37
    "GeForce RTX 5070 Ti",       # 38
    "GeForce RTX 5070",          # 39
    "H20",                       # 40
]

# CSV name -> (key, aliases). Keys are lowercase slugs; aliases are extra lookup names (the key
# and the CSV name are always accepted too, so they are not repeated here). Lookups fold case
# and treat '_' and ' ' as '-'. Rows missing here get key = slug(name) and no aliases.
NAMES = {
    "GeForce RTX 3060 12GB": ("rtx-3060-12gb", ["rtx-3060", "3060"]),
    "GeForce RTX 3070": ("rtx-3070", ["3070"]),
    "GeForce RTX 3080 10GB": ("rtx-3080-10gb", ["rtx-3080", "3080"]),
    "GeForce RTX 3090": ("rtx-3090", ["3090", "rtx-3090-24gb"]),
    "GeForce RTX 4090": ("rtx-4090", ["4090", "rtx-4090-24gb"]),
    "GeForce RTX 5090": ("rtx-5090", ["5090", "rtx-5090-32gb"]),
    "RTX A6000": ("rtx-a6000", ["a6000"]),
    "RTX 6000 Ada Generation": ("rtx-6000-ada", ["6000-ada"]),
    "L4": ("l4", []),
    "L40S": ("l40s", []),
    "T4": ("t4", []),
    "Tesla V100 SXM2 16GB": ("v100-sxm2-16gb", ["v100-16gb", "v100", "v100-sxm2"]),
    "Tesla V100 SXM2 32GB": ("v100-sxm2-32gb", ["v100-32gb", "v100s-32gb"]),
    "A10": ("a10", []),
    "A100 40GB PCIe": ("a100-40gb-pcie", ["a100-pcie-40gb"]),
    "A100 80GB PCIe": ("a100-80gb-pcie", ["a100-pcie-80gb"]),
    "A100 40GB SXM4": ("a100-40gb-sxm4", ["a100-40gb", "a100-sxm-40gb", "a100-sxm4-40gb"]),
    "A100 80GB SXM4": ("a100-80gb-sxm4",
                       ["a100-80gb", "a100-sxm-80gb", "a100-sxm4-80gb", "a100-sxm4-80g"]),
    "H100 PCIe": ("h100-pcie", ["h100-pcie-80gb", "h100-80gb-pcie"]),
    "H100 SXM5": ("h100-sxm5", ["h100-sxm-80gb", "h100-sxm", "h100", "h100-sxm5-80gb",
                                 "h100-80gb-hbm3", "h100-80gb"]),
    "H100 NVL": ("h100-nvl", ["h100-nvl-94gb"]),
    "H200 SXM": ("h200-sxm", ["h200", "h200-sxm-141gb", "h200-141gb"]),
    "H20": ("h20", ["h20-96gb", "hgx-h20"]),
    "B200 (HGX)": ("b200-hgx", ["b200", "hgx-b200"]),
    "GB200 (per B200 GPU)": ("gb200", []),
    "Instinct MI250X": ("mi250x", []),
    "Instinct MI300X": ("mi300x", []),
    "Instinct MI325X": ("mi325x", []),
    "Gaudi 2": ("gaudi2", ["hl-225"]),
    "Gaudi 3": ("gaudi3", []),
    "GeForce RTX 4080": ("rtx-4080", ["4080", "rtx-4080-16gb"]),
    "GeForce RTX 4080 SUPER": ("rtx-4080-super", ["4080-super", "rtx-4080-super-16gb"]),
    "GeForce RTX 4070 Ti": ("rtx-4070-ti", ["4070-ti", "rtx-4070-ti-12gb"]),
    "GeForce RTX 4070 Ti SUPER": ("rtx-4070-ti-super", ["4070-ti-super",
                                                        "rtx-4070-ti-super-16gb"]),
    "GeForce RTX 4070": ("rtx-4070", ["4070", "rtx-4070-12gb"]),
    "GeForce RTX 4060 Ti 16GB": ("rtx-4060-ti-16gb", ["4060-ti-16gb"]),
    "GeForce RTX 4060 Ti 8GB": ("rtx-4060-ti-8gb", ["4060-ti-8gb"]),
    "GeForce RTX 5080": ("rtx-5080", ["5080", "rtx-5080-16gb"]),
    "GeForce RTX 5070 Ti": ("rtx-5070-ti", ["5070-ti", "rtx-5070-ti-16gb"]),
    "GeForce RTX 5070": ("rtx-5070", ["5070", "rtx-5070-12gb"]),
}

# Names that stand for several rows of different memory: a lookup is an error listing the
# variants (docs/gpus.md: memory decides the answer, so gpufit does not pick one for you).
# Normalised name -> the keys it could mean.
AMBIGUOUS = {
    "a100": ["a100-40gb-sxm4", "a100-80gb-sxm4", "a100-40gb-pcie", "a100-80gb-pcie"],
    "a100pcie": ["a100-40gb-pcie", "a100-80gb-pcie"],
    "rtx4060ti": ["rtx-4060-ti-16gb", "rtx-4060-ti-8gb"],  # nvidia-smi names both alike
    "4060ti": ["rtx-4060-ti-16gb", "rtx-4060-ti-8gb"],
}

# memory-model.md §8.5 "How much VRAM is actually there": nvidia-smi memory.total in MiB
# (modal-labs/modal-client PR #2797 unless noted), keyed by CSV name. Used when the CSV's
# memory_bytes_usable_if_known is empty; when both exist they must agree. §8.5 names the A100s
# without a variant; the CSV assumes SXM ("variant assumed SXM"), and so do we.
SEC_8_5_MIB = {
    "H100 SXM5": 81559,
    "A100 80GB SXM4": 81920,
    "A100 40GB SXM4": 40960,
    "A10": 23028,
    "L4": 23034,
    "L40S": 46068,
    "T4": 15360,
    "GeForce RTX 4090": 24564,  # RLinf/RLinf #255
    "GeForce RTX 3090": 24576,  # club-3090 #390
    "GeForce RTX 5090": 32607,  # club-3090 #1261
    "B200 (HGX)": 183359,       # NVIDIA/TensorRT-LLM #10278
}

REQUIRED_COLUMNS = [
    "name", "vendor", "architecture", "memory_gib", "memory_bytes_usable_if_known",
    "memory_bandwidth_gbs", "fp16_bf16_tensor_tflops_dense", "fp8_tflops_dense", "nvlink",
    "nvlink_bandwidth_gbs", "launch_year", "msrp_usd_if_known", "supports_bf16",
    "supports_fp8", "source",
]


def fail(msg):
    sys.stderr.write("gen_gpu_catalog: " + msg + "\n")
    sys.exit(2)


VENDOR_WORDS = ("nvidia", "geforce", "tesla", "quadro", "amd", "instinct", "intel", "habana")


def norm(s):
    """The lookup normalisation of gpu_catalog.c (gpufit__gpu_norm): split at ' ', '-' and
    '_', drop leading vendor words, lowercase and join the rest ("NVIDIA GeForce RTX 4090" and
    "rtx_4090" are both "rtx4090")."""
    toks = [t for t in s.replace("_", " ").replace("-", " ").split(" ") if t]
    while toks and toks[0].lower() in VENDOR_WORDS:
        toks.pop(0)
    return "".join(toks).lower()


def alias_ok(a):
    return a == a.lower() and " " not in a and "_" not in a


def slug(name):
    out = []
    for ch in name.lower():
        if ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")


def cstr(s):
    if any(ord(c) < 0x20 or ord(c) > 0x7E for c in s):
        fail("non-printable or non-ASCII character in %r" % s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ccomment(s):
    return s.replace("*/", "* /").replace("/*", "/ *")


def cdouble(text, row, col):
    if text == "":
        return "0.0"
    try:
        v = float(text)
    except ValueError:
        fail("row %r: %s=%r is not a number" % (row, col, text))
    if v < 0 or v != v:
        fail("row %r: %s=%r must be >= 0" % (row, col, text))
    return repr(v)


def yesno(text, row, col):
    if text == "yes":
        return 1
    if text == "no":
        return 0
    fail("row %r: %s=%r is not yes/no" % (row, col, text))


def cc_major(vendor, arch, row):
    """CUDA compute capability major from the CSV architecture (0 = not NVIDIA)."""
    if vendor != "NVIDIA":
        return 0
    for prefix, cc in (("Volta", 7), ("Turing", 7), ("Ampere", 8), ("Ada", 8), ("Hopper", 9)):
        if arch.startswith(prefix):
            return cc
    if arch.startswith("Blackwell"):
        # By die: GB20x (GeForce/workstation, RTX 5090) is sm_120; GB10x (B200, GB200) is sm_100.
        if "GB20" in arch:
            return 12
        if "GB10" in arch:
            return 10
    fail("row %r: no compute capability for architecture %r" % (row, arch))


def wrap(text, width, indent):
    words, lines, cur = text.split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = w if not cur else cur + " " + w
    if cur:
        lines.append(cur)
    return [indent + ln for ln in lines]


def build(csv_path, csv_label):
    with open(csv_path, "rb") as f:
        raw = f.read()
    sha = hashlib.sha256(raw).hexdigest()
    reader = csv.DictReader(io.StringIO(raw.decode("utf-8"), newline=""))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        fail("CSV lacks columns: " + ", ".join(missing))
    rows = list(reader)
    if not rows:
        fail("CSV has no rows")

    names = [r["name"] for r in rows]
    if len(set(names)) != len(names):
        fail("duplicate GPU names in the CSV")
    for i, pinned in enumerate(ID_ORDER):
        if i >= len(names) or names[i] != pinned:
            fail("id %d is pinned to %r but CSV row %d is %r: ids are append-only, append new "
                 "rows at the end of the CSV" % (i + 1, pinned, i + 1,
                                                 names[i] if i < len(names) else None))
    unknown = sorted(set(NAMES) - set(names)) + sorted(set(SEC_8_5_MIB) - set(names))
    if unknown:
        fail("tables name GPUs that are not in the CSV: %r" % unknown)

    seen = {}  # normalised lookup name -> id, across the whole catalogue
    out_rows = []
    for idx, r in enumerate(rows):
        gid = idx + 1
        name = r["name"]
        if gid > len(ID_ORDER):
            sys.stderr.write("gen_gpu_catalog: note: %r gets new id %d; append it to ID_ORDER\n"
                             % (name, gid))
        key, aliases = NAMES.get(name, (slug(name), []))
        if key != key.lower() or " " in key or "_" in key:
            fail("key %r is not a lowercase slug" % key)
        for a in aliases:
            if not alias_ok(a):
                fail("alias %r must be lowercase with '-' separators" % a)
        for n in {norm(name), norm(key), *map(norm, aliases)}:
            if n in seen and seen[n] != gid:
                fail("lookup name %r is used by ids %d and %d" % (n, seen[n], gid))
            seen[n] = gid
        nal = [norm(a) for a in aliases]
        if len(set(nal)) != len(nal) or norm(key) in nal or norm(name) in nal:
            fail("row %r: aliases repeat the key, the name or each other" % name)

        gib_text = r["memory_gib"]
        try:
            gib = int(gib_text)
        except ValueError:
            fail("row %r: memory_gib=%r is not an integer" % (name, gib_text))
        if gib <= 0:
            fail("row %r: memory_gib must be > 0" % name)
        marketed = gib * GIB
        usable_text = r["memory_bytes_usable_if_known"]
        smi = SEC_8_5_MIB.get(name)
        if usable_text:
            usable = int(usable_text)
            if smi is not None and smi * MIB != usable:
                fail("row %r: CSV usable %d != §8.5 %d MiB" % (name, usable, smi))
            mem_src = "CSV usable (nvidia-smi total)"
            if smi is not None:
                mem_src += ", matches memory-model.md 8.5"
            memory, known = usable, 1
        elif smi is not None:
            memory, known = smi * MIB, 1
            mem_src = "memory-model.md 8.5 nvidia-smi total %d MiB" % smi
        else:
            memory, known, mem_src = marketed, 0, "marketed %d GiB x 2^30, usable unknown" % gib
        if memory % MIB != 0:
            fail("row %r: memory %d is not a whole number of MiB" % (name, memory))

        nv = yesno(r["nvlink"], name, "nvlink")
        nvlink = cdouble(r["nvlink_bandwidth_gbs"], name, "nvlink_bandwidth_gbs") if nv else "0.0"
        bf16 = r["fp16_bf16_tensor_tflops_dense"]
        if bf16 == "":
            fail("row %r: fp16_bf16_tensor_tflops_dense is empty" % name)
        year = int(r["launch_year"])
        out_rows.append({
            "id": gid, "name": name, "key": key, "aliases": " ".join(aliases),
            "vendor": r["vendor"], "arch": r["architecture"], "memory": memory,
            "marketed": marketed,
            "bw": cdouble(r["memory_bandwidth_gbs"], name, "memory_bandwidth_gbs"),
            "bf16": cdouble(bf16, name, "fp16_bf16_tensor_tflops_dense"),
            "fp8": cdouble(r["fp8_tflops_dense"], name, "fp8_tflops_dense"),
            "nvlink": nvlink,
            "msrp": cdouble(r["msrp_usd_if_known"], name, "msrp_usd_if_known"),
            "sbf16": yesno(r["supports_bf16"], name, "supports_bf16"),
            "sfp8": yesno(r["supports_fp8"], name, "supports_fp8"),
            "known": known, "year": year,
            "cc": cc_major(r["vendor"], r["architecture"], name),
            "mem_src": mem_src, "source": r["source"],
        })

    lines = [
        "/* GENERATED FILE: do not edit. Produced by tools/gen_gpu_catalog.py from",
        " *   %s (sha256 %s...)." % (csv_label, sha[:16]),
        " * Source: data/gpus.csv (a copy of the shared reference), one row per CSV row; nvidia-smi totals",
        " * from shared/reference/memory-model.md section 8.5; column meanings from section 10.",
        " * Regenerate (make regen):",
        " *   python3 tools/gen_gpu_catalog.py %s -o lib/core/gpu_catalog.inc" % csv_label,
        " * Field order: struct gpufit__gpu in lib/internal.h. Ids are stable and append-only",
        " * (ID_ORDER in the generator): never remove or reorder rows, append new ones.",
        " * Doubles: memory bandwidth GB/s; dense bf16 (fp32 accumulate) and fp8 TFLOPS; NVLink",
        " * GB/s bidirectional; MSRP USD; 0 = none or unknown. */",
    ]
    for o in out_rows:
        lines.append("/* %d %s: memory = %s." % (o["id"], ccomment(o["name"]),
                                                     ccomment(o["mem_src"])))
        lines.extend(wrap("Source: " + ccomment(o["source"]), 88, " *   "))
        lines[-1] += " */"
        head = "{%d, %s, %s, %s," % (o["id"], cstr(o["name"]), cstr(o["key"]), cstr(o["aliases"]))
        if len(head) > 100:
            lines.append("{%d," % o["id"])
            lines.extend(" %s," % cstr(o[k]) for k in ("name", "key", "aliases"))
        else:
            lines.append(head)
        lines.append(" %s, %s," % (cstr(o["vendor"]), cstr(o["arch"])))
        lines.append(" UINT64_C(%d), UINT64_C(%d)," % (o["memory"], o["marketed"]))
        lines.append(" %s, %s, %s, %s, %s, %d, %d, %d, %d, %d}," % (
            o["bw"], o["bf16"], o["fp8"], o["nvlink"], o["msrp"], o["sbf16"], o["sfp8"],
            o["known"], o["year"], o["cc"]))
    keys = {o["key"] for o in out_rows}
    amb = ["/* GENERATED FILE: do not edit. Produced by tools/gen_gpu_catalog.py (AMBIGUOUS):",
           " * {normalised name, the catalogue keys it could mean}; lib/gpu_catalog.c. */"]
    for a in sorted(AMBIGUOUS):
        if norm(a) != a or a in seen:
            fail("ambiguous name %r is not normalised or is a lookup name" % a)
        if any(k not in keys for k in AMBIGUOUS[a]):
            fail("ambiguous name %r lists an unknown key" % a)
        amb.append("{%s, %s}," % (cstr(a), cstr(", ".join(AMBIGUOUS[a]))))
    # The lookup index: every normalised name, key and alias, sorted (byte order, as strcmp),
    # each with the first row (in array order) that has it: gpufit__gpu_find binary-searches it
    # instead of normalising every row per lookup, with the same answer as a scan in row order.
    first = {}
    for pos, o in enumerate(out_rows):
        for n in [o["name"], o["key"]] + o["aliases"].split():
            k = norm(n)
            if k and k not in first:
                first[k] = pos
    idx = ["/* GENERATED FILE: do not edit. Produced by tools/gen_gpu_catalog.py: {normalised",
           " * name, key or alias; its first row in gpu_catalog.inc}, sorted; lib/core/gpu_catalog.c. */"]
    for k in sorted(first):
        idx.append("{%s, %d}," % (cstr(k), first[k]))
    # An open-addressing table over the index, so that a lookup compares one or two names:
    # 1 + the index's entry hashed there (gpufit__name_hash of the normalised name, linear
    # probing), 0 = empty; the smallest power of two at least 4 times the entries.
    names = sorted(first)
    n_slots = 1
    while n_slots < 4 * len(names):
        n_slots *= 2
    slots = [0] * n_slots
    for i, k in enumerate(names):
        h = name_hash(k.encode("utf-8")) & (n_slots - 1)
        while slots[h]:
            h = (h + 1) & (n_slots - 1)
        slots[h] = i + 1
    hsh = ["/* GENERATED FILE: do not edit. Produced by tools/gen_gpu_catalog.py: 1 + the entry of",
           " * gpu_index.inc hashed to each slot (gpufit__name_hash, linear probing), 0 = empty;",
           " * lib/core/gpu_catalog.c. */"]
    for a in range(0, n_slots, 16):
        hsh.append(" ".join("%d," % v for v in slots[a:a + 16]))
    for ln in lines:
        if len(ln) > 100:
            sys.stderr.write("gen_gpu_catalog: note: line over 100 columns: %s\n" % ln)
    return ("\n".join(lines) + "\n", "\n".join(amb) + "\n", "\n".join(idx) + "\n",
            "\n".join(hsh) + "\n")


def name_hash(b):
    """gpufit__name_hash (lib/internal.h): the length and the first, middle and last byte."""
    m = 0xFFFFFFFF
    n = len(b)
    h = (n * 0x9E3779B1) & m
    if n:
        h ^= (b[0] * 0x85EBCA6B) & m
        h ^= (b[n // 2] * 0xC2B2AE35) & m
        h ^= (b[n - 1] * 0x27D4EB2F) & m
    return h ^ (h >> 15)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default=DEFAULT_CSV, help="gpus.csv path")
    ap.add_argument("-o", "--output", default=DEFAULT_OUT, help="output .inc path")
    ap.add_argument("--check", action="store_true", help="exit 1 if the output is stale")
    args = ap.parse_args()

    csv_abs = os.path.abspath(args.csv)
    label = os.path.relpath(csv_abs, REPO).replace(os.sep, "/")
    text, amb, idx, hsh = build(csv_abs, label)
    out_dir = os.path.dirname(os.path.abspath(args.output))
    outputs = ((args.output, text), (os.path.join(out_dir, "gpu_ambiguous.inc"), amb),
               (os.path.join(out_dir, "gpu_index.inc"), idx),
               (os.path.join(out_dir, "gpu_hash.inc"), hsh))
    if args.check:
        stale = 0
        for path, want in outputs:
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except OSError:
                current = None
            if current != want:
                sys.stderr.write("gen_gpu_catalog: %s is stale; run make regen\n" % path)
                stale = 1
        return stale
    for path, want in outputs:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(want)
        os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
