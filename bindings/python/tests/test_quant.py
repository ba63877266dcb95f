# SPDX-License-Identifier: MIT
"""Per-module storage of quantised checkpoints from Python: the model keys, a config.json
with quantization_config, and an AWQ model not offered AWQ again."""

import unittest

import _support  # noqa: F401  (puts the binding on the path)
import gpufit

SMALL = dict(hidden_size=1024, n_layers=2, n_heads=8, n_kv_heads=8, ffn_hidden_size=4096,
             vocab_size=32000, tied_embeddings=0, mlp="swiglu", norm="rmsnorm")
CONFIG = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 4096,
          "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 2,
          "vocab_size": 32000, "tie_word_embeddings": False, "hidden_act": "silu",
          "torch_dtype": "float16",
          "quantization_config": {"bits": 4, "group_size": 128, "quant_method": "awq",
                                  "version": "gemm", "zero_point": True}}


def weights(report):
    return report.to_dict()["roles"][0]["components"]["weights"]


class TestQuantised(unittest.TestCase):
    def test_model_keys_and_reader_agree(self):
        # linear 33,554,432 / 256 x 133 + embed & head fp16 2 x 32,768,000 x 2 + norms 5,120 x 2
        want = 33554432 // 256 * 133 + 2 * 32768000 * 2 + 5120 * 2
        by_keys = gpufit.estimate(model=dict(SMALL, embedding_dtype="fp16",
                                             output_dtype="fp16", attention_dtype="awq4",
                                             mlp_dtype="awq4"), task="inference")
        self.assertEqual(weights(by_keys), want)
        by_config = gpufit.estimate(model={"hf_config": CONFIG}, task="inference")
        self.assertEqual(weights(by_config), want)

    def test_unsupported_names_the_key(self):
        cfg = dict(CONFIG, quantization_config={"bits": 3, "quant_method": "gptq"})
        with self.assertRaises(gpufit.Unsupported) as cm:
            gpufit.Model.from_hf_config(cfg)
        self.assertIn("bits", str(cm.exception))

    def test_no_awq_mitigation_for_awq(self):
        r = gpufit.estimate(model={"hf_config": CONFIG}, task="inference", context_len=32768,
                            batch=64, gpu_memory_gib=1)
        self.assertFalse(r.fits)
        texts = [m["text"] for m in r.to_dict()["mitigations"]]
        self.assertFalse(any("AWQ" in t for t in texts), texts)
        # the same shape stored in 16-bit is offered AWQ (the check above can fail)
        plain = {k: v for k, v in CONFIG.items() if k != "quantization_config"}
        r = gpufit.estimate(model={"hf_config": plain}, task="inference", context_len=32768,
                            batch=64, gpu_memory_gib=1)
        self.assertTrue(any("AWQ" in m["text"] for m in r.to_dict()["mitigations"]))


if __name__ == "__main__":
    unittest.main()
