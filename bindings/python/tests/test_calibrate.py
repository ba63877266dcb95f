"""Calibration from Python (docs/calibration.md): gpufit.calibrate and profile=."""
import os
import unittest

import gpufit

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = os.path.join(HERE, "..", "..", "..", "tests", "validation", "public.jsonl")
JOB = dict(model="llama-3-8b", task="inference", gpu="rtx-4090", context_len=8192)
MIB = 1 << 20


class TestCalibrate(unittest.TestCase):
    def test_runs_as_dicts_by_hand(self):
        base = gpufit.estimate(**JOB).roles[0]
        runs = [{"id": str(k), "scenario": dict(JOB),
                 "measurements": [{"level": "device_used_bytes", "role": "all",
                                   "bytes": base.peak_reserved_bytes + k * MIB}]}
                for k in (400, 600)]
        prof = gpufit.calibrate(runs)
        c = prof["constants"]["cuda_context"]
        self.assertEqual((c["point"], c["low"], c["high"], c["runs"]),
                         (500 * MIB, 400 * MIB, 600 * MIB, 2))
        r = gpufit.estimate(**JOB, profile=prof)
        self.assertEqual(r.roles[0].components["runtime_context"], 500 * MIB)
        self.assertEqual(r.roles[0].components_low["runtime_context"], 400 * MIB)
        job = gpufit.Job(task="inference", gpu="rtx-4090", context_len=8192)
        self.assertIs(job.apply_profile(prof), job)

    def test_file_and_errors(self):
        if not os.path.exists(RUNS):
            self.skipTest("tests/validation/public.jsonl is not in this tree")
        prof = gpufit.calibrate(RUNS)
        self.assertEqual(prof["gpufit_profile"], 1)
        self.assertGreater(prof["runs_used"], 0)
        with self.assertRaises(FileNotFoundError):
            gpufit.calibrate(os.path.join(HERE, "no-such-runs.jsonl"))
        with self.assertRaises(TypeError):
            gpufit.calibrate(42)
        with self.assertRaises(ValueError):  # no measurements
            gpufit.calibrate([{"scenario": {"model": "llama-3-8b"}}])
        with self.assertRaises(gpufit.UnknownParameter):
            gpufit.estimate(**JOB, profile={"gpufit_profile": 1,
                                            "constants": {"cuda_ctx": {}}})


if __name__ == "__main__":
    unittest.main()
