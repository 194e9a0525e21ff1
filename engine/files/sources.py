"""Which files the index holds (memory files and session transcripts), and the layout a search
compares to tell cheaply whether the index lags them. Light on imports: every search needs it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..config import Config
from .workspace import IGNORED_DIRS, SourceFile, dir_stamp, display_path, list_memory_files, normalize_extra_paths, path_kind

LAYOUT_KEY = "layout"  # meta: the folders and roots as the last complete listing saw them


def list_sources(cfg: Config, errors: list[str] | None = None, layout: dict | None = None) -> list[SourceFile]:
    """The files to index. `layout`, when given, gets what a search can later compare at a cost
    that does not grow with the files (health.Health.seen_behind): "roots", each place files
    come from and what it was (source_roots), and "dirs", each folder read and its dir_stamp."""
    dirs = None
    if layout is not None:
        layout["roots"] = source_roots(cfg)
        dirs = layout["dirs"] = {}
    files = list_memory_files(cfg.workspace, cfg["extraPaths"], errors, dirs) if "memory" in cfg["sources"] else []
    if "sessions" in cfg["sources"]:
        folder = str(cfg.sessions_dir())
        if dirs is not None:
            try:
                dirs[folder] = dir_stamp(folder)
            except OSError:
                pass  # no sessions folder: its root says "none"
        from .sessions import list_session_files

        files += list_session_files(cfg.sessions_dir(), cfg["sessions.includeArchives"])
    return files


def memory_source(cfg: Config, abspath: Path) -> SourceFile | None:
    """The listing's entry for one memory file, found without listing the others (a save names
    the file it wrote). None when the full listing might not hold it under that name: not a
    source, a symlink on the way, a folder the walk skips, a memory.md beside MEMORY.md; a
    caller then indexes with the full listing."""
    if "memory" not in cfg["sources"]:
        return None
    ws = cfg.workspace
    p = Path(os.path.normpath(abspath))
    try:
        st = os.lstat(p)
        if not stat.S_ISREG(st.st_mode) or not p.name.endswith(".md") or os.path.realpath(p.parent) != str(p.parent):
            return None
    except OSError:
        return None
    shown = display_path(ws, p)
    try:
        shown.encode("utf-8")  # the walk skips a name that is not UTF-8
    except UnicodeEncodeError:
        return None
    if shown == "MEMORY.md":
        return SourceFile(shown, str(p), "memory")
    roots = [ws / "memory"] if shown.startswith("memory/") else [e for e in normalize_extra_paths(ws, cfg["extraPaths"])
                                                                  if e == p or str(p).startswith(str(e) + os.sep)]
    for root in roots:
        if root == p:
            return SourceFile(shown, str(p), "memory")
        below = p.relative_to(root).parts[:-1]
        if not any(part in IGNORED_DIRS for part in below) and not os.path.islink(root):
            return SourceFile(shown, str(p), "memory")
    return None


def source_roots(cfg: Config) -> dict[str, str]:
    """Each place files come from (MEMORY.md, memory.md, memory/, extraPaths, the sessions
    folder) and what it is now: file, dir, link, other or none."""
    ws = cfg.workspace
    roots: list[Path] = []
    if "memory" in cfg["sources"]:
        roots += [ws / "MEMORY.md", ws / "memory.md", ws / "memory"] + normalize_extra_paths(ws, cfg["extraPaths"])
    if "sessions" in cfg["sources"]:
        roots.append(Path(cfg.sessions_dir()))
    return {str(p): path_kind(str(p)) for p in roots}
