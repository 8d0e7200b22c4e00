#!/usr/bin/env python3
"""Writes a small random-weight Llama GGUF that llama.cpp's llama-server can load.

Why: infereng's real-engine checks (docs/FIDELITY.md "a real engine built on this machine")
need a model that decodes in a few ms/token on one CPU core and that anyone can regenerate
without downloading weights. The tokenizer is copied from a vocab-only GGUF shipped in the
llama.cpp source tree (models/ggml-vocab-llama-spm.gguf); every weight is normal * 0.02 with a
fixed seed, so the same arguments give the same file. Its output text is gibberish: only its
timing matters.

Usage (numpy and llama.cpp's gguf-py; the pyenv python may lack numpy, /usr/bin/python3 has it):
  PYTHONPATH=LLAMA_SRC/gguf-py /usr/bin/python3 scripts/make-random-gguf.py \
      --vocab LLAMA_SRC/models/ggml-vocab-llama-spm.gguf --out /tmp/rand-llama.gguf
Defaults: 4 layers, n_embd 384, 8 heads (head dim 48), n_ff 1536, ctx 4096, f16 matrices.
"""
import argparse
import sys
import types

import numpy as np

# gguf-py imports sentencepiece and yaml for conversion helpers this script never uses.
for _name in ("sentencepiece", "yaml"):
    if _name not in sys.modules:
        try:
            __import__(_name)
        except ImportError:
            stub = types.ModuleType(_name)
            stub.SentencePieceProcessor = object
            sys.modules[_name] = stub

import gguf  # noqa: E402


def copy_tokenizer(reader, writer):
    """Copies every tokenizer.* key of the vocab-only GGUF; returns the vocab size."""
    n_vocab = 0
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        vtype = field.types[0]
        if vtype == gguf.GGUFValueType.ARRAY:
            sub = field.types[1]
            if sub == gguf.GGUFValueType.STRING:
                value = [bytes(field.parts[i]).decode("utf-8", errors="surrogateescape") for i in field.data]
            else:
                value = [field.parts[i].tolist()[0] for i in field.data]
            writer.add_array(key, value)
            if key == "tokenizer.ggml.tokens":
                n_vocab = len(value)
        elif vtype == gguf.GGUFValueType.STRING:
            writer.add_string(key, bytes(field.parts[field.data[0]]).decode("utf-8"))
        else:
            writer.add_key_value(key, field.parts[field.data[0]].tolist()[0], vtype)
    if n_vocab == 0:
        sys.exit("make-random-gguf: the vocab GGUF has no tokenizer.ggml.tokens")
    return n_vocab


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vocab", required=True, help="vocab-only GGUF (llama.cpp models/ggml-vocab-llama-spm.gguf)")
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--embd", type=int, default=384)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--ff", type=int, default=0, help="feed-forward size (default 4 x embd)")
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--f32", action="store_true", help="f32 matrices instead of f16")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if a.embd % a.heads or a.heads % a.kv_heads:
        sys.exit("make-random-gguf: --embd must divide by --heads and --heads by --kv-heads")
    n_ff = a.ff or 4 * a.embd
    head_dim = a.embd // a.heads

    reader = gguf.GGUFReader(a.vocab)
    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name(f"rand-llama-{a.layers}L-{a.embd}")
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.embd)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if a.f32 else gguf.LlamaFileType.MOSTLY_F16)
    n_vocab = copy_tokenizer(reader, w)
    w.add_vocab_size(n_vocab)

    rng = np.random.default_rng(a.seed)
    mat_type = np.float32 if a.f32 else np.float16

    def rand(*shape):  # numpy shape is (rows, cols) = GGUF (ne1, ne0) reversed
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(mat_type)

    kv_dim = head_dim * a.kv_heads
    w.add_tensor("token_embd.weight", rand(n_vocab, a.embd))
    w.add_tensor("output_norm.weight", np.ones(a.embd, dtype=np.float32))
    w.add_tensor("output.weight", rand(n_vocab, a.embd))
    for i in range(a.layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.ones(a.embd, dtype=np.float32))
        w.add_tensor(b + "attn_q.weight", rand(a.embd, a.embd))
        w.add_tensor(b + "attn_k.weight", rand(kv_dim, a.embd))
        w.add_tensor(b + "attn_v.weight", rand(kv_dim, a.embd))
        w.add_tensor(b + "attn_output.weight", rand(a.embd, a.embd))
        w.add_tensor(b + "ffn_norm.weight", np.ones(a.embd, dtype=np.float32))
        w.add_tensor(b + "ffn_gate.weight", rand(n_ff, a.embd))
        w.add_tensor(b + "ffn_up.weight", rand(n_ff, a.embd))
        w.add_tensor(b + "ffn_down.weight", rand(a.embd, n_ff))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{a.out}: llama {a.layers} layers, n_embd {a.embd}, {a.heads} heads ({a.kv_heads} kv), "
          f"n_ff {n_ff}, n_vocab {n_vocab}, ctx {a.ctx}, {'f32' if a.f32 else 'f16'}")


if __name__ == "__main__":
    main()
