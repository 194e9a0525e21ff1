"""clawmem's engine: a plain library (no textual, no rich) behind one facade, `Engine`.

This module is the engine's public face: the fronts (CLI, app, MCP server, browser) import
only the names in `__all__`. An operation is reached through the object that owns it:
`Engine`'s methods, its sub-faces (`engine.fleet`, `engine.models`, `engine.tools`), the
`Config` a front holds; `human` is the shared vocabulary of text for people. `Engine` and its
result types load with the package; everything else loads on first use (a keyword-only
`clawmem search` must not pay for numpy, the HTTP client or the journal).
"""

from __future__ import annotations

import importlib

from .api import Engine
from .config import Config, ConfigError, load as load_config
from .errors import AccessDenied, BadValue, ClawmemError, FileUnreadable, IndexFailed, IndexUnavailable, JournalUnavailable, SearchDisabled, StorageError
from .results import FileText, Hit, Restored, SearchResults, Status, WriteReceipt, vectors_serving


class _Face:
    """A namespace whose names load from their modules on first use (one import per name)."""

    def __init__(self, doc: str, names: dict[str, str]):
        self.__doc__ = doc
        self._names = names

    def __getattr__(self, name: str):
        target = self.__dict__["_names"].get(name)
        if target is None:
            raise AttributeError(f"clawmem.engine.human has no attribute {name!r}")
        module, _, attr = target.partition(":")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        setattr(self, name, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted(self._names)


# not `text`: that name is the engine's own tokenizer module (engine/text.py), which would shadow it
human = _Face("Text for people, shared by every front: escaping, highlighting, diffs, names of files, dates typed.", {
    "printable": "text:printable",  # memory text with its hidden characters shown, never interpreted
    "printable_line": "text:printable_line",  # one line (a file name, a log line): newlines and tabs shown too
    "json_visible": "text:json_visible",  # dumped JSON with DEL and C1 codes escaped too
    "HIDDEN": "text:HIDDEN",  # the characters that are instructions, not text (a regex class)
    "query_terms": "text:query_terms",
    "term_spans": "search:term_spans",  # where a query's words are in a line, for highlighting
    "snippet_match": "search:snippet_match",  # the snippet line a hit matched on
    "EXACT_CONFIDENCE": "search:EXACT_CONFIDENCE",
    "unified_diff": "files.conflicts:unified_diff",
    "parse_since": "files.journal:parse_since",  # "2d", "yesterday", a date: a timestamp
    "DATED_RE": "files.workspace:DATED_RE",  # a daily log's file name
    "mask_password": "redaction:mask_password",
    "SEARCH_ABSENT_RULE": "agent.prompts:SEARCH_ABSENT_RULE",  # what an agent is told an empty search means
})

# errors the fronts catch by kind (every one derives from ClawmemError), and the types they
# hold or build; loaded when first asked for
_LAZY = {
    # what a search is asked: the search package loads with it (`clawmem index` never needs it)
    "SearchRequest": "search.options:SearchRequest",
    "LockBusy": "index.lock:LockBusy",
    "ArchiveError": "agent.archive:ArchiveError",
    "DownloadError": "errors:DownloadError",
    "ChangedOnDisk": "files.memfile:ChangedOnDisk",
    "FleetError": "fleet.connection:FleetError",
    "PromoteError": "consolidate.promote:PromoteError",
    "RecallUnreadable": "consolidate.recall:RecallUnreadable",
    "FileRefused": "files.memfile:Refused",
    "FileSnapshot": "files.memfile:FileSnapshot",
    "Merged": "files.conflicts:Merged",
    "EditSession": "files.editing:EditSession",
    "PromoteGates": "consolidate.promote:Gates",
}

__all__ = ["Engine", "Config", "ConfigError", "load_config", "events", "human",
           "ClawmemError", "AccessDenied", "BadValue", "FileUnreadable", "IndexFailed", "IndexUnavailable", "JournalUnavailable", "SearchDisabled", "StorageError",
           "FileText", "Hit", "Restored", "SearchResults", "Status", "WriteReceipt", "vectors_serving",
           *_LAZY]


def __getattr__(name: str):
    if name == "events":  # the typed events long jobs yield: a module of plain data classes
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
