#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpora of the model-file reader fuzz targets (no downloads).

    tests/fuzz/corpus/gguf/         GGUF v2/v3 headers of small models (Llama Q4_K_M mix, MoE,
                                    DeepSeek-2 MLA, T5 encoder-decoder, BERT), tensor data
                                    left out (the reader never needs it)
    tests/fuzz/corpus/safetensors/  safetensors headers and model.safetensors.index.json files
    tests/fuzz/corpus/hf_config/    the config.json fixtures of tests/data/hf/

Usage: python3 tools/gen_reader_seeds.py [--out DIR]   (DIR defaults to tests/fuzz/corpus)
       python3 tools/gen_reader_seeds.py --gguf FILE   (only the Llama Q4_K_M header, to FILE)

The layouts follow ggml's gguf.cpp (GGUF v3: magic, version, tensor and key/value counts,
key/value pairs, tensor infos) and the safetensors format (u64 header length + JSON header).
"""
import argparse
import json
import os
import shutil
import struct

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
# ggml types: (id, bytes per block, elements per block)
F32_T, F16_T, Q8_0, Q4_K, Q6_K, IQ4_XS = (0, 4, 1), (1, 2, 1), (8, 34, 32), (12, 144, 256), \
    (14, 210, 256), (23, 136, 256)


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


class Gguf:
    def __init__(self, version=3):
        self.version = version
        self.kv = []
        self.tensors = []

    def u32(self, k, v):
        self.kv.append(gstr(k) + struct.pack("<II", U32, v))

    def str(self, k, v):
        self.kv.append(gstr(k) + struct.pack("<I", STR) + gstr(v))

    def raw(self, k, t, fmt, v):
        self.kv.append(gstr(k) + struct.pack("<I", t) + struct.pack("<" + fmt, v))

    def arr(self, k, t, fmt, values):
        body = b"".join(gstr(x) for x in values) if t == STR else \
            b"".join(struct.pack("<" + fmt, x) for x in values)
        self.kv.append(gstr(k) + struct.pack("<IIQ", ARR, t, len(values)) + body)

    def tensor(self, name, gtype, *ne):
        self.tensors.append((name, gtype, ne))

    def bytes(self):
        out = b"GGUF" + struct.pack("<IQQ", self.version, len(self.tensors), len(self.kv))
        out += b"".join(self.kv)
        off = 0
        for name, (tid, bsz, bel), ne in self.tensors:
            out += gstr(name) + struct.pack("<I", len(ne))
            out += b"".join(struct.pack("<Q", x) for x in ne)
            out += struct.pack("<IQ", tid, off)
            n = ne[0] // bel * bsz
            for x in ne[1:]:
                n *= x
            off += (n + 31) // 32 * 32
        return out + b"\0" * (-len(out) % 32)


def more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def tokenizer(g, n):
    g.str("tokenizer.ggml.model", "gpt2")
    g.arr("tokenizer.ggml.tokens", STR, None, ["t%d" % i for i in range(n)])
    g.arr("tokenizer.ggml.token_type", I32, "i", [1] * n)
    g.arr("tokenizer.ggml.scores", F32, "f", [0.0] * n)


def llama_q4km(layers=8, h=256, f=512, v=300):
    g = Gguf()
    g.str("general.architecture", "llama")
    g.str("general.name", "Tiny Llama")
    g.u32("general.file_type", 15)
    g.u32("general.alignment", 32)
    g.u32("llama.block_count", layers)
    g.u32("llama.context_length", 8192)
    g.u32("llama.embedding_length", h)
    g.u32("llama.feed_forward_length", f)
    g.u32("llama.attention.head_count", 4)
    g.u32("llama.attention.head_count_kv", 2)
    g.raw("llama.rope.freq_base", F32, "f", 10000.0)
    g.raw("test.f64", F64, "d", 1.5)
    g.raw("test.i64", I64, "q", -5)
    g.raw("test.u64", U64, "Q", 7)
    g.raw("test.u8", U8, "B", 1)
    g.raw("test.i8", I8, "b", -1)
    g.raw("test.u16", U16, "H", 2)
    g.raw("test.i16", I16, "h", -2)
    g.raw("tokenizer.ggml.add_bos_token", BOOL, "B", 1)
    tokenizer(g, v)
    g.tensor("token_embd.weight", Q4_K, h, v)
    for i in range(layers):
        big = Q6_K if more_bits(i, layers) else Q4_K
        p = "blk.%d." % i
        g.tensor(p + "attn_norm.weight", F32_T, h)
        g.tensor(p + "attn_q.weight", Q4_K, h, h)
        g.tensor(p + "attn_k.weight", Q4_K, h, h // 2)
        g.tensor(p + "attn_v.weight", big, h, h // 2)
        g.tensor(p + "attn_output.weight", Q4_K, h, h)
        g.tensor(p + "ffn_norm.weight", F32_T, h)
        g.tensor(p + "ffn_gate.weight", Q4_K, h, f)
        g.tensor(p + "ffn_up.weight", Q4_K, h, f)
        g.tensor(p + "ffn_down.weight", big, f, h)
    g.tensor("output_norm.weight", F32_T, h)
    g.tensor("output.weight", Q6_K, h, v)
    return g.bytes()


def qwen3moe():
    g = Gguf(version=2)
    g.str("general.architecture", "qwen3moe")
    for k, x in [("block_count", 2), ("embedding_length", 256), ("feed_forward_length", 512),
                 ("attention.head_count", 4), ("attention.head_count_kv", 2),
                 ("attention.key_length", 64), ("expert_count", 4), ("expert_used_count", 2),
                 ("expert_feed_forward_length", 256), ("vocab_size", 300)]:
        g.u32("qwen3moe." + k, x)
    g.tensor("token_embd.weight", Q8_0, 256, 300)
    for i in range(2):
        p = "blk.%d." % i
        for n, t, ne in [("attn_norm.weight", F32_T, (256,)), ("attn_q.weight", Q8_0, (256, 256)),
                         ("attn_k.weight", Q8_0, (256, 128)), ("attn_v.weight", Q8_0, (256, 128)),
                         ("attn_output.weight", Q8_0, (256, 256)),
                         ("attn_q_norm.weight", F32_T, (64,)), ("attn_k_norm.weight", F32_T, (64,)),
                         ("ffn_norm.weight", F32_T, (256,)), ("ffn_gate_inp.weight", F32_T, (256, 4)),
                         ("ffn_gate_exps.weight", IQ4_XS, (256, 256, 4)),
                         ("ffn_up_exps.weight", IQ4_XS, (256, 256, 4)),
                         ("ffn_down_exps.weight", IQ4_XS, (256, 256, 4))]:
            g.tensor(p + n, t, *ne)
    g.tensor("output_norm.weight", F32_T, 256)
    return g.bytes()


def deepseek2():
    h, nq, rq, rkv, dr, dn, dv, f, fm, e, v = 256, 4, 128, 64, 32, 64, 64, 512, 256, 4, 300
    g = Gguf()
    g.str("general.architecture", "deepseek2")
    for k, x in [("block_count", 3), ("embedding_length", h), ("feed_forward_length", f),
                 ("attention.head_count", nq), ("attention.head_count_kv", nq),
                 ("attention.key_length", dn + dr), ("attention.value_length", dv),
                 ("attention.q_lora_rank", rq), ("attention.kv_lora_rank", rkv),
                 ("rope.dimension_count", dr), ("expert_count", e), ("expert_used_count", 2),
                 ("expert_shared_count", 1), ("expert_feed_forward_length", fm),
                 ("leading_dense_block_count", 1)]:
        g.u32("deepseek2." + k, x)
    tokenizer(g, v)
    g.tensor("token_embd.weight", F16_T, h, v)
    for i in range(3):
        p = "blk.%d." % i
        for n, ne in [("attn_norm.weight", (h,)), ("attn_q_a.weight", (h, rq)),
                      ("attn_q_a_norm.weight", (rq,)), ("attn_q_b.weight", (rq, nq * (dn + dr))),
                      ("attn_kv_a_mqa.weight", (h, rkv + dr)), ("attn_kv_a_norm.weight", (rkv,)),
                      ("attn_kv_b.weight", (rkv, nq * (dn + dv))),
                      ("attn_output.weight", (nq * dv, h)), ("ffn_norm.weight", (h,))]:
            g.tensor(p + n, F16_T, *ne)
        if i == 0:
            for n, ne in [("ffn_gate.weight", (h, f)), ("ffn_up.weight", (h, f)),
                          ("ffn_down.weight", (f, h))]:
                g.tensor(p + n, F16_T, *ne)
        else:
            for n, ne in [("ffn_gate_inp.weight", (h, e)), ("exp_probs_b.bias", (e,)),
                          ("ffn_gate_exps.weight", (h, fm, e)), ("ffn_up_exps.weight", (h, fm, e)),
                          ("ffn_down_exps.weight", (fm, h, e)), ("ffn_gate_shexp.weight", (h, fm)),
                          ("ffn_up_shexp.weight", (h, fm)), ("ffn_down_shexp.weight", (fm, h))]:
                g.tensor(p + n, F16_T, *ne)
    g.tensor("output_norm.weight", F16_T, h)
    g.tensor("output.weight", F16_T, h, v)
    return g.bytes()


def t5():
    g = Gguf()
    g.str("general.architecture", "t5")
    for k, x in [("block_count", 2), ("embedding_length", 64), ("feed_forward_length", 128),
                 ("attention.head_count", 4), ("attention.key_length", 16),
                 ("attention.value_length", 16), ("attention.relative_buckets_count", 32)]:
        g.u32("t5." + k, x)
    tokenizer(g, 100)
    g.tensor("token_embd.weight", F16_T, 64, 100)
    for stack in ("enc", "dec"):
        for i in range(2):
            p = "%s.blk.%d." % (stack, i)
            g.tensor(p + "attn_norm.weight", F32_T, 64)
            for n in ("attn_q", "attn_k", "attn_v", "attn_o"):
                g.tensor(p + n + ".weight", F16_T, 64, 64)
            if i == 0:
                g.tensor(p + "attn_rel_b.weight", F16_T, 4, 32)
            if stack == "dec":
                for n in ("cross_attn_q", "cross_attn_k", "cross_attn_v", "cross_attn_o"):
                    g.tensor(p + n + ".weight", F16_T, 64, 64)
                g.tensor(p + "cross_attn_norm.weight", F32_T, 64)
            g.tensor(p + "ffn_norm.weight", F32_T, 64)
            g.tensor(p + "ffn_up.weight", F16_T, 64, 128)
            g.tensor(p + "ffn_down.weight", F16_T, 128, 64)
        g.tensor(stack + ".output_norm.weight", F32_T, 64)
    return g.bytes()


def bert():
    g = Gguf()
    g.str("general.architecture", "bert")
    for k, x in [("block_count", 2), ("embedding_length", 64), ("feed_forward_length", 128),
                 ("attention.head_count", 4)]:
        g.u32("bert." + k, x)
    tokenizer(g, 100)
    g.tensor("token_embd.weight", F16_T, 64, 100)
    g.tensor("token_types.weight", F32_T, 64, 2)
    g.tensor("position_embd.weight", F16_T, 64, 512)
    g.tensor("token_embd_norm.weight", F32_T, 64)
    g.tensor("token_embd_norm.bias", F32_T, 64)
    for i in range(2):
        p = "blk.%d." % i
        for n in ("attn_q", "attn_k", "attn_v", "attn_output"):
            g.tensor(p + n + ".weight", F16_T, 64, 64)
            g.tensor(p + n + ".bias", F32_T, 64)
        g.tensor(p + "attn_output_norm.weight", F32_T, 64)
        g.tensor(p + "attn_output_norm.bias", F32_T, 64)
        g.tensor(p + "ffn_up.weight", F16_T, 64, 128)
        g.tensor(p + "ffn_up.bias", F32_T, 128)
        g.tensor(p + "ffn_down.weight", F16_T, 128, 64)
        g.tensor(p + "ffn_down.bias", F32_T, 64)
        g.tensor(p + "layer_output_norm.weight", F32_T, 64)
        g.tensor(p + "layer_output_norm.bias", F32_T, 64)
    return g.bytes()


ST_SIZES = {"F32": 4, "BF16": 2, "F16": 2, "F8_E4M3": 1, "I8": 1, "U8": 1, "I64": 8, "BOOL": 1}


def safetensors(tensors, metadata=None, with_data=False):
    header, off = {}, 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape in tensors:
        n = ST_SIZES[dtype]
        for x in shape:
            n *= x
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + (b"\0" * off if with_data else b"")


def tiny_llama_safetensors(layers=2, h=64, kv=32, f=128, v=100, head=True):
    t = [("model.embed_tokens.weight", "BF16", (v, h))]
    for i in range(layers):
        p = "model.layers.%d." % i
        t += [(p + "input_layernorm.weight", "F32", (h,)),
              (p + "self_attn.q_proj.weight", "BF16", (h, h)),
              (p + "self_attn.k_proj.weight", "BF16", (kv, h)),
              (p + "self_attn.v_proj.weight", "BF16", (kv, h)),
              (p + "self_attn.o_proj.weight", "BF16", (h, h)),
              (p + "post_attention_layernorm.weight", "F32", (h,)),
              (p + "mlp.gate_proj.weight", "F8_E4M3", (f, h)),
              (p + "mlp.up_proj.weight", "F8_E4M3", (f, h)),
              (p + "mlp.down_proj.weight", "I8", (h, f))]
    t.append(("model.norm.weight", "F32", (h,)))
    if head:
        t.append(("lm_head.weight", "BF16", (v, h)))
    return t


TINY_CONFIG = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
               "vocab_size": 100, "tie_word_embeddings": False}


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/fuzz/corpus")
    ap.add_argument("--gguf", help="write only the Llama Q4_K_M header to this file")
    ap.add_argument("--model-dir", help="write a tiny Hugging Face model directory here")
    a = ap.parse_args()
    if a.gguf:
        write(a.gguf, llama_q4km())
        return
    if a.model_dir:
        write(os.path.join(a.model_dir, "config.json"), json.dumps(TINY_CONFIG).encode())
        write(os.path.join(a.model_dir, "model.safetensors"),
              safetensors(tiny_llama_safetensors(), {"format": "pt"}, with_data=True))
        return
    gg = os.path.join(a.out, "gguf")
    write(os.path.join(gg, "llama_q4_k_m.gguf"), llama_q4km())
    write(os.path.join(gg, "llama_small.gguf"), llama_q4km(layers=1, v=8))
    write(os.path.join(gg, "qwen3moe_v2.gguf"), qwen3moe())
    write(os.path.join(gg, "deepseek2_mla.gguf"), deepseek2())
    write(os.path.join(gg, "t5.gguf"), t5())
    write(os.path.join(gg, "bert.gguf"), bert())
    st = os.path.join(a.out, "safetensors")
    write(os.path.join(st, "tiny_llama.safetensors"),
          safetensors(tiny_llama_safetensors(), {"format": "pt"}))
    write(os.path.join(st, "tied.safetensors"), safetensors(tiny_llama_safetensors(head=False)))
    write(os.path.join(st, "dtypes.safetensors"),
          safetensors([("a", "I64", (1, 4)), ("b", "BOOL", ()), ("c", "U8", (3,)),
                       ("d", "F16", (0, 5))]))
    write(os.path.join(st, "model.safetensors.index.json"),
          json.dumps({"metadata": {"total_size": 16060522496},
                      "weight_map": {"lm_head.weight": "model-00004-of-00004.safetensors",
                                     "model.embed_tokens.weight":
                                         "model-00001-of-00004.safetensors"}},
                     indent=2).encode() + b"\n")
    hf = os.path.join(a.out, "hf_config")
    os.makedirs(hf, exist_ok=True)
    src = "tests/data/hf"
    for name in sorted(os.listdir(src)):
        if name.endswith(".json"):
            shutil.copyfile(os.path.join(src, name), os.path.join(hf, name))


if __name__ == "__main__":
    main()
