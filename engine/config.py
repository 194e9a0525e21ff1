"""Configuration: defaults < OpenClaw's openclaw.json < our TOML file < env < flags.

Our file keeps OpenClaw's memory-search key names at its top level, plus our own keys and
a `[ui]` table that the engine passes through untouched. Unknown keys and wrong types in
our file are errors naming the key; OpenClaw's file is OpenClaw's, so keys we do not use
there are ignored and listed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections import namedtuple
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any, Callable

from . import paths, provider_registry
from .errors import BadValue, ClawmemError

DEFAULT_LOCAL_MODEL = "hf:cstr/multilingual-e5-small-GGUF/multilingual-e5-small-q8_0.gguf"


class ConfigError(ClawmemError):
    """A configuration problem, already phrased as one line for the user."""


# collections.namedtuple, not typing.NamedTuple: the latter compiles each field's (string) annotation,
# ~0.3 ms a class on every search's start
class Key(namedtuple("Key", "default kind check expect choices secret doc", defaults=(None, "", (), False, ""))):
    """A config key: its default; kind (str, int, float, bool, strlist, providers, headers, enum);
    check (the value -> whether it is valid) and expect (what a valid one is, for the error);
    choices; secret (masked in every message); doc."""

    __slots__ = ()


class _ProviderNames:
    """`provider`'s choices, read from the registry when asked: an entry added there is one."""

    def _names(self) -> tuple[str, ...]:
        return ("auto", "none", *provider_registry.NAMES)

    def __iter__(self):
        return iter(self._names())

    def __contains__(self, name) -> bool:
        return name in self._names()

    def __len__(self) -> int:
        return len(self._names())


def _between(lo: float, hi: float) -> Callable[[Any], bool]:
    return lambda v: lo <= v <= hi


def _at_least(lo: float) -> Callable[[Any], bool]:
    return lambda v: v >= lo


