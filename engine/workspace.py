"""Which files are memory (SPEC §1): MEMORY.md, memory.md, memory/**/*.md, extraPaths.

Only `.md` files, symlinks never followed, duplicates by real path indexed once, paths
shown workspace-relative with `/`. Folders that hold tooling rather than notes (.git,
node_modules, virtual environments) are skipped, the same set the watcher ignores.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

IGNORED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".pnpm-store", ".venv", "venv", ".tox", "__pycache__", ".mypy_cache"})
DATED_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # what users see and the index key: workspace-relative, "/" separators
    abspath: Path
    source: str  # "memory" or "sessions"


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


def _is_regular_md(p: Path) -> bool:
    try:
        st = os.lstat(p)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and p.name.endswith(".md")


def walk_md(root: Path, errors: list[str] | None = None) -> list[Path]:
    """All regular `.md` files under `root`, depth first, never through a symlink."""
    found: list[Path] = []
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if errors is not None:
                errors.append(f"{d}: cannot list folder ({exc.strerror})")
            continue
        subdirs = []
        for e in entries:
            if e.is_symlink():
                continue
            if e.is_dir(follow_symlinks=False):
                if e.name not in IGNORED_DIRS:
                    subdirs.append(Path(e.path))
            elif e.is_file(follow_symlinks=False) and e.name.endswith(".md"):
                found.append(Path(e.path))
        stack.extend(reversed(subdirs))
    return found


def list_memory_files(workspace: Path, extra_paths: list[str], errors: list[str] | None = None) -> list[SourceFile]:
    workspace = Path(workspace)
    candidates: list[Path] = []
    for name in ("MEMORY.md", "memory.md"):
        if _is_regular_md(workspace / name):
            candidates.append(workspace / name)
    mem = workspace / "memory"
    if mem.is_dir() and not mem.is_symlink():
        candidates.extend(walk_md(mem, errors))
    for p in normalize_extra_paths(workspace, extra_paths):
        if p.is_symlink():
            continue
        if p.is_dir():
            candidates.extend(walk_md(p, errors))
        elif _is_regular_md(p):
            candidates.append(p)
    seen: set[str] = set()
    out: list[SourceFile] = []
    for p in candidates:
        try:
            key = os.path.realpath(p)
        except OSError:
            key = str(p)
        if key in seen:
            continue
        seen.add(key)
        out.append(SourceFile(display_path(workspace, p), p, "memory"))
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
