"""clawmem's engine: a plain library (no textual, no rich) behind one facade, `Engine`.

This module is the engine's public face: the fronts (CLI, app, MCP server, browser) import
only the names below. `Engine` and its result types load with the package; everything else
loads on first use (a keyword-only `clawmem search` must not pay for numpy, the HTTP client
or the journal).
"""

from __future__ import annotations

import importlib

from .api import Engine
from .config import Config, ConfigError, load as load_config
from .errors import AccessDenied, IndexUnavailable, JournalUnavailable, SearchDisabled
from .results import FileText, Restored, SearchResults, Status, WriteReceipt, vectors_serving
from .search.options import SearchRequest

# name -> "module:attribute" under clawmem.engine, imported when first asked for
_LAZY = {
    # errors the fronts catch
    "LockBusy": "lock:LockBusy",
    "DatabaseError": "store:DatabaseError",
    "ArchiveError": "archive:ArchiveError",
    "DownloadError": "embeddings.download:DownloadError",
    "ChangedOnDisk": "files:ChangedOnDisk",
    "HunkConflict": "journal:HunkConflict",
    "FleetError": "fleet:FleetError",
    "fleet_url": "fleet:fleet_url",
    "fleet_grant": "fleet:grant",
    "mask_password": "redaction:mask_password",
    "PromoteError": "promote:PromoteError",
    "RecallUnreadable": "recall:RecallUnreadable",
    "ProviderError": "embeddings.base:ProviderError",
    "FileRefused": "memfile:Refused",
    # what operations return
    "IndexReport": "events:JobFinished",
    "Version": "journal:Version",
    "Change": "journal:Change",
    "FileSnapshot": "files:FileSnapshot",
    "Merged": "files:Merged",
    "EditSession": "editing:EditSession",
    "PromoteGates": "promote:Gates",
    "PROMOTE_DEFAULT_GATES": "promote:COMMAND",
    # configuration
    "CONFIG_KEYS": "config:KEYS",
    "DEFAULT_LOCAL_MODEL": "config:DEFAULT_LOCAL_MODEL",
    "not_honoured": "config:not_honoured",
    "parse_text_value": "config:parse_text_value",
    "write_config_value": "config:write_value",
    "config_dir": "paths:config_dir",
    "log_path": "paths:log_path",
    "all_agents": "agents:all_agents",
    # text for people: escaping, highlighting, explanations
    "printable": "text:printable",
    "query_terms": "text:query_terms",
    "term_spans": "search:term_spans",
    "snippet_match": "search:snippet_match",
    "EXACT_CONFIDENCE": "search:EXACT_CONFIDENCE",
    "unified_diff": "files:unified_diff",
    "parse_since": "journal:parse_since",
    "DATED_RE": "workspace:DATED_RE",
    "normalize_extra_paths": "workspace:normalize_extra_paths",
    "atomic_write": "fsutil:atomic_write",
    "flush_plan": "agent_prompts:flush_plan",
    # the servers' network checks
    "allowed_names": "net:allowed_names",
    "cannot_listen": "net:cannot_listen",
    "needs_token": "net:needs_token",
    "refuse_request": "net:refuse_request",
    "token_weakness": "net:token_weakness",
    # background work, logs, who writes
    "Syncer": "sync:Syncer",
    "run_daemon": "sync:run_daemon",
    "spawn_background_index": "sync:spawn_background_index",
    "LocalFleetServer": "fleet_server:LocalServer",
    "setup_logging": "logs:setup",
    "log_event": "logs:log_event",
    "name_this_process": "writers:name_this_process",
    # the local model's files
    "model_cache_dir": "embeddings:model_cache_dir",
    "download_model": "embeddings.download:download",
    "cached_model_path": "embeddings.download:cached_path",
    "cached_models": "embeddings.download:cached_models",
    # the agent tools, as the MCP server and `clawmem` answer them
    "memory_search": "tools:memory_search",
    "memory_get": "tools:memory_get",
    "memory_append": "tools:memory_append",
    "memory_remember": "tools:memory_remember",
    "memory_promote": "tools:memory_promote",
    "promote_preview": "tools:promote_preview",
    "disabled_payload": "tools:disabled_payload",
    "index_now": "tools:index_now",
}

__all__ = ["Engine", "Config", "ConfigError", "load_config", "AccessDenied", "IndexUnavailable", "JournalUnavailable", "SearchDisabled",
           "FileText", "Restored", "SearchRequest", "SearchResults", "Status", "WriteReceipt", "vectors_serving",
           "events",  # the typed events long jobs yield: a module of plain data classes
           *_LAZY]


def __getattr__(name: str):
    if name == "events":
        return importlib.import_module(f"{__name__}.events")
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
