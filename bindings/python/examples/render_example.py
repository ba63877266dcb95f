#!/usr/bin/env python3
"""Writes report_example.html (the notebook display of two reports) beside this file and,
when a headless Chromium is installed, renders it to report_example.png.

    PYTHONPATH=bindings/python python3 bindings/python/examples/render_example.py

The HTML is what ``Report._repr_html_()`` returns inside a minimal page; the PNG is the
screenshot used by README.md to show that the chart renders and reads well.
"""

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import gpufit  # noqa: E402


def page():
    fits = gpufit.estimate(model="llama-3-70b", gpu="h100-sxm-80gb", task="pretrain",
                           precision="bf16", framework="megatron", seq_len=4096,
                           global_batch=512, tp=8, pp=4, sp=True, checkpointing="selective")
    oom = gpufit.estimate(model="llama-3-8b", gpu="rtx-4090", task="finetune", micro_batch=4,
                          seq_len=2048)
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/><title>gpufit report "
            "example</title></head><body style=\"margin:0;background:#ffffff\">\n"
            + fits._repr_html_() + "\n<hr/>\n" + oom._repr_html_() + "\n</body></html>\n")


def main():
    html = os.path.join(HERE, "report_example.html")
    with open(html, "w", encoding="utf-8") as f:
        f.write(page())
    print("wrote", html)
    browser = next((b for b in ("chromium-headless-shell", "chromium", "google-chrome")
                    if shutil.which(b)), None)
    if browser is None:
        print("no headless Chromium: PNG not rendered")
        return 0
    png = os.path.join(HERE, "report_example.png")
    subprocess.run([browser, "--headless", "--no-sandbox", "--hide-scrollbars",
                    "--force-device-scale-factor=1", "--window-size=780,1240",
                    "--screenshot=" + png, "file://" + html], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("wrote", png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
