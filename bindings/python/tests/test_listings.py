# SPDX-License-Identifier: MIT
"""Listings: models(), gpus(), params(), components(), against the library and the command."""

import unittest

import _support
import gpufit


class TestListings(unittest.TestCase):
    def test_models(self):
        ms = gpufit.models()
        self.assertGreater(len(ms), 10)
        names = [m["name"] for m in ms]
        self.assertEqual(len(names), len(set(names)))
        for m in ms:
            self.assertIsInstance(m["aliases"], list)
            self.assertGreaterEqual(m["n_params"], m["n_active_params"])
            self.assertGreater(m["n_active_params"], 0)
        self.assertEqual([m["index"] for m in ms], list(range(len(ms))))

    def test_models_alias_loads(self):
        for m in gpufit.models():
            for alias in m["aliases"][:1]:
                self.assertEqual(gpufit.Model(alias).n_params, m["n_params"], alias)

    def test_gpus(self):
        gs = gpufit.gpus()
        self.assertGreater(len(gs), 5)
        for g in gs:
            self.assertGreater(g["memory_bytes"], 0)
            self.assertEqual(g["memory_gib"], g["memory_bytes"] / 2**30)
            self.assertIsInstance(g["supports_bf16"], bool)
            r = gpufit.estimate(model="gpt2", gpu=g["key"])
            self.assertEqual(r.capacity_bytes, g["memory_bytes"], g["key"])

    def test_params(self):
        ps = gpufit.params()
        names = [p["name"] for p in ps]
        for n in ("task", "tp", "pp", "micro_batch", "precision", "n_layers", "gpu"):
            self.assertIn(n, names)
        self.assertEqual(len(names), len(set(names)))
        for p in ps:
            self.assertIn(p["domain"], ("model", "job"))
            self.assertIn(p["type"], ("int", "float", "enum", "bool", "list"))
            if p["type"] == "list":
                # min/max bound each entry, min_count/max_count the length; empty by default
                self.assertEqual(p["default"], [])
                self.assertLessEqual(p["min"], p["max"])
                self.assertEqual((p["min_count"], p["max_count"]), (0, 16), p["name"])
            elif p["type"] in ("enum", "bool"):
                self.assertTrue(p["values"])
                if p["type"] == "enum":
                    self.assertIn(p["default"], p["values"] + [p["default"]])
            elif p["type"] == "int":
                # a default is inside the range, or it is the "not set" 0 of a required one
                inside = p["min"] <= p["default"] <= p["max"]
                self.assertEqual(p["required"], not inside, p["name"])
                if p["required"]:
                    self.assertEqual(p["default"], 0, p["name"])
            else:
                self.assertLessEqual(p["min"], p["default"])
                self.assertLessEqual(p["default"], p["max"])
            self.assertEqual(gpufit.param_info(p["name"]), p)
        required = {p["name"] for p in ps if p.get("required")}
        self.assertTrue({"n_layers", "hidden_size", "n_heads", "vocab_size"} <= required)
        self.assertEqual({p["domain"] for p in gpufit.params("model")}, {"model"})
        self.assertEqual(len(gpufit.params("model")) + len(gpufit.params("job")), len(ps))

    def test_params_drive_keywords(self):
        # every enum value of every job enum is accepted as a keyword (no Python table)
        for p in gpufit.params("job"):
            if p["type"] == "enum" and p["name"] in ("task", "optimizer", "checkpointing"):
                for v in p["values"]:
                    j = gpufit.Job(**{p["name"]: v})
                    self.assertEqual(j[p["name"]], v)

    def test_components(self):
        cs = gpufit.components()
        self.assertIn("weights", cs)
        self.assertIn("kv_cache", cs)
        self.assertEqual(len(cs), len(set(cs)))

    def test_against_command(self):
        if _support.cli_path() is None:
            self.skipTest("the gpufit command is not built")
        code, out, _ = _support.run_cli("models")
        self.assertEqual(code, 0)
        for m in gpufit.models():
            self.assertIn(m["name"], out)
        code, out, _ = _support.run_cli("gpus")
        for g in gpufit.gpus():
            self.assertIn(g["key"], out)
        code, out, _ = _support.run_cli("params")
        for p in gpufit.params():
            self.assertIn(p["name"], out)


if __name__ == "__main__":
    unittest.main()
