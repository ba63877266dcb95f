# SPDX-License-Identifier: MIT
"""Estimates: identical numbers to `gpufit estimate --json`, components that add up, and the
struct-based attributes agreeing with the library's JSON report."""

import json
import os
import pickle
import tempfile
import unittest

import _support
import gpufit

# (spec string for the command, the same scenario as keyword arguments)
CASES = [
    ("model=llama-3-8b task=inference gpu=rtx-4090 context_len=8192",
     dict(model="llama-3-8b", task="inference", gpu="rtx-4090", context_len=8192)),
    ("model=llama-3-70b task=inference gpu=rtx-4090",
     dict(model="llama-3-70b", task="inference", gpu="rtx-4090")),
    ("model=llama-3-8b task=pretrain gpu=h100 micro_batch=2 seq_len=4096 "
     "checkpointing=selective",
     dict(model="llama-3-8b", task="pretrain", gpu="h100", micro_batch=2, seq_len=4096,
          checkpointing="selective")),
    ("model=mixtral-8x7b task=inference gpu=a100-80gb weight_dtype=q4_k_m framework=llamacpp",
     dict(model="mixtral-8x7b", task="inference", gpu="a100-80gb", weight_dtype="q4_k_m",
          framework="llamacpp")),
    ("model=qwen2.5-7b task=qlora gpu=t4 precision=fp16 seq_len=1024",
     dict(model="qwen2.5-7b", task="qlora", gpu="t4", precision="fp16", seq_len=1024)),
    ("model=llama-3-70b task=pretrain gpu=h100-sxm-80gb tp=8 pp=4 dp=2 zero=1 precision=bf16 "
     "framework=megatron sp=true",
     dict(model="llama-3-70b", task="pretrain", gpu="h100-sxm-80gb", tp=8, pp=4, dp=2, zero=1,
          precision="bf16", framework="megatron", sp=True)),
    ("model=llama-3.1-8b task=inference gpu=rtx-3090 framework=vllm context_len=20000",
     dict(model="llama-3.1-8b", task="inference", gpu="rtx-3090", framework="vllm",
          context_len=20000)),
    ("model=llama-3-8b task=finetune",
     dict(model="llama-3-8b", task="finetune")),
    ("model=llama-3-8b task=pretrain gpu=h100 zero=3 dp=8 offload=optimizer dropout=0.1",
     dict(model="llama-3-8b", task="pretrain", gpu="h100", zero=3, dp=8, offload="optimizer",
          dropout=0.1)),
    ("model=llama-3-8b task=inference gpu=24GiB batch=4",
     dict(model="llama-3-8b", task="inference", gpu=24, batch=4)),
    ("model=llama-3-70b task=pretrain gpu=h100 tp=8",
     dict(model="llama-3-70b", task="pretrain", gpu="h100", tp=8)),
]

CUSTOM = {
    "model": {"name": "tiny", "hidden_size": 2048, "n_layers": 16, "n_heads": 16,
              "n_kv_heads": 4, "ffn_hidden_size": 5632, "vocab_size": 32000,
              "tied_embeddings": True},
    "gpu": {"memory_gib": 16},
    "task": "finetune", "micro_batch": 4, "seq_len": 2048, "checkpointing": "full",
}


def check_report(tc, r, d):
    """The attributes read through the structs agree with the JSON report."""
    tc.assertEqual(r.to_dict(), d)
    tc.assertEqual(json.loads(r.to_json()), d)
    tc.assertEqual(r.fits, d["fits"])
    tc.assertEqual(r.peak_bytes, d["peak_bytes"])
    tc.assertEqual(r.capacity_bytes, d["capacity_bytes"])
    tc.assertEqual(r.n_params, d["model"]["n_params"])
    tc.assertEqual(r.n_active_params, d["model"]["n_active_params"])
    tc.assertEqual(r.model_name, d["model"]["name"])
    if "host_bytes" in d:
        tc.assertEqual(r.host_bytes, d["host_bytes"])
    tc.assertEqual(len(r.roles), len(d["roles"]))
    for role, jr in zip(r.roles, d["roles"]):
        for k, v in role.to_dict().items():
            if k in jr:
                tc.assertEqual(v, jr[k], "role %s: %s" % (role.name, k))
        tc.assertEqual(sum(role.components.values()), role.device_used_bytes,
                       "components add up (role %s)" % role.name)
        tc.assertLessEqual(role.peak_allocated_bytes, role.peak_reserved_bytes)
        tc.assertLessEqual(role.peak_reserved_bytes, role.device_used_bytes)
    tc.assertEqual(list(r.roles[0].components), gpufit.components())
    tc.assertEqual(r.mitigations and [m["text"] for m in r.mitigations],
                   d.get("mitigations") and [m["text"] for m in d["mitigations"]])
    tc.assertEqual(r.notes, d.get("notes", r.notes))
    gpu_roles = [x for x in r.roles if x.fits is not None]
    if r.fits is not None and gpu_roles:
        tc.assertEqual(r.peak_bytes, max(x.device_used_bytes for x in gpu_roles))
        tc.assertEqual(r.headroom_bytes, r.capacity_bytes - r.peak_bytes)