KEYS: dict[str, Key] = {
    "workspace": Key("~/.openclaw/workspace", "str", doc="the agent workspace holding MEMORY.md and memory/"),
    "agentId": Key("main", "str", lambda v: bool(re.fullmatch(r"[A-Za-z0-9._-]+", v)) and v.strip(".") != "",
                   "letters, digits, . _ - (not only dots: . and .. name folders)"),
    "enabled": Key(True, "bool", doc="memory search on; false makes search and the agent tools answer that it is disabled"),
    "provider": Key("auto", "enum", choices=_ProviderNames(), doc="embedding provider"),
    "model": Key("", "str", doc="embedding model (empty: the provider's default)"),
    "outputDimensionality": Key(0, "int", _at_least(0), "an integer > 0 (0 = the model's default)",
                                doc="gemini: vector size to ask for (gemini-embedding-2-preview: 768, 1536 or 3072)"),
    "fallback": Key([], "providers", doc="providers to try, in order, when the primary fails"),
    "remote.baseUrl": Key("", "str"),
    "remote.apiKey": Key("", "str", secret=True),
    "remote.headers": Key({}, "headers"),
    "remote.batch.enabled": Key(False, "bool", doc="openai, voyage, gemini: embed big backfills (100+ chunks) as batch-API jobs"),
    "remote.batch.wait": Key(True, "bool", doc="wait for batch jobs; false leaves them for the next index run"),
    "remote.batch.concurrency": Key(2, "int", _at_least(1), "an integer >= 1", doc="batch jobs polled at once"),
    "remote.batch.pollIntervalMs": Key(2000, "int", _at_least(0), "an integer >= 0"),
    "remote.batch.timeoutMinutes": Key(60, "int", _at_least(1), "an integer >= 1", doc="give up on batch jobs (then normal requests)"),
    "remote.timeoutSeconds": Key(60.0, "float", _between(0.1, 600), "a number of seconds from 0.1 to 600", doc="how long one request to a remote provider may take"),
    "local.modelPath": Key("", "str", doc=f"GGUF file or hf: URI (default model: {DEFAULT_LOCAL_MODEL})"),
    "local.modelCacheDir": Key("", "str"),
    "local.threads": Key(0, "int", _at_least(0), "an integer >= 0 (0 = automatic)"),
    "local.residentMinutes": Key(5.0, "float", _between(0, 1440), "a number of minutes from 0 to 1440",
                                 doc="keep one model loaded for all of this user's clawmem processes until idle this long; 0 = a model per process"),
    "local.queryPrefix": Key(None, "str"),
    "local.passagePrefix": Key(None, "str"),
    "extraPaths": Key([], "strlist"),
    "sources": Key(["memory"], "strlist", lambda v: bool(v) and set(v) <= {"memory", "sessions"}, 'a list of "memory" and "sessions"'),
    "sessions.includeArchives": Key(False, "bool", doc="also index .reset/.deleted transcript archives"),
    "chunking.tokens": Key(400, "int", _at_least(16), "an integer >= 16"),
    "chunking.overlap": Key(80, "int", _at_least(0), "an integer >= 0"),
    "query.maxResults": Key(6, "int", _between(1, 200), "an integer from 1 to 200"),
    "query.minScore": Key(0.35, "float", _between(0, 1), "a number from 0 to 1",
                          doc="set here or by a flag, hides every hit scoring below it; unset, search shows the whole list unless the evidence says this memory lacks the answer"),
    "query.hybrid.enabled": Key(True, "bool"),
    "query.hybrid.fusion": Key("relative", "enum", choices=("relative", "weighted", "rrf")),
    "query.hybrid.vectorWeight": Key(0.7, "float", _between(0, 1), "a number from 0 to 1"),
    "query.hybrid.textWeight": Key(0.3, "float", _between(0, 1), "a number from 0 to 1"),
    "query.hybrid.rrfK": Key(20, "int", _at_least(1), "an integer >= 1"),
    "query.hybrid.candidateMultiplier": Key(4, "int", _between(1, 20), "an integer from 1 to 20"),
    "query.hybrid.mmr.enabled": Key(False, "bool"),
    "query.hybrid.mmr.lambda": Key(0.7, "float", _between(0, 1), "a number from 0 to 1"),
    "query.hybrid.temporalDecay.enabled": Key(False, "bool"),
    "query.hybrid.temporalDecay.halfLifeDays": Key(30, "int", _at_least(1), "an integer >= 1"),
    "query.dateFilter": Key(True, "bool", doc="turn time phrases in short queries into a date filter"),
    "query.contextLines": Key(5, "int", _between(0, 50), "an integer from 0 to 50", doc="lines cited on each side of a result's matched lines"),
    "citations": Key("auto", "enum", choices=("auto", "on", "off")),
    "cache.enabled": Key(True, "bool"),
    "cache.maxEntries": Key(50000, "int", _at_least(1), "an integer >= 1"),
    "store.path": Key("", "str", doc="index file; {agentId} is replaced"),
    "store.vector.enabled": Key(True, "bool"),
    "sync.watch": Key(True, "bool"),
    "sync.watchDebounceMs": Key(1500, "int", _at_least(0), "an integer >= 0"),
    "sync.intervalMinutes": Key(5, "int", _at_least(0), "an integer >= 0 (0 = off)"),
    "sync.onSearch": Key(True, "bool"),
    "sync.sessions.deltaBytes": Key(100000, "int", _at_least(0), "an integer >= 0"),
    "sync.sessions.deltaMessages": Key(50, "int", _at_least(0), "an integer >= 0"),
    "journal.enabled": Key(True, "bool", doc="keep earlier versions of memory files (clawmem history / restore)"),
    "journal.maxAgeDays": Key(30, "int", _at_least(1), "an integer >= 1", doc="drop journal versions older than this (each file's newest stays)"),
    "journal.maxMB": Key(64, "float", _at_least(0.1), "a number >= 0.1", doc="size limit of the journal's older versions, compressed"),
    "mcp.write": Key(True, "bool", doc="let agents write memory through memory_append and memory_remember"),
    "fleet.url": Key("", "str", secret=True, doc="the fleet's PostgreSQL (postgresql://role:password@host/db; also CLAWMEM_FLEET_URL)"),
    "fleet.publish": Key(False, "bool", doc="the watcher pushes this agent's shared chunks to the fleet after each sync"),
    "fleet.share": Key(["*", "!MEMORY.md", "!memory.md"], "strlist",
                       doc="files other agents may see (globs; a leading ! keeps a file private); the others never leave this host"),
    "fleet.host": Key("", "str", doc="this host's name in the fleet (empty: the host name)"),
    "fleet.serverDir": Key("", "str", lambda v: not v or os.path.isabs(os.path.expanduser(v)), "an absolute folder path (or empty)",
                           doc="where `fleet up` keeps its PostgreSQL (empty: clawmem's data folder; as root /var/lib/clawmem-fleet)"),
    "mcp.maxWriteBytes": Key(65536, "int", _at_least(1), "an integer >= 1", doc="largest text one memory_append or memory_remember call may write"),
    "mcp.token": Key("", "str", secret=True, doc="bearer token the MCP server's HTTP transport requires (needed off loopback)"),
    "recall.enabled": Key(True, "bool", doc="record which daily-log passages searches return (clawmem promote ranks them); false records nothing"),
    "promote.memoryFileMaxChars": Key(10000, "int", _at_least(0), "an integer >= 0",
                                      doc="MEMORY.md's character budget (OpenClaw's memoryFileMaxChars): over it, clawmem promote offers the oldest promoted bullets for memory/promoted-archive.md; 0: no budget"),
    "promote.sweep": Key("off", "enum", choices=("off", "preview", "apply"),
                         doc="clawmem watch, once a day: preview counts the candidates (the app's header shows them); apply also writes the ones passing 0.8 / 3 / 3"),
}


