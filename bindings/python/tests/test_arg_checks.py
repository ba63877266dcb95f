"""Argument checks before any ctypes call (issue 13), edge cases beyond test_files.py: counts
are ints (not bool, float or str) in 1..2^32-1, never wrapped; every handle and the
max_fitting parameter are type-checked (TypeError naming the argument, never a crash)."""

import unittest

import _support  # noqa: F401  (puts the package on the path)
import gpufit
from gpufit import _api

TRAIN = dict(model="llama-3-8b", gpu="h100", task="pretrain")
SERVE = dict(model="llama-3-8b", task="inference")


class Counts(unittest.TestCase):
    def test_plan_counts_do_not_wrap(self):
        # 2^32 + 2 used to plan on 2 nodes through ctypes
        for name in ("gpus_per_node", "nodes", "max_results"):
            for bad in (2**32 + 2, 2**32, 2**64 + 1, 0, -1):
                with self.assertRaises(ValueError) as cm:
                    gpufit.plan(TRAIN, **{name: bad})
                self.assertIn(name, str(cm.exception))
                self.assertIn("4294967295", str(cm.exception))

    def test_plan_count_types(self):
        for name in ("gpus_per_node", "nodes", "max_results"):
            # gpus_per_node None is the default: the job's gpus, else 8
            for bad in (2.0, "2", True) + ((None,) if name != "gpus_per_node" else ()):
                with self.assertRaises(TypeError) as cm:
                    gpufit.plan(TRAIN, **{name: bad})
                self.assertIn(name, str(cm.exception))

    def test_plan_gpu_count_default(self):
        lays = gpufit.plan(TRAIN, max_results=1)
        self.assertEqual((lays.gpus_per_node, lays.nodes, lays.gpus_assumed), (8, 1, True))
        lays = gpufit.plan(TRAIN, gpus=2, max_results=1)
        self.assertEqual((lays.gpus_per_node, lays.gpus_assumed), (2, False))
        self.assertEqual(lays[:1].gpus_per_node, 2)
        lays = gpufit.plan(TRAIN, gpus=2, gpus_per_node=4, max_results=1)
        self.assertEqual((lays.gpus_per_node, lays.gpus_assumed), (4, False))

    def test_recommend_max_count(self):
        with self.assertRaises(ValueError) as cm:
            gpufit.recommend(SERVE, max_count=2**32 + 2)
        self.assertIn("max_count", str(cm.exception))
        with self.assertRaises(TypeError):
            gpufit.recommend(SERVE, max_count=1.5)

    def test_valid_counts_still_plan(self):
        self.assertGreater(len(gpufit.plan(TRAIN, gpus_per_node=8, nodes=1, max_results=2)), 0)
        self.assertLessEqual(len(gpufit.plan(TRAIN, max_results=2)), 2)


class Types(unittest.TestCase):
    def test_evaluate_job_not_a_job(self):
        model = gpufit.Model("llama-3-8b")
        for bad in (5, "task=train", model, 1.5, [1]):
            with self.assertRaises(TypeError) as cm:
                gpufit.evaluate(model, job=bad)
            self.assertIn("job", str(cm.exception))

    def test_evaluate_model_not_a_model(self):
        for bad in (5, gpufit.Job(), None, 1.5):
            with self.assertRaises(TypeError) as cm:
                gpufit.evaluate(bad)
            self.assertIn("model", str(cm.exception))

    def test_handles_functions(self):
        model, job = gpufit.Model("llama-3-8b"), gpufit.Job()
        for fn in (_api.plan_handles, _api.recommend_handles):
            with self.assertRaises(TypeError):
                fn(model, 5)
            with self.assertRaises(TypeError):
                fn(job, model)
        with self.assertRaises(TypeError):
            _api.max_fitting_handles(model, model, "micro_batch")
        with self.assertRaises(TypeError):
            _api.max_fitting_handles(model, job, 7)

    def test_evaluate_still_takes_names_and_dicts(self):
        self.assertGreater(gpufit.evaluate("llama-3-8b", {"task": "pretrain"}).peak_bytes, 0)


if __name__ == "__main__":
    unittest.main()
