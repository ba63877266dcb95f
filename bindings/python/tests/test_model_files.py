# SPDX-License-Identifier: MIT
"""Models from files: config.json (path, text or dict), model directories, GGUF, and
"model": {"path": ...} in scenario files (resolved by the binding, relative to the file)."""

import ctypes
import json
import os
import tempfile
import unittest

import _support
import gpufit
from gpufit import _api

CONFIG = _support.REPO / "tests" / "data" / "hf" / "gpt2.json"


class TestReadPrefix(unittest.TestCase):
    """The GGUF/safetensors reading loop asks for more bytes when the library says so."""

    def test_grows_until_enough(self):
        calls = []

        def fake(buf, n, needed, err):
            calls.append(n)
            if n < 3000:
                ctypes.cast(needed, ctypes.POINTER(ctypes.c_uint64))[0] = 3000
                return -8
            return 0

        with tempfile.NamedTemporaryFile() as f:
            f.write(b"x" * 5000)
            f.flush()
            old = _api._FIRST_READ
            _api._FIRST_READ = 1000
            try:
                _api._read_prefix(fake, f.name)
            finally:
                _api._FIRST_READ = old
        self.assertEqual(calls, [1000, 3000])

    def test_truncated_file_is_an_error(self):
        def fake(buf, n, needed, err):
            ctypes.cast(needed, ctypes.POINTER(ctypes.c_uint64))[0] = 10**6
            return -8

        with tempfile.NamedTemporaryFile() as f:
            f.write(b"x" * 100)
            f.flush()
            with self.assertRaises(gpufit.BufferTooSmall) as cm:
                _api._read_prefix(fake, f.name, key="model.path")
        self.assertEqual(cm.exception.key, "model.path")


class TestHfConfig(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CONFIG.exists():
            raise unittest.SkipTest("tests/data/hf/gpt2.json not found")
        try:
            gpufit.Model.from_hf_config(str(CONFIG))
        except gpufit.Unsupported as e:
            raise unittest.SkipTest("library without the config.json reader: %s" % e)
        with open(CONFIG) as f:
            cls.config = json.load(f)

    def test_forms_agree(self):
        a = gpufit.estimate(model=str(CONFIG), gpu="t4", task="finetune")
        b = gpufit.estimate(model={"hf_config": self.config}, gpu="t4", task="finetune")
        c = gpufit.estimate(model=gpufit.Model.from_hf_config(json.dumps(self.config)),
                            gpu="t4", task="finetune")
        d = gpufit.estimate(model={"path": str(CONFIG)}, gpu="t4", task="finetune")
        self.assertEqual(a.to_dict(), b.to_dict())
        self.assertEqual(a.to_dict(), c.to_dict())
        self.assertEqual(a.to_dict(), d.to_dict())
        self.assertGreater(a.n_params, 0)

    def test_overrides_and_directory(self):
        small = gpufit.estimate(model={"path": str(CONFIG), "n_layers": 2}, gpu="t4")
        full = gpufit.estimate(model={"path": str(CONFIG)}, gpu="t4")
        self.assertLess(small.n_params, full.n_params)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(self.config, f)
            self.assertEqual(gpufit.estimate(model=d + os.sep, gpu="t4").to_dict(),
                             full.to_dict())
            self.assertEqual(gpufit.Model.from_file(d).n_params, full.n_params)
            # a scenario file: model.path is relative to the file, other keys keep offsets
            doc = ('{"task": "inference", "model": {"path": "config.json", "n_layers": 2}, '
                   '"gpu": "t4", "tp": "x"}')
            path = os.path.join(d, "scenario.json")
            with open(path, "w") as f:
                f.write(doc)
            with self.assertRaises(gpufit.InvalidArgument) as cm:
                gpufit.estimate(file=path)
            self.assertEqual(cm.exception.key, "tp")
            self.assertEqual(cm.exception.offset, doc.index('"x"'))
            with open(path, "w") as f:
                f.write(doc.replace(', "tp": "x"', ""))
            self.assertEqual(gpufit.estimate(file=path).to_dict(),
                             gpufit.estimate(model={"path": os.path.join(d, "config.json"),
                                                    "n_layers": 2},
                                             task="inference", gpu="t4").to_dict())

    def test_errors_name_the_key(self):
        cfg = dict(self.config, n_embd="x")
        with self.assertRaises(gpufit.GpufitError) as cm:
            gpufit.Model.from_hf_config(cfg)
        self.assertIsNotNone(cm.exception.key)
        with self.assertRaises(gpufit.InvalidArgument):
            gpufit.estimate(model={"path": str(CONFIG), "preset": "gpt2"})
        with self.assertRaises(gpufit.NotFound):
            with tempfile.TemporaryDirectory() as d:
                gpufit.Model.from_file(d)

    def test_bad_gguf(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.gguf")
            with open(path, "wb") as f:
                f.write(b"GGUF" + b"\0" * 20)
            with self.assertRaises(gpufit.GpufitError) as cm:
                gpufit.estimate(model=path)
        self.assertEqual(cm.exception.key, "model.path")


if __name__ == "__main__":
    unittest.main()
