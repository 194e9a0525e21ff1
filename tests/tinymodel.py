"""Our own generator of a tiny but real BERT embedding model in GGUF, for tests.

llama-cpp-python loads it through the same code as a real model (GGUF parsing, WordPiece,
the BERT graph, mean pooling). In "bag" mode only whole-word tokens (and [CLS], [UNK]) have
a non-zero input embedding, and every attention/FFN output projection is exactly zero: all
layers still run, but the residual stream is unchanged and LayerNorm(0) = 0, so the pooled
vector is a bag of the known words in the text. Texts sharing words are similar, which makes
ranking tests meaningful. Character pieces (ids, numbers, unknown spellings) embed to zero.

With `quant="Q8_0"` or `"Q4_0"` the weight matrices are stored quantised, as in the real models
we ship for (e5-small is Q4_0, MiniLM Q8_0), so llama.cpp runs its real quantised matrix
kernels (the SIMD code a CPU may list but a virtual machine may not allow); with `bag=False`
the output projections are not zero either, so what those kernels compute reaches the vector.

Run `python tests/tinymodel.py out.gguf` to write one by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHARS = "abcdefghijklmnopqrstuvwxyz0123456789" + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
WORDS = """
the a an and or but not of to in on at by for with from into over under about after before
is are was were be been has have had do does did will would can could should may might must
i you he she it we they me him her us them my your his its our their this that these those
what which who when where why how all any both each few more most other some such no only
own same so than too very just now then here there up down out off again once
time day week month year today yesterday tomorrow morning evening night monday friday
cat dog fish bird horse cow pet food milk water coffee tea bread cheese pasta lasagna recipe
cook dinner lunch breakfast kitchen oven sugar salt garlic tomato
dark light mode theme color screen window editor terminal font keyboard mouse
tokyo paris berlin london city train flight plane hotel trip travel ticket airport
release deadline project meeting team plan goal task bug fix test code build deploy server
database query index search memory file note log backup disk network error crash
user account password key token config setting update version install
book music movie game sport football garden tree flower rain snow sun weather
money bank price cost budget pay buy sell shop market
doctor health sleep run walk gym
query passage
friend family mother father brother sister child school teacher student
""".split()

PAD, UNK, CLS, SEP, MASK = range(5)


def vocabulary() -> list[str]:
    words = [w for w in dict.fromkeys(WORDS) if len(w) > 1]  # one letter is already a piece below
    # llama.cpp's WordPiece spelling: "▁" marks a word start; continuation pieces are bare
    return SPECIALS + ["\u2581" + c for c in CHARS] + list(CHARS) + ["\u2581" + w for w in words]


def make(path: str | Path, *, dim: int = 64, layers: int = 2, heads: int = 2, ctx: int = 512, seed: int = 0, name: str = "tiny-bert",
         ff: int | None = None, quant: str | None = None, bag: bool = True) -> Path:
    import gguf
    from gguf import quants

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokens = vocabulary()
    n_vocab = len(tokens)
    ff = ff or 2 * dim
    rng = np.random.default_rng(seed)
    f32 = np.float32

    w = gguf.GGUFWriter(str(path), "bert")
    w.add_name(name)
    w.add_block_count(layers)
    w.add_context_length(ctx)
    w.add_embedding_length(dim)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_layer_norm_eps(1e-12)
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.MEAN)
    qtype = getattr(gguf.GGMLQuantizationType, quant) if quant else None
    w.add_file_type(getattr(gguf.LlamaFileType, f"MOSTLY_{quant}") if quant else gguf.LlamaFileType.ALL_F32)
    w.add_token_type_count(2)

    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.CONTROL] * len(SPECIALS) + [gguf.TokenType.NORMAL] * (n_vocab - len(SPECIALS)))
    w.add_pad_token_id(PAD)
    w.add_unk_token_id(UNK)
    w.add_bos_token_id(CLS)
    w.add_sep_token_id(SEP)
    w.add_eos_token_id(SEP)
    w.add_mask_token_id(MASK)
    w.add_add_bos_token(True)
    w.add_add_eos_token(True)
    w.add_bool("tokenizer.ggml.normalizer.lowercase", True)

    # input embeddings: whole words, [CLS] and [UNK] only (a bag of known words)
    emb = np.zeros((n_vocab, dim), dtype=f32)
    first_word = len(SPECIALS) + 2 * len(CHARS)
    emb[first_word:] = rng.standard_normal((n_vocab - first_word, dim)).astype(f32)
    emb[CLS] = rng.standard_normal(dim).astype(f32) * 0.3
    emb[UNK] = rng.standard_normal(dim).astype(f32) * 0.3
    ones, zeros = np.ones(dim, dtype=f32), np.zeros(dim, dtype=f32)
    w.add_tensor("token_embd.weight", emb)
    w.add_tensor("position_embd.weight", np.zeros((ctx, dim), dtype=f32))
    w.add_tensor("token_types.weight", np.zeros((2, dim), dtype=f32))
    w.add_tensor("token_embd_norm.weight", ones)
    w.add_tensor("token_embd_norm.bias", zeros)
    for i in range(layers):
        p = f"blk.{i}."

        def rand(*shape: int) -> np.ndarray:
            return (rng.standard_normal(shape) * 0.1).astype(f32)

        def matrix(name: str, data: np.ndarray) -> None:
            if qtype is None:
                w.add_tensor(name, data)
            else:
                w.add_tensor(name, quants.quantize(data, qtype), raw_dtype=qtype)

        # bag mode: zero output projections, so every layer computes but the residual stream
        # stays as it was; otherwise small random ones, so every matrix product counts
        def out(*shape: int) -> np.ndarray:
            return np.zeros(shape, dtype=f32) if bag else (rng.standard_normal(shape) * 0.02).astype(f32)

        for part in ("attn_q", "attn_k", "attn_v"):
            matrix(p + part + ".weight", rand(dim, dim))
            w.add_tensor(p + part + ".bias", np.zeros(dim, dtype=f32))
        matrix(p + "attn_output.weight", out(dim, dim))
        w.add_tensor(p + "attn_output.bias", zeros)
        w.add_tensor(p + "attn_output_norm.weight", ones)
        w.add_tensor(p + "attn_output_norm.bias", zeros)
        matrix(p + "ffn_up.weight", rand(ff, dim))
        w.add_tensor(p + "ffn_up.bias", np.zeros(ff, dtype=f32))
        matrix(p + "ffn_down.weight", out(dim, ff))
        w.add_tensor(p + "ffn_down.bias", zeros)
        w.add_tensor(p + "layer_output_norm.weight", ones)
        w.add_tensor(p + "layer_output_norm.bias", zeros)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


if __name__ == "__main__":
    out = make(sys.argv[1] if len(sys.argv) > 1 else "tiny-bert.gguf")
    print(out, out.stat().st_size)