class TestAgainstCommand(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if _support.cli_path() is None:
            raise unittest.SkipTest("the gpufit command is not built (make)")

    def test_keywords_and_spec(self):
        for spec, kw in CASES:
            with self.subTest(spec=spec):
                code, d = _support.cli_json("--spec", spec)
                r = gpufit.estimate(**kw)
                check_report(self, r, d)
                self.assertEqual(code, {"oom": 1, "marginal": 5}.get(r.verdict, 0))
                self.assertEqual(r.verdict, d["verdict"])
                self.assertEqual(gpufit.estimate(spec=spec).to_dict(), d)
                self.assertEqual(gpufit.estimate(dict(kw)).to_dict(), d)

    def test_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "scenario.json")
            with open(path, "w") as f:
                json.dump(CUSTOM, f)
            code, d = _support.cli_json(path)
            check_report(self, gpufit.estimate(file=path), d)
            check_report(self, gpufit.estimate(CUSTOM), d)
            check_report(self, gpufit.estimate(**CUSTOM), d)
            # file, then spec: the spec wins, as in the command
            code, d2 = _support.cli_json(path, "--spec", "micro_batch=1")
            check_report(self, gpufit.estimate(file=path, spec="micro_batch=1"), d2)
            self.assertEqual(gpufit.estimate(file=path, micro_batch=1).to_dict(), d2)

    def test_typed_handles(self):
        spec, kw = CASES[2]
        code, d = _support.cli_json("--spec", spec)
        kw = dict(kw)
        model = gpufit.Model(kw.pop("model"))
        job = gpufit.Job(**kw)
        check_report(self, gpufit.evaluate(model, job), d)
        # the same with every value set through the typed setters one by one
        job2 = gpufit.Job()
        for k, v in kw.items():
            job2[k] = v
        check_report(self, gpufit.evaluate(model, job2), d)
        self.assertEqual(gpufit.estimate(model=model, **kw).to_dict(), d)

    def test_model_dict_with_preset(self):
        code, d = _support.cli_json("--spec", "model=llama-3-8b n_layers=16 task=inference "
                                              "gpu=rtx-4090")
        r = gpufit.estimate(model={"preset": "llama-3-8b", "n_layers": 16}, task="inference",
                            gpu="rtx-4090")
        check_report(self, r, d)


class TestServingReleases(unittest.TestCase):
    """framework_version / cuda_version as text (docs/memory/vllm.md, runtime.md)."""

    def test_framework_version_text(self):
        base = dict(model="llama-3-8b", task="inference", framework="vllm", gpu="h100")
        old = gpufit.estimate(framework_version="0.6.3", **base)
        new = gpufit.estimate(framework_version="0.6.4", **base)
        # vLLM <= 0.6.3 also subtracts the 0.5 GiB CUDA context from its budget
        self.assertEqual(new.roles[0].kv_capacity_bytes - old.roles[0].kv_capacity_bytes,
                         1 << 29)
        self.assertFalse(any("framework_version not set" in n for n in new.notes))
        cur = gpufit.estimate(**base)
        self.assertTrue(any("assumed vLLM 0.27" in n for n in cur.notes))
        self.assertEqual(gpufit.estimate(spec="model=llama-3-8b task=inference framework=vllm "
                                              "gpu=h100 framework_version=0.6.3").to_dict(),
                         old.to_dict())
        job = gpufit.Job(framework="sglang", framework_version="0.4.0")
        self.assertEqual(job["framework_version"], 4000)

    def test_bad_versions(self):
        for bad in ("0.x", "1.2.3.4", ""):
            with self.subTest(bad=bad):
                with self.assertRaises(gpufit.GpufitError):
                    gpufit.estimate(model="llama-3-8b", task="inference", framework="vllm",
                                    framework_version=bad)
        with self.assertRaises(gpufit.GpufitError) as cm:
            gpufit.estimate(model="llama-3-8b", task="inference", framework="pytorch",
                            framework_version="0.6.3")
        self.assertIn("framework_version", str(cm.exception))

    def test_cuda_version(self):
        r = gpufit.estimate(model="llama-3-8b", task="inference", gpu="h100",
                            cuda_version="11.6")
        self.assertEqual(r.roles[0].components["runtime_context"], 1 << 30)


