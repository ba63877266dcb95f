# SPDX-License-Identifier: MIT
"""Sliding-window KV cache and LoRA module sets / adapter dtype through the Python API (the
same rules as tests/unit/test_attention.c and test_lora.c; bytes by hand there)."""

import unittest

import _support  # noqa: F401  (this checkout's package first on sys.path)
import gpufit

GEMMA3 = dict(arch="decoder", n_layers=12, hidden_size=2560, n_heads=8, n_kv_heads=4,
              head_dim=256, ffn_hidden_size=10240, mlp="geglu", vocab_size=262208,
              tied_embeddings=True, sliding_window=1024, sliding_window_pattern=6)
ROW = 2 * 4 * 256 * 2  # K + V bytes of one token in one layer (bf16)


class TestSlidingWindow(unittest.TestCase):
    def kv(self, **job):
        r = gpufit.estimate(model=dict(GEMMA3), task="inference", precision="bf16", **job)
        return r.roles[0].components["kv_cache"]

    def test_per_framework(self):
        # 2 global layers keep the 32k context; 10 local layers what the framework allocates
        self.assertEqual(self.kv(framework="pytorch", context_len=32768),
                         2 * ROW * 32768 + 10 * ROW * 1024)
        self.assertEqual(self.kv(framework="vllm", context_len=32768),
                         2 * ROW * 32768 + 10 * ROW * 577 * 16)
        self.assertEqual(self.kv(framework="llamacpp", context_len=32768),
                         2 * ROW * 32768 + 10 * ROW * 1536)

    def test_params_listed(self):
        names = {p["name"]: p for p in gpufit.params("model")}
        self.assertEqual(names["sliding_window"]["unit"], "tokens")
        self.assertIn("sliding_window_pattern", names)

    def test_hf_config(self):
        m = gpufit.Model.from_hf_config({
            "model_type": "gemma2", "hidden_size": 1024, "num_hidden_layers": 6,
            "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 4096,
            "vocab_size": 32000, "sliding_window": 4096})
        self.assertEqual((m["sliding_window"], m["sliding_window_pattern"]), (4096, 2))


class TestLoraModules(unittest.TestCase):
    def grads(self, **job):
        r = gpufit.estimate(model="llama-3-8b", task="lora", lora_rank=16, precision="bf16",
                            **job)
        return r.roles[0].components["gradients"]

    def test_module_list_forms(self):
        n = 32 * 16 * (8192 + 5120 + 5120 + 3 * 18432)  # q,k,v,gate,up,down at r = 16
        self.assertEqual(self.grads(lora_modules="q,k,v,gate,up,down"), 4 * n)
        self.assertEqual(self.grads(lora_modules=["q_proj", "k_proj", "v_proj", "gate_proj",
                                                  "up_proj", "down_proj"]), 4 * n)
        self.assertEqual(self.grads(lora_modules=119), 4 * n)
        self.assertEqual(self.grads(lora_modules="q,k,v,gate,up,down", adapter_dtype="bf16"),
                         2 * n)
        j = gpufit.Job()
        j["lora_modules"] = ["q", "v"]
        self.assertEqual(j["lora_modules"], 5)

    def test_bad_module(self):
        with self.assertRaises(gpufit.GpufitError) as cm:
            gpufit.estimate(model="llama-3-8b", task="lora", lora_modules=["q", "lm_head"])
        self.assertEqual(cm.exception.key, "lora_modules")


if __name__ == "__main__":
    unittest.main()
