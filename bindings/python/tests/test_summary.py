# SPDX-License-Identifier: MIT
"""The fast path (gpufit.evaluate_summary) and the grid helper (gpufit.sweep)."""
import dataclasses
import os
import subprocess
import sys
import unittest

import gpufit


class TestFastPath(unittest.TestCase):
    def test_same_totals_as_evaluate(self):
        m = gpufit.Model("llama-3-8b")
        j = gpufit.Job(task="inference", gpu="rtx-4090", context_len=8192)
        v, r = gpufit.evaluate_summary(m, j), gpufit.evaluate(m, j)
        self.assertEqual((v.verdict, v.fits, v.peak_bytes, v.peak_low_bytes, v.peak_high_bytes,
                          v.headroom_bytes, v.capacity_bytes),
                         (r.verdict, r.fits, r.peak_bytes, r.peak_low_bytes, r.peak_high_bytes,
                          r.headroom_bytes, r.capacity_bytes))
        self.assertTrue(v)  # a Verdict is true when it surely fits
        no_gpu = gpufit.evaluate_summary(m, gpufit.Job(task="inference"))
        self.assertIsNone(no_gpu.verdict)
        self.assertFalse(no_gpu)
        with self.assertRaises(TypeError):
            gpufit.evaluate_summary(m, 5)
        self.assertIsInstance(v, gpufit.Verdict)  # imported at the first call
        self.assertTrue(dataclasses.is_dataclass(v))
        self.assertEqual(dataclasses.asdict(v)["peak_bytes"], r.peak_bytes)

    def test_import_loads_no_heavy_module(self):
        # import time (issue 16): json, dataclasses (inspect) and html load when first used
        code = ("import sys, gpufit; print(sorted(m for m in ('json', 'dataclasses', 'inspect', "
                "'html') if m in sys.modules))")
        out = subprocess.run([sys.executable, "-S", "-c", code], check=True, text=True,
                             stdout=subprocess.PIPE, env=dict(os.environ)).stdout
        self.assertEqual(out.strip(), "[]")

    def test_sweep_columns(self):
        cols = gpufit.sweep("llama-3-8b", {"task": "inference", "gpu": "rtx-4090"},
                            context_len=[4096, 262144], batch=[1, 2])
        if not isinstance(cols, dict):  # pandas is importable
            cols = {k: list(cols[k]) for k in cols.columns}
        self.assertEqual(cols["context_len"], [4096, 4096, 262144, 262144])
        self.assertEqual(cols["batch"], [1, 2, 1, 2])
        self.assertEqual(cols["verdict"][0], "fits")
        self.assertEqual(cols["verdict"][-1], "oom")
        bad = gpufit.sweep("llama-3-8b", {"task": "inference", "framework": "vllm"},
                           n_gpu_layers=[10])
        if not isinstance(bad, dict):
            bad = {k: list(bad[k]) for k in bad.columns}
        self.assertEqual(bad["verdict"], ["error"])  # n_gpu_layers does not apply to vLLM
        self.assertIn("n_gpu_layers", bad["error"][0])

    def test_sweep_in_one_call_equals_one_by_one(self):
        """gpufit_sweep (one call into C) gives, cell for cell, what the one-by-one path
        (a copy of the job, the values set, evaluate_summary) gives: model, job, enum (by
        name), bool and float axes, a refused cell with its message."""
        from gpufit import _api
        m = gpufit.Model("llama-3-8b")
        j = gpufit.Job(task="finetune", gpu="a100-40gb", precision="amp_bf16", seq_len=1024)
        grid = dict(n_layers=[8, 32], tp=[1, 3, 2], checkpointing=["none", "full"],
                    sp=[False, True], dropout=[0.0, 0.1])
        keys, values = list(grid), list(grid.values())
        self.assertIsNotNone(_api._grid_axes(keys, values))  # the C path is taken
        fast = _api._sweep_c(m, j, keys, values, *_api._grid_axes(keys, values))
        slow = _api._sweep_python(m, j, keys, values)
        self.assertEqual(fast, slow)
        self.assertEqual(len(fast["verdict"]), 48)
        bad = [i for i, v in enumerate(fast["verdict"]) if v == "error"]
        # tp=3 does not divide 32 heads; sp needs tp > 1
        self.assertEqual(bad, [i for i in range(48) if fast["tp"][i] == 3 or (
            fast["tp"][i] == 1 and fast["sp"][i])])
        self.assertEqual(fast["error"][bad[0]],
                         "sp (sequence parallelism) needs tensor parallelism (tp > 1)")
        self.assertEqual(fast["error"][8], "tp (3) must divide n_heads (32)")
        self.assertEqual(len(bad), 24)
        self.assertEqual(len(set(fast["peak_bytes"][i] for i in range(48) if i not in bad)),
                         24)  # every other combination has its own peak

    def test_sweep_python_path_for_gpu_names(self):
        from gpufit import _api
        self.assertIsNone(_api._grid_axes(["gpu"], [["rtx-4090"]]))
        cols = gpufit.sweep("llama-3-8b", {"task": "inference"}, gpu=["rtx-4090", "h100"])
        if not isinstance(cols, dict):
            cols = {k: list(cols[k]) for k in cols.columns}
        self.assertEqual(cols["gpu"], ["rtx-4090", "h100"])
        self.assertEqual(cols["verdict"], ["fits", "fits"])
        with self.assertRaises(ValueError):
            gpufit.sweep("llama-3-8b", None, micro_batch=[])

    def test_heat_map(self):
        """The notebook chart of a two-key sweep: one cell per combination, coloured by
        verdict, and the capacity line on exactly the edges between a combination that fits
        (or is marginal) and one that does not."""
        import xml.etree.ElementTree as ET
        # a fused step: no step temporaries, so the grid spans all three verdicts
        cols = gpufit.sweep("llama-3-8b", {"task": "pretrain", "gpu": "h100",
                                           "precision": "bf16", "optimizer_impl": "fused"},
                            as_frame=False,
                            micro_batch=range(1, 9), seq_len=[512, 1024, 2048, 4096])
        self.assertIsInstance(cols, gpufit.SweepColumns)
        self.assertIsInstance(cols, dict)
        svg = cols._repr_html_()
        root = ET.fromstring(svg)  # well-formed
        ns = "{http://www.w3.org/2000/svg}"
        cells = [r for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]
        self.assertEqual(len(cells), 32)
        ok = {(i // 4, i % 4): v != "oom" for i, v in enumerate(cols["verdict"])}
        self.assertEqual(set(cols["verdict"]), {"fits", "marginal", "oom"})
        edges = sum(1 for (y, x), v in ok.items() for n in ((y, x + 1), (y + 1, x))
                    if n in ok and ok[n] != v)
        self.assertGreater(edges, 0)
        self.assertEqual(len(list(root.iter(ns + "line"))), edges)
        titles = [c.find(ns + "title").text for c in cells]
        self.assertTrue(titles[0].startswith("micro_batch=1, seq_len=512: fits, peak "))
        three = gpufit.sweep("llama-3-8b", {"task": "inference", "gpu": "t4"}, as_frame=False,
                             batch=[1], context_len=[512], prompt_len=[128])
        self.assertIsNone(three.svg())  # a heat map takes one or two keys
        if gpufit._api._pandas() is None:
            with self.assertRaises(ImportError):
                gpufit.sweep("llama-3-8b", None, as_frame=True, batch=[1])


if __name__ == "__main__":
    unittest.main()
