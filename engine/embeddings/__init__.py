"""Embedding providers behind one small interface, and the ordered choice between them.

A provider embeds passages and queries and names itself (id, model, endpoint). Which
provider serves is decided by `plan()`: `provider = "auto"` tries a configured local
model, then OpenAI, Gemini, Voyage and Mistral by available keys (Ollama only when named);
an explicit provider is followed by the `fallback` list. Keys are found where OpenClaw keeps
them (see find_key), and each candidate says where its key came from. Candidates are built
lazily (loading a model takes time) and every one that cannot be used carries the reason, so
status and search results can say why.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, NamedTuple

from .. import paths
from ..config import DEFAULT_LOCAL_MODEL, Config
from ..provider_registry import AUTO_ORDER, BATCH, SPECS
from .base import Provider, ProviderError, check_vector, fingerprint, one_line, resolve_model_path

__all__ = ["Provider", "ProviderError", "check_vector", "fingerprint", "one_line", "Candidate", "Plan", "plan",
           "find_key", "resolve_model_path", "model_cache_dir"]


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
        for var in SPECS[name].env_vars:
            got = secrets.env(var)
            if got:
                return Key(got.value, got.source)
        return None

    def models_providers() -> Key | None:
        pid = SPECS[name].openclaw_id
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
    model = cfg["model"] if (primary or cfg["provider"] == "auto") and cfg["model"] else SPECS[name].default_model
    if key is None and SPECS[name].needs_key:
        where = "set " + " or ".join((["remote.apiKey"] if owns_remote else []) + list(SPECS[name].env_vars))
        why = f"{name}: no API key ({'; '.join(problems) + '; ' if problems else ''}{where})"
        return Candidate(name, None, why, model)
    entry = cfg.openclaw_provider(SPECS[name].openclaw_id)
    base_url = (cfg["remote.baseUrl"] if owns_remote else "") or (entry.get("baseUrl") if isinstance(entry.get("baseUrl"), str) else "")
    headers: dict[str, str] = {}
    from ..secrets import SecretError

    for h, v in (entry.get("headers") or {}).items() if isinstance(entry.get("headers"), dict) else ():
        try:  # header values are SecretInputs too
            got = cfg.secrets().resolve(v, f"openclaw.json models.providers.{SPECS[name].openclaw_id}.headers.{h}")
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

    use_batch = name in BATCH and owns_remote and cfg["remote.batch.enabled"]

    def make() -> Provider:
        from .remote import make_remote

        prov = make_remote(name, model=model, api_key=api_key, base_url=base_url, headers=headers, output_dimensionality=dims,
                           timeout=cfg["remote.timeoutSeconds"])
        if use_batch:
            from ..provider_registry import load
            from .batch import BatchSettings

            prov.batch = load(SPECS[name].batch)(prov, BatchSettings.from_config(cfg), cfg.agent_id)
        return prov

    return Candidate(name, make, None, model, key_source=key.source if key else f"none ({name} needs no key)")


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
