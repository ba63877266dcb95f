# SPDX-License-Identifier: MIT
"""Model files and arguments as a scheduler meets them (issue 13): the same answer or the same
error class as the command (tests/cli/test_cli_files.sh), no hang, no crash."""
import json
import os
import shutil
import struct
import tempfile
import unittest

import gpufit

HERE = os.path.dirname(os.path.abspath(__file__))
CFG = os.path.join(HERE, "..", "..", "..", "tests", "data", "hf", "meta-llama-3-8b.json")


def _shard(path, n_elems=4, header_len=None):
    hdr = json.dumps({"w": {"dtype": "BF16", "shape": [n_elems],
                            "data_offsets": [0, 2 * n_elems]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", header_len if header_len is not None else len(hdr)) + hdr +
                bytes(2 * n_elems))


class TestModelFiles(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(CFG):
            self.skipTest("tests/data/hf is not in this tree")
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def _dir(self, name):
        d = os.path.join(self.tmp, name)
        os.mkdir(d)
        shutil.copy(CFG, os.path.join(d, "config.json"))
        return d

    @unittest.skipUnless(hasattr(os, "mkfifo"), "no FIFOs here")
    def test_fifo_never_hangs(self):
        d = os.path.join(self.tmp, "fifo")
        os.mkdir(d)
        os.mkfifo(os.path.join(d, "config.json"))
        with self.assertRaises(OSError):
            gpufit.estimate(model=d, task="inference")
        d2 = self._dir("fifo2")
        os.mkfifo(os.path.join(d2, "model-00001-of-00002.safetensors"))
        with self.assertRaises(OSError):
            gpufit.estimate(model=d2, task="inference")

    def test_sharded_checkpoint_is_read(self):
        d = self._dir("sharded")
        _shard(os.path.join(d, "model-00001-of-00002.safetensors"))
        _shard(os.path.join(d, "model-00002-of-00002.safetensors"))
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 16}, "weight_map": {"w": "x"}}, f)
        info = gpufit.safetensors_info(d)
        self.assertEqual((info["n_tensors"], info["n_params"]), (2, 8))
        with self.assertWarns(RuntimeWarning):  # 8 parameters vs the config's 8 B: a warning,
            r = gpufit.estimate(model=d, task="inference", gpu="h100")  # as the command says
        self.assertTrue(r.fits)

    def test_corrupt_shard_is_an_error(self):
        d = self._dir("corrupt")
        _shard(os.path.join(d, "model-00001-of-00002.safetensors"))
        _shard(os.path.join(d, "model-00002-of-00002.safetensors"), header_len=1 << 40)
        with self.assertRaises(ValueError):  # the command exits 2
            gpufit.estimate(model=d, task="inference", gpu="h100")

    def test_missing_path_is_file_not_found(self):
        with self.assertRaises(FileNotFoundError):
            gpufit.estimate(model=os.path.join(self.tmp, "no-such-dir", "config.json"))
        with self.assertRaises(FileNotFoundError):
            gpufit.estimate(model="./no-such-model-dir/")


class TestArgumentTypes(unittest.TestCase):
    def test_handles_are_checked_before_ctypes(self):
        m = gpufit.Model("llama-3-8b")
        for bad in (5, "task=inference", m, 3.5):
            with self.assertRaises(TypeError):
                gpufit.evaluate(m, job=bad) if not isinstance(bad, str) else \
                    gpufit.evaluate(m, job=bad)
        with self.assertRaises(TypeError):
            gpufit.evaluate(gpufit.Job(), gpufit.Job())

    def test_counts_do_not_wrap(self):
        for kw in ({"nodes": 2 ** 32 + 2}, {"gpus_per_node": 0}, {"max_results": -1}):
            with self.assertRaises(ValueError):
                gpufit.plan(model="llama-3-8b", gpu="h100", **kw)
        with self.assertRaises(TypeError):
            gpufit.plan(model="llama-3-8b", gpu="h100", nodes=2.0)
        with self.assertRaises(TypeError):
            gpufit.plan(model="llama-3-8b", gpu="h100", nodes=True)
        with self.assertRaises(ValueError):
            gpufit.recommend(model="llama-3-8b", max_count=2 ** 33)


if __name__ == "__main__":
    unittest.main()
