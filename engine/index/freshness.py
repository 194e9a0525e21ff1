"""How far the index lags the files: `freshness` compares every file (what `status` shows),
`seen_behind` a look that costs the same at 100 or 100,000 files (what searches report as
`stale`), and the watcher's state."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..config import Config
from ..errors import IndexUnavailable
from ..files.fsutil import os_path
from .reader import IndexReader
from ..files.sources import LAYOUT_KEY, list_sources, source_roots
from .store import DatabaseError, index_meta
from ..files.workspace import display_path


HOT_FILES = 32  # the files changed most recently, which a search stats for in-place edits


class Freshness:
    def __init__(self, cfg: Config, reader: IndexReader, *, persistent: bool = False):
        self.cfg = cfg
        self.index_reader = reader
        self.persistent = persistent
        self._cache: tuple[float, dict] | None = None
        self.listed: list | None = None  # the sources as the last full look listed them

    def forget(self) -> None:
        """The index changed: the next look compares the files again."""
        self._cache = None

    def freshness(self, *, max_age: float = 0.0, full: bool = False) -> dict:
        """Compare the files on disk with the index by (mtime, size); cheap (stat only).

        `behind` names up to 20 of the files that differ (all of them with full=True).
        """
        now = time.monotonic()
        cached = self._cache
        if max_age and cached and now - cached[0] < max_age:
            out = cached[1]
            return out if full else {**out, "behind": out["behind"][:20]}
        files = self.listed = list_sources(self.cfg)
        try:
            st = self.index_reader.reader()
            known = st.file_rows() if st is not None else {}
        except (IndexUnavailable, DatabaseError):  # an unusable index is behind on every file
            st, known = None, {}
        # rows of a source this config does not index (another config's transcripts in the same
        # index) are not this config's to compare: they are neither behind nor removed
        wanted = set(self.cfg["sources"])
        known = {path: row for path, row in known.items() if row[0] in wanted}
        behind = []
        for f in files:
            row = known.get(f.path)
            try:
                s = os.stat(f.abspath)
            except OSError:
                behind.append(f.path)
                continue
            if row is None or row[2] != s.st_mtime_ns or row[3] != s.st_size:
                behind.append(f.path)
        on_disk = {f.path for f in files}
        removed = [p for p in known if p not in on_disk]
        last = st.get_meta("last_sync") if st is not None else None
        from .lock import current_holder  # a search's own look (seen_behind) never asks for the writer

        holder = current_holder(self.index_reader.index_path)
        out = {
            "lastSync": last,
            "filesOnDisk": len(files),
            "filesIndexed": len(known),
            "filesBehind": len(behind) + len(removed),
            "behind": behind + removed,
            "dirty": bool(behind or removed),
            "watcher": self.watcher_state(),
            "job": (f"indexing (pid {holder.get('pid', '?')}, {holder.get('command', '?')})" if holder is not None else None),
        }
        self._cache = (now, out)
        return out if full else {**out, "behind": out["behind"][:20]}

    def seen_behind(self) -> bool:
        """Whether the index lags the files, as far as a look that costs the same at 100 or
        100,000 files can tell; what searches report as `stale`. `status` still compares every file.

        It sees: anything a running watcher heard of (its heartbeat says so), a created,
        deleted or renamed file (its folder's mtime changed since the last complete index),
        a changed or new root (MEMORY.md, extraPaths, the sessions folder), other index
        settings, and in-place edits of the HOT_FILES files changed most recently. Whenever
        a folder changed or cannot be trusted it compares every file, as freshness() does.
        Not seen while no watcher runs: an in-place edit of an older file (say, appending
        to last year's log); `status` and the next `index` or sync find it.
        """
        from .heartbeat import watcher_says_dirty

        if watcher_says_dirty(self.cfg):
            return True
        try:
            st = self.index_reader.reader()
            if st is None or not st.has_schema():
                return True
            layout = st.get_meta_json(LAYOUT_KEY)
            same_settings = st.get_meta_json("index") == index_meta(self.cfg)
        except (IndexUnavailable, DatabaseError):
            return True

        def every_file() -> bool:
            return self.freshness(max_age=2.0 if self.persistent else 0.0)["dirty"]

        if not isinstance(layout, dict) or not same_settings or layout.get("roots") != source_roots(self.cfg):
            return every_file()
        for folder, stamp in layout.get("dirs", {}).items():
            try:
                if stamp is None or os.stat(folder).st_mtime_ns != stamp:
                    return every_file()
            except OSError:
                return every_file()
        try:
            hot = st.recent_files(HOT_FILES)
            # MEMORY.md and file extraPaths: no folder of theirs is compared
            roots = [display_path(self.cfg.workspace, Path(p)) for p, kind in layout["roots"].items() if kind == "file"]
            hot += st.file_stats(roots)
        except DatabaseError:
            return True
        for abspath, mtime_ns, size in hot:
            try:
                s = os.stat(os_path(abspath))
            except OSError:
                return True
            if s.st_mtime_ns != mtime_ns or s.st_size != size:
                return True
        return False

    def watcher_state(self) -> str:
        from .heartbeat import read_heartbeat

        return read_heartbeat(self.cfg)
