"""The local provider: a GGUF embedding model run in-process by llama-cpp-python.

What keeps llama.cpp from aborting the process (local-embeddings.md, pitfalls 4, 5, 14):
`n_ctx = n_batch = n_ubatch = 512`, one text per `embed()` call, every text counted with
the model's own tokenizer first, and a lock around the `Llama` object (not thread-safe).
A text over the model's window is split by tokens into pieces that fit, and the pieces'
vectors are averaged (weighted by length): nothing is ever truncated.

The model is loaded on first use, not when the provider is built: the engine builds
providers just to compute their fingerprints. A missing `hf:` model is downloaded only by
`prepare()`, which the indexer calls; a search that finds no model fails over to keywords.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import threading
import time
from pathlib import Path
from typing import Iterator

import numpy as np

from . import Provider, ProviderError, check_vector, resolve_model_path
from .. import events as ev

N_CTX = 512
LOCK_TIMEOUT = 300.0  # "5 min for local work": a wait longer than that is reported, not endured
E5_PREFIXES = ("query: ", "passage: ")


def file_identity(path: Path) -> str:
    """Size and the hash of the first MB: moving the file keeps its vectors, replacing it does not."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
    except OSError:
        return ""
    return f"{size}:{hashlib.sha256(head).hexdigest()[:16]}"


def default_prefixes(model_name: str) -> tuple[str, str]:
    """Known prefixes by model family: (query, passage)."""
    if re.search(r"(^|[^a-z0-9])e5([^0-9a-z]|$)", model_name.lower()):
        return E5_PREFIXES
    return "", ""


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class ThreadChooser:
    """Picks the thread count for bulk embedding by measured throughput (`local.threads = 0`).

    ggml's worker threads spin-wait at barriers. On an idle 2-core box 2 threads embed ~1.7x
    faster than 1, but while other work keeps the cores busy 2 threads were 7x slower than 1
    (bench/bench_embed.py --threads-study). The box changes under us, so the chooser keeps
    measuring: each count is measured over at least MIN_TOKENS tokens (one small text says
    nothing), the faster is used, and every PROBE_EVERY measurements the other is measured again.
    """

    MIN_TOKENS = 2000  # about five chunks
    PROBE_EVERY = 12

    def __init__(self, choices: tuple[int, ...]):
        self.choices = choices
        self.rate: dict[int, float] = {}  # tokens per second, latest measurement
        self._pending = {c: [0, 0.0] for c in choices}
        self._measured = 0
        self._probe: int | None = None

    def pick(self) -> int:
        untried = [c for c in self.choices if c not in self.rate]
        if untried:
            return untried[0]
        if self._probe is not None:
            return self._probe
        return max(self.rate, key=lambda c: self.rate[c])

    def record(self, threads: int, tokens: int, seconds: float) -> None:
        p = self._pending[threads]
        p[0] += tokens
        p[1] += seconds
        if p[0] < self.MIN_TOKENS or p[1] <= 0:
            return
        self.rate[threads] = p[0] / p[1]
        self._pending[threads] = [0, 0.0]
        self._measured += 1
        if self._probe == threads:
            self._probe = None
        elif len(self.choices) > 1 and len(self.rate) == len(self.choices) and self._measured % self.PROBE_EVERY == 0:
            best = max(self.rate, key=lambda c: self.rate[c])
            self._probe = next(c for c in self.choices if c != best)


QUERY_THREADS = 1  # a short query: 1 thread is as fast idle and never stalls under load (README)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] or type(exc).__name__


