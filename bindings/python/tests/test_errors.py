# SPDX-License-Identifier: MIT
"""Errors: status codes become exceptions that carry the message, the key and the offset."""

import os
import pickle
import tempfile
import unittest

import _support  # noqa: F401  (this checkout's package first on sys.path)
import gpufit
from gpufit import errors


class TestExceptionClasses(unittest.TestCase):
    def test_mapping(self):
        for name, status in errors.STATUS.items():
            if status == 0:
                continue
            cls = errors.error_class(status)
            self.assertTrue(issubclass(cls, gpufit.GpufitError), name)
            self.assertEqual(cls.default_status, status, name)
        self.assertIs(errors.error_class(-12345), gpufit.GpufitError)

    def test_builtin_bases(self):
        for cls in (gpufit.InvalidArgument, gpufit.Inconsistent, gpufit.UnknownParameter,
                    gpufit.ParseError, gpufit.NotFound):
            self.assertTrue(issubclass(cls, ValueError), cls)
        self.assertTrue(issubclass(gpufit.Overflow, OverflowError))
        self.assertTrue(issubclass(gpufit.Unsupported, NotImplementedError))
        self.assertTrue(issubclass(gpufit.NotFound, LookupError))
        self.assertTrue(issubclass(gpufit.UnknownParameter, KeyError))

    def test_str_and_pickle(self):
        e = gpufit.UnknownParameter(-4, "unknown parameter 'x'", None, 3, "x", "a=1 x=2")
        self.assertEqual(str(e), "unknown parameter 'x'")  # not KeyError's repr quoting
        e2 = pickle.loads(pickle.dumps(e))
        self.assertEqual((type(e2), e2.status, e2.key, e2.offset, e2.source),
                         (gpufit.UnknownParameter, -4, "x", 3, "a=1 x=2"))
        self.assertEqual(e.caret(), "  a=1 x=2\n     ^")

    def test_status_text_from_library(self):
        from gpufit import _lib
        self.assertEqual(_lib.status_text(0).lower(), _lib.status_text(0).lower())
        self.assertTrue(_lib.status_text(-6))


class TestKeywordErrors(unittest.TestCase):
    """estimate(**keywords): the key is the keyword (or model.x / gpu.x inside dicts)."""

    def check(self, cls, key, **kw):
        with self.assertRaises(cls) as cm:
            gpufit.estimate(**kw)
        e = cm.exception
        self.assertEqual(e.key, key, str(e))
        self.assertTrue(e.message)
        self.assertLess(e.status, 0)
        if e.offset is not None:
            self.assertIsNotNone(e.source)
            self.assertLessEqual(e.offset, len(e.source))
        return e

    def test_bad_number(self):
        e = self.check(gpufit.InvalidArgument, "tp", model="llama-3-8b", tp="banana")
        self.assertEqual(e.param, "tp")
        self.assertIn("tp", e.message)
        self.assertEqual(e.source[e.offset:e.offset + 8], '"banana"')

    def test_unknown_key(self):
        e = self.check(gpufit.UnknownParameter, "frobnicate", model="llama-3-8b",
                       frobnicate=1)
        self.assertIn("frobnicate", e.message)

    def test_unknown_enum_value(self):
        self.check(gpufit.InvalidArgument, "task", model="llama-3-8b", task="bogus")

    def test_out_of_range(self):
        self.check(gpufit.InvalidArgument, "n_layers", model="llama-3-8b", n_layers=0)

    def test_unknown_preset(self):
        self.check(gpufit.NotFound, "model", model="no-such-model")

    def test_unknown_gpu(self):
        self.check(gpufit.NotFound, "gpu", model="llama-3-8b", gpu="no-such-gpu")

    def test_model_dict_key(self):
        e = self.check(gpufit.InvalidArgument, "model.n_layers",
                       model={"preset": "llama-3-8b", "n_layers": "x"})
        self.assertEqual(e.param, "n_layers")

    def test_gpu_dict_key(self):
        self.check(gpufit.UnknownParameter, "gpu.foo", model="llama-3-8b",
                   gpu={"memory_gib": 24, "foo": 1})

    def test_inconsistent_names_param(self):
        e = self.check(gpufit.Inconsistent, "tp", model="llama-3-8b", tp=3, gpu="h100")
        self.assertEqual(e.param, "tp")
        self.assertIsNone(e.offset)

    def test_python_side_values(self):
        self.check(gpufit.InvalidArgument, "dropout", model="llama-3-8b",
                   dropout=float("nan"))
        self.check(gpufit.InvalidArgument, "tp", model="llama-3-8b", tp=[1, 2])
        self.check(gpufit.InvalidArgument, "model", model=3.5)
        self.check(gpufit.InvalidArgument, "gpu", model="llama-3-8b", gpu=[24])

    def test_catch_as_value_error(self):
        with self.assertRaises(ValueError):
            gpufit.estimate(model="llama-3-8b", tp="banana")
        with self.assertRaises(ValueError):
            gpufit.estimate(model="no-such-model")

    def test_none_means_not_given(self):
        a = gpufit.estimate(model="llama-3-8b", tp=None, gpu=None)
        b = gpufit.estimate(model="llama-3-8b")
        self.assertEqual(a.to_dict(), b.to_dict())


