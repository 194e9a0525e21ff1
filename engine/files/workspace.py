"""Which files are memory: MEMORY.md, memory.md, memory/**/*.md, extraPaths.

Only `.md` files, symlinks never followed, duplicates by real path indexed once, paths
shown workspace-relative with `/`. Folders that hold tooling rather than notes (.git,
node_modules, virtual environments) are skipped, the same set the watcher ignores.
"""

from __future__ import annotations

import datetime as dt
import operator
import os
import re
import stat
import time
from pathlib import Path
from collections import namedtuple

IGNORED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".pnpm-store", ".venv", "venv", ".tox", "__pycache__", ".mypy_cache"})
DATED_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


# a tuple: a sync lists every file, and a frozen dataclass is slower to build. path: what users see and
# the index key, workspace-relative with "/" separators; abspath: a str, not a Path (building 20,000
# Paths cost more than listing the files); source: "memory" or "sessions".
# collections.namedtuple, not typing.NamedTuple: the latter compiles each field's (string) annotation,
# ~0.3 ms a class on every search's start
SourceFile = namedtuple("SourceFile", "path abspath source")


def display_path(workspace: Path, abspath: Path) -> str:
    return os.path.relpath(abspath, workspace).replace(os.sep, "/")


def normalize_extra_paths(workspace: Path, extra: list[str]) -> list[Path]:
    out: list[Path] = []
    for raw in extra:
        raw = raw.strip()
        if not raw:
            continue
        p = Path(os.path.expanduser(raw))
        p = Path(os.path.normpath(p if p.is_absolute() else workspace / p))
        if p not in out:
            out.append(p)
    return out


def below_a_symlink(p: Path) -> bool:
    """Whether a folder above `p` (an absolute, normalised path) is a symlink: its real path differs."""
    return os.path.lexists(p) and os.path.realpath(p.parent) != str(p.parent)


def refused_extra_paths(workspace: Path, extra: list[str]) -> list[str]:
    """The status line of each extra path that is never indexed nor read: below a symlinked folder."""
    return [f"extra path below a symlinked folder ({p} is really {os.path.realpath(p)}): not indexed nor read; "
            "name the real folder in extraPaths" for p in normalize_extra_paths(workspace, extra) if below_a_symlink(p)]


def _is_regular_md(p: Path) -> bool:
    try:
        st = os.lstat(p)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and p.name.endswith(".md")


def _utf8_name(name: str) -> str | None:
    """The name as UTF-8 text, whatever the filesystem encoding Python was started with (under
    LANG=C a name arrives as ASCII plus lone surrogates); None when its bytes are not UTF-8."""
    try:
        return os.fsencode(name).decode("utf-8")
    except UnicodeDecodeError:
        return None


def dir_stamp(path: str) -> int | None:
    """A folder's mtime (ns), which every create, delete or rename inside it changes; None when
    it is too recent to trust: a change within the same clock tick could leave it as it is.
    (A whole-second mtime means a filesystem that keeps seconds only: then two seconds.)"""
    now = time.time_ns()
    mtime = os.stat(path).st_mtime_ns
    tick = 2_000_000_000 if mtime % 1_000_000_000 == 0 else 20_000_000
    return None if mtime >= now - tick else mtime


