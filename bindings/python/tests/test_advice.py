# SPDX-License-Identifier: MIT
"""Advice reproduces (docs/advice.md): plan rows, recommendations and mitigations carry the
canonical job changes that give exactly their printed peak when applied to the scenario."""

import unittest

import _support  # noqa: F401  (this checkout's package first on sys.path)
import gpufit
from gpufit import errors


class TestAdviceReproduces(unittest.TestCase):
    def test_plan_rows(self):
        # issue 13: the gpipe job planned on 2 x 8 GPUs; the rows reset the schedule
        sc = dict(model="llama-3-8b", task="pretrain", pp=4, pp_schedule="gpipe", gpu="h100")
        r = gpufit.estimate(**sc)
        lays = gpufit.plan(**sc, gpus_per_node=8, nodes=2, max_results=3)
        self.assertEqual(len(lays), 3)
        self.assertEqual(lays[0]["spec"], "micro_batch=4 global_batch=1024 checkpointing=none "
                                          "dp=4 tp=2 pp=2 vpp=4 cp=1 ep=1 sp=1 zero=1 "
                                          "pp_schedule=auto")
        for y in lays:
            self.assertEqual(y["changes"]["pp_schedule"], "auto")
            after = r.with_changes(y["changes"])
            self.assertEqual(after.peak_bytes, y["peak_bytes"], y["spec"])
            self.assertTrue(after.fits)

    def test_serving_rows_clear_lists(self):
        sc = dict(model="llama-3-8b", task="inference", framework="llamacpp", pp=2,
                  tensor_split=[3, 1], gpu="rtx-4090")
        r = gpufit.estimate(**sc)
        lays = gpufit.plan(**sc, gpus_per_node=4, max_results=3)
        self.assertTrue(lays)
        for y in lays:
            self.assertIn("tensor_split=none", y["spec"])
            self.assertEqual(y["changes"]["tensor_split"], [])
            self.assertEqual(r.with_changes(y["changes"]).peak_bytes, y["peak_bytes"])

    def test_recommendations(self):
        sc = dict(model="llama-3-70b", task="inference", gpu_memory_gib=20)
        r = gpufit.estimate(**sc)
        recs = gpufit.recommend(**sc, max_count=8)
        self.assertTrue(recs)
        for x in recs:
            self.assertEqual(x["changes"]["gpu"], x["gpu"])
            self.assertEqual(x["changes"]["tp"], x["count"])
            self.assertIn("gpu=%s" % x["gpu"], x["spec"])
            after = r.with_changes(x["changes"])
            self.assertEqual(after.peak_bytes, x["peak_bytes"], x["spec"])
            self.assertEqual(after.fits, x["fits"])

    def test_mitigations(self):
        r = gpufit.estimate(model="llama-3-8b", task="finetune", gpu="rtx-4090")
        self.assertTrue(r.mitigations)
        for i, m in enumerate(r.mitigations):
            after = r.with_changes(m["changes"])
            self.assertEqual(after.peak_bytes, m["peak_bytes_after"], m["spec"])
            self.assertEqual(r.with_mitigation(i).peak_bytes, m["peak_bytes_after"])

    def test_unknown_candidate_id(self):
        with self.assertRaises(errors.NotFound) as cm:
            gpufit.recommend(model="llama-3-8b", candidates=[987654])
        self.assertIn("987654", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
