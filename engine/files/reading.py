"""Reading memory files (memory_get) and naming them: which paths the tools may read, the list the
app's File tab shows, today's log. The reading itself (and every write) is memfile's."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import Config
from ..errors import AccessDenied, BadValue, FileUnreadable
from ..results import FileText
from .sources import list_sources
from .workspace import normalize_extra_paths


MAX_LINES = 10_000  # lines one get / memory_get returns at most: a window on a file, not a dump


def check_window(start: int | None, count: int | None) -> None:
    """ValueError (one line) when `lines` asks for more than MAX_LINES (2e8 once took 1.8 GB;
    0 or less still means "to the end", capped the same way by the file's size cap)."""
    if count is not None and count > MAX_LINES:
        raise BadValue(f"lines: {count} is over the limit of {MAX_LINES} lines per call; read on with from")


class MemoryFiles:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.workspace = cfg.workspace

    def resolve_allowed(self, path: str) -> tuple[str, Path]:
        """(display path, absolute path) of a memory file the tools may read, or AccessDenied."""
        raw = (path or "").strip()
        if not raw:
            raise AccessDenied("path required: give a path such as MEMORY.md or memory/2026-02-10.md")
        ws = self.workspace
        p = Path(os.path.expanduser(raw))
        abs_p = Path(os.path.normpath(p if p.is_absolute() else ws / p))
        rel = os.path.relpath(abs_p, ws).replace(os.sep, "/")
        extras = normalize_extra_paths(ws, self.cfg["extraPaths"])
        inside_ws = not rel.startswith("../") and rel != ".."
        allowed = False
        if inside_ws and (rel in ("MEMORY.md", "memory.md", "DREAMS.md") or (rel.startswith("memory/") and rel.endswith(".md"))):
            allowed = True
        else:
            for e in extras:
                if e.is_symlink():
                    continue
                if abs_p == e and e.name.endswith(".md"):
                    allowed = True
                    break
                if e.is_dir() and str(abs_p).startswith(str(e) + os.sep) and abs_p.name.endswith(".md"):
                    allowed = True
                    break
        if not allowed:
            raise AccessDenied(
                f"refused {raw!r}: only MEMORY.md, memory.md, memory/**/*.md, extraPaths and session hits can be read"
                + (" (it is outside the workspace)" if not inside_ws else "")
            )
        return rel, abs_p

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> FileText:
        """memory_get: {path, text}, the whole file or `lines` lines from `from_line`."""
        raw = (path or "").strip()
        start = int(from_line) if from_line else None
        count = int(lines) if lines else None
        if raw.startswith("sessions/") and "sessions" in self.cfg["sources"]:
            name = raw[len("sessions/") :]
            if not name or "/" in name or name.startswith("."):
                raise AccessDenied(f"refused {raw!r}: not a session transcript name")
            f = self.cfg.sessions_dir() / name
            if f.is_symlink():
                raise AccessDenied(f"refused {raw!r}: session transcripts are never read through symlinks")
            from . import memfile

            try:  # never blocks on a FIFO, never a folder or device: one line, not a hang or a traceback
                data = memfile.read_any(f, raw, cap=1 << 30)  # a long session is no note: no note-sized cap
            except memfile.Refused as exc:
                raise AccessDenied(str(exc)) from None
            except OSError as exc:
                raise FileUnreadable(f"{raw}: cannot read it ({exc.strerror or exc}); check its permissions") from None
            if data is None:
                return FileText(path=raw, text="")
            from .sessions import parse_transcript, render_range

            return FileText(path=raw, text=render_range(parse_transcript(data), start, count))
        rel, abs_p = self.resolve_allowed(raw)
        from . import memfile  # loads on use: a keyword search never reads a file this way

        try:
            text = memfile.read_text(self.workspace, abs_p, extra_paths=self.cfg["extraPaths"])
        except memfile.Refused as exc:
            raise AccessDenied(str(exc)) from None
        except OSError as exc:  # unreadable (permissions), an I/O error: one line naming the file
            raise FileUnreadable(f"{rel}: cannot read it ({exc.strerror or exc}); check its permissions") from None
        if start is None and count is None:
            return FileText(path=rel, text=text)
        all_lines = text.split("\n")
        s = max(1, start or 1)
        n = max(1, count or len(all_lines))
        return FileText(path=rel, text="\n".join(all_lines[s - 1 : s - 1 + n]))

    def list_files(self) -> list[dict]:
        files = list_sources(self.cfg)
        return [{"path": f.path, "source": f.source, "abspath": str(f.abspath)} for f in files]