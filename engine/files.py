"""Reading and writing memory files for the app's File tab: plain engine code, no UI.

A file is read together with the hash of its bytes; a save names the hash it started from
and is refused (ChangedOnDisk) if the file changed meanwhile, say because the agent
appended to it. The caller then shows the difference and chooses: reload, merge (the
disk version plus the user's new lines) or overwrite. Every write is atomic and keeps the
file's permissions (fsutil.atomic_write).
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path

from .fsutil import atomic_write

MISSING = ""  # the hash of a file that does not exist


@dataclass(frozen=True, slots=True)
class FileSnapshot:
    path: Path
    text: str
    hash: str  # sha256 of the bytes on disk; MISSING when there is no file

    @property
    def exists(self) -> bool:
        return self.hash != MISSING


class ChangedOnDisk(Exception):
    """The file is no longer what the editor started from; `disk` is what is there now."""

    def __init__(self, path: Path, disk: FileSnapshot):
        super().__init__(f"{path}: changed on disk since it was opened")
        self.disk = disk


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_file(path: Path) -> FileSnapshot:
    """The file's text (invalid UTF-8 replaced, so it can always be shown) and its hash."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return FileSnapshot(path, "", MISSING)
    return FileSnapshot(path, data.decode("utf-8", "replace"), content_hash(data))


def _write(path: Path, text: str) -> FileSnapshot:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text, mode=0o600)
    return FileSnapshot(path, text, content_hash(text.encode("utf-8")))


def save_if_unchanged(path: Path, text: str, expected_hash: str) -> FileSnapshot:
    """Write `text` unless the file on disk no longer has `expected_hash`.

    The check and the rename are not one atomic step; the window is the few milliseconds of
    one write, and the agent only ever appends, so a later save still detects it.
    """
    path = Path(path)
    disk = read_file(path)
    if disk.hash != expected_hash:
        raise ChangedOnDisk(path, disk)
    if disk.exists and disk.text == text:
        return disk
    return _write(path, text)


def overwrite(path: Path, text: str) -> FileSnapshot:
    """Write `text` whatever is on disk (the user chose to overwrite)."""
    return _write(Path(path), text)


def added_lines(base: str, mine: str) -> list[str]:
    """Lines the user added or changed relative to `base`, in order (deletions are not kept)."""
    a, b = base.splitlines(), mine.splitlines()
    out: list[str] = []
    for op, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("insert", "replace"):
            out.extend(b[j1:j2])
    return out


def merge_appending(base: str, mine: str, disk: str) -> str:
    """The disk version with the user's new lines appended after it.

    What the agent wrote stays as it is; what the user typed is added at the end unless
    the disk version already holds it. Lines the user deleted are not deleted (a merge
    never removes anything).
    """
    new = added_lines(base, mine)
    while new and not new[-1].strip():
        new.pop()
    while new and not new[0].strip():
        new.pop(0)
    if not new:
        return disk
    block = "\n".join(new)
    if block in disk:
        return disk
    head = disk if not disk or disk.endswith("\n") else disk + "\n"
    sep = "\n" if head.strip() and not head.endswith("\n\n") else ""
    return f"{head}{sep}{block}\n"


def unified_diff(disk: str, mine: str, label: str) -> list[str]:
    """Lines of a unified diff from the disk version to the user's version."""
    return list(
        difflib.unified_diff(disk.splitlines(), mine.splitlines(), f"{label} (on disk)", f"{label} (yours)", lineterm="", n=2)
    )


def daily_log_path(workspace: Path, day: dt.date) -> Path:
    return Path(workspace) / "memory" / f"{day.isoformat()}.md"


def append_entry(workspace: Path, entry: str, now: dt.datetime) -> tuple[FileSnapshot, int]:
    """Append a timestamped entry to the daily log of `now`'s date, creating it if needed.

    Returns the new file and the 1-based line where the entry's heading is.
    """
    path = daily_log_path(workspace, now.date())
    disk = read_file(path)
    text = disk.text
    if not text.strip():
        text = f"# {now.date().isoformat()}\n"
    if not text.endswith("\n"):
        text += "\n"
    if not text.endswith("\n\n"):
        text += "\n"
    line = text.count("\n") + 1
    body = entry.strip("\n")
    text += f"## {now.strftime('%H:%M')}\n{body}\n"
    return _write(path, text), line


def create_workspace(root: Path) -> list[Path]:
    """Create a new workspace: `MEMORY.md` and `memory/` (nothing that exists is touched)."""
    root = Path(root)
    made: list[Path] = []
    if not root.exists():
        root.mkdir(parents=True, mode=0o700)
        made.append(root)
    mem = root / "memory"
    if not mem.exists():
        mem.mkdir(mode=0o700)
        made.append(mem)
    top = root / "MEMORY.md"
    if not top.exists() and not (root / "memory.md").exists():
        _write(top, "# Memory\n\nLong-term notes: facts, preferences and decisions worth keeping.\n")
        made.append(top)
    return made
