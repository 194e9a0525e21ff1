"""The local provider: a GGUF embedding model run by llama-cpp-python in a worker process.

The model itself lives in worker.py's process (a crash there cannot end clawmem) and is shared
by every provider of this process that names the same file. This side keeps what belongs to
the caller: the prefixes e5-style models expect, the thread count (measured, see
ThreadChooser), downloading a missing `hf:` model, and the provider's identity.

The model is loaded on first use, not when the provider is built: the engine builds
providers just to compute their fingerprints. A missing `hf:` model is downloaded only by
`prepare()`, which the indexer calls; a search that finds no model fails over to keywords.
"""

from __future__ import annotations

# _thread, not threading: the same lock without threading's import; only a download needs a thread
import _thread
import atexit
import os
import re
from array import array
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .base import Provider, ProviderError, one_line, resolve_model_path

if TYPE_CHECKING:  # events (dataclasses) and numpy: a search with the model warm needs neither
    import numpy as np

    from .. import events as ev

    from . import Candidate
    from .worker import ModelHost

E5_PREFIXES = ("query: ", "passage: ")


_IDENTITIES: dict[tuple, str] = {}  # (device, inode, size, mtime, ctime) -> identity, this process


def file_identity(path: Path, resident: bool = False) -> str:
    """The model file's identity, which names its vectors in the index (see _identity)."""
    return _identity(path, resident)[0]


def _identity(path: Path, resident: bool) -> tuple[str, tuple | None]:
    """Size and the hash of the first MB: moving the file keeps its vectors, replacing it does not.

    Hashed once per process and file: a search asks twice (building the provider, reaching the
    model), and the builtin sha256 takes ~5 ms a MB. The key is the open file's own stat, with
    ctime, which no write or replacement leaves as it was. With a resident model (`resident`),
    the process that started it recorded the key and the identity beside its socket
    (resident.recorded_identity): a search of the same unchanged file hashes nothing.
    (identity, the file's state it belongs to); ("", None) when the file cannot be read."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            known = _IDENTITIES.get(key)
            if known is None and resident:
                from .resident import recorded_identity

                known = recorded_identity(path, key)
                if known is not None:
                    _IDENTITIES[key] = known
            if known is not None:
                return known, key
            head = fh.read(1 << 20)
    except OSError:
        return "", None
    from ..files.fsutil import builtin_sha256  # not hashlib: its OpenSSL binding costs every hybrid search ms

    _IDENTITIES[key] = ident = f"{st.st_size}:{builtin_sha256(head).hexdigest()[:16]}"
    return ident, key


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


QUERY_THREADS = 1  # a short query: 1 thread is as fast idle and never stalls under load (docs/embeddings.md)


class LocalProvider(Provider):
    id = "local"
    progress_step = 4  # the indexer reports every 4 passages (~0.3 s with e5-small), not every batch of 32
    name = "local"
    needs_key = False
    config_keys = "`local.modelPath`, `local.modelCacheDir`, `local.threads`"
    request = "llama-cpp-python in a worker process"

    @classmethod
    def candidate(cls, cfg, *, primary: bool = True, explicit: bool) -> "Candidate":
        """A configured GGUF file, or an hf: URI already downloaded (an explicit provider = "local"
        downloads it, auto never does), or the reason it cannot be used."""
        from ..config import DEFAULT_LOCAL_MODEL
        from . import Candidate

        raw = cfg["local.modelPath"] or (DEFAULT_LOCAL_MODEL if explicit else "")
        if not raw:
            return Candidate("local", None, "local: no model configured (set local.modelPath)")
        from ..errors import DownloadError

        try:
            path, uri = resolve_model_path(raw, cfg["local.modelCacheDir"])
        except DownloadError as exc:  # a malformed hf: URI
            return Candidate("local", None, f"local: {exc}", raw)
        if uri is None and (path is None or not path.is_file()):
            return Candidate("local", None, f"local: model file not found: {raw} (fix local.modelPath)", raw)
        if uri is not None and (path is None or not path.is_file()) and not explicit:
            # auto never triggers a download; an explicit provider = "local" does
            return Candidate("local", None, f"local: {uri} is not downloaded yet (set provider = \"local\" to fetch it)", raw)
        return Candidate("local", lambda: cls.from_config(cfg, raw), None, raw)

    def __init__(
        self,
        path: Path,
        *,
        uri: str | None = None,
        cache_dir: Path | None = None,
        threads: int = 0,
        resident_minutes: float = 0,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
    ):
        self.path = Path(path)
        self.uri = uri
        self.cache_dir = cache_dir
        name = self.path.name
        self.model = name[:-5] if name.lower().endswith(".gguf") else name
        self.resident_minutes = resident_minutes  # 0: a worker of this process (see resident.py)
        self.endpoint = file_identity(self.path, resident_minutes > 0) if self.path.is_file() else ""
        dq, dp = default_prefixes(self.model)
        self.query_prefix = dq if query_prefix is None else query_prefix
        self.passage_prefix = dp if passage_prefix is None else passage_prefix
        self.threads = threads
        self.max_input_bytes = 1 << 30  # the limit is in tokens: the worker splits by tokens (llama_model.Embedder.pieces)
        self._model_host: ModelHost | None = None
        self._threads_now: tuple[int, int] | None = None
        self.chooser = ThreadChooser((2, 1) if cores() >= 2 else (1,))

    @classmethod
    def from_config(cls, cfg, raw_model_path: str) -> "LocalProvider":
        path, uri = resolve_model_path(raw_model_path, cfg["local.modelCacheDir"])
        if path is None:
            raise ProviderError(f"local: cannot resolve local.modelPath {raw_model_path!r}")
        cache = None
        if uri is not None:  # only a download needs the cache folder
            from .download import default_cache_dir

            cache = Path(os.path.expanduser(cfg["local.modelCacheDir"])) if cfg["local.modelCacheDir"] else default_cache_dir()
        return cls(
            path,
            uri=uri,
            cache_dir=cache,
            threads=cfg["local.threads"],
            resident_minutes=cfg["local.residentMinutes"],
            query_prefix=cfg["local.queryPrefix"],
            passage_prefix=cfg["local.passagePrefix"],
        )

    # ------------------------------------------------------------------ download

    def prepare(self) -> Iterator[ev.Event]:
        """Download a missing hf: model, yielding progress (the indexer calls this; search never)."""
        if self.path.is_file() or not self.uri:
            return
        import queue
        import threading

        from .. import events as ev
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
                outcome["error"] = f"cannot download {self.uri}: {one_line(exc)}"
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

    def _host(self) -> "ModelHost":
        if self._model_host is None:
            if not self.path.is_file():
                if self.uri:
                    raise ProviderError(
                        f"local: {self.uri} is not downloaded yet; run `clawmem index` (provider = \"local\") to fetch it, "
                        "or set local.modelPath to a local file"
                    )
                raise ProviderError(f"local: model file not found: {self.path} (fix local.modelPath)")
            self.endpoint, state = _identity(self.path, self.resident_minutes > 0)
            self._model_host = host_for(self.path, self.endpoint, self.resident_minutes, state)
        return self._model_host

    def _run(self, texts: list[str], prefix: str, for_queries: bool) -> list[array | None]:
        host = self._host()
        auto = self.threads <= 0 and not for_queries
        n = self.threads if self.threads > 0 else QUERY_THREADS if for_queries else self.chooser.pick()
        t0 = time.perf_counter()
        vectors, tokens = host.embed([prefix + t.strip() for t in texts], n, urgent=for_queries)
        self.dims = host.info.get("dims")
        self._threads_now = (n, n)
        if auto:
            self.chooser.record(n, sum(tokens), time.perf_counter() - t0)
        return vectors

    def embed_passages(self, texts: list[str]) -> list[np.ndarray | None]:
        import numpy as np  # the indexer works in numpy; a query vector stays an array('f')

        return [None if v is None else np.frombuffer(v, dtype=np.float32) for v in self._run(texts, self.passage_prefix, for_queries=False)]

    def embed_query(self, text: str) -> array:
        """An array('f'): sqlite-vec takes its bytes, so a one-shot search never loads numpy."""
        v = self._run([text], self.query_prefix, for_queries=True)[0]
        if v is None:
            raise ProviderError(f"local: {self.model} returned no usable vector for the query")
        return v

    def build_info(self) -> str | None:
        """llama.cpp's system info of the running worker (the CPU features its build uses)."""
        return self._model_host.info.get("system") if self._model_host else None

    def close(self) -> None:
        host, self._model_host = self._model_host, None
        if host is not None:

            release(host)


