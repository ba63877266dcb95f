# SPDX-License-Identifier: MIT
"""etp, checkpointing=selective_op and checkpoint_every/checkpoint_layers through Python
(bytes by hand: tests/unit/test_megatron.c and test_checkpointing.c)."""

import unittest

import _support  # noqa: F401  (this checkout's package first on sys.path)
import gpufit

MOE = dict(arch="decoder", n_layers=2, hidden_size=64, n_heads=4, n_kv_heads=4, vocab_size=256,
           ffn_hidden_size=128, mlp="swiglu", norm="rmsnorm", n_experts=8, experts_per_token=2,
           moe_ffn_hidden_size=32)
JOB = dict(task="pretrain", framework="megatron", precision="bf16", seq_len=64, micro_batch=1)


class TestEtp(unittest.TestCase):
    def test_folding_layout(self):
        # 2 whole experts per rank (8 / ep 4, etp 1) on 4 ranks: 58,688 bf16 parameters
        r = gpufit.estimate(model=MOE, tp=2, dp=2, ep=4, etp=1, sp=True, zero=1, **JOB)
        self.assertEqual(r.roles[0].components["weights"], 117376)
        self.assertEqual(r.roles[0].components["optimizer_states"], 333056)

    def test_default_etp_rejects_the_layout(self):
        with self.assertRaises(gpufit.Inconsistent) as cm:
            gpufit.estimate(model=MOE, tp=2, dp=2, ep=4, sp=True, **JOB)
        self.assertEqual(cm.exception.key, "ep")
        with self.assertRaises(gpufit.Inconsistent) as cm:
            gpufit.estimate(model="llama-3-8b", tp=2, etp=2, sp=True, **JOB)
        self.assertEqual(cm.exception.key, "etp")


class TestCheckpointing(unittest.TestCase):
    def test_selective_op_and_every(self):
        # vocab_size 8: the loss's terms stay below every layer's backward temporaries, which
        # Megatron counts only by what they exceed the loss by (test_megatron_loss_phase.c)
        dense = dict(arch="decoder", n_layers=4, hidden_size=64, n_heads=4, n_kv_heads=2,
                     vocab_size=8, ffn_hidden_size=128, mlp="swiglu", norm="rmsnorm")
        job = dict(JOB, seq_len=32)

        def act(**kw):
            return gpufit.estimate(model=dense, **job, **kw).roles[0].components["activations"]

        full = act(checkpointing="full")
        self.assertEqual(act(checkpointing="selective_op") - full, 73216)
        self.assertEqual(act(checkpointing="full", checkpoint_every=2) - full, 2 * 49920)
        self.assertEqual(act(checkpointing="full", checkpoint_layers=1) - full, 3 * 49920)
        with self.assertRaises(gpufit.Inconsistent) as cm:
            act(checkpointing="selective", checkpoint_every=2)
        self.assertEqual(cm.exception.key, "checkpoint_every")


if __name__ == "__main__":
    unittest.main()
