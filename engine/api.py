"""The engine facade: the one object the CLI, the app and the MCP server talk to.

It is a thin door: each part lives in its own module, all built on the shared state in core.Core.
  searching.Searching      memory_search: options, the model serving vectors, query embedding, caches
  memory_files.MemoryFiles memory_get and the paths the tools may read, the File tab's list, today's log
  jobs.IndexJobs           index, update, rebuild and resume under the writer lock
  health.Health            freshness, status, issues, rebuild state, `status --fix` repairs
The writes agents and people make are in files.py, tools.py and editing.py; background sync in sync.py.
"""

from __future__ import annotations

from . import config as config_mod
from .core import Core, IndexUnavailable
from .health import Health
from .paths import log_path
from .jobs import IndexJobs
from .memory_files import AccessDenied, MemoryFiles
from .searching import SearchDisabled, Searching, disabled_reason

# kept importable from here, where the fronts and tests have always found them
__all__ = ["Engine", "Core", "AccessDenied", "IndexUnavailable", "SearchDisabled", "disabled_reason", "log_path"]


class Engine(Health, IndexJobs, Searching, MemoryFiles):
    """Every part joined on one shared Core (config, providers, reader, caches)."""

    @classmethod
    def open(cls, *, config_path=None, workspace=None, agent=None, overrides=None, persistent=False) -> "Engine":
        cfg = config_mod.load(config_path, workspace=workspace, agent=agent, overrides=overrides)
        return cls(cfg, persistent=persistent)