class TestReport(unittest.TestCase):
    def test_fits_none_without_gpu(self):
        r = gpufit.estimate(model="llama-3-8b")
        self.assertIsNone(r.fits)
        self.assertEqual(r.capacity_bytes, 0)
        self.assertIsNone(r.gpu_name)
        self.assertIn("no GPU", repr(r))

    def test_gpu_as_gib_and_dict(self):
        a = gpufit.estimate(model="llama-3-8b", gpu=24)
        b = gpufit.estimate(model="llama-3-8b", gpu={"memory_gib": 24})
        c = gpufit.estimate(model="llama-3-8b", gpu={"memory_bytes": 24 << 30})
        self.assertEqual(a.capacity_bytes, 24 << 30)
        self.assertEqual(a.to_dict(), b.to_dict())
        self.assertEqual(a.to_dict(), c.to_dict())

    def test_worst_role_and_pickle(self):
        r = gpufit.estimate(model="llama-3-70b", task="pretrain", gpu="h100", tp=8, pp=4)
        self.assertEqual(r.worst_role.device_used_bytes, r.peak_bytes)
        r2 = pickle.loads(pickle.dumps(r))
        self.assertEqual(r2, r)
        self.assertEqual(r2.roles, r.roles)
        self.assertEqual(str(r2), str(r))
        with self.assertRaises(ValueError):
            r2.with_changes(tp=4)  # unpickled reports do not carry C handles

    def test_to_json_indent(self):
        r = gpufit.estimate(model="llama-3-8b", gpu="rtx-4090")
        self.assertEqual(json.loads(r.to_json(indent=2)), r.to_dict())
        d = r.to_dict()
        d["fits"] = "changed"
        self.assertNotEqual(r.to_dict(), d)  # to_dict returns a fresh dict

    def test_resolved(self):
        # what every auto resolved to: LoRA's bf16 base, vLLM's tp from gpus alone
        r = gpufit.estimate(model="llama-3-8b", task="lora", gpu="rtx-4090")
        self.assertEqual(r.resolved["precision"], "bf16")
        self.assertEqual(r.resolved["weight_dtype"], "bf16")
        self.assertEqual(r.resolved["grad_dtype"], "fp32")  # PEFT's fp32 adapters
        self.assertEqual(r.resolved["layout"], "given")
        self.assertIn("\nresolved: framework=pytorch precision=bf16 weight_dtype=bf16 ", r.text())
        self.assertIn("\nflags: LoraConfig(r=16) ", r.text())
        r = gpufit.estimate(model="llama-3-70b", task="inference", framework="vllm",
                            gpu="h100", gpus=4)
        self.assertEqual((r.resolved["tp"], r.resolved["layout"]), (4, "gpus_tp"))
        self.assertEqual(r.resolved["framework_version"], "0.27.0")
        self.assertEqual(r.resolved, r.to_dict()["resolved"])

    def test_job_flags(self):
        # the job's own flags in its framework's words
        r = gpufit.estimate(model="llama-3-70b", task="inference", framework="vllm",
                            gpu="h100", gpus=4, context_len=32768)
        self.assertEqual(r.flags, "--max-model-len 32768 --gpu-memory-utilization 0.92 "
                                  "--tensor-parallel-size 4")
        r = gpufit.estimate(model="llama-3-8b", task="lora", gpu="rtx-4090", micro_batch=2)
        self.assertIn("--per_device_train_batch_size 2", r.flags)
        self.assertIn("--bf16", r.flags)

    def test_with_changes_and_mitigations(self):
        r = gpufit.estimate(model="llama-3-70b", task="pretrain", gpu="h100", tp=8)
        self.assertFalse(r.fits)
        r1 = r.with_changes(tp=4)
        self.assertEqual(r1.to_dict(), gpufit.estimate(model="llama-3-70b", task="pretrain",
                                                       gpu="h100", tp=4).to_dict())
        self.assertIsInstance(r.mitigations, list)
        for m in r.mitigations:
            self.assertIn("text", m)
            self.assertIn("spec", m)
            after = r.with_changes(m["changes"])
            self.assertEqual(after.peak_bytes, m["peak_bytes_after"], m["text"])
            self.assertEqual(after.fits, m["fits_after"], m["text"])
            # the spec string says the same as the changes dict
            self.assertEqual(gpufit.estimate(model="llama-3-70b", task="pretrain",
                                             gpu="h100", tp=8, spec=None).with_changes(
                m["changes"]).to_dict(), after.to_dict())
        if r.mitigations:
            self.assertEqual(r.with_mitigation(0), r.with_changes(r.mitigations[0]["changes"]))
        with self.assertRaises(IndexError):
            r.with_mitigation(10**6)

    def test_max_fitting(self):
        n = gpufit.max_fitting("context_len", model="llama-3-8b", task="inference",
                               gpu="rtx-4090")
        self.assertGreater(n, 0)
        # the largest value sure to fit: the band's high end fits (docs/band.md)
        self.assertEqual(gpufit.estimate(model="llama-3-8b", task="inference", gpu="rtx-4090",
                                         context_len=n).verdict, "fits")
        self.assertNotEqual(gpufit.estimate(model="llama-3-8b", task="inference",
                                            gpu="rtx-4090", context_len=n + 1).verdict, "fits")
        with self.assertRaises(gpufit.UnknownParameter):
            gpufit.max_fitting("frobnicate", model="llama-3-8b", gpu="rtx-4090")


