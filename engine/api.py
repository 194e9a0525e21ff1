"""The engine facade: the one object the CLI, the app and the MCP server talk to.

`Engine` holds small parts, each with one job, wired in its constructor:
  IndexReader  reader.py        the per-thread read connection to the index, data cached from it
  Providers    providers.py     the provider plan, providers built on first use, their failures
  Freshness    freshness.py     how far the index lags the files, the watcher's state
  Searcher     searching.py     memory_search: options, the model serving vectors, fallbacks
  IndexJobs    jobs.py          index, update, rebuild and resume under the writer lock
  Health       health.py        status, issues, rebuild state, `status --fix` repairs
  MemoryFiles  memory_files.py  memory_get, the paths the tools may read, the File tab's list
Each takes its collaborators as arguments and is usable alone. The writes agents and people
make are in memfile.py (through files.py, tools.py, editing.py); background sync in sync.py.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from . import config as config_mod
from .config import Config
from .errors import AccessDenied, IndexUnavailable, SearchDisabled
from .freshness import Freshness
from .health import Health
from .jobs import IndexJobs
from .memory_files import MemoryFiles
from .paths import log_path
from .providers import Providers
from .reader import IndexReader
from .searching import Searcher, disabled_reason

# kept importable from here, where the fronts and tests have always found them
__all__ = ["Engine", "AccessDenied", "IndexUnavailable", "SearchDisabled", "disabled_reason", "log_path"]


class Engine:
    def __init__(self, cfg: Config, *, persistent: bool = False):
        self.persistent = persistent  # long-lived (the app, watch): keep vectors in memory
        # Called with "search" when a search finds the index stale and sync.onSearch is on; it
        # must return at once (a Syncer queues a sync, the CLI spawns a background index).
        self.sync_hook: Callable[[str], Any] | None = None
        self._wire(cfg)

    def _wire(self, cfg: Config) -> None:
        """Build the parts for `cfg`: the one place they are joined."""
        self.cfg = cfg
        self.index_reader = IndexReader(cfg)
        self.providers = Providers(cfg)
        self.freshness_check = Freshness(cfg, self.index_reader, persistent=self.persistent)
        self.searcher = Searcher(cfg, self.index_reader, self.providers, self.freshness_check,
                                 persistent=self.persistent, on_stale=self._ask_for_sync)
        self.jobs = IndexJobs(cfg, self.index_reader, self.providers, self.freshness_check)
        self.health = Health(cfg, self.index_reader, self.providers, self.freshness_check, self.searcher, self.jobs)
        self.health.fleet_line = self._fleet_line
        self.memory_files = MemoryFiles(cfg)

    @classmethod
    def open(cls, *, config_path=None, workspace=None, agent=None, overrides=None, persistent=False) -> "Engine":
        cfg = config_mod.load(config_path, workspace=workspace, agent=agent, overrides=overrides)
        return cls(cfg, persistent=persistent)

    # ------------------------------------------------------------------ configuration

    @property
    def workspace(self):
        return self.cfg.workspace

    @property
    def index_path(self):
        return self.index_reader.index_path

    def reload_config(self, cfg: Config) -> None:
        """Apply a new configuration without a restart (the app's Config tab)."""
        self.close()
        self._wire(cfg)

    def plan(self):
        return self.providers.plan()

    def reader(self):
        return self.index_reader.reader()

    def close(self) -> None:
        self.index_reader.close()
        self.providers.close()

    # ------------------------------------------------------------------ search and read

    def options(self, **kw):
        return self.searcher.options(**kw)

    def search(self, query: str, **kw) -> dict:
        return self.searcher.search(query, **kw)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> dict:
        return self.memory_files.get(path, from_line, lines)

    def resolve_allowed(self, path: str):
        return self.memory_files.resolve_allowed(path)

    def list_files(self) -> list[dict]:
        return self.memory_files.list_files()

    # ------------------------------------------------------------------ index

    def index(self, **kw) -> Iterator:
        return self.jobs.index(**kw)

    def run_index(self, **kw):
        return self.jobs.run_index(**kw)

    # ------------------------------------------------------------------ state

    def freshness(self, *, max_age: float = 0.0, full: bool = False) -> dict:
        return self.freshness_check.freshness(max_age=max_age, full=full)

    def seen_behind(self) -> bool:
        return self.freshness_check.seen_behind()

    def watcher_state(self) -> str:
        return self.freshness_check.watcher_state()

    def status(self, *, deep: bool = False) -> dict:
        return self.health.status(deep=deep)

    def issues(self) -> list[str]:
        return self.health.issues()

    def repair(self) -> list[str]:
        return self.health.repair()

    # ------------------------------------------------------------------ for the fleet and the tests

    def _vector_side(self, store, exclude: tuple[str, ...] = ()):
        return self.searcher.vector_side(store, exclude)

    def _embed_query(self, prov, query: str, dims: int | None):
        return self.providers.embed_query(prov, query, dims)

    @property
    def _providers(self) -> dict:
        return self.providers.built

    @property
    def query_retry_after(self) -> float:
        return self.providers.query_retry_after

    @query_retry_after.setter
    def query_retry_after(self, seconds: float) -> None:
        self.providers.query_retry_after = seconds

    @property
    def _fresh_cache(self):
        return self.freshness_check._cache

    @_fresh_cache.setter
    def _fresh_cache(self, value) -> None:
        self.freshness_check._cache = value

    # ------------------------------------------------------------------ internal

    def _ask_for_sync(self) -> None:
        hook = self.sync_hook
        if hook is None:
            return
        try:
            hook("search")
        except Exception:
            pass  # a failed trigger must not fail the search; the next one tries again

    def _fleet_line(self) -> dict | None:
        from .fleet import fleet_status  # psycopg is not needed for this: it reads local state only

        return fleet_status(self)