class LocalProvider(Provider):
    id = "local"

    def __init__(
        self,
        path: Path,
        *,
        uri: str | None = None,
        cache_dir: Path | None = None,
        threads: int = 0,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
    ):
        self.path = Path(path)
        self.uri = uri
        self.cache_dir = cache_dir
        name = self.path.name
        self.model = name[:-5] if name.lower().endswith(".gguf") else name
        self.endpoint = file_identity(self.path) if self.path.is_file() else ""
        dq, dp = default_prefixes(self.model)
        self.query_prefix = dq if query_prefix is None else query_prefix
        self.passage_prefix = dp if passage_prefix is None else passage_prefix
        self.threads = threads
        self.max_input_bytes = 1 << 30  # the limit is in tokens: see _pieces
        self._llm = None
        self._limit = N_CTX
        self._lock = threading.Lock()
        self._threads_now: tuple[int, int] | None = None
        self.chooser = ThreadChooser((2, 1) if cores() >= 2 else (1,))
        self._failed: tuple[str, str] | None = None  # (file identity when it failed, message)

    @classmethod
    def from_config(cls, cfg, raw_model_path: str) -> "LocalProvider":
        path, uri = resolve_model_path(raw_model_path, cfg["local.modelCacheDir"])
        if path is None:
            raise ProviderError(f"local: cannot resolve local.modelPath {raw_model_path!r}")
        from .download import default_cache_dir

        cache = Path(os.path.expanduser(cfg["local.modelCacheDir"])) if cfg["local.modelCacheDir"] else default_cache_dir()
        return cls(
            path,
            uri=uri,
            cache_dir=cache,
            threads=cfg["local.threads"],
            query_prefix=cfg["local.queryPrefix"],
            passage_prefix=cfg["local.passagePrefix"],
        )

    # ------------------------------------------------------------------ download

    def prepare(self) -> Iterator[ev.Event]:
        """Download a missing hf: model, yielding progress (the indexer calls this; search never)."""
        if self.path.is_file() or not self.uri:
            return
        from .download import DownloadError, download

        events: queue.Queue = queue.Queue()
        outcome: dict = {}
        last = [0.0]

        def progress(done: int, total: int | None) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.1 or (total is not None and done >= total):
                last[0] = now
                events.put(ev.Download(self.uri or "", done, total))

        def work() -> None:
            try:
                outcome["path"] = download(self.uri or "", self.cache_dir, progress)
            except DownloadError as exc:
                outcome["error"] = str(exc)
            except Exception as exc:  # disk full, permissions: still one line
                outcome["error"] = f"cannot download {self.uri}: {_one_line(exc)}"
            events.put(None)

        t = threading.Thread(target=work, name="clawmem-download", daemon=True)
        t.start()
        while True:
            item = events.get()
            if item is None:
                break
            yield item
        t.join()
        if "error" in outcome:
            raise ProviderError(f"local: {outcome['error']}")
        self.endpoint = file_identity(self.path)

    def not_ready(self) -> str | None:
        if self.uri and not self.path.is_file():
            return f"local: {self.uri} is not downloaded yet; run `clawmem index` to download it"
        return None

    # ------------------------------------------------------------------ the model

    def _load(self):
        if self._llm is not None:
            return self._llm
        if not self.path.is_file():
            if self.uri:
                raise ProviderError(
                    f"local: {self.uri} is not downloaded yet; run `clawmem index` (provider = \"local\") to fetch it, "
                    "or set local.modelPath to a local file"
                )
            raise ProviderError(f"local: model file not found: {self.path} (fix local.modelPath)")
        ident = file_identity(self.path)
        if self._failed and self._failed[0] == ident:
            raise ProviderError(self._failed[1])
        try:
            import llama_cpp
        except ImportError as exc:
            raise ProviderError(f"local: llama-cpp-python is not installed ({exc}); install it or use a remote provider") from None
        n = self.threads or 1
        try:
            llm = llama_cpp.Llama(
                model_path=str(self.path),
                embedding=True,
                n_ctx=N_CTX,
                n_batch=N_CTX,
                n_ubatch=N_CTX,
                flash_attn=True,
                n_threads=n,
                n_threads_batch=n,
                verbose=False,
            )
        except Exception as exc:
            msg = f"local: cannot load {self.path.name}: {_one_line(exc)}; check that local.modelPath is a GGUF embedding model"
            self._failed = (ident, msg)
            raise ProviderError(msg) from None
        if llm.pooling_type() == llama_cpp.LLAMA_POOLING_TYPE_NONE:
            llm.close()
            msg = f"local: {self.path.name} has no pooling layer, so it is not an embedding model; pick a GGUF embedding model"
            self._failed = (ident, msg)
            raise ProviderError(msg)
        self._limit = min(N_CTX, llm._model.n_ctx_train() or N_CTX)
        self.dims = llm.n_embd()
        self.endpoint = ident
        self._threads_now = (n, n)
        self._llm = llm
        return llm

    def _use_threads(self, llm, n: int) -> None:
        if self._threads_now != (n, n):
            llm._ctx.set_n_threads(n, n)
            self._threads_now = (n, n)

    def _pieces(self, llm, text: str) -> list[tuple[str, int]]:
        """(piece, token count) pieces of `text` that each fit the model's window."""
        n = len(llm.tokenize(text.encode("utf-8"), add_bos=True, special=False))
        if n <= self._limit or len(text) < 2:
            return [(text, n)]
        # cut near the middle, at a line break or a space when there is one
        mid = len(text) // 2
        lo, hi = len(text) // 4, (3 * len(text)) // 4
        cut = next((p + 1 for sep in ("\n", " ") for p in [text.rfind(sep, lo, hi)] if p > 0), mid)
        return self._pieces(llm, text[:cut]) + self._pieces(llm, text[cut:])

    def _embed_one(self, llm, text: str) -> tuple[np.ndarray | None, int]:
        """(vector, tokens embedded)."""
        pieces = self._pieces(llm, text)
        vecs, weights = [], []
        for piece, n in pieces:
            v = check_vector(llm.embed(piece, normalize=True), self.dims)
            if v is not None:
                vecs.append(v)
                weights.append(max(n, 1))
        tokens = sum(n for _, n in pieces)
        if not vecs:
            return None, tokens
        if len(vecs) == 1:
            return vecs[0], tokens
        return check_vector(np.average(np.stack(vecs), axis=0, weights=weights), self.dims), tokens

    def _run(self, texts: list[str], prefix: str, for_queries: bool) -> list[np.ndarray | None]:
        if not self._lock.acquire(timeout=LOCK_TIMEOUT):
            raise ProviderError(f"local: the model was busy for {LOCK_TIMEOUT:.0f} s; try again when indexing has finished")
        try:
            llm = self._load()
            auto = self.threads <= 0 and not for_queries
            n = self.threads if self.threads > 0 else QUERY_THREADS if for_queries else self.chooser.pick()
            self._use_threads(llm, n)
            out = []
            tokens = 0
            t0 = time.perf_counter()
            for t in texts:
                try:
                    vec, n_tokens = self._embed_one(llm, prefix + t.strip())
                except (ValueError, RuntimeError) as exc:
                    raise ProviderError(f"local: {self.model} failed to embed: {_one_line(exc)}") from None
                out.append(vec)
                tokens += n_tokens
            if auto:
                self.chooser.record(n, tokens, time.perf_counter() - t0)
            return out
        finally:
            self._lock.release()

    def embed_passages(self, texts: list[str]) -> list[np.ndarray | None]:
        return self._run(texts, self.passage_prefix, for_queries=False)

    def embed_query(self, text: str) -> np.ndarray:
        v = self._run([text], self.query_prefix, for_queries=True)[0]
        if v is None:
            raise ProviderError(f"local: {self.model} returned no usable vector for the query")
        return v

    def close(self) -> None:
        with self._lock:
            if self._llm is not None:
                try:
                    self._llm.close()
                except Exception:
                    pass
                self._llm = None
