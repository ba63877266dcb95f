# SPDX-License-Identifier: MIT
"""llama.cpp over several GPUs from Python: device_memory_gib (a capacity per device), the
default split by free memory and the pipeline-parallel input copies (issue #12 item 5; the
bytes by hand are in tests/unit/test_llamacpp.c)."""

import json
import unittest

import _support  # noqa: F401  (this checkout's package first on sys.path)
import gpufit

GIB = 1 << 30
L3 = dict(model="llama-3-8b", task="inference", framework="llamacpp", weight_dtype="q4_k_m",
          context_len=4096)


class TestDeviceMemoryGib(unittest.TestCase):
    def test_param_info(self):
        p = gpufit.param_info("device_memory_gib")
        self.assertEqual(p["type"], "list")
        self.assertEqual(p["domain"], "job")
        self.assertEqual(p["default"], [])
        self.assertEqual((p["min_count"], p["max_count"]), (0, 16))
        self.assertGreater(p["min"], 0.0)  # a device of 0 GiB is refused
        self.assertIn(p, gpufit.params("job"))

    def test_set_get_and_text_forms(self):
        j = gpufit.Job(device_memory_gib=[24, 11.5])
        self.assertEqual(j["device_memory_gib"], [24.0, 11.5])
        j["device_memory_gib"] = "48,24,24"
        self.assertEqual(j["device_memory_gib"], [48.0, 24.0, 24.0])
        j["device_memory_gib"] = []
        self.assertEqual(j["device_memory_gib"], [])
        j = gpufit.Job(spec="device_memory_gib=24,12 pp=2")
        self.assertEqual(j["device_memory_gib"], [24.0, 12.0])
        self.assertEqual(j["pp"], 2)

    def test_rejections_name_the_parameter(self):
        j = gpufit.Job(device_memory_gib=[24, 12])
        for value in ([0, 12], [-1], [float("nan")], [1] * 17, "24,x"):
            with self.subTest(value=value):
                with self.assertRaises(gpufit.InvalidArgument) as cm:
                    j.set("device_memory_gib", value)
                self.assertEqual(cm.exception.key, "device_memory_gib")
                self.assertEqual(j["device_memory_gib"], [24.0, 12.0])
        with self.assertRaises(gpufit.Inconsistent) as cm:
            gpufit.estimate(pp=2, device_memory_gib=[24, 12, 12], **L3)
        self.assertIn("device_memory_gib", str(cm.exception))

    def test_roles_split_by_free_memory(self):
        r = gpufit.estimate(pp=2, device_memory_gib=[24, 12], **L3)
        r0, r1 = r.roles[0], r.roles[1]
        self.assertEqual((r0.name, r1.name), ("gpu0", "gpu1"))
        self.assertEqual((r0.capacity_bytes, r1.capacity_bytes), (24 * GIB, 12 * GIB))
        # free = capacity - 300 MiB context: split point 0.6694 of 33 -> 23 + 9 layers
        self.assertEqual((r0.layers, r1.layers), (23, 9))
        self.assertEqual((r0.gpu, r1.gpu), ("", ""))
        d = r.to_dict()
        self.assertEqual(d, json.loads(r.to_json()))
        self.assertEqual([x["capacity_bytes"] for x in d["roles"][:2]], [24 * GIB, 12 * GIB])
        # the same from a JSON-form scenario and a spec string
        r2 = gpufit.estimate(dict(L3, pp=2, device_memory_gib="24,12"))
        self.assertEqual(r2.to_dict(), d)
        r3 = gpufit.estimate(spec="model=llama-3-8b task=inference framework=llamacpp "
                                  "weight_dtype=q4_k_m context_len=4096 pp=2 "
                                  "device_memory_gib=24,12")
        self.assertEqual(r3.to_dict(), d)

    def test_pipeline_parallel_copies(self):
        # flash attention: 4 copies of 12,593,152 input bytes + the 83,886,080-byte peak
        r = gpufit.estimate(pp=2, attention="flash", **L3)
        self.assertEqual(r.roles[0].components["activations"], 134258688)

    def test_verdict_per_device(self):
        r = gpufit.estimate(model="llama-3-70b", task="inference", framework="llamacpp",
                            weight_dtype="q4_k_m", context_len=2048, pp=2,
                            device_memory_gib=[24, 12])
        self.assertFalse(r.fits)
        r = r.with_changes(pp=3, device_memory_gib=[24, 24, 24])
        self.assertTrue(r.fits)


if __name__ == "__main__":
    unittest.main()
