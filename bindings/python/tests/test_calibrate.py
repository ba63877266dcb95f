# SPDX-License-Identifier: MIT
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
        # two runs keep the documented 300-600 MiB range (docs/calibration.md)
        self.assertEqual(r.roles[0].components_low["runtime_context"], 300 * MIB)
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


LOGS = os.path.join(HERE, "..", "..", "..", "tests", "data", "logs")


def _read(name):
    with open(os.path.join(LOGS, name), encoding="utf-8") as f:
        return f.read()


class TestImporters(unittest.TestCase):
    def setUp(self):
        if not os.path.isdir(LOGS):
            self.skipTest("tests/data/logs is not in this tree")

    def test_vllm_log(self):
        from gpufit import runs
        sc = {"model": "llama-3.1-8b", "task": "inference", "framework": "vllm",
              "gpu": "rtx-3090", "context_len": 20000, "framework_version": "0.9"}
        r = runs.from_vllm_log(_read("vllm-startup.log"), sc, "x")
        got = {(m["level"], m["role"]): m["bytes"] for m in r["measurements"]}
        self.assertEqual(got[("component:weights", "all")], round(14.9889 * 2 ** 30))
        self.assertEqual(got[("component:activations", "all")], round(1.24 * 2 ** 30))
        self.assertEqual(got[("kv_capacity", "all")], round(4.84 * 2 ** 30))
        r2 = runs.from_vllm_log(_read("vllm-v1-available.log"), sc)
        self.assertEqual(r2["measurements"][0]["bytes"], round(8.11 * 2 ** 30))
        self.assertEqual(r["kind"], "inference")
        prof = gpufit.calibrate([r, r2])  # a vLLM >= 0.6.4 KV budget fits the non-torch term
        self.assertEqual(prof["constants"]["server_nontorch"]["runs"], 2)
        with self.assertRaises(ValueError):
            runs.from_vllm_log("nothing here", sc)

    def test_llamacpp_log(self):
        from gpufit import runs
        r = runs.from_llamacpp_log(_read("llamacpp.log"), {"model": "llama-3-8b",
                                                            "task": "inference"})
        got = {m["level"]: (m["role"], m["bytes"]) for m in r["measurements"]}
        self.assertEqual(got["component:weights"], ("all", round(4685.30 * 2 ** 20)))
        self.assertEqual(got["component:kv_cache"], ("all", 1024 * 2 ** 20))
        self.assertEqual(got["component:activations"], ("all", 560 * 2 ** 20))

    def test_measure_and_write(self):
        import tempfile
        from gpufit import runs
        calls = []
        stats = {"allocated_bytes.all.peak": 123, "reserved_bytes.all.peak": 456}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.jsonl")
            with runs.measure(dict(JOB), path, stats=lambda: stats,
                              reset=lambda: calls.append(1)) as m:
                pass
            self.assertEqual(calls, [1])
            self.assertEqual([x["bytes"] for x in m.run["measurements"]], [123, 456])
            with open(path, encoding="utf-8") as f:
                self.assertEqual(len(f.read().splitlines()), 1)
            prof = gpufit.calibrate(path)  # peak_reserved constrains the allocator slack
            self.assertIn("allocator_slack", prof["constants"])
        with self.assertRaises(TypeError):
            runs.from_memory_stats(42, JOB)
