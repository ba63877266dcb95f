# SPDX-License-Identifier: MIT
"""Lazy reports (issue 16): evaluate() reads nothing it is not asked for, keeps the C result
alive as long as the report or one of its roles is, and keeps the inputs it was evaluated
from even when the caller's handles change afterwards."""
import gc
import pickle
import unittest

import gpufit
from gpufit import _api


class _Counting:
    """Wraps a library function of the binding and counts its calls."""

    def __init__(self, name):
        self.name, self.calls = name, 0

    def __enter__(self):
        self.real = getattr(_api.lib, self.name)

        def counted(*args):
            self.calls += 1
            return self.real(*args)
        setattr(_api.lib, self.name, counted)
        return self

    def __exit__(self, *exc):
        setattr(_api.lib, self.name, self.real)


class TestLazy(unittest.TestCase):
    def setUp(self):
        self.m = gpufit.Model("llama-3-8b")
        self.j = gpufit.Job(task="inference", gpu="rtx-4090", context_len=8192)

    def test_one_component_reads_no_json_and_no_role(self):
        with _Counting("gpufit_result_to_json") as js, _Counting("gpufit_result_role") as ro:
            r = gpufit.evaluate(self.m, self.j)
            kv = r.roles[0].components["kv_cache"]
            self.assertEqual((js.calls, ro.calls), (0, 0))
            self.assertEqual(kv, r.to_dict()["roles"][0]["components"]["kv_cache"])
            self.assertEqual(js.calls, 1)  # to_dict is what asks for the JSON
            self.assertEqual(ro.calls, 0)
            self.assertEqual(r.roles[0].name, "all")
            self.assertEqual(ro.calls, 1)
            r.to_json()
            self.assertEqual(js.calls, 1)  # read once

    def test_everything_equals_the_json(self):
        r = gpufit.evaluate(self.m, gpufit.Job(task="pretrain", gpu="h100", tp=2, pp=2,
                                                precision="bf16", framework="megatron"))
        d = r.to_dict()
        self.assertEqual([ro.to_dict() for ro in r.roles],
                         [{k: ro[k] for k in gpufit.Role._FIELDS} for ro in d["roles"]])
        for ro, want in zip(r.roles, d["roles"]):
            self.assertEqual(ro.components, want["components"])  # a mapping == the dict
            self.assertEqual(list(ro.components), list(want["components"]))
            self.assertEqual(dict(ro.components_high), want["components_high"])
            self.assertEqual(len(ro.components), len(want["components"]))
            self.assertIsNone(ro.components.get("no_such_component"))
            with self.assertRaises(KeyError):
                ro.components["no_such_component"]
        self.assertEqual((r.fits, r.peak_bytes, r.verdict), (d["fits"], d["peak_bytes"],
                                                             d["verdict"]))

    def test_result_freed_with_the_last_holder(self):
        r = gpufit.evaluate(self.m, self.j)
        role = r.roles[0]
        comps = role.components
        import weakref
        reader = weakref.ref(r._src)
        del r
        gc.collect()
        self.assertIsNotNone(reader())  # the role still reads it
        want = gpufit.evaluate(self.m, self.j).roles[0].components["weights"]
        self.assertEqual(comps["weights"], want)
        del role, comps
        gc.collect()
        self.assertIsNone(reader())

    def test_inputs_kept_when_the_handles_change(self):
        r = gpufit.evaluate(self.m, self.j)
        before = r.with_changes().to_json()
        self.j["context_len"] = 131072
        self.j.set("batch", 4)
        self.m.set("n_layers", 8)
        self.assertEqual(r.with_changes().to_json(), before)
        self.assertEqual(r.task, "inference")
        self.assertEqual(r.model_name, "llama-3-8b")
        now = gpufit.evaluate(self.m, self.j)
        self.assertNotEqual(now.peak_bytes, r.peak_bytes)
        self.j.close()  # closing is a change too
        self.assertEqual(r.with_changes().to_json(), before)

    def test_bool_is_the_verdict(self):
        fits = gpufit.evaluate(self.m, self.j)
        self.assertEqual(fits.verdict, "fits")
        self.assertIs(bool(fits), True)
        oom = gpufit.evaluate(self.m, gpufit.Job(task="inference", gpu="t4",
                                                 context_len=131072))
        self.assertEqual(oom.verdict, "oom")
        self.assertIs(bool(oom), False)
        self.assertIs(bool(gpufit.evaluate(self.m, gpufit.Job(task="inference"))), False)
        marginal = [r for r in (gpufit.evaluate(self.m, gpufit.Job(
            task="inference", gpu="rtx-4090", context_len=c)) for c in range(8192, 200000, 2048))
            if r.verdict == "marginal"]
        self.assertTrue(marginal)
        self.assertIs(bool(marginal[0]), False)

    def test_pickle_reads_everything(self):
        r = gpufit.evaluate(self.m, self.j)
        back = pickle.loads(pickle.dumps(r))
        self.assertEqual(back, r)
        self.assertEqual(back.roles[0].to_dict(), r.roles[0].to_dict())
        self.assertIsInstance(back.roles[0].components, dict)
        self.assertEqual(back.notes, r.notes)

    def test_many_reports_do_not_grow_the_handle(self):
        for _ in range(1000):
            gpufit.evaluate(self.m, self.j)
        gc.collect()
        self.assertLessEqual(len(self.m._readers), 130)


if __name__ == "__main__":
    unittest.main()
