#!/usr/bin/env python3
"""Write a complete ggml whisper model of Whisper *tiny* (multilingual) shape
with random weights, for protocol testing only (it transcribes gibberish).

Layout (see whisper.cpp src/whisper.cpp whisper_model_load and
models/convert-pt-to-ggml.py):
  magic 'ggml' + 11 int32 hparams          \
  mel filters (n_mel, n_fft, float32 data)  > copied verbatim from
  vocab (n, then n x (len, bytes))         /  models/for-tests-ggml-tiny.bin
  tensors: int32 n_dims, int32 name_len, int32 ttype,
           n_dims x int32 ne (ggml order = numpy shape reversed),
           name bytes, raw data (f16 if ttype==1, f32 if ttype==0)

Type rule (convert-pt-to-ggml.py with use_f16): tensors with n_dims < 2,
encoder.conv1.bias / encoder.conv2.bias (reshaped to [n,1]) and the two
positional embeddings are float32; everything else (2-D/3-D weights, incl.
conv weights) is float16.

Weights ~ N(0, 0.02); layer-norm weights = 1; biases = 0; seed fixed.
Usage: scripts/make-random-whisper-tiny.py <whisper.cpp>/models/for-tests-ggml-tiny.bin <out.bin> [seed]
(src/client/testdata/whispercpp-233fe1f/PROVENANCE.txt calls it make_random_tiny.py: the same script.)
"""
import struct
import sys

import numpy as np

src = sys.argv[1] if len(sys.argv) > 1 else "src/models/for-tests-ggml-tiny.bin"
dst = sys.argv[2] if len(sys.argv) > 2 else "ggml-tiny-random.bin"
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1234

raw = open(src, "rb").read()
hp = struct.unpack("<12i", raw[:48])
magic, n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer, \
    n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype = hp
assert magic == 0x67676D6C, hex(magic)
expect = (51865, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1)
assert hp[1:] == expect, hp

# walk mel filters + vocab to find where the tensor section would start
off = 48
n_mel, n_fft = struct.unpack("<2i", raw[off:off + 8]); off += 8
off += n_mel * n_fft * 4
(n_tok,) = struct.unpack("<i", raw[off:off + 4]); off += 4
for _ in range(n_tok):
    (l,) = struct.unpack("<i", raw[off:off + 4]); off += 4 + l
assert off == len(raw), "for-tests file unexpectedly contains tensors"
prefix = raw[:off]

rng = np.random.default_rng(seed)
S = n_audio_state  # == n_text_state


def tensors():
    """(name, numpy shape in PyTorch order) in convert-pt-to-ggml order."""
    yield "encoder.positional_embedding", (n_audio_ctx, S)
    yield "encoder.conv1.weight", (S, n_mels, 3)
    yield "encoder.conv1.bias", (S, 1)
    yield "encoder.conv2.weight", (S, S, 3)
    yield "encoder.conv2.bias", (S, 1)
    for i in range(n_audio_layer):
        p = f"encoder.blocks.{i}."
        yield p + "attn.query.weight", (S, S)
        yield p + "attn.query.bias", (S,)
        yield p + "attn.key.weight", (S, S)
        yield p + "attn.value.weight", (S, S)
        yield p + "attn.value.bias", (S,)
        yield p + "attn.out.weight", (S, S)
        yield p + "attn.out.bias", (S,)
        yield p + "attn_ln.weight", (S,)
        yield p + "attn_ln.bias", (S,)
        yield p + "mlp.0.weight", (4 * S, S)
        yield p + "mlp.0.bias", (4 * S,)
        yield p + "mlp.2.weight", (S, 4 * S)
        yield p + "mlp.2.bias", (S,)
        yield p + "mlp_ln.weight", (S,)
        yield p + "mlp_ln.bias", (S,)
    yield "encoder.ln_post.weight", (S,)
    yield "encoder.ln_post.bias", (S,)
    yield "decoder.positional_embedding", (n_text_ctx, S)
    yield "decoder.token_embedding.weight", (n_vocab, S)
    for i in range(n_text_layer):
        p = f"decoder.blocks.{i}."
        for a in ("attn", "cross_attn"):
            yield p + a + ".query.weight", (S, S)
            yield p + a + ".query.bias", (S,)
            yield p + a + ".key.weight", (S, S)
            yield p + a + ".value.weight", (S, S)
            yield p + a + ".value.bias", (S,)
            yield p + a + ".out.weight", (S, S)
            yield p + a + ".out.bias", (S,)
            yield p + a + "_ln.weight", (S,)
            yield p + a + "_ln.bias", (S,)
        yield p + "mlp.0.weight", (4 * S, S)
        yield p + "mlp.0.bias", (4 * S,)
        yield p + "mlp.2.weight", (S, 4 * S)
        yield p + "mlp.2.bias", (S,)
        yield p + "mlp_ln.weight", (S,)
        yield p + "mlp_ln.bias", (S,)
    yield "decoder.ln.weight", (S,)
    yield "decoder.ln.bias", (S,)


F32_NAMES = {"encoder.conv1.bias", "encoder.conv2.bias",
             "encoder.positional_embedding", "decoder.positional_embedding"}

count = 0
with open(dst, "wb") as f:
    f.write(prefix)
    for name, shape in tensors():
        is_ln_w = name.endswith("ln.weight") or name.endswith("ln_post.weight")
        if is_ln_w:
            data = np.ones(shape, np.float32)
        elif name.endswith(".bias"):
            data = np.zeros(shape, np.float32)
        else:
            data = rng.normal(0.0, 0.02, size=shape).astype(np.float32)
        if len(shape) < 2 or name in F32_NAMES:
            ttype = 0
            data = data.astype("<f4")
        else:
            ttype = 1
            data = data.astype("<f2")
        nb = name.encode()
        f.write(struct.pack("<iii", len(shape), len(nb), ttype))
        for d in reversed(shape):
            f.write(struct.pack("<i", d))
        f.write(nb)
        f.write(data.tobytes())
        count += 1

assert count == 7 + 15 * n_audio_layer + 4 + 24 * n_text_layer, count
print(f"wrote {dst}: {count} tensors, seed {seed}")