def reference_markdown() -> str:
    """docs/configuration.md's key table, made from KEYS (a test keeps the page equal to it)."""
    import json  # only here: a search's start never pays for it

    rows = ["| key | default | valid values | what it does |", "|---|---|---|---|"]
    for name, k in KEYS.items():
        default = "" if k.secret else k.default
        shown = "(empty)" if default in ("", None, [], {}) else json.dumps(default, ensure_ascii=False)
        valid = " \\| ".join(f"`{c}`" for c in k.choices) if k.choices else (k.expect or _KIND_WORDS.get(k.kind, k.kind))
        doc = (k.doc + ("; secret: masked in every message" if k.secret else "")).replace("|", "\\|")
        rows.append(f"| `{name}` | `{shown}` | {valid} | {doc} |")
    return "\n".join(rows) + "\n"


_KIND_WORDS = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
               "strlist": "a list of strings", "providers": "a list of provider names",
               "headers": "a table of header names and values"}

# OpenClaw keys we read from its file but that are not ours to set (silently accepted there).
OPENCLAW_ACCEPTED = {"experimental.sessionMemory"}
# OpenClaw memory-search keys (and their subkeys) we read but do not honour, with what clawmem
# does instead; `status --deep` and the Config tab list every one found.
OPENCLAW_INSTEAD = {
    "store.path": "clawmem keeps its own index and never touches OpenClaw's",
    "store.driver": "clawmem always uses SQLite",
    "store.fts.tokenizer": "clawmem's keyword index always uses unicode61 (diacritics folded) and indexes CJK as characters plus bigrams",
    "store.vector.extensionPath": "clawmem loads sqlite-vec from its Python package (numpy when that fails)",
    "multimodal": "clawmem indexes text only; images and audio are not embedded",
    "qmd": "clawmem always searches its own SQLite index; the QMD sidecar is not used",
    "sync.onSessionStart": "clawmem has no session-start hook; `clawmem watch` or `clawmem mcp` keep the index fresh",
    "sync.sessions.postCompactionForce": "transcripts are reindexed by size and message deltas only",
}


def _type_name(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}.get(
        type(v), type(v).__name__
    )


def coerce(key: str, value: Any) -> Any:
    """Validate `value` for `key`; return it normalised or raise BadValue with what was expected."""
    spec = KEYS[key]
    kind = spec.kind
    if kind == "bool":
        if not isinstance(value, bool):
            raise BadValue(f"expected true or false, got {value!r}")
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise BadValue(f"expected {spec.expect or 'an integer'}, got {value!r}")
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadValue(f"expected {spec.expect or 'a number'}, got {value!r}")
        value = float(value)
    elif kind == "str":
        if not isinstance(value, str):
            raise BadValue(f"expected a string, got {_type_name(value)}")
        if "\x00" in value:  # no path or name holds one; the OS would refuse it later, less clearly
            raise BadValue(f"holds a NUL character (\\u0000) at position {value.index(chr(0))}; remove it")
    elif kind == "enum":
        if value not in spec.choices:
            raise BadValue(f"expected one of {', '.join(spec.choices)}, got {value!r}")
    elif kind == "strlist":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise BadValue("expected a list of strings")
    elif kind == "providers":
        if value in ("none", "", None):
            value = []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or any(v not in provider_registry.NAMES for v in value):
            raise BadValue(f"expected a provider or a list of them ({', '.join(provider_registry.NAMES)}), got {value!r}")
    elif kind == "headers":
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise BadValue("expected a table of header names to string values")
        value = dict(value)
    if spec.check is not None and not spec.check(value):
        raise BadValue(f"expected {spec.expect}, got {value!r}")
    return value


