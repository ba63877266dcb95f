#!/usr/bin/env python3
"""gpufit from Python: estimate a training job, print the report, write it as HTML.

    make && PYTHONPATH=bindings/python python3 examples/notebook_demo.py [--out DIR]

(or, after `pip install ./bindings/python`, just `python3 examples/notebook_demo.py`).

It estimates Llama-3-70B pre-training on 32 H100s (tp=8, pp=4), prints the report as the
`gpufit` command would, shows what the library suggests for a layout that does not fit, and
writes report.html: the same view a Jupyter notebook shows for a report (a stacked bar of the
memory components of each device role, and a table).
"""

import argparse
import os
import sys

try:
    import gpufit  # the installed package (pip install ./bindings/python), or PYTHONPATH
except ImportError:  # run from a checkout without installing: its bindings/python
    HERE = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bindings", "python"))
    import gpufit


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".", help="directory for report.html (default: .)")
    args = ap.parse_args(argv)

    print("gpufit %s, library %s\n" % (gpufit.__version__, gpufit.library_path))

    # 1. A job that fits: Megatron-style 3-D parallelism on 4 nodes of 8 H100s.
    report = gpufit.estimate(model="llama-3-70b", gpu="h100-sxm-80gb", task="pretrain",
                             precision="bf16", framework="megatron", micro_batch=1,
                             seq_len=4096, global_batch=512, tp=8, pp=4, dp=1, sp=True,
                             checkpointing="selective")
    print(report)
    worst = report.worst_role
    print("fullest role: %s, %.2f GiB of which activations %.2f GiB\n" % (
        worst.name, worst.device_used_bytes / 2**30,
        worst.components["activations"] / 2**30))

    # 2. The same model on one node with tensor parallelism only does not fit: what would?
    oom = report.with_changes(pp=1)
    print(repr(oom))
    for m in oom.mitigations[:3]:
        print("  %-5s %8.2f GiB  %s" % ("fits" if m["fits_after"] else "oom",
                                        m["peak_bytes_after"] / 2**30, m["text"]))
    print()

    # 3. The notebook view, as a file.
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/>"
                "<title>gpufit report</title></head><body>\n")
        f.write(report._repr_html_())
        f.write("\n<hr/>\n")
        f.write(oom._repr_html_())
        f.write("\n</body></html>\n")
    print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
