"""What every embedding provider is: the `Provider` interface, its error, and the vector checks
they share. Each provider's module builds on this; the plan (embeddings/__init__.py) chooses
between them."""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from pathlib import Path
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import ClassVar, Iterator

from ..errors import ClawmemError

if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    import numpy as np

    from . import Candidate


class ProviderError(ClawmemError):
    """A provider failed; the message is one line naming the provider ("openai: 401 invalid api key")."""


class Provider(ABC):
    """What an embedding provider is. The registry (engine/provider_registry.py) lists the
    classes; what the plan, the config and `status` need to know about one is declared here,
    on the class, and `candidate()` is the one door through which the config builds it (local
    and remote alike). An instance sets `model`, `endpoint` and `max_input_bytes`; its `id`
    (what the index, `status` and events call it) is its `name` unless the class says otherwise."""

    name: ClassVar[str] = ""  # the config's name for it: provider = "<name>"
    env_vars: ClassVar[tuple[str, ...]] = ()  # where OpenClaw reads its key from, in its order
    openclaw_id: ClassVar[str] = ""  # its id under openclaw.json models.providers
    default_model: ClassVar[str] = ""
    default_base: ClassVar[str] = ""  # the API's base URL
    model_prefixes: ClassVar[tuple[str, ...]] = ()  # "openai/text-embedding-3-small" means the bare model
    needs_key: ClassVar[bool] = True
    openclaw_key_first: ClassVar[bool] = False  # openclaw.json's key before the environment's (OpenClaw's order for it)
    auto: ClassVar[bool] = True  # tried by provider = "auto" (in the registry's order); else only when named
    batch_client: ClassVar[str] = ""  # "module:Class" (embeddings/) of its batch-API client, if it has one
    config_keys: ClassVar[str] = ""  # for docs/embeddings.md's provider table: the settings it reads
    request: ClassVar[str] = ""  # for docs/embeddings.md's provider table: what it sends

    id: str = ""  # derived from `name` for every subclass that declares one (__init_subclass__)
    model: str = "?"
    endpoint: str = ""  # what else identifies the vectors: base URL, or the model file's identity
    max_input_bytes: int = 8000
    dims: int | None = None
    batch = None  # a batch-API client (embeddings/batch.py) when remote.batch.enabled applies

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and "id" not in cls.__dict__:
            cls.id = cls.name  # a provider that forgets `id` is still named in the index and in status

    @classmethod
    @abstractmethod
    def candidate(cls, cfg, *, primary: bool, explicit: bool) -> "Candidate":
        """This provider as the config makes it: a Candidate whose factory builds it (called only
        when it is needed: loading a model takes time), or the one-line reason it cannot be used
        (no key, no model file). `primary`: the configured provider itself, not a fallback or
        auto's guess; `explicit`: named by `provider` or `fallback` (auto never downloads)."""

    @abstractmethod
    def embed_passages(self, texts: list[str]) -> list[np.ndarray | None]:
        """One L2-normalised float32 vector per text, or None for an input whose vector was
        invalid (wrong size, NaN, all zeros). Over-long inputs are split, never truncated.
        Raises ProviderError when the provider cannot serve at all."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector for a search query (a 1-D numpy array, or an
        array('f') where numpy is not needed otherwise: the local model's); ProviderError on
        any failure."""

    def prepare(self) -> Iterator:
        """Make the provider ready to embed (a local model may need downloading), yielding
        progress events. The indexer calls it; a search never does."""
        return iter(())

    def not_ready(self) -> str | None:
        """Why this provider cannot embed yet without `prepare()` (a model to download), if so."""
        return None

    def fingerprint(self) -> str:
        return fingerprint(self.id, self.model, self.endpoint)

    def label(self) -> str:
        return f"{self.id}/{self.model}"

    def build_info(self) -> str | None:
        """What the code running the model was built for (a local model's CPU features), if known."""
        return None

    def close(self) -> None:
        pass


def one_line(exc: BaseException) -> str:
    """An exception as one short line for a provider's error message."""
    text = " ".join(str(exc).split())
    return text[:200] or type(exc).__name__


def fingerprint(provider: str, model: str, endpoint: str) -> str:
    from ..files.fsutil import builtin_sha256  # not hashlib: its OpenSSL binding costs a search ~3 ms of imports

    raw = json.dumps([provider, model, endpoint], separators=(",", ":"))
    return builtin_sha256(raw.encode()).hexdigest()[:24]


def check_vector(vec, dims: int | None) -> np.ndarray | None:
    """A float32 unit vector, or None if the provider returned something unusable."""


    import numpy as np
    arr = np.asarray(vec, dtype=np.float32)
    if arr.ndim != 1 or arr.size == 0 or (dims is not None and arr.size != dims):
        return None
    if not np.all(np.isfinite(arr)):
        return None
    norm = float(np.linalg.norm(arr))
    if norm < 1e-12:
        return None
    return arr / norm


def resolve_model_path(model_path: str, cache_dir: str = "") -> tuple[Path | None, str | None]:
    """(local file, hf URI or None). For hf: URIs the file is where the download puts it."""
    if model_path.lower().startswith("hf:"):
        from .download import cached_path

        return cached_path(model_path, Path(cache_dir).expanduser() if cache_dir else None), model_path
    return Path(os.path.expanduser(model_path)), None