def parse_text_value(key: str, text: str) -> Any:
    """Turn what a user typed (in the TUI or on a command line) into a value for `key`."""
    if key not in KEYS:
        raise BadValue(f"unknown key {key!r}")
    text = text.strip()
    kind = KEYS[key].kind
    import tomllib  # loads on use: most commands read no TOML and start faster without its regexes

    try:
        value: Any = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text  # a bare word: treat it as a string
    if kind == "str" and not isinstance(value, str):
        value = text
    if kind in ("strlist", "providers") and isinstance(value, str) and "," in value:
        value = [v.strip() for v in value.split(",") if v.strip()]
    return coerce(key, value)


def flatten(table: dict, prefix: str = "") -> dict[str, Any]:
    """Nested tables to dotted keys, stopping at known keys (headers tables, secret references)."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        dotted = f"{prefix}{k}"
        if isinstance(v, dict) and dotted not in KEYS:
            out.update(flatten(v, dotted + "."))
        else:
            out[dotted] = v
    return out


class Config:
    # a plain class, as the engine's other records on the search path: importing dataclasses
    # (and the inspect module it needs) was a fifth of a `clawmem search`'s imports
    def __init__(self, values: dict[str, Any], sources: dict[str, str], file: Path | None = None,
                 openclaw_file: Path | None = None, openclaw_ignored: list[str] | None = None,
                 openclaw_data: dict | None = None, key_sources: dict[str, str] | None = None,
                 warnings: list[str] | None = None, ui: dict | None = None):
        self.values = values
        self.sources = sources
        self.file = file  # our TOML file (may not exist yet)
        self.openclaw_file = openclaw_file
        self.openclaw_ignored = openclaw_ignored if openclaw_ignored is not None else []  # "key: what clawmem does instead"
        self.openclaw_data = openclaw_data if openclaw_data is not None else {}  # the whole openclaw.json
        self.key_sources = key_sources if key_sources is not None else {}  # secret key -> where its value came from
        self.warnings = warnings if warnings is not None else []
        self.ui = ui if ui is not None else {}

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def workspace(self) -> Path:
        """The workspace's real path, resolved once per configured value: resolved again on every
        use, a parent swapped for a symlink for an instant would make it another folder (a
        decoy would take the writes; memfile holds the folder resolved here)."""
        raw = self.values["workspace"]
        held = getattr(self, "_workspace", None)
        if held is None or held[0] != raw:
            held = self._workspace = (raw, Path(os.path.expanduser(raw)).resolve())
        return held[1]

    @property
    def agent_id(self) -> str:
        return self.values["agentId"]

    def store_path(self) -> Path:
        """The index file: one per agent and workspace (two workspaces under one agent id never
        share an index), unless store.path names one explicitly."""
        raw = self.values["store.path"]
        if raw:
            return Path(os.path.expanduser(raw.replace("{agentId}", self.agent_id)))
        return paths.data_dir() / "index" / f"{self.agent_id}-{workspace_key(self.workspace)}.sqlite"

    def legacy_store_path(self) -> Path | None:
        """Where clawmem kept the index before it was keyed by workspace (one per agent)."""
        if self.values["store.path"]:
            return None
        return paths.data_dir() / "index" / f"{self.agent_id}.sqlite"

    def sessions_dir(self) -> Path:
        return paths.openclaw_state_dir() / "agents" / self.agent_id / "sessions"

    def secrets(self):
        """Secret resolution as OpenClaw does it (its env block, .env, secrets.providers)."""
        from .secrets import Secrets

        return Secrets(self.openclaw_data, self.openclaw_file.parent if self.openclaw_file else paths.openclaw_state_dir())

    def openclaw_provider(self, provider_id: str) -> dict:
        """openclaw.json `models.providers.<id>` ({} when absent)."""
        models = self.openclaw_data.get("models") if isinstance(self.openclaw_data.get("models"), dict) else {}
        providers = models.get("providers") if isinstance(models.get("providers"), dict) else {}
        entry = providers.get(provider_id)
        return entry if isinstance(entry, dict) else {}

    def masked(self, key: str) -> Any:
        v = self.values[key]
        if key == "fleet.url" and v:  # the server stays readable, the password does not
            from .redaction import mask_password

            return mask_password(v)
        if KEYS[key].secret and v:
            return mask_secret(v)
        if key == "remote.headers":
            return {k: (mask_secret(x) if _looks_secret(k) else x) for k, x in v.items()}
        if key == "remote.baseUrl" and v:
            from .redaction import mask_url  # a URL can carry credentials (user:pass@, ?key=)

            return mask_url(v)
        return v

    def effective(self) -> list[tuple[str, Any, str]]:
        """(key, displayable value, source) for every key, secrets masked."""
        return [(k, self.masked(k), self.sources.get(k, "default")) for k in KEYS]

    # what a front needs to show and edit settings, reached through the Config it holds

    @staticmethod
    def keys() -> dict[str, "Key"]:
        """Every engine key with its kind, default, check and whether it is a secret."""
        return KEYS

    @staticmethod
    def parse_text(key: str, text: str) -> Any:
        """What a user typed for `key`, as its value (ValueError naming what was expected)."""
        return parse_text_value(key, text)

    def not_honoured(self) -> list[str]:
        """Every setting read but not acted on, as "key: what clawmem does instead"."""
        return not_honoured(self)

    @staticmethod
    def user_dir() -> Path:
        """clawmem's own config folder (the TOML file, user themes)."""
        return paths.config_dir()


