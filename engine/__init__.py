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
from .errors import AccessDenied, ClawmemError, IndexFailed, IndexUnavailable, JournalUnavailable, SearchDisabled
from .results import FileText, Restored, SearchResults, Status, WriteReceipt, vectors_serving

# name -> "module:attribute" under clawmem.engine, imported when first asked for
_LAZY = {
    # what a search is asked: the search package loads with it (`clawmem index` never needs it)
    "SearchRequest": "search.options:SearchRequest",
    # errors the fronts catch
    "LockBusy": "index.lock:LockBusy",
    "ArchiveError": "agent.archive:ArchiveError",
    "DownloadError": "embeddings.download:DownloadError",
    "ChangedOnDisk": "files.conflicts:ChangedOnDisk",
    "HunkConflict": "files.journal:HunkConflict",
    "FleetError": "fleet.client:FleetError",
    "fleet_url": "fleet.client:fleet_url",
    "fleet_grant": "fleet.client:grant",
    "fleet_revoke": "fleet.client:revoke",
    "fleet_list": "fleet.client:fleet_list",
    "fleet_build_indexes": "fleet.client:build_indexes",
    "fleet_distribute": "fleet.client:distribute",
    "mask_password": "redaction:mask_password",
    "PromoteError": "consolidate.promote:PromoteError",
    "RecallUnreadable": "consolidate.recall:RecallUnreadable",
    "ProviderError": "embeddings.base:ProviderError",
    "FileRefused": "files.memfile:Refused",
    # what operations return
    "IndexReport": "events:JobFinished",
    "Version": "files.journal:Version",
    "Change": "files.journal:Change",
    "FileSnapshot": "files.conflicts:FileSnapshot",
    "Merged": "files.conflicts:Merged",
    "EditSession": "files.editing:EditSession",
    "PromoteGates": "consolidate.promote:Gates",
    "PROMOTE_DEFAULT_GATES": "consolidate.promote:COMMAND",
    # configuration
    "CONFIG_KEYS": "config:KEYS",
    "DEFAULT_LOCAL_MODEL": "config:DEFAULT_LOCAL_MODEL",
    "not_honoured": "config:not_honoured",
    "parse_text_value": "config:parse_text_value",
    "write_config_value": "config:write_value",
    "config_dir": "paths:config_dir",
    "log_path": "paths:log_path",
    "all_agents": "index.agents:all_agents",
    # text for people: escaping, highlighting, explanations
    "printable": "text:printable",
    "json_visible": "text:json_visible",
    "query_terms": "text:query_terms",
    "term_spans": "search:term_spans",
    "snippet_match": "search:snippet_match",
    "EXACT_CONFIDENCE": "search:EXACT_CONFIDENCE",
    "unified_diff": "files.conflicts:unified_diff",
    "parse_since": "files.journal:parse_since",
    "DATED_RE": "files.workspace:DATED_RE",
    "normalize_extra_paths": "files.workspace:normalize_extra_paths",
    "atomic_write": "files.fsutil:atomic_write",
    "flush_plan": "agent.prompts:flush_plan",
    "SEARCH_ABSENT_RULE": "agent.prompts:SEARCH_ABSENT_RULE",
    # background work, logs, who writes
    "Syncer": "index.watcher:Syncer",
    "run_daemon": "index.watcher:run_daemon",
    "spawn_background_index": "index.watcher:spawn_background_index",
    "LocalFleetServer": "fleet.server:LocalServer",
    "setup_logging": "logs:setup",
    "log_event": "logs:log_event",
    "name_this_process": "files.writers:name_this_process",
    # the local model's files
    "model_cache_dir": "embeddings:model_cache_dir",
    "download_model": "embeddings.download:download",
    "cached_model_path": "embeddings.download:cached_path",
    "cached_models": "embeddings.download:cached_models",
    "resident_models": "embeddings.resident:resident_models",
    "stop_resident_models": "embeddings.resident:stop_resident_models",
    # the agent tools, as the MCP server and `clawmem` answer them
    "memory_search": "agent.tools:memory_search",
    "memory_get": "agent.tools:memory_get",
    "memory_append": "agent.tools:memory_append",
    "memory_remember": "agent.tools:memory_remember",
    "memory_promote": "agent.tools:memory_promote",
    "promote_preview": "agent.tools:promote_preview",
    "disabled_payload": "agent.tools:disabled_payload",
    "index_now": "agent.tools:index_now",
}

__all__ = ["Engine", "Config", "ConfigError", "load_config", "ClawmemError", "AccessDenied", "IndexFailed", "IndexUnavailable", "JournalUnavailable", "SearchDisabled",
           "FileText", "Restored", "SearchResults", "Status", "WriteReceipt", "vectors_serving",
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