class TestSearch(unittest.TestCase):
    def _or_skip(self, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except gpufit.Unsupported as e:
            self.skipTest(str(e))

    def test_recommend(self):
        recs = self._or_skip(gpufit.recommend, model="llama-3-8b", task="inference",
                             candidates=["rtx-4090", "h100"], max_count=2)
        self.assertGreater(recs.evaluated, 0)
        for r in recs:
            self.assertTrue(r["fits"])
            again = gpufit.estimate(model="llama-3-8b", task="inference", gpu=r["gpu"])
            if r["count"] == 1:
                self.assertEqual(again.peak_bytes, r["peak_bytes"])
        self.assertIn("<table", recs._repr_html_())
        with self.assertRaises(gpufit.NotFound):
            gpufit.recommend(model="gpt2", candidates=["no-such-gpu"])

    def test_plan(self):
        lays = self._or_skip(gpufit.plan, model="llama-3-70b", task="pretrain", gpu="h100",
                             seq_len=4096, nodes=4, max_results=3)
        self.assertLessEqual(len(lays), 3)
        for y in lays:
            r = gpufit.estimate(model="llama-3-70b", task="pretrain", gpu="h100",
                                seq_len=4096, spec=y["spec"])
            # Only the verdict is compared: the layout's spec string does not carry
            # everything the planner set (its peak_bytes differs from this estimate's).
            self.assertTrue(r.fits, y["spec"])
            self.assertLessEqual(y["peak_bytes"], r.capacity_bytes)
            self.assertIsInstance(y["checkpointing"], str)


class TestHandles(unittest.TestCase):
    def test_get_set_roundtrip(self):
        j = gpufit.Job()
        j["tp"] = 8
        j["task"] = "lora"
        j["sp"] = True
        j["dropout"] = 0.25
        j["gpu"] = "h100"
        self.assertEqual((j["tp"], j["task"], j["sp"], j["dropout"]), (8, "lora", True, 0.25))
        self.assertEqual(j["gpu"], gpufit.param_info("gpu") and
                         [g["key"] for g in gpufit.gpus() if "h100" in g["aliases"] or
                          g["key"] == "h100"][0])
        j2 = j.copy()
        j2["tp"] = 2
        self.assertEqual((j["tp"], j2["tp"]), (8, 2))
        self.assertIn("tp=8", repr(j))

    def test_model_counts(self):
        for p in gpufit.models()[:10]:
            m = gpufit.Model(p["name"])
            self.assertEqual(m.param_count(), (p["n_params"], p["n_active_params"]))
            self.assertEqual(m.name, p["name"])
        m = gpufit.Model("llama-3-8b", n_layers=16)
        self.assertEqual(m["n_layers"], 16)
        self.assertIn("n_layers=16", repr(m))
        self.assertLess(m.n_params, gpufit.Model("llama-3-8b").n_params)
        with gpufit.Model("llama-3-8b") as m2:
            self.assertGreater(m2.n_params, 0)

    def test_custom_model(self):
        arch = dict(CUSTOM["model"])
        arch.pop("name")
        m = gpufit.Model(**arch)
        self.assertEqual(m.name, "custom")
        r = gpufit.evaluate(m, {"task": "inference"})
        self.assertEqual(r.n_params, m.n_params)
        self.assertIn("hidden_size=2048", repr(m))


if __name__ == "__main__":
    unittest.main()
