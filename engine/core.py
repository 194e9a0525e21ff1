"""The state every part of the engine shares: the configuration, the provider plan and the providers
built from it, the per-thread read connection to the index and the caches a long-lived engine keeps.
The parts (searching.py, memory_files.py, jobs.py, health.py) build on it; api.Engine joins them."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

from .config import Config
from .embeddings import Plan, Provider, ProviderError, plan as make_plan
from .store import DatabaseError, ForeignIndex, Store, adopt_legacy_index, may_move_aside, not_ours_line


PROVIDER_FAILURES = "provider_failures"  # meta key: {provider: why it failed in the last index run}


class IndexUnavailable(RuntimeError):
    """The index cannot be read (corrupt, locked too long); the message says what to do."""


class Core:
    """One engine's shared state; the parts subclass it and api.Engine joins them on one instance."""

    def __init__(self, cfg: Config, *, persistent: bool = False):
        self.cfg = cfg
        self.index_path = cfg.store_path()
        self.persistent = persistent  # long-lived (TUI, watch): keep vectors in memory
        self._tls = threading.local()
        self._lock = threading.RLock()
        self._providers: dict[str, Provider] = {}
        self._provider_errors: dict[str, str] = {}
        self._plan: Plan | None = None
        self._per_model: dict[tuple[str, int], tuple[int, Any]] = {}  # (kind, model) -> (generation, data)
        self._fresh_cache: tuple[float, dict] | None = None
        self._query_failures: dict[str, tuple[float, str]] = {}  # provider -> (when, why)
        self.query_retry_after = 30.0  # seconds before a failed provider is asked again
        # Called with "search" when a search finds the index stale and sync.onSearch is on; it
        # must return at once (a Syncer queues a sync, the CLI spawns a background index).
        self.sync_hook: Callable[[str], Any] | None = None

    # ------------------------------------------------------------------ configuration

    @property
    def workspace(self) -> Path:
        return self.cfg.workspace

    def reload_config(self, cfg: Config) -> None:
        """Apply a new configuration without a restart (TUI Config tab)."""
        with self._lock:
            self.close()
            self.cfg = cfg
            self.index_path = cfg.store_path()
            self._plan = None
            self._providers.clear()
            self._provider_errors.clear()
            self._query_failures.clear()
            self._per_model.clear()
            self._fresh_cache = None

    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = make_plan(self.cfg)
        return self._plan

    def _provider(self, name: str) -> Provider | None:
        with self._lock:
            if name in self._providers:
                return self._providers[name]
            if name in self._provider_errors:
                return None
            cand = next((c for c in self.plan().usable() if c.name == name), None)
            if cand is None:
                return None
            try:
                self._providers[name] = cand.factory()
            except ProviderError as exc:
                self._provider_errors[name] = str(exc)
                return None
            return self._providers[name]

    # ------------------------------------------------------------------ reading

    def reader(self) -> Store | None:
        st: Store | None = getattr(self._tls, "store", None)
        # reopen after a rebuild swapped the file, or when reload_config moved the index
        if st is not None and (st.path != self.index_path or not st.is_current_file()):
            st.close()
            st = None
        if st is None:
            try:
                os.lstat(self.index_path)
            except (FileNotFoundError, NotADirectoryError):
                adopt_legacy_index(self.cfg)
                if not os.path.lexists(self.index_path):
                    return None
            except OSError as exc:  # another user's folder: one line, not a traceback
                raise IndexUnavailable(f"{self.index_path}: cannot open the index ({exc.strerror}); check the permissions of its folder") from None
            st = self._open_reader()
            self._tls.store = st
        return st

    def _open_reader(self) -> Store:
        """A read connection to a usable index of this workspace, or IndexUnavailable saying what
        is wrong, where, and what repairs it (never a traceback)."""
        path = self.index_path
        repair = "`clawmem index` repairs it (moves it aside and rebuilds from the Markdown)"
        if not path.is_file():
            raise IndexUnavailable(not_ours_line(path, "is a folder" if path.is_dir() else "is not a regular file"))
        if not os.access(path, os.R_OK):
            raise IndexUnavailable(f"{path}: cannot read the index (permission denied); fix its permissions")
        st = None
        try:
            st = Store(path, load_vec=self.cfg["store.vector.enabled"])
            st.check(quick=False)
            built_for = st.get_meta("workspace")
        except (ForeignIndex, DatabaseError, OSError) as exc:
            if st is not None:
                st.close()
            if isinstance(exc, ForeignIndex) and not may_move_aside(path, exc):
                raise IndexUnavailable(not_ours_line(path, f"is not a usable clawmem index ({exc})")) from None
            raise IndexUnavailable(f"{path}: not a usable clawmem index ({exc}); {repair}") from None
        if built_for is not None and built_for != str(self.workspace):
            st.close()
            raise IndexUnavailable(f"{path}: this index was built for workspace {built_for}, not {self.workspace}; "
                                   "`clawmem index` rebuilds it for this one (or give each workspace its own store.path)")
        return st

    def close(self) -> None:
        st = getattr(self._tls, "store", None)
        if st is not None:
            st.close()
            self._tls.store = None
        for p in list(self._providers.values()):
            try:
                p.close()
            except Exception:
                pass
        self._providers.clear()  # closed providers are rebuilt on next use

    def _known_failures(self, store: Store) -> dict[str, str]:
        """Provider failures of this process, else those the last index run recorded."""
        recorded = store.get_meta_json(PROVIDER_FAILURES)
        return {**(recorded if isinstance(recorded, dict) else {}), **self._provider_errors}