# ---------------------------------------------------------------------------- one host per model file


_HOSTS: dict[tuple[str, str], "ModelHost"] = {}
_HOSTS_LOCK = _thread.allocate_lock()


def host_for(path: Path, identity: str, resident_minutes: float = 0, state: tuple | None = None) -> "ModelHost":
    """The process's one host for this model file (same file, same identity), with one more user:
    a worker of its own, or with resident_minutes > 0 a connection to the user's resident worker
    (`state`: the file's state the identity was taken from, which a worker's starter records)."""
    resident = resident_minutes > 0
    if resident:
        from .resident import runtime_dir

    # a resident host belongs to one runtime folder (a test, a `sudo -u`, a changed XDG_RUNTIME_DIR)
    key = (str(path.resolve()), identity, str(runtime_dir()) if resident else "")
    with _HOSTS_LOCK:
        host = _HOSTS.get(key)
        if host is None:
            if resident:
                from .resident import ResidentHost

                host = ResidentHost(path, identity, resident_minutes, state=state)
            else:
                from .worker import ModelHost

                host = ModelHost(path, identity)
            _HOSTS[key] = host
        host.users += 1
        return host


def release(host: "ModelHost") -> None:
    """One user fewer; the worker stops with its last user."""
    with _HOSTS_LOCK:
        host.users -= 1
        if host.users > 0:
            return
        for k, v in list(_HOSTS.items()):
            if v is host:
                del _HOSTS[k]
    with host._turn(urgent=True):
        host.stop()


@atexit.register
def _stop_all() -> None:
    for host in list(_HOSTS.values()):
        host.stop(force=True)
