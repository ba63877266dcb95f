# SPDX-License-Identifier: MIT
"""Advice reproduces (docs/advice.md): plan rows, recommendations and mitigations carry the
canonical job changes that give exactly their printed peak when applied to the scenario."""

import unittest

import _support  # noqa: F401  (this checkout's package first on sys.path)
import gpufit
from gpufit import errors


class TestAdviceReproduces(unittest.TestCase):
    def test_plan_rows(self):
        # issue 13: the gpipe job planned on 2 x 8 GPUs; the rows reset the schedule
        sc = dict(model="llama-3-8b", task="pretrain", pp=4, pp_schedule="gpipe", gpu="h100")
        r = gpufit.estimate(**sc)
        lays = gpufit.plan(**sc, gpus_per_node=8, nodes=2, max_results=3)
        self.assertEqual(len(lays), 3)
        self.assertEqual(lays[0]["spec"], "micro_batch=4 global_batch=1024 checkpointing=none "
                                          "dp=4 tp=2 pp=2 vpp=4 cp=1 ep=1 sp=1 zero=1 "
                                          "pp_schedule=auto")
        for y in lays:
            self.assertEqual(y["changes"]["pp_schedule"], "auto")
            after = r.with_changes(y["changes"])
            self.assertEqual(after.peak_bytes, y["peak_bytes"], y["spec"])
            self.assertTrue(after.fits)

    def test_serving_rows_clear_lists(self):
        sc = dict(model="llama-3-8b", task="inference", framework="llamacpp", pp=2,
                  tensor_split=[3, 1], gpu="rtx-4090")
        r = gpufit.estimate(**sc)
        lays = gpufit.plan(**sc, gpus_per_node=4, max_results=3)
        self.assertTrue(lays)
        for y in lays:
            self.assertIn("tensor_split=none", y["spec"])
            self.assertEqual(y["changes"]["tensor_split"], [])
            self.assertEqual(r.with_changes(y["changes"]).peak_bytes, y["peak_bytes"])

    def test_recommendations(self):
        sc = dict(model="llama-3-70b", task="inference", gpu_memory_gib=20)
        r = gpufit.estimate(**sc)
        recs = gpufit.recommend(**sc, max_count=8)
        self.assertTrue(recs)
        for x in recs:
            self.assertEqual(x["changes"]["gpu"], x["gpu"])
            self.assertEqual(x["changes"]["tp"], x["count"])
            self.assertIn("gpu=%s" % x["gpu"], x["spec"])
            after = r.with_changes(x["changes"])
            self.assertEqual(after.peak_bytes, x["peak_bytes"], x["spec"])
            self.assertEqual(after.fits, x["fits"])

    def test_mitigations(self):
        r = gpufit.estimate(model="llama-3-8b", task="finetune", gpu="rtx-4090")
        self.assertTrue(r.mitigations)
        for i, m in enumerate(r.mitigations):
            after = r.with_changes(m["changes"])
            self.assertEqual(after.peak_bytes, m["peak_bytes_after"], m["spec"])
            self.assertEqual(r.with_mitigation(i).peak_bytes, m["peak_bytes_after"])

    def test_unknown_candidate_id(self):
        with self.assertRaises(errors.NotFound) as cm:
            gpufit.recommend(model="llama-3-8b", candidates=[987654])
        self.assertIn("987654", str(cm.exception))


class TestDataclasses(unittest.TestCase):
    """Mitigations, recommendations and layouts are dataclasses whose to_dict() is the
    command's JSON entry; they still read like the dicts they replace."""

    def test_mitigations(self):
        import dataclasses
        r = gpufit.estimate(model="llama-3-70b", task="pretrain", gpu="h100", tp=8)
        mit = r.mitigations
        self.assertTrue(mit)
        self.assertTrue(all(isinstance(m, gpufit.Mitigation) for m in mit))
        self.assertTrue(dataclasses.is_dataclass(mit[0]))
        self.assertEqual([m.to_dict() for m in mit], r.to_dict()["mitigations"])
        m = mit[0]
        self.assertEqual(m["changes"], m.changes)
        self.assertEqual(dict(m), m.as_dict())
        self.assertIsNone(m.get("nope"))
        with self.assertRaises(KeyError):
            m["nope"]
        with self.assertRaises(dataclasses.FrozenInstanceError):
            m.cost = 0

    def test_recommend_and_plan_to_dict_is_the_command_json(self):
        import json
        if _support.cli_path() is None:
            self.skipTest("the gpufit command is not built")
        spec = "model=llama-3-8b task=inference"
        recs = gpufit.recommend(spec=spec, candidates=["rtx-4090", "h100", "t4"], max_count=2)
        self.assertTrue(all(isinstance(x, gpufit.Recommendation) for x in recs))
        code, out, _ = _support.run_cli("recommend", "--json", "--spec", spec, "--only",
                                        "rtx-4090,h100,t4", "--max-gpus", "2")
        self.assertEqual(recs.to_dict(), json.loads(out))
        self.assertEqual(recs[0]["gpu"], recs[0].gpu)  # the catalogue key, as before
        spec = "model=llama-3-70b task=pretrain gpu=h100 seq_len=4096"
        lays = gpufit.plan(spec=spec, nodes=4, max_results=3)
        self.assertTrue(all(isinstance(x, gpufit.Layout) for x in lays))
        code, out, _ = _support.run_cli("plan", "--json", "--spec", spec, "--nodes", "4",
                                        "--top", "3")
        self.assertEqual(lays.to_dict(), json.loads(out))
        self.assertEqual(lays[:1].to_dict()["layouts"], json.loads(out)["layouts"][:1])


if __name__ == "__main__":
    unittest.main()
