"""Reading and writing memory files for the app's File tab: plain engine code, no UI.

A file is read together with the hash of its bytes; a save names the hash it started from
and is refused (ChangedOnDisk) if the file changed meanwhile, say because the agent
appended to it. The caller then shows the difference and chooses: reload, merge (a
three-way merge by lines) or overwrite. engine/files/editing.py keeps track of which disk
version an editor's text derives from. Every read and write goes through memfile (atomic,
under the file's lock, inside the workspace, permissions kept).
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from . import memfile

MISSING = memfile.MISSING  # the hash of a file that does not exist


FileSnapshot, ChangedOnDisk = memfile.FileSnapshot, memfile.ChangedOnDisk  # the one snapshot and conflict type
content_hash = memfile.content_hash


def read_file(path: Path) -> FileSnapshot:
    """The file's text (invalid UTF-8 replaced, so it can always be shown) and its hash."""
    path = Path(path)
    return memfile.read(path.parent, path)


def save_if_unchanged(path: Path, text: str, expected_hash: str | None, root: Path | None = None) -> FileSnapshot:
    """Write `text` unless the file on disk no longer has `expected_hash` (None: whatever is
    there). The compare and the rename happen under the file's lock (memfile.rewrite), so an
    agent's write landing meanwhile is seen, never overwritten. `root`: the folder the file must
    stay inside (its own folder by default)."""
    path = Path(path)
    got = memfile.rewrite(root or path.parent, path, lambda _old: text, expected_hash)  # ChangedOnDisk(disk)
    return FileSnapshot(path, got.rel, text, got.hash)


def _write(path: Path, text: str) -> FileSnapshot:
    return save_if_unchanged(path, text, None)


def overwrite(path: Path, text: str) -> FileSnapshot:
    """Write `text` whatever is on disk (the user chose to overwrite)."""
    return _write(Path(path), text)


YOURS_MARK = "<<<<<<< yours\n"
BETWEEN_MARK = "=======\n"
DISK_MARK = ">>>>>>> on disk\n"


@dataclass(frozen=True, slots=True)
class Merged:
    text: str
    conflicts: int  # places both sides changed differently: both kept, between the marks above