def batch_providers() -> tuple[str, ...]:
    """The providers with a batch API (read from their classes, so only when batch is asked for)."""
    from .provider_registry import provider_classes

    return tuple(cls.name for cls in provider_classes() if cls.batch_client)


def not_honoured(cfg: Config) -> list[str]:
    """Every setting read but not acted on, as "key: what clawmem does instead" (status --deep, Config tab)."""
    out = list(cfg.openclaw_ignored)
    if cfg["remote.batch.enabled"] and cfg["provider"] not in (*batch_providers(), "auto"):
        out.append(f"remote.batch.enabled: clawmem runs batch jobs for openai, voyage and gemini; {cfg['provider']} embeds with normal requests")
    if cfg["outputDimensionality"] and cfg["provider"] not in ("gemini", "auto"):
        out.append(f"outputDimensionality = {cfg['outputDimensionality']}: only Gemini takes a vector size; "
                   f"{cfg['provider']} vectors keep the model's own size")
    return out


def workspace_key(workspace: Path) -> str:
    """A short name for a workspace's real path, for file names."""
    from .files.fsutil import builtin_sha256  # not hashlib: its OpenSSL binding costs every search ~3 ms

    return builtin_sha256(str(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:12]


def mask_secret(value: str) -> str:
    if len(value) <= 8:
        return "***"
    return value[:3] + "…" + value[-2:]


def _looks_secret(name: str) -> bool:
    return bool(re.search(r"auth|key|token|secret", name, re.I))


def find_openclaw_config() -> Path | None:
    p = paths.openclaw_state_dir() / "openclaw.json"
    return p if p.is_file() else None


def read_openclaw_json() -> tuple[dict, Path | None, str | None]:
    """OpenClaw's openclaw.json as a dict, its path, and why it could not be read (if so).

    For the parts of OpenClaw's file that are not memory-search settings (agents.list,
    compaction.memoryFlush); an absent or unreadable file reads as {}.
    """
    import json5

    path = find_openclaw_config()
    if path is None:
        return {}, None, None
    try:
        data = json5.loads(path.read_text(encoding="utf-8"))
    except Exception as exc:  # OpenClaw's file is not ours to fix: say so and carry on
        return {}, path, f"{path}: not readable as JSON5 ({exc.__class__.__name__}); OpenClaw settings ignored"
    return (data if isinstance(data, dict) else {}), path, None


def openclaw_agent_entries(data: dict) -> list[dict]:
    """The well-formed entries of `agents.list` (dicts with a string id)."""
    agents = data.get("agents") if isinstance(data.get("agents"), dict) else {}
    entries = agents.get("list") if isinstance(agents.get("list"), list) else []
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"].strip()]


def _instead(key: str) -> str | None:
    """What clawmem does instead of an OpenClaw memory-search key it does not honour."""
    for prefix, why in OPENCLAW_INSTEAD.items():
        if key == prefix or key.startswith(prefix + "."):
            return why
    return None


def _read_openclaw(path: Path, agent: str | None, warnings: list[str]) -> tuple[dict[str, Any], list[str], dict, dict[str, str]]:
    """(settings found, keys not honoured with what clawmem does instead, the whole file, key sources)."""
    import json5

    from .secrets import SecretError, Secrets

    try:
        data = json5.loads(path.read_text(encoding="utf-8"))
    except Exception as exc:  # OpenClaw's file is not ours to fix: warn and carry on
        warnings.append(f"{path}: not readable as JSON5 ({exc.__class__.__name__}); OpenClaw settings ignored")
        return {}, [], {}, {}
    if not isinstance(data, dict):
        return {}, [], {}, {}
    found: dict[str, Any] = {}
    ignored: list[str] = []
    key_sources: dict[str, str] = {}
    secrets = Secrets(data, path.parent)
    agents = data.get("agents") if isinstance(data.get("agents"), dict) else {}
    defaults = agents.get("defaults") if isinstance(agents.get("defaults"), dict) else {}
    memory = data.get("memory") if isinstance(data.get("memory"), dict) else {}
    layers: list[tuple[str, Any]] = [
        ("agents.defaults.memorySearch", defaults.get("memorySearch")),
        ("memory.search", memory.get("search")),
    ]
    for entry in agents.get("list") or []:
        if isinstance(entry, dict) and entry.get("id") == (agent or "main"):
            layers.append((f"agents.list[{entry.get('id')}].memorySearch", entry.get("memorySearch")))
            if isinstance(entry.get("workspace"), str):
                found["workspace"] = entry["workspace"]
    if isinstance(defaults.get("workspace"), str):
        found.setdefault("workspace", defaults["workspace"])
    if isinstance(memory.get("citations"), str):
        found["citations"] = memory["citations"]
    if memory.get("backend") not in (None, "builtin"):
        ignored.append(f"memory.backend = {memory['backend']!r}: {OPENCLAW_INSTEAD['qmd']}")
    if isinstance(memory.get("qmd"), dict) and memory["qmd"]:
        ignored.append(f"memory.qmd: {OPENCLAW_INSTEAD['qmd']}")
    session_gate = False
    for where, layer in layers:
        if not isinstance(layer, dict):
            continue
        for key, value in flatten(layer).items():
            if key == "experimental.sessionMemory":
                session_gate = bool(value)
                continue
            instead = _instead(key)
            if instead:
                ignored.append(f"{where}.{key}: {instead}")
                continue
            if key not in KEYS or key in ("workspace", "agentId"):
                if key not in OPENCLAW_ACCEPTED:
                    ignored.append(f"{where}.{key}: not a setting clawmem knows")
                continue
            if key == "remote.apiKey":
                try:
                    secret = secrets.resolve(value, f"openclaw.json {where}.{key}")
                except SecretError as exc:
                    warnings.append(f"{path}: {exc}")
                    continue
                value = secret.value if secret else ""
                key_sources[key] = secret.source if secret else ""
            try:
                found[key] = coerce(key, value)
            except ValueError as exc:
                warnings.append(f"{path}: {where}.{key}: {exc}; using clawmem's default")
    if "sessions" in found.get("sources", []) and not session_gate:
        # OpenClaw only indexes sessions with experimental.sessionMemory on; stay compatible.
        found["sources"] = [s for s in found["sources"] if s != "sessions"] or ["memory"]
    return found, ignored, data, key_sources


# What most config files are, read without tomllib: importing it (its regexes, `string`, `typing`)
# cost ~8 ms of CPU, an eighth of a whole keyword `clawmem search`. Anything outside this subset
# goes to tomllib, which also phrases every error; tests/test_config_toml.py checks against
# tomllib that whatever this accepts, tomllib reads the same.
_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_DIGITS = frozenset("0123456789")
# TOML refuses these anywhere in a document (a CR only where it ends a line: CRLF is replaced first)
_CONTROL = frozenset(chr(i) for i in range(32) if i not in (9, 10)) | {"\x7f"}
_VALUE_END = frozenset(" \t,]#")


class _NotSimple(Exception):
    """The text is outside simple_toml's subset (not necessarily invalid): tomllib reads it."""


def simple_toml(text: str) -> dict | None:
    """`[table]` headers and `key = value` lines (bare or quoted keys, not dotted), whose values
    are one-line strings without escapes, decimal integers, decimals, booleans or one-line
    arrays of them, with comments and blank lines: the document tomllib would return. None for
    anything else (dotted keys, escapes, dates, inline tables, multi-line values, a table or key
    defined twice), which tomllib then reads."""
    text = text.replace("\r\n", "\n")
    if not _CONTROL.isdisjoint(text):
        return None
    doc: dict = {}
    headers: set[tuple[str, ...]] = set()
    table = doc
    try:
        for line in text.split("\n"):
            i = _skip(line, 0)
            if i == len(line) or line[i] == "#":
                continue
            if line[i] == "[":
                if line.startswith("[", i + 1):  # [[an array of tables]]
                    raise _NotSimple
                parts, i = _toml_key(line, i + 1, dotted=True)
                if line[i : i + 1] != "]":
                    raise _NotSimple
                _toml_line_end(line, i + 1)
                if tuple(parts) in headers:
                    raise _NotSimple
                headers.add(tuple(parts))
                table = doc
                for part in parts:  # a table may extend one a header implied ([a.b] then [a]), never a value
                    table = table.setdefault(part, {})
                    if not isinstance(table, dict):
                        raise _NotSimple
                continue
            (key,), i = _toml_key(line, i, dotted=False)
            if line[i : i + 1] != "=" or key in table:
                raise _NotSimple
            value, i = _toml_value(line, _skip(line, i + 1), in_array=False)
            _toml_line_end(line, i)
            table[key] = value
    except _NotSimple:
        return None
    return doc


def _skip(line: str, i: int) -> int:
    while i < len(line) and line[i] in " \t":
        i += 1
    return i


def _toml_line_end(line: str, i: int) -> None:
    i = _skip(line, i)
    if i < len(line) and line[i] != "#":
        raise _NotSimple


def _toml_string(line: str, i: int) -> tuple[str, int]:
    """The one-line string opening at line[i] (a quote), without escapes, and where it ends."""
    quote = line[i]
    end = line.find(quote, i + 1)
    if end < 0:
        raise _NotSimple
    body = line[i + 1 : end]
    if quote == '"' and "\\" in body:
        raise _NotSimple
    return body, end + 1


def _toml_key(line: str, i: int, dotted: bool) -> tuple[list[str], int]:
    parts = []
    while True:
        i = _skip(line, i)
        if line[i : i + 1] in ('"', "'"):
            part, i = _toml_string(line, i)
        else:
            start = i
            while i < len(line) and line[i] in _BARE_KEY:
                i += 1
            if i == start:
                raise _NotSimple
            part = line[start:i]
        parts.append(part)
        i = _skip(line, i)
        if line[i : i + 1] != ".":
            return parts, i
        if not dotted:
            raise _NotSimple
        i += 1


def _toml_value(line: str, i: int, in_array: bool):
    first = line[i : i + 1]
    if first in ('"', "'"):
        return _toml_string(line, i)
    if first == "[" and not in_array:
        items = []
        i = _skip(line, i + 1)
        while line[i : i + 1] != "]":
            item, i = _toml_value(line, i, in_array=True)
            items.append(item)
            i = _skip(line, i)
            if line[i : i + 1] == ",":
                i = _skip(line, i + 1)
            elif line[i : i + 1] != "]":
                raise _NotSimple
        return items, i + 1
    end = i
    while end < len(line) and line[end] not in _VALUE_END:
        end += 1
    return _toml_scalar(line[i:end]), end


def _toml_scalar(word: str):
    """true, false, a decimal integer (at most 18 digits) or a decimal with a fraction or an exponent."""
    if word == "true":
        return True
    if word == "false":
        return False
    body = word[1:] if word[:1] in ("+", "-") else word
    mantissa, e, exponent = body.lower().partition("e")
    whole, dot, fraction = mantissa.partition(".")
    if not _is_digits(whole) or (len(whole) > 1 and whole[0] == "0") or (dot and not _is_digits(fraction)):
        raise _NotSimple
    if e:
        if exponent[:1] in ("+", "-"):
            exponent = exponent[1:]
        if not _is_digits(exponent) or len(exponent) > 3:
            raise _NotSimple
    if dot or e:
        return float(word)
    if len(whole) > 18:
        raise _NotSimple
    return int(word)


def _is_digits(s: str) -> bool:
    return s != "" and _DIGITS.issuperset(s)


def read_toml_file(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config ({exc.strerror}); check the path or permissions") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}); save the config as UTF-8") from None
    simple = simple_toml(text)
    if simple is not None:
        return simple
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix the file or pass --config with another one") from None
    except RecursionError:
        raise ConfigError(f"{path}: not a usable config (arrays or tables nested too deeply); fix the file") from None


def _validate_ui(path: Path, ui: Any) -> dict:
    if not isinstance(ui, dict):
        raise ConfigError(f"{path}: ui: expected a table ([ui]), got {_type_name(ui)}")
    return ui


def load(
    config_path: str | Path | None = None,
    *,
    workspace: str | None = None,
    agent: str | None = None,
    overrides: dict[str, Any] | None = None,
    read_openclaw: bool = True,
) -> Config:
    values = {k: (list(s.default) if isinstance(s.default, list) else dict(s.default) if isinstance(s.default, dict) else s.default) for k, s in KEYS.items()}
    sources = {k: "default" for k in KEYS}
    warnings: list[str] = []
    cfg = Config(values, sources, warnings=warnings)

    env_config = os.environ.get("CLAWMEM_CONFIG")
    if config_path is not None:
        file = Path(config_path).expanduser()
        if not file.is_file():
            raise ConfigError(f"{file}: config file not found (--config); create it or drop the option")
    elif env_config:
        file = Path(env_config).expanduser()
        if not file.is_file():
            raise ConfigError(f"{file}: config file not found (CLAWMEM_CONFIG); create it or unset the variable")
    else:
        file = paths.default_config_file()
    cfg.file = file

    agent_choice = agent or os.environ.get("CLAWMEM_AGENT")
    if read_openclaw:
        oc = find_openclaw_config()
        if oc:
            cfg.openclaw_file = oc
            found, cfg.openclaw_ignored, cfg.openclaw_data, key_sources = _read_openclaw(oc, agent_choice, warnings)
            cfg.key_sources.update(key_sources)
            for k, v in found.items():
                values[k], sources[k] = v, f"openclaw ({oc})"

    if file.is_file():
        data = read_toml_file(file)
        ui = data.pop("ui", {})
        cfg.ui = _validate_ui(file, ui)
        for key, value in flatten(data).items():
            if key not in KEYS:
                hint = _suggest(key)
                raise ConfigError(f"{file}: unknown key {key!r}{hint}; remove it or fix the spelling")
            try:
                values[key] = coerce(key, value)
            except ValueError as exc:
                raise ConfigError(f"{file}: {key}: {exc}") from None
            sources[key] = f"file ({file})"

    for env, key in (("CLAWMEM_WORKSPACE", "workspace"), ("CLAWMEM_AGENT", "agentId"), ("CLAWMEM_FLEET_URL", "fleet.url")):
        if os.environ.get(env):
            try:
                values[key] = coerce(key, os.environ[env])
            except ValueError as exc:
                raise ConfigError(f"{env}: {exc}") from None
            sources[key] = f"env ({env})"

    flags = dict(overrides or {})
    if workspace:
        flags["workspace"] = workspace
    if agent:
        flags["agentId"] = agent
    for key, value in flags.items():
        if key not in KEYS:
            raise ConfigError(f"unknown setting {key!r}")
        try:
            values[key] = coerce(key, value)
        except ValueError as exc:  # named as the user typed it: --agent, not the key agentId
            raise ConfigError(f"{ {'agentId': '--agent'}.get(key, '--' + key)}: {exc}") from None
        sources[key] = "flag"

    if values["chunking.overlap"] >= values["chunking.tokens"]:
        raise ConfigError(
            f"chunking.overlap ({values['chunking.overlap']}) must be smaller than chunking.tokens ({values['chunking.tokens']})"
        )
    return cfg


def _suggest(key: str) -> str:
    import difflib

    close = difflib.get_close_matches(key, list(KEYS) + ["ui"], n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


# ----------------------------------------------------------------------------- writing


def write_value(file: Path, key: str, value: Any) -> None:
    """Set one key in our TOML file, keeping its comments and layout (tomlkit).

    `key` is an engine key (dotted) or `ui.<name>`. The value is validated first; on any
    error nothing is written. The write is atomic.
    """
    import tomlkit

    if not key.startswith("ui."):
        value = coerce(key, value)
    text = file.read_text(encoding="utf-8") if file.exists() else ""
    doc = tomlkit.parse(text)
    parts = key.split(".")
    # top-level engine keys live at the top level; nested ones in tables ([query.hybrid] …)
    table: Any = doc
    for part in parts[:-1]:
        if part not in table:
            table[part] = tomlkit.table()
        table = table[part]
    table[parts[-1]] = value
    new_text = tomlkit.dumps(doc)
    # re-read what we are about to write through the normal loader: never save a file we cannot load
    import tomllib

    check = tomllib.loads(new_text)
    check.pop("ui", None)
    for k, v in flatten(check).items():
        if k not in KEYS:
            raise ConfigError(f"{file}: unknown key {k!r}; fix the file by hand first")
        coerce(k, v)
    from .files.fsutil import atomic_write

    paths.private_dir(file.parent)
    atomic_write(file, new_text)
