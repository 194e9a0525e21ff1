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
from collections import namedtuple
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Callable

from .. import paths
from ..config import Config
from ..provider_registry import KEYWORD_BY_CHOICE, provider_class, provider_classes
from .base import Provider, ProviderError, check_vector, fingerprint, one_line, resolve_model_path

__all__ = ["Provider", "ProviderError", "check_vector", "fingerprint", "one_line", "Candidate", "Plan", "plan",
           "find_key", "resolve_model_path", "model_cache_dir", "provider_table"]


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
            return KEYWORD_BY_CHOICE
        unconfigured = all(c.factory is None and ("no API key" in (c.reason or "") or "no model configured" in (c.reason or "")) for c in self.candidates)
        if self.configured == "auto" and unconfigured:
            return "no embedding provider configured (set local.modelPath, or an API key such as OPENAI_API_KEY)"
        if self.reasons:
            return "; ".join(self.reasons)
        return "no embedding provider configured (set local.modelPath or an API key such as OPENAI_API_KEY)"


# collections.namedtuple, not typing.NamedTuple: the latter compiles each field's (string) annotation,
# ~0.3 ms a class on every search's start
Key = namedtuple("Key", "value source")  # source: where the key came from; never the value


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
        for var in provider_class(name).env_vars:
            got = secrets.env(var)
            if got:
                return Key(got.value, got.source)
        return None

    def models_providers() -> Key | None:
        pid = provider_class(name).openclaw_id
        raw = cfg.openclaw_provider(pid).get("apiKey")
        if raw is None:
            return None
        try:
            got = secrets.resolve(raw, f"openclaw.json models.providers.{pid}.apiKey")
        except SecretError as exc:
            problems.append(str(exc))
            return None
        return Key(got.value, got.source) if got else None

    order = (remote, models_providers, env) if provider_class(name).openclaw_key_first else (remote, env, models_providers)
    for step in order:
        key = step()
        if key:
            return key, problems
    return None, problems


def plan(cfg: Config) -> Plan:
    """The providers to try, in order, each through its class's one door (`Provider.candidate`):
    under auto every registered class that auto tries, in the registry's order; else the
    configured provider, then its fallbacks."""
    configured = cfg["provider"]
    p = Plan(configured)
    if configured == "none":
        return p
    if configured == "auto":
        # auto reports only the first usable provider as the plan; later usable ones act as fallbacks
        entries = [(cls, False, False) for cls in provider_classes() if cls.auto]
    else:
        names = [configured] + [f for f in cfg["fallback"] if f != configured]
        entries = [(provider_class(name), i == 0, True) for i, name in enumerate(names)]
    for cls, primary, explicit in entries:
        c = cls.candidate(cfg, primary=primary, explicit=explicit)
        if c.factory is None:
            p.reasons.append(c.reason or cls.name)
        p.candidates.append(c)
    return p


def provider_table() -> str:
    """docs/embeddings.md's provider table, made from the registry's classes (tests compare the two)."""
    rows = ["| provider | default model | config keys | key sources, first found wins | request |", "|---|---|---|---|---|"]
    for cls in provider_classes():
        if cls.name == "local":
            continue
        sources = ["`remote.apiKey`", *(f"`{v}`" for v in cls.env_vars), f"`models.providers.{cls.openclaw_id}.apiKey`"]
        if cls.openclaw_key_first:
            sources = [sources[0], sources[-1], *sources[1:-1]]
        keys = ", ".join(sources) if cls.needs_key else "none needed; else " + ", ".join(sources)
        rows.append(f"| {cls.name} | `{cls.default_model}` | {cls.config_keys} | {keys} | {cls.request} |")
    local = provider_class("local")
    rows.append(f"| local | see above | {local.config_keys} | — | {local.request} |")
    return "\n".join(rows) + "\n"


def model_cache_dir(cfg: Config) -> Path:
    return Path(os.path.expanduser(cfg["local.modelCacheDir"])) if cfg["local.modelCacheDir"] else paths.cache_dir() / "models"