def _lines(text: str) -> list[str]:
    """Lines with their endings; a last line without one gets one, so it compares equal."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


def _changes(base: list[str], other: list[str], side: int) -> list[tuple[int, int, int, list[str]]]:
    """(start, end, side, new lines) for each run of base lines `other` replaced, dropped or added to."""
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, side, other[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]


def _apply(base: list[str], start: int, end: int, changes) -> list[str]:
    out, pos = [], start
    for i1, i2, _, new in changes:
        out += base[pos:i1] + new
        pos = i2
    return out + base[pos:end]


def _opens_section(lines: list[str]) -> bool:
    """Whether added lines start (after blank lines) with a Markdown heading."""
    first = next((ln for ln in lines if ln.strip()), "")
    return re.match(r"#{1,6}\s", first) is not None


def merge3(base: str, mine: str, disk: str) -> Merged:
    """A three-way merge by lines of the user's text and the disk's, both derived from `base`.

    A line one side changed replaces that line; lines both sides added at the same place are
    all kept (the disk's first); where both changed the same lines differently, both versions
    are kept between conflict marks, so nothing either side wrote is dropped.
    """
    b = _lines(base)
    changes = sorted(_changes(b, _lines(mine), 0) + _changes(b, _lines(disk), 1), key=lambda c: (c[0], c[1]))
    out: list[str] = []
    pos = conflicts = i = 0
    while i < len(changes):
        start, end = changes[i][0], changes[i][1]
        group = [changes[i]]
        i += 1
        # one region: changes overlapping it, or a second insertion at the same place
        while i < len(changes) and (changes[i][0] < end or changes[i][0] == changes[i][1] == start == end):
            end = max(end, changes[i][1])
            group.append(changes[i])
            i += 1
        out += b[pos:start]
        pos = end
        ours = [c for c in group if c[2] == 0]
        theirs = [c for c in group if c[2] == 1]
        mine_part, disk_part = _apply(b, start, end, ours), _apply(b, start, end, theirs)
        if not theirs or mine_part == disk_part:
            out += mine_part
        elif not ours:
            out += disk_part
        elif start == end:  # both only added lines here
            # the disk's first, unless it opens a new section (a heading) and the user's lines do
            # not: those continue the section above, where the user wrote them
            out += mine_part + disk_part if _opens_section(disk_part) and not _opens_section(mine_part) else disk_part + mine_part
        else:
            conflicts += 1
            out += [YOURS_MARK, *mine_part, BETWEEN_MARK, *disk_part, DISK_MARK]
    out += b[pos:]
    text = "".join(out)
    if text.endswith("\n") and not mine.endswith("\n") and not disk.endswith("\n"):
        text = text[:-1]  # neither side ended with a newline: do not add one
    return Merged(text, conflicts)


def unified_diff(disk: str, mine: str, label: str) -> list[str]:
    """Lines of a unified diff from the disk version to the user's version."""
    return list(
        difflib.unified_diff(disk.splitlines(), mine.splitlines(), f"{label} (on disk)", f"{label} (yours)", lineterm="", n=2)
    )


def daily_log_path(workspace: Path, day: dt.date) -> Path:
    return Path(workspace) / "memory" / f"{day.isoformat()}.md"


def add_log_entry(workspace: Path, entry: str, now: dt.datetime, heading: str | None = None, *,
                  writer: str | None = None, cap: int | None = None, blank_line: bool = False) -> tuple[Path, int, int]:
    """Append a timestamped entry (`## HH:MM [heading]` and the text) to the daily log of
    `now`'s date, creating it with a `# YYYY-MM-DD` title if needed. Nothing already in the
    file is rewritten, and a kill leaves the entry whole or absent (memfile.append).

    `blank_line` puts an empty line between the heading and the text (the app's entries,
    as Markdown is usually written by hand). Returns the log's path and the 1-based lines of
    the entry's heading and of its last line.
    """
    path = daily_log_path(workspace, now.date())
    body = entry.strip("\n")
    title = f"## {now.strftime('%H:%M')}" + (f" {heading.strip()}" if heading and heading.strip() else "")
    gap = "\n" if blank_line else ""

    def compose(tail: bytes) -> str:
        if not tail:
            sep = f"# {now.date().isoformat()}\n\n"
        elif tail.endswith(b"\n\n"):
            sep = ""
        else:
            sep = "\n" if tail.endswith(b"\n") else "\n\n"
        return f"{sep}{title}\n{gap}{body}\n"

    got = memfile.append(workspace, path.relative_to(workspace), compose, writer=writer, cap=cap)
    last = got.end
    return path, last - body.count("\n") - 1 - len(gap), last


def append_entry(workspace: Path, entry: str, now: dt.datetime) -> tuple[FileSnapshot, int]:
    """The app's "append to today's log": add_log_entry (a blank line under the heading), then
    the file as it is now and the line of the entry's heading."""
    path, line, _ = add_log_entry(workspace, entry, now, blank_line=True)
    return read_file(path), line


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


def memory_file(workspace: Path) -> Path:
    """MEMORY.md, or an existing lowercase memory.md (OpenClaw reads either)."""
    upper, lower = workspace / "MEMORY.md", workspace / "memory.md"
    return lower if lower.is_file() and not upper.is_file() else upper


def _bullet(fact: str) -> list[str]:
    first, *rest = fact.strip().splitlines()
    return ["- " + first] + [("  " + ln) if ln.strip() else "" for ln in rest]


def _section_span(lines: list[str], section: str) -> tuple[int, int] | None:
    """The `## section` heading's index and the index where its section ends (case-insensitive)."""
    want = section.strip().lower()
    head = next((i for i, ln in enumerate(lines) if ln.startswith("## ") and ln[3:].strip().lower() == want), None)
    if head is None:
        return None
    return head, next((i for i in range(head + 1, len(lines)) if re.match(r"#{1,2} ", lines[i])), len(lines))


def find_bullet(text: str, section: str, fact: str) -> tuple[int, int] | None:
    """The 1-based lines of `- fact` where it already stands, exactly as add_bullet would write it,
    in the `## section` section; None when it is not there."""
    bullet = _bullet(fact)
    lines = text.split("\n")
    span = _section_span(lines, section)
    if span is None:
        return None
    head, end = span
    for i in range(head + 1, end - len(bullet) + 1):
        if [ln.rstrip() for ln in lines[i:i + len(bullet)]] == bullet and \
                (i + len(bullet) >= end or not lines[i + len(bullet)].startswith("  ")):  # not the start of a longer bullet
            return i + 1, i + len(bullet)
    return None


def add_bullet(text: str, section: str, fact: str) -> tuple[str, int, int]:
    """`text` with `- fact` added at the end of the `## section` section (created at the end of
    the file if missing). Returns the new text and the 1-based lines of the bullet."""
    bullet = _bullet(fact)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline; put back below
    span = _section_span(lines, section)
    if span is None:
        while lines and lines[-1] == "":
            lines.pop()
        block = ([""] if lines else []) + [f"## {section.strip()}"] + bullet
        at = len(lines) + len(block) - len(bullet)
        lines += block
    else:
        head, end = span
        at = end
        while at > head + 1 and not lines[at - 1].strip():
            at -= 1  # after the section's last non-blank line
        lines[at:at] = bullet
    return "\n".join(lines) + "\n", at + 1, at + len(bullet)
