"""The read side of the index: one read connection per thread (reopened after a rebuild swaps
the file in), the reason in one line when the index cannot be used, and data derived from the
index (a model's vector matrix) kept until the index changes."""

from __future__ import annotations

import os
# _thread, not threading: the same lock/local/ident, without threading's import (~1 ms of every search)
import _thread
TYPE_CHECKING = False  # typing's constant without importing typing: a search never needs it (~3 ms)
if TYPE_CHECKING:
    from typing import Any, Callable

from ..config import Config
from ..errors import IndexUnavailable
from .store import DatabaseError, ForeignIndex, Store, adopt_legacy_index, may_move_aside, not_ours_line


class IndexReader:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.index_path = cfg.store_path()
        self._tls = _thread._local()
        self._per_model: dict[tuple[str, int], tuple[int, Any]] = {}  # (kind, model) -> (generation, data)

    def reader(self) -> Store | None:
        """This thread's read connection; None when there is no index yet."""
        st: Store | None = getattr(self._tls, "store", None)
        # reopen after a rebuild swapped the file
        if st is not None and (st.path != self.index_path or not st.is_current_file()
                               or getattr(st, "until_space", False) and not folder_full(self.index_path.parent)):
            # not closed here: a caller may still hold it (status reads it across several calls,
            # and closing it under them was "Cannot operate on a closed database"); the
            # connection closes when the last holder lets go of it
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
            st = self._open()
            self._tls.store = st
        return st

    def _open(self) -> Store:
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
            st = self._open_in_full_folder(path) if folder_full(path.parent) else None
            if st is None:
                if isinstance(exc, ForeignIndex) and not may_move_aside(path, exc):
                    raise IndexUnavailable(not_ours_line(path, f"is not a usable clawmem index ({exc})")) from None
                raise IndexUnavailable(f"{path}: not a usable clawmem index ({exc}); {repair}") from None
            built_for = st.get_meta("workspace")
        workspace = self.cfg.workspace
        if built_for is not None and built_for != str(workspace):
            st.close()
            raise IndexUnavailable(f"{path}: this index was built for workspace {built_for}, not {workspace}; "
                                   "`clawmem index` rebuilds it for this one (or give each workspace its own store.path)")
        return st

    def _open_in_full_folder(self, path: Path) -> Store:
        """The index read as it is (immutable: SQLite needs no -shm beside it) when its folder is
        full and a reader could not make one; IndexUnavailable naming the full folder otherwise.
        An intact index is never called damaged, nor a rebuild suggested where nothing fits."""
        try:
            st = Store(path, load_vec=self.cfg["store.vector.enabled"], immutable=True)
        except (DatabaseError, OSError):
            st = None
        try:
            if st is not None:
                st.check(quick=False)
                st.until_space = True  # read as it is only while the folder stays full: writers may resume
                return st
        except (ForeignIndex, DatabaseError, OSError):
            st.close()
        raise IndexUnavailable(f"{path}: cannot be opened, its folder {path.parent} is full (no space left); "
                               "free space there and search again") from None

    def per_store(self, kind: str, store: Store, compute: Callable[[Store], Any]) -> Any:
        """What `compute` derives from this open index, computed once per connection (a rebuild
        swaps the file in, and the next reader() opens a new one)."""
        held = getattr(self._tls, "derived", None)
        if held is None or held[0] is not store:
            held = self._tls.derived = (store, {})
        if kind not in held[1]:
            held[1][kind] = compute(store)
        return held[1][kind]

    def cached(self, kind: str, store: Store, model_id: int, load: Callable[[int], Any]) -> Any:
        """Per-model data a long-lived engine keeps in memory until the index changes."""
        gen = store.generation()
        cached = self._per_model.get((kind, model_id))
        if cached and cached[0] == gen:
            return cached[1]
        data = load(model_id)
        self._per_model[(kind, model_id)] = (gen, data)
        return data

    def forget_cached(self) -> None:
        """The index file was replaced: what was cached from it no longer applies."""
        self._per_model.clear()

    def close(self) -> None:
        """Close this thread's connection (the next read opens a new one)."""
        st = getattr(self._tls, "store", None)
        if st is not None:
            st.close()
            self._tls.store = None


def folder_full(folder: Path) -> bool:
    """Whether the filesystem of `folder` has no space left for this user."""
    try:
        vfs = os.statvfs(folder)
    except OSError:
        return False
    return vfs.f_bavail * vfs.f_frsize < 64 * 1024  # under a page or two: SQLite cannot make its -shm
