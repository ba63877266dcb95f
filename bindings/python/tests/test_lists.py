# SPDX-License-Identifier: MIT
"""List parameters (tensor_split, device_gpus): Job set/get, text forms, params(), reports."""

import json
import math
import unittest

import _support  # noqa: F401  (this checkout's package first on sys.path)
import gpufit
from gpufit import _lib


def _gpu_key(name):
    return [g["key"] for g in gpufit.gpus() if name == g["key"] or name in g["aliases"]][0]


class TestListInfo(unittest.TestCase):
    def test_params_report_lists(self):
        by_name = {p["name"]: p for p in gpufit.params()}
        for name, top in (("tensor_split", 1e6), ("device_gpus", 1048576.0)):
            p = by_name[name]
            self.assertEqual(p["type"], "list", name)
            self.assertEqual(p["domain"], "job")
            self.assertEqual(p["default"], [])
            self.assertEqual((p["min"], p["max"]), (0.0, top))
            self.assertEqual((p["min_count"], p["max_count"]), (0, 16))
            self.assertEqual(gpufit.param_info(name), p)
            self.assertIn(p, gpufit.params("job"))
            self.assertNotIn(p, gpufit.params("model"))

    def test_function_table(self):
        names = [row[0] for row in _lib.FUNCTIONS]
        self.assertIn("gpufit_job_set_list", names)
        self.assertIn("gpufit_job_get_list", names)


class TestJobLists(unittest.TestCase):
    def test_empty_by_default(self):
        j = gpufit.Job()
        self.assertEqual(j["tensor_split"], [])
        self.assertEqual(j["device_gpus"], [])
        self.assertNotIn("tensor_split", j.to_dict())
        self.assertEqual(j.to_dict(all=True)["tensor_split"], [])

    def test_set_get_round_trip(self):
        j = gpufit.Job()
        for value, want in (([3, 1], [3.0, 1.0]), ((0.5, 1.5, 0), [0.5, 1.5, 0.0]),
                            ([2], [2.0]), (7, [7.0]), ([1] * 16, [1.0] * 16)):
            with self.subTest(value=value):
                self.assertIs(j.set("tensor_split", value), j)
                self.assertEqual(j.get("tensor_split"), want)
                self.assertTrue(all(isinstance(v, float) for v in j["tensor_split"]))
        j["tensor_split"] = []
        self.assertEqual(j["tensor_split"], [])

    def test_text_forms(self):
        j = gpufit.Job(tensor_split="3,1")
        self.assertEqual(j["tensor_split"], [3.0, 1.0])
        j["tensor_split"] = "none"
        self.assertEqual(j["tensor_split"], [])
        j = gpufit.Job(spec="tensor_split=3,1 pp=2 tp=2,dp=1")
        self.assertEqual((j["tensor_split"], j["pp"], j["tp"], j["dp"]), ([3.0, 1.0], 2, 2, 1))
        j = gpufit.Job(spec="device_gpus=rtx-4090,h100")
        self.assertEqual(j["device_gpus"], [_gpu_key("rtx-4090"), _gpu_key("h100")])

    def test_device_gpus_names_and_ids(self):
        g4090 = gpufit.gpus()[[g["key"] for g in gpufit.gpus()].index(_gpu_key("rtx-4090"))]
        j = gpufit.Job(device_gpus=["rtx-4090", "H100", g4090["id"]])
        keys = j["device_gpus"]
        self.assertEqual(keys, [g4090["key"], _gpu_key("h100"), g4090["key"]])
        # the ids in the library are gpufit_gpu_by_name's
        pid = gpufit.param_info("device_gpus")["id"]
        import ctypes
        arr = (ctypes.c_double * 16)()
        n = ctypes.c_uint32(0)
        _lib.call(_lib.lib.gpufit_job_get_list, j, pid, arr, 16, ctypes.byref(n))
        self.assertEqual(n.value, 3)
        self.assertEqual(arr[0], float(g4090["id"]))
        # a string names the list in the spec form too, and a tuple works
        j["device_gpus"] = "h100,rtx-4090"
        self.assertEqual(j["device_gpus"], [_gpu_key("h100"), g4090["key"]])
        j["device_gpus"] = ("rtx-4090",)
        self.assertEqual(j["device_gpus"], [g4090["key"]])

    def test_rejections_name_the_parameter(self):
        j = gpufit.Job(tensor_split=[3, 1], device_gpus=["h100"])
        cases = (
            ("tensor_split", [0, 0], gpufit.InvalidArgument),
            ("tensor_split", [1] * 17, gpufit.InvalidArgument),
            ("tensor_split", [-1], gpufit.InvalidArgument),
            ("tensor_split", [math.nan], gpufit.InvalidArgument),
            ("tensor_split", [math.inf, 1], gpufit.InvalidArgument),
            ("tensor_split", [2e6], gpufit.InvalidArgument),
            ("tensor_split", ["x"], gpufit.InvalidArgument),
            ("tensor_split", [True], gpufit.InvalidArgument),
            ("tensor_split", [[1]], gpufit.InvalidArgument),
            ("tensor_split", {"a": 1}, gpufit.InvalidArgument),
            ("tensor_split", "3,,1", gpufit.InvalidArgument),
            ("tensor_split", "banana", gpufit.InvalidArgument),
            ("device_gpus", ["no-such-gpu"], gpufit.NotFound),
            ("device_gpus", [1.5], gpufit.NotFound),
            ("device_gpus", [-1], gpufit.InvalidArgument),
            ("device_gpus", "h100,nope", gpufit.NotFound),
            ("device_gpus", ["h100"] * 17, gpufit.InvalidArgument),
        )
        for name, value, exc in cases:
            with self.subTest(name=name, value=value):
                with self.assertRaises(exc) as cm:
                    j.set(name, value)
                self.assertEqual(cm.exception.key, name)
                self.assertIn(name, str(cm.exception))
                # the job is unchanged
                self.assertEqual(j["tensor_split"], [3.0, 1.0])
                self.assertEqual(j["device_gpus"], [_gpu_key("h100")])

    def test_update_mixes_lists_and_text(self):
        j = gpufit.Job()
        j.update(tensor_split=[1, 2], task="inference", device_gpus=("h100", "h100"))
        self.assertEqual(j["tensor_split"], [1.0, 2.0])
        self.assertEqual(j["device_gpus"], [_gpu_key("h100")] * 2)
        j.update({"tensor_split": [], "pp": 2})
        self.assertEqual(j["tensor_split"], [])

    def test_to_dict_round_trip_and_copy(self):
        j = gpufit.Job(task="inference", pp=2, tensor_split=[3, 1],
                       device_gpus=["rtx-4090", "h100"])
        d = j.to_dict()
        self.assertEqual(d["tensor_split"], [3.0, 1.0])
        self.assertEqual(gpufit.Job(**d).to_dict(), d)
        c = j.copy()
        self.assertEqual(c.to_dict(), d)
        c["tensor_split"] = []
        self.assertEqual(j["tensor_split"], [3.0, 1.0])
        self.assertIn("tensor_split=[3.0, 1.0]", repr(j))

    def test_model_has_no_lists(self):
        m = gpufit.Model("llama-3-8b")
        with self.assertRaises(gpufit.UnknownParameter):
            m.set("tensor_split", [3, 1])
        with self.assertRaises(gpufit.UnknownParameter):
            m.get("tensor_split")
        self.assertNotIn("tensor_split", m.to_dict(all=True))


