"""The journal as the fronts use it: open it caught up with the files, list the changes, put a
version or one hunk back (each restore itself journalled, so it can be undone)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Config
from ..errors import BadValue, JournalUnavailable
from .reading import MemoryFiles
from ..results import Restored

if TYPE_CHECKING:  # the journal loads when the history is asked for: a search never needs it
    from .journal import Change, Journal, Version


class History:
    def __init__(self, cfg: Config, memory_files: MemoryFiles):
        self.cfg = cfg
        self.memory_files = memory_files  # which paths may be written back

    def open(self, *, catch_up: bool = True) -> Journal:
        """The journal, with the changes no sync has seen yet recorded first (when journal.enabled
        and `catch_up`). JournalUnavailable when it cannot be opened or brought up to date."""
        import sqlite3

        from .journal import Journal

        try:
            jr = Journal(self.cfg)
        except (OSError, sqlite3.Error) as exc:
            raise JournalUnavailable(str(exc)) from None
        try:
            if catch_up and self.cfg["journal.enabled"]:
                jr.catch_up()
        except (OSError, sqlite3.Error) as exc:
            jr.close()
            raise JournalUnavailable(str(exc)) from None
        except BaseException:
            jr.close()
            raise
        return jr

    def record(self, path: str, abspath: Path, text: str) -> Version | None:
        """Keep `text`, just written to `path`, as its newest version at once (a save in the
        File tab), not when the index next reads it. None when the journal is off or cannot be
        written: the next index records the version then, as it does for any write."""
        from .fsutil import database_errors
        from .journal import Journal

        if not self.cfg["journal.enabled"] or "memory" not in self.cfg["sources"]:
            return None
        try:
            with Journal(self.cfg) as jr:
                return jr.observe(path, abspath, text.encode("utf-8", "surrogateescape"))  # the bytes memfile wrote
        except OSError:
            return None
        except database_errors():
            return None

    def changes(self, path: str | None = None, since: float | None = None, *, catch_up: bool = True) -> list[Change]:
        """The changes to `path` (every memory file when None) since `since`, oldest first, each
        with both texts read (every front shows its counts or diff; the journal closes here)."""
        with self.open(catch_up=catch_up) as jr:
            changes = jr.changes(path, since)
            for ch in changes:
                ch.texts()
            return changes

    def restore(self, path: str, version: int, *, catch_up: bool = True) -> Restored:
        """Write version `version` of `path` back. AccessDenied for a path the tools may not
        write, ValueError for a version not of this file, OSError when the write fails,
        JournalUnavailable when the journal cannot be opened."""
        from .journal import restore

        abspath = self.memory_files.resolve_allowed(path)[1]
        with self.open(catch_up=catch_up) as jr:
            before = jr.latest(path)
            v = restore(jr, path, Path(abspath), version)
        return Restored(path=path, restored=version, version=v.id, undo=before.id if before else None)

    def undo_hunk(self, path: str, previous: int | None, version: int, hunk: int) -> Version | None:
        """Undo hunk `hunk` of the change from `previous` to `version` (None: `version` created
        the file; its hunk's lines are taken out, the file stays), keeping every other line
        the file has now; None when it is already undone. HunkConflict when the file changed
        in the same place since."""
        from .journal import Change, restore_hunk

        abspath = self.memory_files.resolve_allowed(path)[1]
        with self.open(catch_up=False) as jr:
            before, after = (jr.version(previous) if previous is not None else None), jr.version(version)
            if after is None or (previous is not None and before is None):
                raise BadValue(f"{path}: v{version if after is None else previous} is no longer in the journal")
            if before is None and not jr.is_creation(version):
                raise BadValue(f"{path}: v{version} is not the file's creation")
            return restore_hunk(jr, Change(jr, before, after), hunk, Path(abspath))