class TestTextErrors(unittest.TestCase):
    def test_spec_offset(self):
        spec = "model=llama-3-8b tp=abc gpu=h100"
        with self.assertRaises(gpufit.InvalidArgument) as cm:
            gpufit.estimate(spec=spec)
        e = cm.exception
        self.assertEqual((e.key, e.param, e.offset, e.source), ("tp", "tp", 17, spec))
        self.assertEqual(e.caret().splitlines()[1].index("^"), 2 + 17)

    def test_spec_unknown_key(self):
        spec = "model=llama-3-8b gpu=h100 frob=2"
        with self.assertRaises(gpufit.UnknownParameter) as cm:
            gpufit.estimate(spec=spec)
        self.assertEqual((cm.exception.key, cm.exception.offset), ("frob", spec.index("frob")))

    def test_file_offset(self):
        doc = '{"model": {"preset": "llama-3-8b", "n_layers": "x"}, "tp": 2}'
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            with open(path, "w") as f:
                f.write(doc)
            with self.assertRaises(gpufit.InvalidArgument) as cm:
                gpufit.estimate(file=path)
        e = cm.exception
        self.assertEqual(e.key, "model.n_layers")
        self.assertEqual(e.offset, doc.index('"x"'))
        self.assertEqual(e.source, doc)

    def test_file_syntax_error(self):
        doc = '{"model": "llama-3-8b", "task": "inference", "context_len": 4096'
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.json")
            with open(path, "w") as f:
                f.write(doc)
            with self.assertRaises(gpufit.ParseError) as cm:
                gpufit.estimate(file=path)
        self.assertIsNotNone(cm.exception.offset)

    def test_missing_file(self):
        with self.assertRaises(FileNotFoundError):
            gpufit.estimate(file="/no/such/scenario.json")

    def test_bad_spec_type(self):
        with self.assertRaises(gpufit.InvalidArgument):
            gpufit.estimate(spec=["tp=8"])


class TestHandleErrors(unittest.TestCase):
    def test_typed_setter_errors(self):
        j = gpufit.Job()
        with self.assertRaises(gpufit.InvalidArgument) as cm:
            j.set("tp", 0)
        self.assertEqual((cm.exception.key, cm.exception.param), ("tp", "tp"))
        with self.assertRaises(gpufit.UnknownParameter):
            j.set("frobnicate", 1)
        with self.assertRaises(gpufit.InvalidArgument):
            j.set("tp", 2.5)
        with self.assertRaises(gpufit.Overflow):
            j.set("tp", 2**70)
        with self.assertRaises(gpufit.InvalidArgument):
            j.set("dropout", float("inf"))

    def test_domain_errors(self):
        with self.assertRaises(gpufit.InvalidArgument) as cm:
            gpufit.Model("llama-3-8b").update(n_layers=2, tp=2, task="pretrain")
        self.assertEqual(cm.exception.key, "tp")
        with self.assertRaises(gpufit.InvalidArgument):
            gpufit.Job(model="llama-3-8b")

    def test_closed_handle(self):
        m = gpufit.Model("llama-3-8b")
        m.close()
        with self.assertRaises(Exception) as cm:  # ctypes wraps it in ArgumentError
            m.n_params
        self.assertIn("Model is closed", str(cm.exception))
        self.assertIn("closed", repr(m))
        m.close()  # twice is fine


if __name__ == "__main__":
    unittest.main()