class TestReports(unittest.TestCase):
    def test_estimate_with_lists(self):
        r = gpufit.estimate(model="llama-3-8b", task="inference", gpu="rtx-4090", pp=2,
                            tensor_split=[3, 1], device_gpus=["rtx-4090", "rtx-4090"])
        self.assertEqual(r.to_dict(), json.loads(r.to_json()))
        r2 = gpufit.estimate({"model": "llama-3-8b", "task": "inference", "gpu": "rtx-4090",
                              "pp": 2, "tensor_split": "3,1",
                              "device_gpus": "rtx-4090,rtx-4090"})
        self.assertEqual(r2.to_dict(), r.to_dict())
        # the report keeps its job: what-ifs change lists too
        r3 = r.with_changes(tensor_split=[1, 1])
        self.assertEqual(r3.to_dict()["fits"], r3.fits)
        self.assertEqual(r3._inputs[1]["tensor_split"], [1.0, 1.0])
        self.assertEqual(r._inputs[1]["tensor_split"], [3.0, 1.0])
        r4 = r.with_changes({"tensor_split": []})
        self.assertEqual(r4._inputs[1]["tensor_split"], [])

    def test_spec_and_keywords_agree(self):
        a = gpufit.estimate(spec="model=llama-3-8b task=inference pp=2 tensor_split=3,1")
        b = gpufit.estimate(model="llama-3-8b", task="inference", pp=2, tensor_split=(3, 1))
        self.assertEqual(a.to_dict(), b.to_dict())


if __name__ == "__main__":
    unittest.main()


class TestSplitReports(unittest.TestCase):
    """A layer split over GPUs of different sizes: one role per GPU, each with its capacity."""

    def test_roles_carry_their_gpu(self):
        r = gpufit.estimate(model="llama-3-70b", task="inference", framework="llamacpp",
                            weight_dtype="q4_k_m", pp=2, device_gpus=["rtx-4090", "rtx-3060"],
                            context_len=2048)
        gpus = {g["key"]: g for g in gpufit.gpus()}
        big, small = gpus[_gpu_key("rtx-4090")], gpus[_gpu_key("rtx-3060")]
        r0, r1 = r.roles[0], r.roles[1]
        self.assertEqual((r0.name, r1.name), ("gpu0", "gpu1"))
        self.assertEqual(r0.capacity_bytes, big["memory_bytes"])
        self.assertEqual(r1.capacity_bytes, small["memory_bytes"])
        self.assertEqual(r0.gpu, big["name"])
        self.assertEqual(r1.gpu, small["name"])
        self.assertEqual(r0.layers + r1.layers, 80)
        self.assertGreater(r0.layers, r1.layers)  # split by memory, as llama.cpp does
        for role in (r0, r1):
            self.assertEqual(role.headroom_bytes, role.capacity_bytes - role.device_used_bytes)
        d = r.to_dict()
        self.assertEqual(d["roles"][1]["capacity_bytes"], small["memory_bytes"])
        self.assertEqual(d["roles"][1]["gpu"], small["name"])