def path_kind(path: str) -> str:
    """file, dir, link, other or none: what a root of the listing is, without following links."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "none"
    return "link" if stat.S_ISLNK(mode) else "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


_entry_name = operator.attrgetter("name")


def _walk_rel(root: str, errors: list[str] | None, dirs: dict[str, int | None] | None = None) -> list[tuple[str, str]]:
    """(absolute path, path relative to root with "/") of the `.md` files under root.

    Relative paths are built while walking: no per-file relpath/realpath, which made a
    listing of 5000 files cost ~80 ms (the reconciliation scan and `status` run it often).
    `dirs` collects each folder's dir_stamp, taken before it is read.
    """
    found: list[tuple[str, str]] = []
    stack = [(root, "")]
    while stack:
        d, rel = stack.pop()
        if dirs is not None:
            try:
                dirs[d] = dir_stamp(d)
            except OSError:
                dirs[d] = None
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError as exc:
            if errors is not None:
                errors.append(f"{d}: cannot list folder ({exc.strerror})")
            continue
        entries.sort(key=_entry_name)
        subdirs = []
        for e in entries:
            if e.name.endswith(".md") and e.name.isascii() and e.is_file(follow_symlinks=False):
                found.append((e.path, rel + e.name))  # most entries: a memory file, decided in three C calls
                continue
            if e.is_symlink():
                continue
            name = e.name if e.name.isascii() else _utf8_name(e.name)
            if name is None:
                # the index, its citations and the tools speak UTF-8: such a name cannot be stored
                if errors is not None and (e.name.endswith(".md") or e.is_dir(follow_symlinks=False)):
                    shown = os.fsencode(e.path).decode("utf-8", "backslashreplace")
                    errors.append(f"{shown}: name is not valid UTF-8; not indexed (rename it to index it)")
                continue
            if e.is_dir(follow_symlinks=False):
                if e.name not in IGNORED_DIRS:
                    subdirs.append((e.path, rel + name + "/"))
            elif e.is_file(follow_symlinks=False) and e.name.endswith(".md"):
                found.append((e.path, rel + name))
            elif e.name.endswith(".md") and errors is not None:
                # a FIFO, socket or device: reading it could block or never end
                errors.append(f"{e.path}: not a regular file; not indexed")
        stack.extend(reversed(subdirs))
    return found


def list_memory_files(workspace: Path, extra_paths: list[str], errors: list[str] | None = None,
                      dirs: dict[str, int | None] | None = None) -> list[SourceFile]:
    """The memory files; `dirs`, when given, gets the dir_stamp of every folder read."""
    workspace = Path(workspace)
    out: list[SourceFile] = []
    seen: set[str] = set()  # real paths: a file reached twice (memory/ and an extra path) is listed once

    def add_file(p: Path) -> None:
        try:
            key = os.path.realpath(p)
        except OSError:
            key = str(p)
        if key not in seen:
            seen.add(key)
            out.append(SourceFile(display_path(workspace, p), str(p), "memory"))

    def add_tree(root: Path) -> None:
        # the walk never follows a symlink, so a file's real path is its root's plus the relative part
        real, shown = os.path.realpath(root) + "/", display_path(workspace, root)
        prefix = "" if shown == "." else shown + "/"
        for abs_p, rel in _walk_rel(str(root), errors, dirs):
            key = real + rel
            if key not in seen:
                seen.add(key)
                out.append(SourceFile(prefix + rel, abs_p, "memory"))

    for name in ("MEMORY.md", "memory.md"):
        if _is_regular_md(workspace / name):
            add_file(workspace / name)
    mem = workspace / "memory"
    if mem.is_dir() and not mem.is_symlink():
        add_tree(mem)
    for p in normalize_extra_paths(workspace, extra_paths):
        if p.is_symlink():
            continue
        if below_a_symlink(p):  # memfile refuses to read it: never indexed either
            if errors is not None:
                errors.append(f"{p}: extra path below a symlinked folder ({os.path.realpath(p)}); not indexed "
                              "(name the real folder in extraPaths)")
            continue
        if p.is_dir():
            add_tree(p)
        elif _is_regular_md(p):
            add_file(p)
    return out


def day_of(path: str) -> str | None:
    """The date of a dated memory file: any file under memory/ whose name starts with YYYY-MM-DD."""
    if not (path.startswith("memory/") or "/memory/" in path):
        return None
    m = DATED_RE.match(path.rsplit("/", 1)[-1])
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None


def is_evergreen(path: str) -> bool:
    """MEMORY.md, memory.md and undated memory/ files never decay."""
    return path in ("MEMORY.md", "memory.md") or (path.startswith("memory/") and day_of(path) is None)
