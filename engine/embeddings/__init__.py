"""Embedding providers behind one small interface, and the ordered choice between them (SPEC §4).

A provider embeds passages and queries and names itself (id, model, endpoint). Which
provider serves is decided by `plan()`: `provider = "auto"` tries a configured local
model, then OpenAI, Gemini, Voyage and Mistral by available keys (Ollama only when named);
an explicit provider is followed by the `fallback` list. Keys are found where OpenClaw keeps
them (see find_key), and each candidate says where its key came from. Candidates are built
lazily (loading a model takes time) and every one that cannot be used carries the reason, so
status and search results can say why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple

if TYPE_CHECKING:  # numpy loads lazily: a keyword-only `clawmem search` starts faster without it
    import numpy as np

from .. import paths
from ..config import BATCH_PROVIDERS, DEFAULT_LOCAL_MODEL, Config


class ProviderError(Exception):
    """A provider failed; the message is one line naming the provider ("openai: 401 invalid api key")."""


class Provider:
    """Base class. Subclasses set id, model, endpoint, max_input_bytes and implement the two embeds."""

    id: str = "?"
    model: str = "?"
    endpoint: str = ""  # what else identifies the vectors: base URL, or the model file's identity
    max_input_bytes: int = 8000
    dims: int | None = None
    batch = None  # a batch-API client (embeddings/batch.py) when remote.batch.enabled applies

    def embed_passages(self, texts: list[str]) -> list[np.ndarray | None]:
        """One L2-normalised float32 vector per text, or None for an input whose vector was
        invalid (wrong size, NaN, all zeros). Over-long inputs are split, never truncated.
        Raises ProviderError when the provider cannot serve at all."""
        raise NotImplementedError

    def embed_query(self, text: str) -> np.ndarray:
        raise NotImplementedError

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
    import hashlib  # here: a keyword-only search never needs it (3 ms of imports)

    raw = json.dumps([provider, model, endpoint], separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


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


class Candidate:
    def __init__(self, name: str, factory: Callable[[], Provider] | None, reason: str | None = None,
                 model: str = "", key_source: str | None = None):
        self.name = name
        self.factory = factory  # None: not usable, see reason
        self.reason = reason  # why it is not usable (or was skipped)
        self.model = model
        self.key_source = key_source  # where a remote provider's API key came from (never the key)


class Plan:
    def __init__(self, configured: str):
        self.configured = configured  # "auto", "none", or a provider id
        self.candidates: list[Candidate] = []
        self.reasons: list[str] = []  # why earlier candidates were skipped

    def usable(self) -> list[Candidate]:
        return [c for c in self.candidates if c.factory is not None]

    def keyword_reason(self) -> str:
        if self.configured == "none":
            return "provider = none (keyword-only by choice)"
        unconfigured = all(c.factory is None and ("no API key" in (c.reason or "") or "no model configured" in (c.reason or "")) for c in self.candidates)
        if self.configured == "auto" and unconfigured:
            return "no embedding provider configured (set local.modelPath, or an API key such as OPENAI_API_KEY)"
        if self.reasons:
            return "; ".join(self.reasons)
        return "no embedding provider configured (set local.modelPath or an API key such as OPENAI_API_KEY)"


# The environment variables OpenClaw reads each provider's key from, in its order.
ENV_VARS = {
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "voyage": ("VOYAGE_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "ollama": ("OLLAMA_API_KEY",),
}
# OpenClaw's `models.providers` id for each provider (Gemini's models live under "google").
OPENCLAW_PROVIDER_ID = {"openai": "openai", "gemini": "google", "voyage": "voyage", "mistral": "mistral", "ollama": "ollama"}
DEFAULT_MODELS = {
    "openai": "text-embedding-3-small",
    "gemini": "gemini-embedding-001",
    "voyage": "voyage-3-lite",
    "mistral": "mistral-embed",
    "ollama": "nomic-embed-text",
}
AUTO_ORDER = ("local", "openai", "gemini", "voyage", "mistral")  # OpenClaw's auto priorities; ollama only when named


class Key(NamedTuple):
    value: str
    source: str  # where it came from; never the value


def find_key(cfg: Config, name: str, owns_remote: bool) -> tuple[Key | None, list[str]]:
    """The provider's API key in OpenClaw's order: remote.apiKey, the provider's environment
    variables, then openclaw.json models.providers.<id>.apiKey (ollama: that before the
    environment). Also the problems met on the way (an unresolvable reference)."""
    from ..secrets import SecretError

    secrets = cfg.secrets()
    problems: list[str] = []

    def remote() -> Key | None:
        if not owns_remote or not cfg["remote.apiKey"]:
            return None
        value, where = cfg["remote.apiKey"], cfg.sources.get("remote.apiKey", "")
        if name == "gemini" and value in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
            got = secrets.env(value)  # OpenClaw reads a key named like its variable as that variable
            return Key(got.value, f"remote.apiKey -> {got.source}") if got else None
        if where.startswith("openclaw") and cfg.key_sources.get("remote.apiKey"):
            return Key(value, cfg.key_sources["remote.apiKey"])
        return Key(value, f"remote.apiKey ({where.split(' (')[0]})")

    def env() -> Key | None:
        for var in ENV_VARS[name]:
            got = secrets.env(var)
            if got:
                return Key(got.value, got.source)
        return None

    def models_providers() -> Key | None:
        pid = OPENCLAW_PROVIDER_ID[name]
        raw = cfg.openclaw_provider(pid).get("apiKey")
        if raw is None:
            return None
        try:
            got = secrets.resolve(raw, f"openclaw.json models.providers.{pid}.apiKey")
        except SecretError as exc:
            problems.append(str(exc))
            return None
        return Key(got.value, got.source) if got else None

    order = (remote, models_providers, env) if name == "ollama" else (remote, env, models_providers)
    for step in order:
        key = step()
        if key:
            return key, problems
    return None, problems


def _remote_candidate(cfg: Config, name: str, primary: bool) -> Candidate:
    """remote.* settings belong to the configured primary remote provider (or openai under auto);
    models.providers.<id> in openclaw.json fills in the key, base URL and headers."""
    owns_remote = primary or (cfg["provider"] == "auto" and name == "openai")
    key, problems = find_key(cfg, name, owns_remote)
    model = cfg["model"] if (primary or cfg["provider"] == "auto") and cfg["model"] else DEFAULT_MODELS[name]
    if key is None and name != "ollama":  # ollama runs without a key
        where = "set " + " or ".join((["remote.apiKey"] if owns_remote else []) + list(ENV_VARS[name]))
        why = f"{name}: no API key ({'; '.join(problems) + '; ' if problems else ''}{where})"
        return Candidate(name, None, why, model)
    entry = cfg.openclaw_provider(OPENCLAW_PROVIDER_ID[name])
    base_url = (cfg["remote.baseUrl"] if owns_remote else "") or (entry.get("baseUrl") if isinstance(entry.get("baseUrl"), str) else "")
    headers: dict[str, str] = {}
    from ..secrets import SecretError

    for h, v in (entry.get("headers") or {}).items() if isinstance(entry.get("headers"), dict) else ():
        try:  # header values are SecretInputs too
            got = cfg.secrets().resolve(v, f"openclaw.json models.providers.{OPENCLAW_PROVIDER_ID[name]}.headers.{h}")
        except SecretError as exc:
            return Candidate(name, None, f"{name}: {exc}", model)
        if got:
            headers[h] = got.value
    if owns_remote:
        headers.update(cfg["remote.headers"])
    dims = cfg["outputDimensionality"] if name == "gemini" and (primary or cfg["provider"] == "auto") else 0
    api_key = key.value if key else ""
    from ..redaction import CREDENTIAL_HEADER, remember

    remember(api_key, f"{name} API key")  # masked wherever it shows up: logs, indexed transcripts
    for h, v in headers.items():
        if CREDENTIAL_HEADER.search(h):
            remember(v, f"{h} header")

    use_batch = name in BATCH_PROVIDERS and owns_remote and cfg["remote.batch.enabled"]

    def make() -> Provider:
        from .remote import make_remote

        prov = make_remote(name, model=model, api_key=api_key, base_url=base_url, headers=headers, output_dimensionality=dims,
                           timeout=cfg["remote.timeoutSeconds"])
        if use_batch:
            from .batch import CLIENTS, BatchSettings

            prov.batch = CLIENTS[name](prov, BatchSettings.from_config(cfg), cfg.agent_id)
        return prov

    return Candidate(name, make, None, model, key_source=key.source if key else "none (ollama needs no key)")


def resolve_model_path(model_path: str, cache_dir: str = "") -> tuple[Path | None, str | None]:
    """(local file, hf URI or None). For hf: URIs the file is where the download puts it."""
    if model_path.lower().startswith("hf:"):
        from .download import cached_path

        return cached_path(model_path, Path(cache_dir).expanduser() if cache_dir else None), model_path
    return Path(os.path.expanduser(model_path)), None


def _local_candidate(cfg: Config, explicit: bool) -> Candidate:
    raw = cfg["local.modelPath"] or (DEFAULT_LOCAL_MODEL if explicit else "")
    if not raw:
        return Candidate("local", None, "local: no model configured (set local.modelPath)")
    from .download import DownloadError

    try:
        path, uri = resolve_model_path(raw, cfg["local.modelCacheDir"])
    except DownloadError as exc:  # a malformed hf: URI
        return Candidate("local", None, f"local: {exc}", raw)
    if uri is None and (path is None or not path.is_file()):
        return Candidate("local", None, f"local: model file not found: {raw} (fix local.modelPath)", raw)
    if uri is not None and (path is None or not path.is_file()) and not explicit:
        # auto never triggers a download; an explicit provider = "local" does
        return Candidate("local", None, f"local: {uri} is not downloaded yet (set provider = \"local\" to fetch it)", raw)

    def make() -> Provider:
        from .local import LocalProvider

        return LocalProvider.from_config(cfg, raw)

    return Candidate("local", make, None, raw)


def plan(cfg: Config) -> Plan:
    configured = cfg["provider"]
    p = Plan(configured)
    if configured == "none":
        return p
    if configured == "auto":
        for name in AUTO_ORDER:
            if name == "local":
                c = _local_candidate(cfg, explicit=False)
            else:
                c = _remote_candidate(cfg, name, primary=False)
            if c.factory is None:
                p.reasons.append(c.reason or name)
            p.candidates.append(c)
        # auto reports only the first usable provider as the plan; later usable ones act as fallbacks
    else:
        names = [configured] + [f for f in cfg["fallback"] if f != configured]
        for i, name in enumerate(names):
            c = _local_candidate(cfg, explicit=True) if name == "local" else _remote_candidate(cfg, name, primary=(i == 0))
            if c.factory is None:
                p.reasons.append(c.reason or name)
            p.candidates.append(c)
    return p


def model_cache_dir(cfg: Config) -> Path:
    return Path(os.path.expanduser(cfg["local.modelCacheDir"])) if cfg["local.modelCacheDir"] else paths.cache_dir() / "models"
