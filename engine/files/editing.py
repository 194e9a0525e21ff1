"""One memory file open in an editor, saved without ever dropping what someone else wrote.

An `EditSession` knows which disk version (its *base*) the editor's text derives from. A
save writes only if the disk still holds that base; otherwise it raises ChangedOnDisk and
the caller shows the difference: reload, merge, or overwrite *what was shown*.

The base belongs to the text, not to the session: after a reload the editor's undo brings
back text derived from the older disk version, so every text the editor has held is
remembered with the base it came from, and an undo past a reload puts that older base back
(the save then sees the disk lines the text lacks). A save, or an overwrite the user chose,
moves every text of the current base onto what was written: what changed on disk in between
was the user's own doing.

Unsaved text is also kept outside the workspace (recovery files under the data dir), so a
dropped SSH connection or a killed terminal loses nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import paths
from ..errors import raises_clawmem_errors
from .conflicts import ChangedOnDisk, FileSnapshot, Merged, merge3, read_file, save_if_unchanged
from .fsutil import atomic_write

__all__ = ["ChangedOnDisk", "EditSession", "Recovery", "drop_recovery", "find_recovery", "keep_recovery"]


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


@raises_clawmem_errors
class EditSession:
    def __init__(self, path: Path, *, rel: str | None = None, on_saved: Callable[["EditSession", FileSnapshot], None] | None = None,
                 root: Path | None = None) -> None:
        self.path = Path(path)
        self.root = root  # the folder a save stays inside and never creates (the workspace); default its own folder
        self.rel = rel if rel is not None else self.path.name  # the path as the fronts show it
        self._on_saved = on_saved  # told of every write the session made (Engine.edit journals it)
        self.open()

    def open(self) -> FileSnapshot:
        """(Re)read the file and forget all history."""
        self._stamp = _stamp(self.path)  # before the read: a write in between is seen next time
        disk = read_file(self.path)
        self._bases: list[FileSnapshot] = []
        self._base_of: dict[bytes, int] = {}  # text → index in _bases
        self._start_from(disk, disk.text)
        self._known_disk = disk  # the latest disk version this session has seen
        return disk

    @property
    def base(self) -> FileSnapshot:
        return self._bases[self._current]

    @property
    def dirty(self) -> bool:
        return self.text != self.base.text

    def _start_from(self, base: FileSnapshot, text: str) -> None:
        self._bases.append(base)
        self._current = len(self._bases) - 1
        self.text = text
        self._base_of[_key(text)] = self._current

    def edit(self, text: str) -> None:
        """The editor now holds `text`: typed, pasted, undone or redone."""
        self.text = text
        known = self._base_of.get(_key(text))
        if known is None:
            self._base_of[_key(text)] = self._current
        else:
            self._current = known  # an undo/redo back to text derived from that base

    def _written(self, snap: FileSnapshot) -> FileSnapshot:
        self._bases[self._current] = snap
        self._known_disk = snap
        if self._on_saved is not None:
            self._on_saved(self, snap)
        return snap

    def save(self) -> FileSnapshot:
        """Write the text if the disk still holds its base; ChangedOnDisk(disk) otherwise."""
        return self._written(save_if_unchanged(self.path, self.text, self.base.hash, self.root))

    def save_over(self, shown: FileSnapshot) -> FileSnapshot:
        """Overwrite the disk version the user was shown (or create the file if `shown` was
        "deleted"); ChangedOnDisk again if the disk changed since it was shown."""
        return self._written(save_if_unchanged(self.path, self.text, shown.hash, self.root))

    def reload(self, disk: FileSnapshot | None = None) -> FileSnapshot:
        """Take the disk version; the older text stays reachable (by undo) with its own base."""
        disk = disk or read_file(self.path)
        self._start_from(disk, disk.text)
        self._known_disk = disk
        return disk

    def merge(self, disk: FileSnapshot | None = None) -> Merged:
        """The text becomes a three-way merge of base, text and disk, and derives from disk."""
        disk = disk or read_file(self.path)
        merged = merge3(self.base.text, self.text, disk.text)
        self._start_from(disk, merged.text)
        self._known_disk = disk
        return merged

    def restore(self, rec: "Recovery") -> None:
        """Take a recovered text; it derives from the base it was typed on, which the disk
        may no longer hold (then the next save shows the difference)."""
        base = self.base if self.base.hash == rec.base_hash else FileSnapshot(self.path, self.base.rel, rec.base_text, rec.base_hash)
        self._start_from(base, rec.text)

    def disk_changed(self) -> FileSnapshot | None:
        """The disk version if it is not one this session has seen (a stat first: cheap)."""
        stamp = _stamp(self.path)
        if stamp == self._stamp:
            return None
        self._stamp = stamp
        disk = read_file(self.path)
        if disk.hash == self._known_disk.hash:
            return None
        self._known_disk = disk
        return disk


# ---------------------------------------------------------------------- recovery copies


@dataclass(frozen=True, slots=True)
class Recovery:
    path: str
    base_hash: str
    base_text: str
    text: str
    time: str  # ISO 8601, local time


def recovery_file(agent: str, path: Path) -> Path:
    """Where the unsaved text of `path` is kept: outside the workspace, one file per path."""
    name = hashlib.sha256(str(Path(path).absolute()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return paths.data_dir() / "recovery" / agent / f"{name}.json"


def keep_recovery(agent: str, session: EditSession) -> Path:
    """Write (atomically, owner-only) the session's unsaved text with the base it derives from."""
    target = recovery_file(agent, session.path)
    paths.private_dir(target.parent.parent)
    paths.private_dir(target.parent)
    record = {"path": str(Path(session.path).absolute()), "baseHash": session.base.hash, "base": session.base.text,
              "text": session.text, "time": dt.datetime.now().isoformat(timespec="seconds")}
    atomic_write(target, json.dumps(record, ensure_ascii=False), mode=0o600)
    return target


def find_recovery(agent: str, path: Path) -> Recovery | None:
    """The kept unsaved text of `path`, if any (an unreadable record is left alone)."""
    try:
        raw = json.loads(recovery_file(agent, path).read_text(encoding="utf-8"))
        rec = Recovery(raw["path"], raw["baseHash"], raw["base"], raw["text"], raw["time"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return rec if rec.path == str(Path(path).absolute()) else None


def drop_recovery(agent: str, path: Path) -> None:
    recovery_file(agent, path).unlink(missing_ok=True)
