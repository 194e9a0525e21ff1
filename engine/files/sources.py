"""Which files the index holds (memory files and session transcripts), and the layout a search
compares to tell cheaply whether the index lags them. Light on imports: every search needs it."""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from .workspace import SourceFile, dir_stamp, list_memory_files, normalize_extra_paths, path_kind

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
