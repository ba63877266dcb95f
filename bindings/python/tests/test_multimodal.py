# SPDX-License-Identifier: MIT
"""Multimodal models from Python: the vision_* model keys and mm_items_per_prompt reach the
library, presets count their vision towers, and vLLM's encoder profile moves the KV budget by
the bytes worked out in tests/unit/test_multimodal.c (docs/memory/multimodal.md)."""

import unittest

import _support  # noqa: F401  (puts this checkout's package first on sys.path)
import gpufit


def role0(r):
    return r.to_dict()["roles"][0]


class TestMultimodal(unittest.TestCase):
    def test_preset_counts(self):
        # llava-1.5-7b-hf sum(p.numel()); Qwen2-VL-7B safetensors total_size / 2
        self.assertEqual(gpufit.Model("llava-1.5-7b").param_count()[0], 7063427072)
        self.assertEqual(gpufit.Model("qwen2-vl-7b").param_count()[0], 8291375616)

    def test_params_listed(self):
        names = {p["name"] for p in gpufit.params()}
        for k in ("vision_layers", "vision_hidden_size", "vision_heads", "vision_ffn_hidden_size",
                  "vision_patch_size", "vision_image_size", "vision_merge", "vision_style",
                  "vision_projector", "vision_tiles", "mm_items_per_prompt"):
            self.assertIn(k, names)

    def test_custom_vision_encoder(self):
        # the Qwen2-VL-7B text shape (= qwen2.5-7b) plus its vision tower by keys
        m = gpufit.Model("qwen2.5-7b", vision_layers=32, vision_hidden_size=1280,
                         vision_heads=16, vision_ffn_hidden_size=5120, vision_patch_size=14,
                         vision_image_size=3584, vision_merge=2, vision_style="qwen2_vl",
                         vision_projector="merger")
        self.assertEqual(m.param_count()[0], 8291375616)

    def test_vllm_profile_and_text_only(self):
        kw = dict(model="llava-1.5-7b", task="inference", framework="vllm", gpu="h100")
        on = role0(gpufit.estimate(**kw))
        off = role0(gpufit.estimate(mm_items_per_prompt=0, **kw))
        # 14 images: pixels 9,483,264 B + encoder cache 66,060,288 B over the text profile
        self.assertEqual(on["components"]["activations"] - off["components"]["activations"],
                         9483264 + 66060288)
        # the tower's bf16 weights: 2 x 324,487,168
        self.assertEqual(on["components"]["weights"] - off["components"]["weights"], 648974336)
        self.assertEqual(off["kv_capacity_bytes"] - on["kv_capacity_bytes"],
                         648974336 + 9483264 + 66060288)

    def test_inconsistent_key(self):
        with self.assertRaises(gpufit.Inconsistent) as cm:
            gpufit.estimate(model="llama-3-8b", task="inference", framework="vllm",
                            mm_items_per_prompt=1)
        self.assertIn("mm_items_per_prompt", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
