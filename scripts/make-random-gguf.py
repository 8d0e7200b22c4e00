#!/usr/bin/env python3
"""Writes a small random-weight Llama GGUF that llama.cpp's llama-server can load.

Why: infereng's real-engine checks (docs/FIDELITY.md "a real engine built on this machine")
need a model that decodes in a few ms/token on one CPU core and that anyone can regenerate
without downloading weights. The tokenizer is copied from a vocab-only GGUF shipped in the
llama.cpp source tree (models/ggml-vocab-llama-spm.gguf), or, with `--vocab synthetic`, built
here: a SentencePiece ("llama") vocabulary of the 256 byte tokens, characters, and short
lowercase pieces (about one token per two or three letters), padded with four-letter pieces
to `--n-vocab` so the output layer has a real model's size. Every weight is normal * 0.02 with
a fixed seed, so the same arguments give the same file; `--tile` repeats one random block
instead of drawing every weight (seconds instead of minutes for an 8B shape, same timing: the
engine's work does not depend on the values). Its output text is gibberish: only its timing
matters.

Usage (numpy and llama.cpp's gguf-py; the pyenv python may lack numpy, /usr/bin/python3 has it):
  PYTHONPATH=LLAMA_SRC/gguf-py /usr/bin/python3 scripts/make-random-gguf.py \
      --vocab LLAMA_SRC/models/ggml-vocab-llama-spm.gguf --out /tmp/rand-llama.gguf
Defaults: 4 layers, n_embd 384, 8 heads (head dim 48), n_ff 1536, ctx 4096, f16 matrices.
Llama-3.1-8B's shape (data/models/llama-3.1-8b.yaml), 16 GB:
  ... --vocab synthetic --n-vocab 128256 --layers 32 --embd 4096 --heads 32 --kv-heads 8 \
      --ff 14336 --ctx 131072 --rope-base 500000 --tile --out /tmp/rand-llama-8b.gguf
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


def synthetic_tokenizer(writer, n_vocab):
    """A SentencePiece vocabulary built here (no file needed); returns its size.

    Pieces: <unk>, <s>, </s>, the 256 byte-fallback tokens, every character and two-letter
    lowercase piece with and without the word-start mark (U+2581), and every three-letter
    lowercase piece within a word, so ordinary English text takes about one token per two or
    three letters. Scores favour longer pieces, so the tokenizer's
    merges reach them. Four-letter word-start pieces pad the vocabulary to n_vocab.
    """
    letters = "abcdefghijklmnopqrstuvwxyz"
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] + [gguf.TokenType.BYTE] * 256
    scores = [0.0] * len(pieces)
    words = ["\u2581"] + list(letters + letters.upper() + "0123456789.,;:!?'\"-()")
    words += [a + b for a in letters for b in letters]
    inner = [a + b + c for a in letters for b in letters for c in letters]
    for wd in words + inner:
        for piece in ([wd, "\u2581" + wd] if wd != "\u2581" and len(wd) < 3 else [wd]):
            pieces.append(piece)
            types.append(gguf.TokenType.NORMAL)
            scores.append(float(len(piece)) - len(pieces) * 1e-6)
    if n_vocab < len(pieces):
        sys.exit(f"make-random-gguf: --n-vocab {n_vocab} is under the synthetic vocabulary's {len(pieces)} pieces")
    # Padding: four-letter word-start pieces, visible text like every other piece. (Unused
    # tokens render as nothing: a greedy stream that settles on one sends no content at all.)
    pad = ("\u2581" + a + b + c + d for a in letters for b in letters for c in letters for d in letters)
    while len(pieces) < n_vocab:
        pieces.append(next(pad))
        types.append(gguf.TokenType.NORMAL)
        scores.append(5.0 - len(pieces) * 1e-6)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(pieces)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    return len(pieces)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vocab", required=True,
                   help="vocab-only GGUF (llama.cpp models/ggml-vocab-llama-spm.gguf), or 'synthetic'")
    p.add_argument("--n-vocab", type=int, default=32000, help="with --vocab synthetic: the vocabulary size")
    p.add_argument("--rope-base", type=float, default=10000.0)
    p.add_argument("--tile", action="store_true", help="repeat one random block of weights (fast for big shapes)")
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
    w.add_rope_freq_base(a.rope_base)
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if a.f32 else gguf.LlamaFileType.MOSTLY_F16)
    if a.vocab == "synthetic":
        n_vocab = synthetic_tokenizer(w, a.n_vocab)
    else:
        n_vocab = copy_tokenizer(gguf.GGUFReader(a.vocab), w)
    w.add_vocab_size(n_vocab)

    rng = np.random.default_rng(a.seed)
    mat_type = np.float32 if a.f32 else np.float16

    block = (rng.standard_normal(1 << 20, dtype=np.float32) * 0.02).astype(mat_type) if a.tile else None

    def rand(*shape):  # numpy shape is (rows, cols) = GGUF (ne1, ne0) reversed
        if block is not None:
            return np.resize(block, shape)
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
