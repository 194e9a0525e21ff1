"""A GGUF embedding model loaded by llama-cpp-python, in the process that calls it.

Only the model worker (worker.py) and the benchmarks build one: a native crash in llama.cpp
(an instruction the machine does not allow, an assertion) ends the process that holds the
model, so clawmem itself never does.

What keeps llama.cpp from aborting: `n_ctx = n_batch = n_ubatch = 512`, one text per
`embed()` call, every text counted with the model's own tokenizer first. A text over the
model's window is split by tokens into pieces that fit and the pieces' vectors are averaged
(weighted by length): nothing is ever truncated.
"""

from __future__ import annotations

import numpy as np

from .base import check_vector, one_line

N_CTX = 512


class LoadError(Exception):
    """The file is not a usable embedding model; the message says why in one line."""


class Embedder:
    def __init__(self, path: str, threads: int = 1):
        import llama_cpp

        self.llama_cpp = llama_cpp
        name = path.rsplit("/", 1)[-1]
        try:
            self.llm = llama_cpp.Llama(
                model_path=path,
                embedding=True,
                n_ctx=N_CTX,
                n_batch=N_CTX,
                n_ubatch=N_CTX,
                flash_attn=True,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        except Exception as exc:
            raise LoadError(f"cannot load {name}: {one_line(exc)}; check that local.modelPath is a GGUF embedding model") from None
        if self.llm.pooling_type() == llama_cpp.LLAMA_POOLING_TYPE_NONE:
            self.llm.close()
            raise LoadError(f"{name} has no pooling layer, so it is not an embedding model; pick a GGUF embedding model")
        self.limit = min(N_CTX, self.llm._model.n_ctx_train() or N_CTX)
        self.dims = self.llm.n_embd()
        self.threads = threads

    def system_info(self) -> str:
        info = self.llama_cpp.llama_print_system_info()
        return (info.decode(errors="replace") if isinstance(info, bytes) else str(info)).strip()

    def use_threads(self, n: int) -> None:
        if n != self.threads:
            self.llm._ctx.set_n_threads(n, n)
            self.threads = n

    def pieces(self, text: str) -> list[tuple[str, int]]:
        """(piece, token count) pieces of `text` that each fit the model's window."""
        n = len(self.llm.tokenize(text.encode("utf-8"), add_bos=True, special=False))
        if n <= self.limit or len(text) < 2:
            return [(text, n)]
        # cut near the middle, at a line break or a space when there is one
        mid = len(text) // 2
        lo, hi = len(text) // 4, (3 * len(text)) // 4
        cut = next((p + 1 for sep in ("\n", " ") for p in [text.rfind(sep, lo, hi)] if p > 0), mid)
        return self.pieces(text[:cut]) + self.pieces(text[cut:])

    def embed(self, text: str) -> tuple[np.ndarray | None, int]:
        """(unit vector or None, tokens embedded)."""
        pieces = self.pieces(text)
        vecs, weights = [], []
        for piece, n in pieces:
            v = check_vector(self.llm.embed(piece, normalize=True), self.dims)
            if v is not None:
                vecs.append(v)
                weights.append(max(n, 1))
        tokens = sum(n for _, n in pieces)
        if not vecs:
            return None, tokens
        if len(vecs) == 1:
            return vecs[0], tokens
        return check_vector(np.average(np.stack(vecs), axis=0, weights=weights), self.dims), tokens

    def close(self) -> None:
        try:
            self.llm.close()
        except Exception:
            pass
