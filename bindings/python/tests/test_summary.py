# SPDX-License-Identifier: MIT
"""The fast path (gpufit.evaluate_summary) and the grid helper (gpufit.sweep)."""
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


if __name__ == "__main__":
    unittest.main()
